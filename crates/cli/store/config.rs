//! pagent's configuration files: the user's (`<config dir>/config.json`, beside the
//! secret) and the project's (`.claude/pagent/config.json`).
//!
//! ```json
//! {"backpressure": {"always": false, "checks": {"py": [{"command": ["mypy", "{file}"]}]}},
//!  "prices": {"claude-sonnet-4": {"input": 3, "output": 15}},
//!  "notify": {"desktop": true, "command": ["my-notifier", "{message}"]},
//!  "logs": {"max_mb": 256},
//!  "loop": {"idle_timeout": 1200, "outage_wait": 7200}}
//! ```
//!
//! The project's file is read only when a loop is set up, and what it says is sealed into
//! the state with the rest: a file committed to a repository cannot make pagent run
//! commands on its own. `always` (check edits in every session, loop or not) is honoured
//! only in the user's file, which no repository can write. So are `prices` (a project that
//! priced tokens at zero would disarm the user's cost budget), `notify` (a command run
//! when any loop ends), `logs` (how much of the user's disk a project's logs take) and
//! `loop` (how long a loop waits and retries, `tuning.rs`: a project that set it could
//! keep a night's run waiting on nothing).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::{Context, bail};
use pagent_engine::backpressure::BackpressureConfig;
use pagent_engine::usage::{Price, PriceSource, Prices};
use serde::Deserialize;

use crate::store::SMALL_FILE_CAP;
use crate::store::project::{CONFIG_FILE, Project};
use crate::store::tuning::Tuning;
use crate::store::user::UserDir;
use pagent_door::files;

pub const FILE: &str = "config.json";

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ConfigFile {
    #[serde(default)]
    pub backpressure: Option<BackpressureConfig>,
    /// Prices per model-name prefix, in US dollars per million tokens, over pagent's
    /// built-in list prices.
    #[serde(default)]
    pub prices: Option<BTreeMap<String, PriceEntry>>,
    /// What to do when a loop ends; off unless set.
    #[serde(default)]
    pub notify: Option<NotifyConfig>,
    /// How much the run and review logs of a project may take.
    #[serde(default)]
    pub logs: Option<LogsConfig>,
    /// How a loop times and retries its agent (`tuning.rs`).
    #[serde(default, rename = "loop")]
    pub tuning: Option<BTreeMap<String, u64>>,
}

/// The cap on a project's run and review logs (`.claude/pagent/runs/`).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LogsConfig {
    /// Mebibytes kept, the oldest files dropped first [default: 256, at least 1].
    #[serde(default)]
    pub max_mb: Option<u64>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PriceEntry {
    pub input: f64,
    pub output: f64,
    /// Default: a tenth of `input` (Anthropic's cache-read rate).
    #[serde(default)]
    pub cache_read: Option<f64>,
    /// Default: 1.25 times `input` (Anthropic's 5-minute cache-write rate).
    #[serde(default)]
    pub cache_write: Option<f64>,
}

/// Notifications when a loop ends (complete, gave up, cancelled).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NotifyConfig {
    /// A desktop notification (`notify-send`, or `osascript` on macOS) when one is there.
    #[serde(default)]
    pub desktop: bool,
    /// A program and its arguments; `{message}`, `{status}`, `{workflow}` and `{project}`
    /// are replaced, and the same values are in `PAGENT_NOTIFY_*` variables.
    #[serde(default)]
    pub command: Option<Vec<String>>,
    /// Seconds before the command is killed [default: 10, at most 300].
    #[serde(default)]
    pub timeout: Option<u64>,
}

pub fn user_config_path(user_dir: &UserDir) -> Option<PathBuf> {
    let config_dir = user_dir.path();
    config_dir.map(|d| d.join(FILE))
}

/// Reads and validates the user's config file; `None` when there is none.
pub fn read_config(path: &Path) -> anyhow::Result<Option<ConfigFile>> {
    let bytes = match files::read_outside(path, SMALL_FILE_CAP) {
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
    for (prefix, entry) in file.prices.iter().flatten() {
        price_of(prefix, entry)
            .with_context(|| format!("invalid pagent config {shown}: prices.{prefix}"))?;
    }
    if let Some(section) = &file.tuning {
        crate::store::tuning::check(section)
            .map_err(|why| anyhow::anyhow!("invalid pagent config {shown}: loop.{why}"))?;
    }
    if file.logs.as_ref().and_then(|l| l.max_mb) == Some(0) {
        bail!("invalid pagent config {shown}: logs.max_mb must be at least 1");
    }
    if let Some(command) = file.notify.as_ref().and_then(|n| n.command.as_ref())
        && command.first().is_none_or(|p| p.trim().is_empty())
    {
        bail!("invalid pagent config {shown}: notify.command needs a program");
    }
    Ok(file)
}

fn price_of(prefix: &str, entry: &PriceEntry) -> anyhow::Result<Price> {
    use pagent_engine::usage::per_million;
    let money = |value: f64, what: &str| {
        per_million(value).ok_or_else(|| {
            anyhow::anyhow!(
                "{what} must be a number of dollars from 0 to 100000 per million tokens"
            )
        })
    };
    anyhow::ensure!(!prefix.trim().is_empty(), "a model prefix cannot be empty");
    Ok(Price {
        prefix: prefix.trim().to_owned(),
        input: money(entry.input, "input")?,
        output: money(entry.output, "output")?,
        cache_read: money(entry.cache_read.unwrap_or(entry.input * 0.1), "cache_read")?,
        cache_write: money(
            entry.cache_write.unwrap_or(entry.input * 1.25),
            "cache_write",
        )?,
        source: PriceSource::User,
    })
}

/// The price table: the user's prices over the built-in ones. A config that cannot be
/// read or is invalid gives the built-in table (status then names pagent's list prices
/// as the source; set-up and the hooks report the broken config themselves).
pub fn read_prices(user_dir: &UserDir) -> Prices {
    let Some(path) = user_config_path(user_dir) else {
        return Prices::built_in();
    };
    match read_config(&path) {
        Ok(Some(file)) => {
            let user = file
                .prices
                .iter()
                .flatten()
                .filter_map(|(prefix, entry)| price_of(prefix, entry).ok())
                .collect();
            Prices::with_user(user)
        }
        Ok(None) => Prices::built_in(),
        Err(_) => Prices::built_in(),
    }
}

/// The JSON Schema of `config.json` (published as `docs/schemas/config.schema.json`):
/// [`ConfigFile`]'s keys, with the limits [`parse_config`] checks. A project's file may
/// hold only `backpressure` (without `always`); the schema describes the user's, the
/// larger of the two.
pub fn schema() -> serde_json::Value {
    use serde_json::json;
    let dollars = |what: &str| json!({"type": "number", "minimum": 0, "maximum": 100_000, "description": what});
    json!({
        "$schema": pagent_engine::schema::DRAFT,
        "title": "pagent config.json",
        "description": "pagent's settings: yours in pagent's config folder, a project's in .claude/pagent/config.json (backpressure only).",
        "type": "object",
        "properties": {
            "backpressure": pagent_engine::schema::backpressure(true),
            "prices": {
                "type": "object",
                "description": "Prices per model-name prefix, in US dollars per million tokens, over pagent's built-in list prices (your own config only).",
                "propertyNames": {"pattern": "\\S"},
                "additionalProperties": {
                    "type": "object",
                    "required": ["input", "output"],
                    "properties": {
                        "input": dollars("Input tokens."),
                        "output": dollars("Output tokens."),
                        "cache_read": dollars("Cache reads [default: a tenth of input]."),
                        "cache_write": dollars("Cache writes [default: 1.25 times input]."),
                    },
                    "additionalProperties": false,
                },
            },
            "notify": {
                "type": "object",
                "description": "What to do when a loop ends (your own config only).",
                "properties": {
                    "desktop": {"type": "boolean", "default": false},
                    "command": {
                        "type": "array", "minItems": 1, "items": {"type": "string"},
                        "prefixItems": [{"type": "string", "pattern": "\\S"}],
                        "description": "A program and its arguments; {message}, {status}, {workflow} and {project} are replaced.",
                    },
                    "timeout": {
                        "type": "integer", "minimum": 0,
                        "description": "Seconds before the command is killed [default: 10; 1 to 300].",
                    },
                },
                "additionalProperties": false,
            },
            "logs": {
                "type": "object",
                "description": "How much a project's run and review logs may take (your own config only).",
                "properties": {
                    "max_mb": {
                        "type": "integer", "minimum": 1,
                        "description": "Mebibytes kept, the oldest files dropped first [default: 256].",
                    },
                },
                "additionalProperties": false,
            },
            "loop": crate::store::tuning::schema(),
        },
        "additionalProperties": false,
    })
}

/// Whether `bytes` is a valid user config file, as [`read_config`] judges it.
pub fn check(bytes: &[u8]) -> anyhow::Result<()> {
    check_parsed(bytes).map(|_| ())
}

/// `bytes` as [`read_config`] reads a user config file.
pub fn check_parsed(bytes: &[u8]) -> anyhow::Result<ConfigFile> {
    parse_config(bytes, "config.json")
}

/// The user's tuning of a loop (`tuning.rs`): the defaults under the `loop` section of
/// their own config. A config that cannot be read or is invalid is an error: a loop does
/// not run a night on settings the user did not write.
pub fn read_tuning(user_dir: &UserDir) -> anyhow::Result<Tuning> {
    let section = match user_config_path(user_dir) {
        Some(path) => read_config(&path)?.and_then(|file| file.tuning),
        None => None,
    };
    Ok(Tuning::with(&section.unwrap_or_default()))
}

/// The most bytes a project's run and review logs may take: the user's `logs.max_mb`, or
/// [`LOGS_CAP`](crate::store::runs::LOGS_CAP) (also for a config that cannot be read;
/// set-up and the hooks report a broken config themselves).
pub fn logs_cap(user_dir: &UserDir) -> u64 {
    user_config_path(user_dir)
        .and_then(|path| read_config(&path).ok().flatten())
        .and_then(|file| file.logs?.max_mb)
        .map_or(crate::store::runs::LOGS_CAP, |mb| {
            mb.saturating_mul(1 << 20)
        })
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
    if file.prices.is_some()
        || file.notify.is_some()
        || file.logs.is_some()
        || file.tuning.is_some()
    {
        bail!(
            "{CONFIG_FILE}: prices, notify, logs and loop are only honoured in your own {FILE} (in pagent's config folder), not in a project"
        );
    }
    if file.backpressure.as_ref().is_some_and(|b| b.always) {
        bail!(
            "{CONFIG_FILE}: backpressure.always is only honoured in your own {FILE} (in pagent's config folder), not in a project"
        );
    }
    Ok(Some((bytes, file.backpressure)))
}
