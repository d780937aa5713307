//! Finding a workflow and its prompts: built in, by name from the project, or by path.
//!
//! The built-in `prd-to-code` workflow and its prompts are the engine's
//! (`crates/engine/builtin/`), embedded at build time so the binary works without the
//! repository, and copyable by users as a starting point. A built-in name always means the built-in: a project file
//! of the same name (which a cloned repository could plant) is ignored, with a notice.
//! A project overrides any stage's prompt with `.claude/prompts/<stage>.md` (or `.txt`),
//! whatever workflow it runs. Every project file is read through the project's door, and
//! set-up names each one it used, so nothing a repository supplies goes unannounced.
//! `prompt_file`s stay inside the workflow's folder (and inside the project, for a
//! project's workflow): a workflow cannot pull `~/.ssh/id_rsa` into a prompt.

use std::path::{Component, Path, PathBuf};

use anyhow::{Context, bail};
use pagent_engine::prompt::templates;
use pagent_engine::{PromptSource, Workflow, render_template};

use crate::store::SMALL_FILE_CAP;
use crate::store::project::{PROMPTS_DIR, Project, WORKFLOWS_DIR};
use pagent_door::files;

pub const DEFAULT_WORKFLOW: &str = "prd-to-code";

const BUILT_IN: &[(&str, &str)] = &[("prd-to-code", templates::PRD_TO_CODE)];

/// Built-in prompt files, by their path relative to the built-in workflow file (the
/// engine keeps every prompt a model reads).
const BUILT_IN_PROMPTS: &[(&str, &str)] = &[
    ("../prompts/architect.md", templates::ARCHITECT),
    ("../prompts/qa.md", templates::QA),
    ("../prompts/security.md", templates::SECURITY),
    ("../prompts/implementer.md", templates::IMPLEMENTER),
    ("../prompts/verifier.md", templates::VERIFIER),
];

/// Where a workflow came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Origin {
    BuiltIn,
    /// A file inside the project, relative to its root.
    Project(PathBuf),
    /// A file outside the project that the user named.
    Outside(PathBuf),
}

#[derive(Debug)]
pub struct LoadedWorkflow {
    pub workflow: Workflow,
    pub origin: Origin,
    /// The workflow file's bytes (for trust), empty for a built-in.
    pub bytes: Vec<u8>,
    /// Where it came from, for messages.
    pub source: String,
    /// Notices for the user (a project file ignored, and why).
    pub notices: Vec<String>,
}

/// `spec` is a name (built-in first, then the project's workflows) or a path to a JSON file.
pub fn load_workflow(
    project: &Project,
    spec: Option<&str>,
    cwd: &Path,
) -> anyhow::Result<LoadedWorkflow> {
    let spec = spec.unwrap_or(DEFAULT_WORKFLOW);
    let looks_like_path = spec.contains('/') || spec.ends_with(".json");
    let mut notices = Vec::new();
    if !looks_like_path && let Some((_, text)) = BUILT_IN.iter().find(|(name, _)| *name == spec) {
        let shadow = Path::new(WORKFLOWS_DIR).join(format!("{spec}.json"));
        if project.dir().kind(&shadow).ok().flatten().is_some() {
            notices.push(format!(
                "{} was ignored: `{spec}` is the name of a built-in workflow, and a built-in name \
                 always means the built-in (rename the file to use it)",
                shadow.display()
            ));
        }
        let workflow = parse(text, spec).with_context(|| {
            format!("the built-in workflow {spec} is invalid (a bug in pagent)")
        })?;
        return Ok(LoadedWorkflow {
            workflow,
            origin: Origin::BuiltIn,
            bytes: Vec::new(),
            source: format!("built-in {spec}"),
            notices,
        });
    }
    let origin = if looks_like_path {
        let given = Path::new(spec);
        let path = if given.is_absolute() {
            given.to_path_buf()
        } else {
            cwd.join(given)
        };
        // Inside the project it is a project file, read through the door (a planted link
        // out is refused); outside, it is a file the user named themselves.
        match crate::store::project::rel_in_project(project, cwd, &path) {
            Ok(inside) => Origin::Project(inside),
            Err(_) => Origin::Outside(
                files::canonical(&path)
                    .with_context(|| format!("cannot read the workflow {}", path.display()))?,
            ),
        }
    } else {
        let rel = Path::new(WORKFLOWS_DIR).join(format!("{spec}.json"));
        if project.dir().kind(&rel).ok().flatten().is_none() {
            let names: Vec<&str> = BUILT_IN.iter().map(|(n, _)| *n).collect();
            bail!(
                "no workflow named {spec:?}: not in {WORKFLOWS_DIR} and not built in (built in: {})",
                names.join(", ")
            );
        }
        Origin::Project(rel)
    };
    let (bytes, shown) = match &origin {
        Origin::Project(rel) => (
            project.dir().read(rel, SMALL_FILE_CAP),
            rel.display().to_string(),
        ),
        Origin::Outside(path) => (
            files::read_outside(path, SMALL_FILE_CAP),
            path.display().to_string(),
        ),
        Origin::BuiltIn => unreachable_built_in()?,
    };
    let bytes = bytes.with_context(|| format!("cannot read the workflow {shown}"))?;
    let text = std::str::from_utf8(&bytes)
        .map_err(|_| anyhow::anyhow!("the workflow {shown} is not UTF-8 text"))?;
    let stem = Path::new(&shown)
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let workflow = parse(text, &stem).with_context(|| format!("invalid workflow {shown}"))?;
    Ok(LoadedWorkflow {
        workflow,
        origin,
        bytes,
        source: shown,
        notices,
    })
}

fn unreachable_built_in<T>() -> anyhow::Result<T> {
    bail!("a built-in workflow has no file (a bug in pagent)")
}

fn parse(text: &str, fallback_name: &str) -> anyhow::Result<Workflow> {
    let value: serde_json::Value = serde_json::from_str(text).context("not valid JSON")?;
    Ok(Workflow::from_json(&value, fallback_name)?)
}

/// Each stage's prompt, overrides applied and placeholders substituted, and the project
/// files that supplied prompts.
pub fn render_prompts(
    project: &Project,
    loaded: &LoadedWorkflow,
    prd_path: Option<&str>,
) -> anyhow::Result<(Vec<String>, Vec<String>)> {
    let mut used = Vec::new();
    let prompts = loaded
        .workflow
        .stages
        .iter()
        .map(|stage| {
            let template = match read_override(project, &stage.name)? {
                Some((text, file)) => {
                    used.push(file);
                    text
                }
                None => match &stage.prompt {
                    PromptSource::Inline(text) => text.clone(),
                    PromptSource::File(file) => {
                        let (text, from) =
                            read_prompt_file(project, loaded, file).with_context(|| {
                                format!("stage {}: prompt_file {file:?}", stage.name)
                            })?;
                        used.extend(from);
                        text
                    }
                },
            };
            Ok(render_template(&template, prd_path))
        })
        .collect::<anyhow::Result<Vec<String>>>()?;
    Ok((prompts, used))
}

fn read_override(project: &Project, stage: &str) -> anyhow::Result<Option<(String, String)>> {
    for ext in ["md", "txt"] {
        let rel = Path::new(PROMPTS_DIR).join(format!("{stage}.{ext}"));
        let shown = rel.display().to_string();
        let Some(bytes) = project
            .dir()
            .read_if_exists(&rel, SMALL_FILE_CAP)
            .with_context(|| format!("cannot read the prompt override {shown}"))?
        else {
            continue;
        };
        let text = String::from_utf8(bytes)
            .map_err(|_| anyhow::anyhow!("the prompt override {shown} is not UTF-8 text"))?;
        if text.trim().is_empty() {
            bail!("the prompt override {shown} is empty");
        }
        return Ok(Some((text, shown)));
    }
    Ok(None)
}

/// A `prompt_file`'s text, and the project file it came from (if it did).
fn read_prompt_file(
    project: &Project,
    loaded: &LoadedWorkflow,
    file: &str,
) -> anyhow::Result<(String, Option<String>)> {
    let (bytes, from) = match &loaded.origin {
        Origin::BuiltIn => (
            BUILT_IN_PROMPTS
                .iter()
                .find(|(path, _)| *path == file)
                .map(|(_, text)| text.as_bytes().to_vec())
                .context("not a built-in prompt")?,
            None,
        ),
        Origin::Project(workflow) => {
            let folder = workflow.parent().unwrap_or(Path::new(""));
            let rel = inside(folder, file).with_context(|| {
                "a prompt_file must be a relative path inside the project".to_owned()
            })?;
            let bytes = project
                .dir()
                .read(&rel, SMALL_FILE_CAP)
                .with_context(|| format!("cannot read {}", rel.display()))?;
            (bytes, Some(rel.display().to_string()))
        }
        Origin::Outside(workflow) => {
            let folder = workflow.parent().unwrap_or(Path::new("/"));
            let rel = inside(Path::new(""), file).with_context(|| {
                "a prompt_file must be a relative path inside the workflow's folder".to_owned()
            })?;
            let path = folder.join(rel);
            let real = files::canonical(&path)
                .with_context(|| format!("cannot read {}", path.display()))?;
            anyhow::ensure!(
                real.starts_with(folder),
                "{} leads outside the workflow's folder",
                path.display()
            );
            let bytes = files::read_outside(&real, SMALL_FILE_CAP)?;
            (bytes, None)
        }
    };
    let text = String::from_utf8(bytes).map_err(|_| anyhow::anyhow!("not UTF-8 text"))?;
    anyhow::ensure!(!text.trim().is_empty(), "the prompt file is empty");
    Ok((text, from))
}

/// `file` joined to `folder`, lexically, refusing absolute paths and any `..` that climbs
/// above `folder`'s own root (the project's root, for a relative `folder`).
fn inside(folder: &Path, file: &str) -> Option<PathBuf> {
    let joined = folder.join(file);
    let mut parts: Vec<&std::ffi::OsStr> = Vec::new();
    for component in joined.components() {
        match component {
            Component::Normal(part) => parts.push(part),
            Component::CurDir => {}
            Component::ParentDir => {
                parts.pop()?;
            }
            Component::RootDir | Component::Prefix(_) => return None,
        }
    }
    Some(parts.iter().collect())
}

/// Refuses condition paths that exist and resolve outside the project (symlinks).
pub fn check_paths_stay_inside(project: &Project, workflow: &Workflow) -> anyhow::Result<()> {
    for (i, stage) in workflow.stages.iter().enumerate() {
        for path in stage.exit_when.paths() {
            match project.dir().kind(Path::new(path.as_str())) {
                Err(files::DoorError::Outside(_)) => {
                    bail!(
                        "stages[{i}].exit_when: {path} is a symlink that leads outside the project"
                    )
                }
                // Windows: a link of any kind, and names that mean something else there.
                Err(files::DoorError::Reparse(_)) => bail!(
                    "stages[{i}].exit_when: {path} is a symlink or junction, which pagent does not follow on Windows"
                ),
                Err(files::DoorError::BadPath(_)) => bail!(
                    "stages[{i}].exit_when: {path} is not a file name pagent can use here (a stream, a device name such as NUL or CON, or a trailing dot)"
                ),
                _ => {}
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_built_in_prompt_file_is_embedded() {
        for (name, text) in BUILT_IN {
            let workflow = parse(text, name).unwrap();
            for stage in &workflow.stages {
                if let PromptSource::File(file) = &stage.prompt {
                    assert!(
                        BUILT_IN_PROMPTS.iter().any(|(p, _)| p == file),
                        "{name}: {file} is not embedded"
                    );
                }
            }
        }
    }

    #[test]
    fn built_in_prompts_name_the_prd_and_their_output() {
        for ((file, text), output) in BUILT_IN_PROMPTS.iter().zip([
            "architecture.md",
            "test-plan.md",
            "security-assessment.md",
            "src/",
            "<promise>DONE</promise>",
        ]) {
            assert!(
                text.contains("{{prd_path}}"),
                "{file} does not name the PRD"
            );
            assert!(text.contains(output), "{file} does not name {output}");
            assert!(text.len() < 4_000, "{file} is too long for a block reason");
        }
    }
}
