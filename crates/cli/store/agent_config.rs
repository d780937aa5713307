//! A project's agent configuration that can run commands, for `pagent loop`'s workers.
//!
//! A worker is the agent CLI started in the project, and each CLI reads the project's own
//! configuration: Claude Code its `.claude/settings.json` and `.claude/settings.local.json`
//! (hooks, MCP servers, plugins, helper commands, `permissions.allow`, `env`) and
//! `.mcp.json`; Codex its `.codex/` folder (config, hooks, rules); OpenCode its
//! `opencode.json`/`opencode.jsonc` and `.opencode/` folder (plugins, tools, MCP servers,
//! formatters). In print mode Claude Code shows no folder trust dialog, so a repository
//! the user never opened in it would run its hooks in a loop's first second. So such
//! configuration is a command source like a workflow with commands: listed when the
//! loop starts, refused until the user trusts its exact content (`pagent trust`, or
//! `--trust` in the same step); a folder is trusted as the manifest of its files.
//!
//! A `--command` agent is the user's own command line: what it reads is its business.
//! The reviewer never reads the project's configuration at all (`agent::review`).

use std::path::{Path, PathBuf};

use pagent_protocol::stream::AgentKind;
use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::store::SMALL_FILE_CAP;
use crate::store::consent::Source;
use crate::store::project::Project;

/// Claude Code's project settings files.
const CLAUDE_SETTINGS: &[&str] = &[".claude/settings.json", ".claude/settings.local.json"];
/// Claude Code's project MCP servers.
const CLAUDE_MCP: &str = ".mcp.json";
/// Codex's project folder.
const CODEX_DIR: &str = ".codex";
/// OpenCode's project files and folder.
const OPENCODE_FILES: &[&str] = &["opencode.json", "opencode.jsonc"];
const OPENCODE_DIR: &str = ".opencode";

/// Files of a configuration folder hashed at most (a larger one cannot be trusted).
const DIR_FILES_CAP: usize = 2_000;

/// Settings keys of Claude Code that run commands or widen what the agent may run.
const CLAUDE_COMMAND_KEYS: &[(&str, &str)] = &[
    ("hooks", "hooks"),
    ("mcpServers", "MCP servers"),
    ("enableAllProjectMcpServers", "every .mcp.json server"),
    ("enabledMcpjsonServers", ".mcp.json servers"),
    ("apiKeyHelper", "an API key helper command"),
    ("awsAuthRefresh", "an AWS auth command"),
    ("awsCredentialExport", "an AWS credential command"),
    ("otelHeadersHelper", "an OpenTelemetry headers command"),
    ("statusLine", "a status line command"),
    ("enabledPlugins", "plugins"),
    ("extraKnownMarketplaces", "plugin marketplaces"),
    ("env", "environment variables for every command"),
];

/// Every configuration file (or folder) of the project that `kind` would read and that
/// can make it run commands, as command sources.
pub fn sources(project: &Project, kind: AgentKind) -> Vec<Source> {
    match kind {
        AgentKind::Claude => claude_sources(project),
        AgentKind::Codex => dir_source(
            project,
            CODEX_DIR,
            "Codex's project config, hooks and rules",
        )
        .into_iter()
        .collect(),
        AgentKind::Opencode => OPENCODE_FILES
            .iter()
            .filter_map(|rel| file_source(project, rel, |_| vec![opencode_what()]))
            .chain(dir_source(
                project,
                OPENCODE_DIR,
                "OpenCode's project plugins, tools, commands and agents",
            ))
            .collect(),
    }
}

/// Every agent's configuration sources, for `pagent trust` with no path.
pub fn all_sources(project: &Project) -> Vec<Source> {
    [AgentKind::Claude, AgentKind::Codex, AgentKind::Opencode]
        .into_iter()
        .flat_map(|kind| sources(project, kind))
        .collect()
}

/// `rel` as an agent configuration source, if it is one (for `pagent trust PATH`).
pub fn named_source(project: &Project, rel: &Path) -> Option<Source> {
    all_sources(project)
        .into_iter()
        .find(|source| source.rel == rel)
}

fn claude_sources(project: &Project) -> Vec<Source> {
    let mut out: Vec<Source> = CLAUDE_SETTINGS
        .iter()
        .filter_map(|rel| file_source(project, rel, claude_settings_what))
        .filter(|source| !source.commands.is_empty())
        .collect();
    out.extend(file_source(project, CLAUDE_MCP, |bytes| {
        let names = serde_json::from_slice::<Value>(bytes)
            .ok()
            .and_then(|v| v.get("mcpServers").and_then(Value::as_object).cloned())
            .map(|servers| servers.keys().cloned().collect::<Vec<_>>().join(", "))
            .unwrap_or_default();
        vec![format!(
            "Claude Code MCP servers (started as commands): {names}"
        )]
    }));
    out
}

/// What a Claude Code settings file lets run: one line per key that runs commands (all
/// of it when the file is not JSON Claude Code would read).
fn claude_settings_what(bytes: &[u8]) -> Vec<String> {
    let Ok(Value::Object(settings)) = serde_json::from_slice::<Value>(bytes) else {
        return vec!["Claude Code settings pagent cannot read (they may hold hooks)".to_owned()];
    };
    let mut out = Vec::new();
    for (key, what) in CLAUDE_COMMAND_KEYS {
        let Some(value) = settings.get(*key) else {
            continue;
        };
        let names = match value {
            Value::Object(map) => map.keys().cloned().collect::<Vec<_>>().join(", "),
            _ => String::new(),
        };
        out.push(if names.is_empty() {
            format!("Claude Code {what}")
        } else {
            format!("Claude Code {what}: {names}")
        });
    }
    if let Some(permissions) = settings.get("permissions") {
        let allowed: Vec<&str> = permissions
            .get("allow")
            .and_then(Value::as_array)
            .map(|list| list.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        if !allowed.is_empty() {
            out.push(format!(
                "Claude Code tools allowed without asking: {}",
                allowed.join(", ")
            ));
        }
        if let Some(mode) = permissions.get("defaultMode").and_then(Value::as_str) {
            out.push(format!("Claude Code permission mode {mode}"));
        }
        if permissions.get("additionalDirectories").is_some() {
            out.push("Claude Code access to folders outside the project".to_owned());
        }
    }
    out
}

fn opencode_what() -> String {
    "OpenCode's project config (plugins, MCP servers, formatters, commands)".to_owned()
}

/// The file at `rel` as a source, if it exists, with `what` it allows.
fn file_source(
    project: &Project,
    rel: &str,
    what: impl Fn(&[u8]) -> Vec<String>,
) -> Option<Source> {
    let bytes = match project.dir().read_if_exists(Path::new(rel), SMALL_FILE_CAP) {
        Ok(Some(bytes)) => bytes,
        Ok(None) => return None,
        // A file pagent cannot read (too large, a FIFO) is still the agent's to read, and
        // its content cannot be pinned: never trusted (a fresh nonce every time).
        Err(err) => {
            let nonce: [u8; 16] = pagent_door::random_bytes().unwrap_or([0; 16]);
            return Some(Source {
                rel: PathBuf::from(rel),
                commands: vec![format!("{rel}, which pagent cannot read to trust ({err})")],
                bytes: nonce.to_vec(),
            });
        }
    };
    Some(Source {
        rel: PathBuf::from(rel),
        commands: what(&bytes),
        bytes,
    })
}

/// The folder at `rel` as a source, if it holds any file: its manifest is what is trusted.
fn dir_source(project: &Project, rel: &str, what: &str) -> Option<Source> {
    let dir = project.dir();
    let real = dir.real_dir(Path::new(rel)).ok()?;
    let mut manifest = String::new();
    let mut count = 0;
    for entry in dir.walk(Path::new(rel)).ok()?.sort_by_file_name() {
        let Ok(entry) = entry else { continue };
        if entry.file_type().is_dir() {
            continue;
        }
        let Ok(inner) = entry.path().strip_prefix(&real) else {
            continue;
        };
        count += 1;
        let file = Path::new(rel).join(inner);
        if count > DIR_FILES_CAP {
            manifest.push_str("more files than pagent hashes\n");
            break;
        }
        match dir.read(&file, SMALL_FILE_CAP * 16) {
            Ok(bytes) => manifest.push_str(&format!(
                "{}  {}\n",
                pagent_engine::seal::hex(&Sha256::digest(&bytes)),
                file.display()
            )),
            Err(err) => manifest.push_str(&format!("?  {} ({err})\n", file.display())),
        }
    }
    (count > 0).then(|| Source {
        rel: PathBuf::from(rel),
        bytes: manifest.into_bytes(),
        commands: vec![what.to_owned()],
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settings_that_run_nothing_are_not_listed_and_the_rest_say_what_runs() {
        assert!(
            claude_settings_what(br#"{"model": "opus", "permissions": {"deny": ["Bash"]}}"#)
                .is_empty()
        );
        assert_eq!(
            claude_settings_what(
                br#"{"hooks": {"Stop": [], "PreToolUse": []}, "permissions": {"allow": ["Bash(make)"]}}"#
            ),
            [
                "Claude Code hooks: PreToolUse, Stop",
                "Claude Code tools allowed without asking: Bash(make)"
            ]
        );
        assert_eq!(
            claude_settings_what(b"{ not json"),
            ["Claude Code settings pagent cannot read (they may hold hooks)"]
        );
    }
}
