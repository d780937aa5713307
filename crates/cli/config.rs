//! pagent's configuration files: the user's (`<config dir>/config.json`, beside the
//! secret) and the project's (`.claude/pagent/config.json`).
//!
//! ```json
//! {"backpressure": {"always": false, "checks": {"py": [{"command": ["mypy", "{file}"]}]}}}
//! ```
//!
//! The project's file is read only when a loop is set up, and what it says is sealed into
//! the state with the rest: a file committed to a repository cannot make pagent run
//! commands on its own. `always` (check edits in every session, loop or not) is honoured
//! only in the user's file, which no repository can write.

use std::fs;
use std::io::ErrorKind;
use std::path::{Path, PathBuf};

use anyhow::{Context, bail};
use pagent_engine::backpressure::BackpressureConfig;
use serde::Deserialize;

use crate::project::Project;

pub const FILE: &str = "config.json";

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ConfigFile {
    #[serde(default)]
    pub backpressure: Option<BackpressureConfig>,
}

pub fn user_config_path(config_dir: Option<&Path>) -> Option<PathBuf> {
    config_dir.map(|d| d.join(FILE))
}

pub fn project_config_path(project: &Project) -> PathBuf {
    project.pagent_dir().join(FILE)
}

/// Reads and validates a config file; `None` when there is none.
pub fn read_config(path: &Path) -> anyhow::Result<Option<ConfigFile>> {
    let text = match fs::read_to_string(path) {
        Ok(text) => text,
        Err(err) if err.kind() == ErrorKind::NotFound => return Ok(None),
        Err(err) => return Err(err).with_context(|| format!("cannot read {}", path.display())),
    };
    let file: ConfigFile = serde_json::from_str(&text)
        .with_context(|| format!("invalid pagent config {}", path.display()))?;
    if let Some(backpressure) = &file.backpressure {
        backpressure.validate().map_err(|e| {
            anyhow::anyhow!("invalid pagent config {}: backpressure.{e}", path.display())
        })?;
    }
    Ok(Some(file))
}

/// The project's backpressure settings, for sealing into a new loop's state.
pub fn project_backpressure(project: &Project) -> anyhow::Result<Option<BackpressureConfig>> {
    let path = project_config_path(project);
    let Some(file) = read_config(&path)? else {
        return Ok(None);
    };
    if file.backpressure.as_ref().is_some_and(|b| b.always) {
        bail!(
            "{}: backpressure.always is only honoured in your own {} (in pagent's config folder), not in a project",
            project.display_path(&path),
            FILE
        );
    }
    Ok(file.backpressure)
}
