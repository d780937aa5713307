//! Which project files can make pagent run a command, and whether the user consented to
//! each one's exact content (the hashes are in `store::trust`).
//!
//! A command source is: a project workflow whose conditions or backpressure run commands
//! (or turn the backpressure gate off), a plan's validation commands (a ralphex
//! `## Validation Commands`), the project's `.claude/pagent/config.json` when
//! it configures commands (or turns the gate off), and a program of the project's own
//! that a built-in check would run: the TypeScript package (`node_modules/typescript`,
//! also named by its `node_modules/.bin/tsc` stub) and `cargo check` of a crate (named by
//! its `Cargo.toml`). For those two, trust covers the files `store::covers` lists, not
//! just the file named. And an agent's project configuration that can run commands
//! (`store::agent_config`), which `pagent loop` needs trusted before a worker starts.
//! Set-up refuses an untrusted source with the commands it would
//! allow and the exact command that trusts it; the hooks skip an untrusted program and
//! say so once.

use std::path::{Path, PathBuf};

use anyhow::bail;

pub use crate::store::project::rel_in_project;
use crate::store::project::{CONFIG_FILE, Project, WORKFLOWS_DIR};
use crate::store::trust::{self, Verdict};
use crate::store::user::UserDir;
use crate::store::{SMALL_FILE_CAP, covers};

/// Project-local programs that built-in checks run, with what running them means.
pub const LOCAL_PROGRAMS: &[(&str, &str)] = &[
    (
        covers::TYPESCRIPT,
        "tsc --noEmit (the project's own TypeScript package, run with node, on edited .ts files)",
    ),
    (
        "Cargo.toml",
        "cargo check (builds the crate, running its build scripts and proc macros, on edited .rs files)",
    ),
];

/// A project file that can make pagent run commands.
#[derive(Debug, Clone)]
pub struct Source {
    /// Relative to the project root.
    pub rel: PathBuf,
    pub bytes: Vec<u8>,
    pub commands: Vec<String>,
}

impl Source {
    fn absolute(&self, project: &Project) -> PathBuf {
        project.root.join(&self.rel)
    }
}

/// The trust verdict of `source`.
pub fn verdict(project: &Project, user_dir: &UserDir, source: &Source) -> Verdict {
    trust::verdict(user_dir, &source.absolute(project), &source.bytes)
}

/// Makes sure every source is trusted: trusts them when `trust_now` (the `--trust` flag),
/// else refuses with what they would run and how to trust them. Returns lines for the
/// set-up's output.
pub fn require(
    project: &Project,
    user_dir: &UserDir,
    sources: &[Source],
    trust_now: bool,
    now: &str,
) -> anyhow::Result<Vec<String>> {
    let mut notes = Vec::new();
    let mut refused = Vec::new();
    for source in sources {
        match verdict(project, user_dir, source) {
            Verdict::Trusted => {}
            _ if trust_now => {
                trust::trust(
                    user_dir,
                    &source.absolute(project),
                    &source.bytes,
                    source.commands.clone(),
                    now,
                )?;
                notes.push(format!("trusted {} (--trust)", source.rel.display()));
            }
            why => refused.push((source, why)),
        }
    }
    if refused.is_empty() {
        return Ok(notes);
    }
    let mut text = String::from(
        "this loop would run commands from the project's files, and you have not trusted them:",
    );
    for (source, why) in &refused {
        let state = if *why == Verdict::Changed {
            "changed since you trusted it"
        } else {
            "not trusted"
        };
        text.push_str(&format!(
            "\n  {} ({state}) would run:",
            source.rel.display()
        ));
        for command in &source.commands {
            text.push_str(&format!("\n    {command}"));
        }
    }
    let paths: Vec<String> = refused
        .iter()
        .map(|(s, _)| shell_word(&s.rel.display().to_string()))
        .collect();
    text.push_str(&format!(
        "\nRead them, then run `pagent trust {}` (or start again with --trust).",
        paths.join(" ")
    ));
    bail!(text)
}

/// The workflow file as a command source, if it comes from the project and runs commands.
pub fn workflow_source(loaded: &crate::store::workflows::LoadedWorkflow) -> Option<Source> {
    let crate::store::workflows::Origin::Project(rel) = &loaded.origin else {
        return None;
    };
    let commands = loaded.workflow.commands();
    (!commands.is_empty()).then(|| Source {
        rel: rel.clone(),
        bytes: loaded.bytes.clone(),
        commands,
    })
}

/// The project's config as a command source, if it configures commands.
pub fn config_source(
    bytes: &[u8],
    backpressure: Option<&pagent_engine::backpressure::BackpressureConfig>,
) -> Option<Source> {
    let commands = backpressure.map(|b| b.commands()).unwrap_or_default();
    (!commands.is_empty()).then(|| Source {
        rel: PathBuf::from(CONFIG_FILE),
        bytes: bytes.to_vec(),
        commands,
    })
}

/// A plan's validation commands as a command source: consent covers exactly the
/// commands, not the whole file, so the ticks a stories loop makes do not revoke it.
pub fn plan_source(rel: &Path, plan: &pagent_stories::Plan) -> Option<Source> {
    (!plan.checks.is_empty()).then(|| Source {
        rel: rel.to_path_buf(),
        bytes: format!("pagent plan checks\n{}\n", plan.checks.join("\n")).into_bytes(),
        commands: plan.checks.clone(),
    })
}

/// A project-local program (one of [`LOCAL_PROGRAMS`], at `rel`) as a source: its bytes
/// are the manifest of what trusting it covers (`store::covers`). `None` when `rel`
/// names no such program, or it is not there.
pub fn program_source(project: &Project, rel: &Path) -> Option<Source> {
    let (rel, manifest, what) = if let Some(package) = covers::typescript_package(rel) {
        let manifest = covers::package_manifest(project, &package).ok()?;
        (package, manifest, LOCAL_PROGRAMS[0].1)
    } else if rel.file_name().is_some_and(|n| n == "Cargo.toml") {
        let manifest = covers::cargo_manifest(project, rel).ok()?;
        (rel.to_path_buf(), manifest, LOCAL_PROGRAMS[1].1)
    } else {
        return None;
    };
    Some(Source {
        rel,
        bytes: manifest,
        commands: vec![what.to_owned()],
    })
}

/// Every command source the project has now: its workflows, its config, the programs of
/// [`LOCAL_PROGRAMS`] at its root, and every agent's project configuration.
pub fn project_sources(project: &Project) -> anyhow::Result<Vec<Source>> {
    let mut sources = Vec::new();
    for name in project
        .dir()
        .list(Path::new(WORKFLOWS_DIR))
        .unwrap_or_default()
    {
        let rel = Path::new(WORKFLOWS_DIR).join(&name);
        if rel.extension().is_none_or(|e| e != "json") {
            continue;
        }
        if let Some(source) = file_source(project, &rel)? {
            sources.push(source);
        }
    }
    if let Some(source) = file_source(project, Path::new(CONFIG_FILE))? {
        sources.push(source);
    }
    for (rel, _) in LOCAL_PROGRAMS {
        if let Some(source) = program_source(project, Path::new(rel)) {
            sources.push(source);
        }
    }
    sources.extend(crate::store::agent_config::all_sources(project));
    Ok(sources)
}

/// `rel` as a command source: a workflow, the config, a local program, or an agent's
/// project configuration.
pub fn file_source(project: &Project, rel: &Path) -> anyhow::Result<Option<Source>> {
    if let Some(source) = program_source(project, rel) {
        return Ok(Some(source));
    }
    if let Some(source) = crate::store::agent_config::named_source(project, rel) {
        return Ok(Some(source));
    }
    let Some(bytes) = project.dir().read_if_exists(rel, SMALL_FILE_CAP)? else {
        return Ok(None);
    };
    if rel == Path::new(CONFIG_FILE) {
        let (_, backpressure) =
            crate::store::config::project_backpressure(project)?.unwrap_or((bytes.clone(), None));
        return Ok(config_source(&bytes, backpressure.as_ref()));
    }
    let text = std::str::from_utf8(&bytes)
        .map_err(|_| anyhow::anyhow!("{} is not UTF-8 text", rel.display()))?;
    // A plan other than prd.json (which runs nothing) is Markdown, never a workflow.
    if rel.extension().is_none_or(|e| e != "json")
        && let Ok(plan) = pagent_stories::Plan::read(text, None)
    {
        return Ok(plan_source(rel, &plan));
    }
    let value: serde_json::Value = serde_json::from_str(text)
        .map_err(|e| anyhow::anyhow!("{} is not a workflow: {e}", rel.display()))?;
    if value.is_array() {
        return Ok(tasks_source(rel, &bytes));
    }
    let workflow = pagent_engine::Workflow::from_json(&value, "workflow")
        .map_err(|e| anyhow::anyhow!("{} is not a valid workflow: {e}", rel.display()))?;
    let commands = workflow.commands();
    Ok((!commands.is_empty()).then(|| Source {
        rel: rel.to_path_buf(),
        bytes,
        commands,
    }))
}

/// A `pagent parallel` tasks file (a JSON list) as a command source: the `check` of each
/// task, the file's bytes what is trusted. `None` when no task has a check.
pub fn tasks_source(rel: &Path, bytes: &[u8]) -> Option<Source> {
    let value: serde_json::Value = serde_json::from_slice(bytes).ok()?;
    let commands: Vec<String> = value
        .as_array()?
        .iter()
        .filter_map(|task| task.get("check")?.as_str())
        .map(str::to_owned)
        .collect();
    (!commands.is_empty()).then(|| Source {
        rel: rel.to_path_buf(),
        bytes: bytes.to_vec(),
        commands,
    })
}

/// Whether a check may run the project-local program at `rel` (trusted content).
pub fn program_trusted(project: &Project, user_dir: &UserDir, rel: &Path) -> Verdict {
    match program_source(project, rel) {
        Some(source) => verdict(project, user_dir, &source),
        None => Verdict::Untrusted,
    }
}

/// `text` quoted for a POSIX shell when it needs it.
pub fn shell_word(text: &str) -> String {
    if !text.is_empty()
        && text
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"/._-+:@".contains(&b))
    {
        text.to_owned()
    } else {
        format!("'{}'", text.replace('\'', "'\\''"))
    }
}
