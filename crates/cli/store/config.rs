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

use std::path::{Path, PathBuf};

use anyhow::{Context, bail};
use pagent_engine::backpressure::BackpressureConfig;
use serde::Deserialize;

use crate::store::project::{CONFIG_FILE, Project};
use crate::store::{SMALL_FILE_CAP, door};

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

/// Reads and validates the user's config file; `None` when there is none.
pub fn read_config(path: &Path) -> anyhow::Result<Option<ConfigFile>> {
    let bytes = match door::read_outside(path, SMALL_FILE_CAP) {
        Ok(bytes) => bytes,
        Err(err) if err.is_missing() => return Ok(None),
        Err(err) => return Err(err).with_context(|| format!("cannot read {}", path.display())),
    };
    parse_config(&bytes, &path.display().to_string()).map(Some)
}

fn parse_config(bytes: &[u8], shown: &str) -> anyhow::Result<ConfigFile> {
    let file: ConfigFile =
        serde_json::from_slice(bytes).with_context(|| format!("invalid pagent config {shown}"))?;
    if let Some(backpressure) = &file.backpressure {
        backpressure
            .validate()
            .map_err(|e| anyhow::anyhow!("invalid pagent config {shown}: backpressure.{e}"))?;
    }
    Ok(file)
}

/// The project's config file: its bytes (for trust) and its backpressure settings, for
/// sealing into a new loop's state; `None` when the project has none.
pub fn project_backpressure(
    project: &Project,
) -> anyhow::Result<Option<(Vec<u8>, Option<BackpressureConfig>)>> {
    let Some(bytes) = project
        .dir()
        .read_if_exists(Path::new(CONFIG_FILE), SMALL_FILE_CAP)
        .with_context(|| format!("cannot read {CONFIG_FILE}"))?
    else {
        return Ok(None);
    };
    let file = parse_config(&bytes, CONFIG_FILE)?;
    if file.backpressure.as_ref().is_some_and(|b| b.always) {
        bail!(
            "{CONFIG_FILE}: backpressure.always is only honoured in your own {FILE} (in pagent's config folder), not in a project"
        );
    }
    Ok(Some((bytes, file.backpressure)))
}
