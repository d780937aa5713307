//! The Claude Code CLI as `pagent install` drives it: `claude plugin ...` subcommands,
//! their JSON listings parsed with serde (never scraped), their output kept for the error
//! when one fails.
//!
//! Observed on 2.1.197 and 2.1.330: `marketplace add DIR` of a folder already registered
//! says "already on disk" and succeeds; `plugin list --json` and `marketplace list --json`
//! print arrays (`id`/`installPath`, `name`/`path`); `remove`/`uninstall` of something
//! missing fails, so callers look first.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use anyhow::Context;
use serde_json::Value;

pub const MARKETPLACE: &str = "pagent";
pub const PLUGIN_ID: &str = "pagent@pagent";

#[derive(Debug)]
pub struct Claude {
    bin: PathBuf,
}

/// The first `claude` on `path` that is an executable file.
pub fn find_on_path(path: Option<&OsStr>) -> Option<PathBuf> {
    std::env::split_paths(path?)
        .filter(|dir| dir.is_absolute())
        .map(|dir| dir.join("claude"))
        .find(|c| crate::store::door::is_executable_file(c))
}

impl Claude {
    pub fn new(bin: PathBuf) -> Claude {
        Claude { bin }
    }

    pub fn bin(&self) -> &Path {
        &self.bin
    }

    /// Runs `claude ARGS` (stdin closed); its stdout, or an error with everything it said.
    fn run(&self, args: &[&OsStr]) -> anyhow::Result<String> {
        let out = Command::new(&self.bin)
            .args(args)
            .stdin(Stdio::null())
            .output()
            .with_context(|| format!("cannot run {}", self.bin.display()))?;
        let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
        if !out.status.success() {
            let words: Vec<_> = args.iter().map(|a| a.to_string_lossy()).collect();
            anyhow::bail!(
                "`claude {}` failed ({}): {}{}",
                words.join(" "),
                out.status,
                stdout.trim(),
                String::from_utf8_lossy(&out.stderr).trim()
            );
        }
        Ok(stdout)
    }

    fn run_json(&self, args: &[&str]) -> anyhow::Result<Vec<Value>> {
        let args: Vec<&OsStr> = args.iter().map(OsStr::new).collect();
        let out = self.run(&args)?;
        serde_json::from_str(&out).with_context(|| {
            format!(
                "`claude {}` did not print the JSON list pagent expects",
                args.iter()
                    .map(|a| a.to_string_lossy())
                    .collect::<Vec<_>>()
                    .join(" ")
            )
        })
    }

    /// The folder the `pagent` marketplace is registered with, if it is.
    pub fn marketplace_path(&self) -> anyhow::Result<Option<PathBuf>> {
        Ok(self
            .run_json(&["plugin", "marketplace", "list", "--json"])?
            .iter()
            .find(|m| m["name"] == MARKETPLACE)
            .map(|m| PathBuf::from(m["path"].as_str().unwrap_or_default())))
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

    /// The folder of the installed plugin's copy, if it is installed.
    pub fn installed_path(&self) -> anyhow::Result<Option<PathBuf>> {
        Ok(self
            .run_json(&["plugin", "list", "--json"])?
            .iter()
            .find(|p| p["id"] == PLUGIN_ID)
            .map(|p| PathBuf::from(p["installPath"].as_str().unwrap_or_default())))
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
