//! What `pagent install` and `pagent uninstall` work on: where things go in the user's
//! folders, where the plugin comes from, the staged marketplace, and the record of what
//! the first install created.
//!
//! The plugin is installed from a staged copy of its files (about 100 KB), never from
//! the folder pagent came in: Claude Code copies a folder marketplace whole, and that
//! folder may be a checkout with a target/ of gigabytes, or npm's cache, which npm may
//! clean. A binary with no plugin folder near it (`cargo install pagent`, Homebrew, a
//! release archive) stages the copy of the plugin's files it carries ([`embedded`]).
//! The binary is copied into the plugin's data folder, where the hooks look first.
//!
//! "Leave the user's folders as they were": Claude Code creates its own bookkeeping
//! (settings.json, plugins/known_marketplaces.json, ...) when the first plugin arrives
//! and leaves them, emptied, when the last one goes. So the first install records which
//! of those paths did not exist yet ([`Record`]); uninstall removes those that are still
//! empty (an empty folder, or JSON with nothing but empty lists and maps), and nothing
//! that holds anything else.
//!
//! A folder pagent makes whole (the staged plugin, the plugin's data folder) carries its
//! marker file, [`MARKER`], and pagent deletes or replaces a folder only when it carries
//! it (or, for copies staged before markers existed, when it holds nothing but the
//! plugin's own files). `PAGENT_MARKETPLACE_DIR` pointing at a folder of the user's must
//! never cost them its content: such a folder is left, and install and uninstall say so.

pub mod claude;
pub mod files;
pub mod leftovers;
pub mod platform;
pub mod short_names;

use std::path::{Path, PathBuf};

use anyhow::Context;
use serde::{Deserialize, Serialize};

use crate::cli::env::InstallEnv;

/// The file in every folder pagent made whole, which lets it delete that folder later.
pub const MARKER: &str = ".pagent-owned";
const MARKER_TEXT: &str =
    "pagent made this folder (pagent install); pagent uninstall removes it with what it holds.\n";

/// What is staged: the plugin's files, nothing else.
const PLUGIN_ITEMS: &[&str] = &[
    ".claude-plugin",
    "hooks",
    "commands",
    "scripts",
    "agents",
    "skills",
    "README.md",
    "LICENSE",
];

#[derive(Debug)]
pub struct Layout {
    /// Claude Code's config folder.
    pub config_dir: PathBuf,
    /// Where the short command names go.
    pub commands_dir: PathBuf,
    /// The plugin's data folder (`CLAUDE_PLUGIN_DATA` of its hooks).
    pub data_dir: PathBuf,
    /// The binary the hooks run.
    pub data_bin: PathBuf,
    /// Claude Code's copy of the plugin, kept after an uninstall until it cleans it.
    pub plugin_cache: PathBuf,
    /// The staged marketplace folder.
    pub staging: PathBuf,
    /// What the first install created.
    pub record_file: PathBuf,
    /// Claude Code's own settings file (`~/.claude.json`, or in `CLAUDE_CONFIG_DIR`),
    /// which its first `claude plugin` command in a fresh HOME creates.
    pub claude_json: PathBuf,
    /// Folders above `staging` that pagent may create (the XDG defaults), deepest first.
    staging_parents: Vec<PathBuf>,
}

impl Layout {
    pub fn resolve(env: &InstallEnv) -> anyhow::Result<Layout> {
        let home = || {
            env.home.clone().context(if cfg!(windows) {
                "USERPROFILE is not set; set it (or CLAUDE_CONFIG_DIR and PAGENT_MARKETPLACE_DIR)"
            } else {
                "HOME is not set; set HOME (or CLAUDE_CONFIG_DIR and PAGENT_MARKETPLACE_DIR)"
            })
        };
        let config_dir = match &env.claude_config_dir {
            Some(dir) => dir.clone(),
            None => home()?.join(".claude"),
        };
        let (staging, staging_parents) = match &env.marketplace_dir {
            Some(dir) => (dir.clone(), Vec::new()),
            None => {
                let (data, mut parents) = match &env.xdg_data_home {
                    Some(dir) => (dir.clone(), Vec::new()),
                    None => {
                        let home = home()?;
                        let share = home.join(".local").join("share");
                        (share.clone(), vec![share, home.join(".local")])
                    }
                };
                parents.insert(0, data.join("pagent"));
                (data.join("pagent").join("marketplace"), parents)
            }
        };
        anyhow::ensure!(
            staging.is_absolute() && config_dir.is_absolute(),
            "the folders must be absolute paths: {} and {}",
            staging.display(),
            config_dir.display()
        );
        let claude_json = match &env.claude_config_dir {
            Some(dir) => dir.join(".claude.json"),
            None => home()?.join(".claude.json"),
        };
        let data_dir = config_dir
            .join("plugins")
            .join("data")
            .join("pagent-pagent");
        let mut record = staging.clone().into_os_string();
        record.push(".record.json");
        Ok(Layout {
            commands_dir: config_dir.join("commands"),
            // `pagent.exe` on Windows: the name the hooks' launchers look for there.
            data_bin: data_dir
                .join("bin")
                .join(format!("pagent{}", std::env::consts::EXE_SUFFIX)),
            data_dir,
            plugin_cache: config_dir
                .join("plugins")
                .join("cache")
                .join(claude::MARKETPLACE),
            record_file: PathBuf::from(record),
            claude_json,
            staging,
            staging_parents,
            config_dir,
        })
    }

    /// The launcher inside the staged plugin, which the short command names call. On
    /// Windows with forward slashes: Claude Code runs those commands' lines in Git Bash,
    /// which reads a backslash as an escape (and `C:/Users/...` as the same path).
    pub fn launcher(&self) -> PathBuf {
        let launcher = self.staging.join("scripts").join("pagent");
        #[cfg(windows)]
        let launcher = match launcher.to_str() {
            Some(text) => PathBuf::from(text.replace('\\', "/")),
            None => launcher, // not UTF-8: refused by launcher_is_plain
        };
        launcher
    }

    /// Paths an install may bring into being, parents before children.
    fn may_create(&self) -> Vec<PathBuf> {
        let c = &self.config_dir;
        let mut paths: Vec<PathBuf> = self.staging_parents.iter().rev().cloned().collect();
        paths.push(c.clone());
        paths.push(self.claude_json.clone());
        paths.extend(
            [
                "backups",
                "commands",
                "settings.json",
                "plugins",
                "plugins/cache",
                "plugins/data",
                "plugins/marketplaces",
                "plugins/installed_plugins.json",
                "plugins/known_marketplaces.json",
            ]
            // Component by component: one separator in each path, also on Windows.
            .map(|rel| rel.split('/').fold(c.clone(), |path, part| path.join(part))),
        );
        paths
    }
}

/// The plugin's files as this binary was built with them (`build.rs`): each file's path
/// in the plugin, with `/`, and its bytes.
pub mod embedded {
    include!(concat!(env!("OUT_DIR"), "/plugin_files.rs"));
}

/// Where the plugin's files come from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PluginSource {
    /// A plugin folder: a checkout, or the npm package.
    Folder(PathBuf),
    /// The copy this binary carries ([`embedded`]).
    Embedded,
}

/// The plugin to install: `--from`, else `$PAGENT_PLUGIN_SOURCE` (the npm package's
/// launcher sets it), else the nearest folder above this binary that is a pagent plugin
/// (a checkout for `target/release/pagent`), else the files this binary carries.
pub fn plugin_source(
    from: Option<&Path>,
    env: &InstallEnv,
    exe: &Path,
) -> anyhow::Result<PluginSource> {
    if let Some(dir) = from.or(env.plugin_source.as_deref()) {
        let dir = files::real_dir(dir)?;
        anyhow::ensure!(
            is_plugin(&dir),
            "{} is not a pagent plugin folder (no .claude-plugin/marketplace.json)",
            dir.display()
        );
        return Ok(PluginSource::Folder(dir));
    }
    Ok(exe
        .ancestors()
        .skip(1)
        .take(4)
        .find(|dir| is_plugin(dir))
        .map_or(PluginSource::Embedded, |dir| {
            PluginSource::Folder(dir.to_path_buf())
        }))
}

fn is_plugin(dir: &Path) -> bool {
    files::is_file(&dir.join(".claude-plugin/marketplace.json"))
        && files::is_file(&dir.join("hooks/hooks.json"))
}

/// Where the staged plugin carries the binary: in place of the launcher script its hooks
/// name. The hooks name `${CLAUDE_PLUGIN_ROOT}/scripts/pagent` in exec form (no shell),
/// so on Linux and macOS the binary staged under that name is what they start, with no
/// shell before it (issue 33: the launcher stays for a plugin from a git marketplace or
/// a checkout, which carry no binary). Claude Code on Windows starts that name as
/// `pagent.exe` when there is one, never as the shell script (nor as a `.cmd`): proven
/// with its Windows builds under Wine (`tests/e2e/installed.rs`).
pub const HOOK_EXE: &str = if cfg!(windows) {
    "scripts/pagent.exe"
} else {
    "scripts/pagent"
};

/// Stages the plugin's files from `source` in `staging`, and `hook_exe` (the binary) as
/// [`HOOK_EXE`]; `false` when they were there already, unchanged.
pub fn stage_plugin(
    source: &PluginSource,
    staging: &Path,
    hook_exe: Option<&Path>,
) -> anyhow::Result<bool> {
    if files::exists(staging) && !owned(staging) {
        anyhow::bail!(
            "{} holds files pagent did not put there (it has no {MARKER} marker); pagent will not replace it: \
             set PAGENT_MARKETPLACE_DIR to a new folder, or empty this one yourself",
            staging.display()
        );
    }
    let new = files::fresh_sibling(staging)?;
    match source {
        PluginSource::Folder(dir) => files::copy_items(dir, PLUGIN_ITEMS, &new)?,
        PluginSource::Embedded => write_embedded(&new)?,
    }
    if let Some(exe) = hook_exe {
        files::copy_executable(exe, &new.join(HOOK_EXE))?;
    }
    mark(&new)?;
    if files::same_tree(&new, staging) {
        files::remove_tree(&new)?;
        return Ok(false);
    }
    files::replace_dir(&new, staging)?;
    Ok(true)
}

/// Writes the plugin's files this binary carries into the new folder `dir`; the hooks'
/// launcher executable, as in the repository.
fn write_embedded(dir: &Path) -> anyhow::Result<()> {
    for (rel, bytes) in embedded::FILES {
        let mode = if rel.starts_with("scripts/") {
            0o755
        } else {
            0o644
        };
        let path = rel
            .split('/')
            .fold(dir.to_path_buf(), |p, part| p.join(part));
        files::write_atomic(&path, bytes, mode)?;
    }
    Ok(())
}

/// Puts pagent's marker in the folder `dir`, which pagent made whole.
pub fn mark(dir: &Path) -> anyhow::Result<()> {
    files::write_atomic(&dir.join(MARKER), MARKER_TEXT.as_bytes(), 0o644)
}

/// Whether pagent may delete the folder `dir`: it carries pagent's marker, it is empty,
/// or it holds nothing but what pagent stages or copies (an install from before markers).
pub fn owned(dir: &Path) -> bool {
    if !files::is_dir(dir) {
        return false;
    }
    if files::is_file(&dir.join(MARKER)) {
        return true;
    }
    if !files::only_files_and_folders(dir) {
        return false;
    }
    let Ok(files) = files::list_tree(dir) else {
        return false;
    };
    let staged_plugin = files::read_text(&dir.join(".claude-plugin/marketplace.json"))
        .ok()
        .flatten()
        .and_then(|t| serde_json::from_str::<serde_json::Value>(&t).ok())
        .is_some_and(|m| m["name"] == claude::MARKETPLACE);
    files.iter().all(|rel| {
        let top = rel
            .components()
            .next()
            .map(|c| c.as_os_str().to_string_lossy().into_owned());
        (staged_plugin && top.is_some_and(|t| PLUGIN_ITEMS.contains(&t.as_str())))
            || rel == Path::new(&format!("bin/pagent{}", std::env::consts::EXE_SUFFIX))
    })
}

/// The paths the first install created.
#[derive(Debug, Default, Serialize, Deserialize)]
pub struct Record {
    pub created: Vec<PathBuf>,
}

impl Record {
    /// Notes which of the paths an install may create are missing now, unless an earlier
    /// install already did (its record is the one that knows what was there before).
    pub fn take_before_install(layout: &Layout) -> anyhow::Result<()> {
        if files::exists(&layout.record_file) {
            return Ok(());
        }
        let record = Record {
            created: layout
                .may_create()
                .into_iter()
                .filter(|p| !files::exists(p))
                .collect(),
        };
        let json = serde_json::to_vec_pretty(&record)?;
        files::write_atomic(&layout.record_file, &json, 0o644)
    }

    pub fn read(layout: &Layout) -> Record {
        files::read_text(&layout.record_file)
            .ok()
            .flatten()
            .and_then(|t| serde_json::from_str(&t).ok())
            .unwrap_or_default()
    }

    /// The recorded paths still there (after [`Record::undo`]: those that hold something).
    pub fn left(&self) -> Vec<PathBuf> {
        self.created
            .iter()
            .filter(|p| files::exists(p))
            .cloned()
            .collect()
    }

    /// Removes the recorded paths that hold nothing now, deepest first; what it removed.
    pub fn undo(&self) -> Vec<PathBuf> {
        let mut paths = self.created.clone();
        paths.sort_by_key(|p| std::cmp::Reverse(p.components().count()));
        paths
            .into_iter()
            .filter(|p| {
                if files::is_dir(p) {
                    files::remove_empty_dir(p)
                } else {
                    files::read_text(p)
                        .ok()
                        .flatten()
                        .and_then(|t| serde_json::from_str::<serde_json::Value>(&t).ok())
                        .is_some_and(|v| holds_nothing(&v))
                        && files::remove_tree(p).unwrap_or(false)
                }
            })
            .collect()
    }
}

/// JSON with nothing in it but empty maps and lists (and a numeric `version`), as Claude
/// Code leaves its plugin bookkeeping when the last plugin is gone.
fn holds_nothing(value: &serde_json::Value) -> bool {
    use serde_json::Value;
    match value {
        Value::Object(map) => map
            .iter()
            .all(|(k, v)| (k == "version" && v.is_number()) || holds_nothing(v)),
        Value::Array(items) => items.is_empty(),
        _ => false,
    }
}

#[cfg(test)]
mod tests;
