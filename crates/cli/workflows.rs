//! Finding a workflow and its prompts: built in, by name from the project, or by path.
//!
//! The built-in `prd-to-code` workflow and its prompts are the files in `plugin/`,
//! embedded at build time so the binary works without the repository, and copyable by
//! users as a starting point. A project overrides any stage's prompt with
//! `.claude/prompts/<stage>.md` (or `.txt`), whatever workflow it runs.

use std::fs;
use std::path::{Path, PathBuf};

use anyhow::{Context, bail};
use pagent_engine::{PromptSource, Workflow, render_template};

use crate::probe;
use crate::project::Project;

pub const DEFAULT_WORKFLOW: &str = "prd-to-code";

const BUILT_IN: &[(&str, &str)] = &[(
    "prd-to-code",
    include_str!("../../plugin/workflows/prd-to-code.json"),
)];

/// Built-in prompt files, by their path relative to the built-in workflow file.
const BUILT_IN_PROMPTS: &[(&str, &str)] = &[
    (
        "../prompts/architect.md",
        include_str!("../../plugin/prompts/architect.md"),
    ),
    (
        "../prompts/qa.md",
        include_str!("../../plugin/prompts/qa.md"),
    ),
    (
        "../prompts/security.md",
        include_str!("../../plugin/prompts/security.md"),
    ),
    (
        "../prompts/implementer.md",
        include_str!("../../plugin/prompts/implementer.md"),
    ),
    (
        "../prompts/verifier.md",
        include_str!("../../plugin/prompts/verifier.md"),
    ),
];

#[derive(Debug)]
pub struct LoadedWorkflow {
    pub workflow: Workflow,
    /// The folder `prompt_file`s are relative to; `None` for a built-in workflow.
    pub dir: Option<PathBuf>,
    /// Where it came from, for messages.
    pub source: String,
}

/// `spec` is a name (project workflows first, then built-in) or a path to a JSON file.
pub fn load_workflow(
    project: &Project,
    spec: Option<&str>,
    cwd: &Path,
) -> anyhow::Result<LoadedWorkflow> {
    let spec = spec.unwrap_or(DEFAULT_WORKFLOW);
    let looks_like_path = spec.contains('/') || spec.ends_with(".json");
    let path = if looks_like_path {
        let given = Path::new(spec);
        Some(if given.is_absolute() {
            given.to_path_buf()
        } else {
            cwd.join(given)
        })
    } else {
        Some(project.workflows_dir().join(format!("{spec}.json"))).filter(|p| p.exists())
    };
    if let Some(path) = path {
        let text = fs::read_to_string(&path)
            .with_context(|| format!("cannot read the workflow {}", path.display()))?;
        let stem = path
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        let workflow =
            parse(&text, &stem).with_context(|| format!("invalid workflow {}", path.display()))?;
        return Ok(LoadedWorkflow {
            workflow,
            dir: path.parent().map(Path::to_path_buf),
            source: project.display_path(&path),
        });
    }
    let Some((_, text)) = BUILT_IN.iter().find(|(name, _)| *name == spec) else {
        let names: Vec<&str> = BUILT_IN.iter().map(|(n, _)| *n).collect();
        bail!(
            "no workflow named {spec:?}: not in {} and not built in (built in: {})",
            project.display_path(&project.workflows_dir()),
            names.join(", ")
        );
    };
    let workflow = parse(text, spec)
        .with_context(|| format!("the built-in workflow {spec} is invalid (a bug in pagent)"))?;
    Ok(LoadedWorkflow {
        workflow,
        dir: None,
        source: format!("built-in {spec}"),
    })
}

fn parse(text: &str, fallback_name: &str) -> anyhow::Result<Workflow> {
    let value: serde_json::Value = serde_json::from_str(text).context("not valid JSON")?;
    Ok(Workflow::from_json(&value, fallback_name)?)
}

/// Each stage's prompt, overrides applied and placeholders substituted.
pub fn render_prompts(
    project: &Project,
    loaded: &LoadedWorkflow,
    prd_path: Option<&str>,
) -> anyhow::Result<Vec<String>> {
    loaded
        .workflow
        .stages
        .iter()
        .map(|stage| {
            let template = match read_override(project, &stage.name)? {
                Some(text) => text,
                None => match &stage.prompt {
                    PromptSource::Inline(text) => text.clone(),
                    PromptSource::File(file) => read_prompt_file(loaded, file)
                        .with_context(|| format!("stage {}: prompt_file {file:?}", stage.name))?,
                },
            };
            Ok(render_template(&template, prd_path))
        })
        .collect()
}

fn read_override(project: &Project, stage: &str) -> anyhow::Result<Option<String>> {
    for ext in ["md", "txt"] {
        let path = project.prompts_dir().join(format!("{stage}.{ext}"));
        match fs::read_to_string(&path) {
            Ok(text) if !text.trim().is_empty() => return Ok(Some(text)),
            Ok(_) => bail!(
                "the prompt override {} is empty",
                project.display_path(&path)
            ),
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => {}
            Err(err) => {
                return Err(err).with_context(|| {
                    format!("cannot read the prompt override {}", path.display())
                });
            }
        }
    }
    Ok(None)
}

fn read_prompt_file(loaded: &LoadedWorkflow, file: &str) -> anyhow::Result<String> {
    let text = match &loaded.dir {
        None => BUILT_IN_PROMPTS
            .iter()
            .find(|(path, _)| *path == file)
            .map(|(_, text)| (*text).to_owned())
            .context("not a built-in prompt")?,
        Some(dir) => fs::read_to_string(dir.join(file))
            .with_context(|| format!("cannot read {}", dir.join(file).display()))?,
    };
    anyhow::ensure!(!text.trim().is_empty(), "the prompt file is empty");
    Ok(text)
}

/// Refuses condition paths that exist and resolve outside the project (symlinks).
pub fn check_paths_stay_inside(project: &Project, workflow: &Workflow) -> anyhow::Result<()> {
    for (i, stage) in workflow.stages.iter().enumerate() {
        for path in stage.exit_when.paths() {
            if let Err(pagent_engine::Probe::Outside) = probe::resolve_inside(&project.root, path) {
                bail!("stages[{i}].exit_when: {path} is a symlink that leads outside the project");
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
