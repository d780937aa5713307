//! The Claude Code CLI as `pagent install` drives it: `claude plugin ...` subcommands,
//! their JSON listings parsed with serde (never scraped), their output kept for the error
//! when one fails.
//!
//! Observed on 2.1.197, 2.1.330 and 2.1.332: `marketplace add DIR` of a folder already
//! registered says "already on disk" and succeeds; `plugin list --json` and `marketplace
//! list --json` print arrays (`id`/`installPath`, `name`/`source`, with `path` for a
//! folder, `url` for a git repository, `repo` for GitHub's `owner/name`), and since 2.1.332
//! the plugin list also holds Claude Code's built-in plugins (`...@builtin`, no
//! `installPath`), so entries are found by id, never by place; `remove`/`uninstall` of
//! something missing fails, so callers look first.
//!
//! Each call starts through the process door from a folder outside any project (the
//! user may run `pagent install` inside a cloned repository, whose `.claude/` must not
//! take part), with the cleaned `PATH`.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::Value;

use pagent_door::process::{Launch, NEUTRAL_DIR, Program, SearchPath};

pub const MARKETPLACE: &str = "pagent";
pub const PLUGIN_ID: &str = "pagent@pagent";

/// How long one `claude plugin` call may take.
const TIMEOUT: Duration = Duration::from_secs(300);
/// Bytes of its output kept (a JSON listing must arrive whole).
const KEEP: usize = 16 * 1024 * 1024;

/// A marketplace as `claude plugin marketplace list --json` lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Marketplace {
    /// The folder of a local (`directory`) marketplace.
    pub folder: Option<PathBuf>,
    /// Where it comes from, as the user would name it: the folder, the git URL, GitHub's
    /// `owner/name`.
    pub origin: String,
}

impl Marketplace {
    fn from_listing(entry: &Value) -> Marketplace {
        let text = |key: &str| entry[key].as_str().map(str::to_owned);
        let folder = (entry["source"] == "directory")
            .then(|| text("path"))
            .flatten()
            .map(PathBuf::from);
        let origin = text("path")
            .or_else(|| text("url"))
            .or_else(|| text("repo"))
            .or_else(|| text("installLocation"))
            .unwrap_or_default();
        Marketplace { folder, origin }
    }
}

/// An installed plugin: its id (`NAME@MARKETPLACE`) and Claude Code's copy of it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Installed {
    pub id: String,
    pub path: PathBuf,
}

#[derive(Debug)]
pub struct Claude {
    bin: PathBuf,
    search: SearchPath,
}

/// The first `claude` on the cleaned `path`.
pub fn find_on_path(search: &SearchPath) -> Option<PathBuf> {
    search.find("claude")
}

impl Claude {
    pub fn new(bin: PathBuf, search: SearchPath) -> Claude {
        Claude { bin, search }
    }

    pub fn bin(&self) -> &Path {
        &self.bin
    }

    /// Runs `claude ARGS` (stdin closed); its stdout, or an error with everything it said.
    fn run(&self, args: &[&OsStr]) -> anyhow::Result<String> {
        let out = Launch::new(
            Program::at(self.bin.clone()),
            Path::new(NEUTRAL_DIR),
            &self.search,
        )
        .args(args)
        .output(TIMEOUT, KEEP)
        .map_err(|why| anyhow::anyhow!("cannot run {}: {why}", self.bin.display()))?;
        if !out.success() {
            let words: Vec<_> = args.iter().map(|a| a.to_string_lossy()).collect();
            let status = match out.code {
                Some(code) => format!("exit status: {code}"),
                None if out.timed_out => format!("timed out after {} s", TIMEOUT.as_secs()),
                None => "killed by a signal".to_owned(),
            };
            anyhow::bail!(
                "`claude {}` failed ({status}): {}{}",
                words.join(" "),
                out.stdout.trim(),
                out.stderr.trim()
            );
        }
        Ok(out.stdout)
    }

    fn run_json(&self, args: &[&str]) -> anyhow::Result<Vec<Value>> {
        let args: Vec<&OsStr> = args.iter().map(OsStr::new).collect();
        let out = self.run(&args)?;
        anyhow::Context::with_context(serde_json::from_str(&out), || {
            format!(
                "`claude {}` did not print the JSON list pagent expects",
                args.iter()
                    .map(|a| a.to_string_lossy())
                    .collect::<Vec<_>>()
                    .join(" ")
            )
        })
    }

    /// The `pagent` marketplace, if one is registered.
    pub fn marketplace(&self) -> anyhow::Result<Option<Marketplace>> {
        Ok(self
            .run_json(&["plugin", "marketplace", "list", "--json"])?
            .iter()
            .find(|m| m["name"] == MARKETPLACE)
            .map(Marketplace::from_listing))
    }

    pub fn marketplace_add(&self, dir: &Path) -> anyhow::Result<()> {
        self.run(&[
            OsStr::new("plugin"),
            OsStr::new("marketplace"),
            OsStr::new("add"),
            dir.as_os_str(),
        ])
        .map(drop)
    }

    pub fn marketplace_remove(&self) -> anyhow::Result<()> {
        self.run(&[
            OsStr::new("plugin"),
            OsStr::new("marketplace"),
            OsStr::new("remove"),
            OsStr::new(MARKETPLACE),
        ])
        .map(drop)
    }

    /// The installed plugins named `pagent`, from whichever marketplace.
    pub fn pagent_plugins(&self) -> anyhow::Result<Vec<Installed>> {
        Ok(self
            .run_json(&["plugin", "list", "--json"])?
            .iter()
            .filter_map(|p| {
                let id = p["id"].as_str()?;
                id.starts_with("pagent@").then(|| Installed {
                    id: id.to_owned(),
                    path: PathBuf::from(p["installPath"].as_str().unwrap_or_default()),
                })
            })
            .collect())
    }

    pub fn plugin_install(&self) -> anyhow::Result<()> {
        self.run(&[
            OsStr::new("plugin"),
            OsStr::new("install"),
            OsStr::new(PLUGIN_ID),
        ])
        .map(drop)
    }

    /// `--keep-data` keeps the plugin's data folder (and the binary in it), which a plain
    /// uninstall deletes.
    pub fn plugin_uninstall(&self, keep_data: bool) -> anyhow::Result<()> {
        let mut args = vec![OsStr::new("plugin"), OsStr::new("uninstall")];
        if keep_data {
            args.push(OsStr::new("--keep-data"));
        }
        args.push(OsStr::new(PLUGIN_ID));
        self.run(&args).map(drop)
    }
}
