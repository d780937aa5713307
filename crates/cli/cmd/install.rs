//! `pagent install` and `pagent uninstall`: set pagent up for Claude Code, and undo it.
//!
//! Install, each step checking what is there first so that running it again changes
//! nothing: the plugin's files staged as a local marketplace, the marketplace registered
//! and the plugin installed with Claude Code's own `claude plugin` commands, the binary
//! copied into the plugin's data folder (where the hooks run it directly), and the short
//! command names written. Without `claude` on PATH only the binary is put in place. A
//! pagent plugin the user installed from a marketplace of their choice (this repository
//! as a git marketplace, a plugin directory) is kept, and so is that marketplace: the
//! install then only brings the binary its hooks run, and the short names.
//! Uninstall removes each of those, says what it removed, and then what the first install
//! created and is empty again (see `install/mod.rs`); what it leaves it names, with the
//! reason, and `--purge` takes pagent's config folder too (see `install/leftovers.rs`).
//! A folder is replaced or removed only when it carries pagent's marker
//! (`install::MARKER`); one that does not is left, and both commands say so.
//! `scripts/install.sh` builds from source and then runs this; `npx pagent install` runs
//! it from the npm package.

use std::cell::RefCell;
use std::io::Write;
use std::path::{Path, PathBuf};

use crate::cli::args::{InstallArgs, UninstallArgs};
use crate::cli::env::Env;
use crate::cli::exit::ExitStatus;
use crate::install::claude::{self, Claude};
use crate::install::short_names::{self, Outcome};
use crate::install::{
    Layout, MARKER, PluginSource, Record, files, leftovers, mark, owned, platform, plugin_source,
    stage_plugin,
};
use crate::io::Io;
use pagent_door::process::{Program, SearchPath};

/// `pagent VERB: MESSAGE` on stdout, as a closure the steps below can share.
fn sayer<'a>(verb: &'a str, stdout: &'a RefCell<&mut dyn Write>) -> impl Fn(&str) + 'a {
    move |message| {
        let _ = writeln!(stdout.borrow_mut(), "pagent {verb}: {message}");
    }
}

fn find_claude(explicit: Option<&Path>, env: &Env) -> Option<Claude> {
    // No empty or relative PATH entry: the folder `pagent install` runs in may be a
    // cloned repository.
    let search = SearchPath::new(env.path.as_deref(), &[]);
    explicit
        .map(|p| {
            Program::named_by_user(p, env.current_dir.as_deref())
                .path()
                .to_path_buf()
        })
        .or_else(|| claude::find_on_path(&search))
        .map(|bin| Claude::new(bin, search))
}

pub fn install(env: &Env, args: &InstallArgs, io: &mut Io) -> anyhow::Result<ExitStatus> {
    let stdout: RefCell<&mut dyn Write> = RefCell::new(&mut *io.stdout);
    let say = sayer("install", &stdout);
    let layout = Layout::resolve(&env.install)?;
    let exe = files::real_exe(env)?;
    let binary = match &args.binary {
        Some(path) => files::real_file(path)?,
        None => exe.clone(),
    };
    // Before any step: a binary the hooks cannot run here would make every hook fail.
    if let Some(why) = platform::refusal(&files::read_head(&binary, platform::HEAD)?) {
        anyhow::bail!("{} {why}", binary.display());
    }
    let source = plugin_source(args.from.as_deref(), &env.install, &exe)?;
    let claude = find_claude(args.claude.as_deref(), env);
    Record::take_before_install(&layout)?;

    let Some(claude) = claude else {
        copy_binary(&binary, &layout, &say)?;
        say(&match &source {
            PluginSource::Folder(dir) => format!(
                "claude is not on PATH: skipped the plugin. Once Claude Code is installed, run `pagent install` again, or load the plugin for one session with: claude --plugin-dir {}",
                dir.display()
            ),
            PluginSource::Embedded => "claude is not on PATH: skipped the plugin. Once Claude Code is installed, run `pagent install` again.".to_owned(),
        });
        return Ok(ExitStatus::Success);
    };

    // The hooks start the binary staged in the plugin: one process each, no shell.
    if stage_plugin(&source, &layout.staging, Some(&binary))? {
        say(&format!(
            "staged the plugin files in {}",
            layout.staging.display()
        ));
    } else {
        say(&format!(
            "the plugin files in {} are up to date",
            layout.staging.display()
        ));
    }

    install_plugin(&claude, &layout, &say)?;
    copy_binary(&binary, &layout, &say)?;

    if args.no_short_commands {
        say(
            "skipped the short command names (--no-short-commands); the plugin's /pagent:... names work",
        );
    } else {
        install_short_names(&layout, &say)?;
    }
    say(&format!(
        "done ({}): start a new Claude Code session and try /pagent:ralph",
        claude.bin().display()
    ));
    Ok(ExitStatus::Success)
}

/// The plugin in Claude Code: pagent's own marketplace (the staged folder) and the plugin
/// from it; or, when the user installed pagent's plugin from a marketplace of their own
/// choice, that plugin and marketplace, kept as they are. Its hooks find the binary in
/// pagent's data folder, where the install copies it next, whatever the marketplace.
fn install_plugin(claude: &Claude, layout: &Layout, say: impl Fn(&str)) -> anyhow::Result<()> {
    let installed = claude.pagent_plugins()?;
    if let Some(other) = installed.iter().find(|p| p.id != claude::PLUGIN_ID) {
        say(&format!(
            "plugin {}: installed from another marketplace, kept (a second pagent plugin would run every hook twice); its hooks run the binary below",
            other.id
        ));
        say_windows_hooks(&format!("`claude plugin uninstall {}`", other.id), &say);
        return Ok(());
    }
    let ours = installed.into_iter().next().map(|p| p.path);
    match claude.marketplace()? {
        Some(market) if market.folder.as_deref() == Some(&layout.staging) => say(&format!(
            "marketplace pagent: already registered ({})",
            layout.staging.display()
        )),
        Some(market) if market.folder.is_none() => {
            return keep_users_marketplace(claude, &market, ours.is_some(), say);
        }
        _ => {
            claude.marketplace_add(&layout.staging)?;
            say(&format!(
                "marketplace pagent: added ({})",
                layout.staging.display()
            ));
        }
    }
    match ours {
        None => {
            claude.plugin_install()?;
            say(&format!(
                "plugin {}: installed (user scope)",
                claude::PLUGIN_ID
            ));
        }
        Some(dir) if files::same_tree(&layout.staging, &dir) => say(&format!(
            "plugin {}: already installed and up to date",
            claude::PLUGIN_ID
        )),
        Some(_) => {
            // Same version, changed files: `claude plugin update` keeps the old copy (its
            // cache is keyed by version), so reinstall, keeping the data folder.
            claude.plugin_uninstall(true)?;
            claude.plugin_install()?;
            say(&format!(
                "plugin {}: reinstalled with the current files",
                claude::PLUGIN_ID
            ));
        }
    }
    Ok(())
}

/// The user's own marketplace named pagent (a git repository, GitHub): kept, and the
/// plugin installed from it when it is not installed yet.
fn keep_users_marketplace(
    claude: &Claude,
    market: &claude::Marketplace,
    installed: bool,
    say: impl Fn(&str),
) -> anyhow::Result<()> {
    say(&format!(
        "marketplace pagent: yours, from {}, kept: the plugin comes from there",
        market.origin
    ));
    if installed {
        say(&format!(
            "plugin {}: installed from it, kept",
            claude::PLUGIN_ID
        ));
    } else {
        claude.plugin_install()?;
        say(&format!(
            "plugin {}: installed from it (user scope)",
            claude::PLUGIN_ID
        ));
    }
    say_windows_hooks(
        &format!(
            "`claude plugin uninstall {}` and `claude plugin marketplace remove {}`",
            claude::PLUGIN_ID,
            claude::MARKETPLACE
        ),
        &say,
    );
    Ok(())
}

/// On Windows, Claude Code starts a hook's program as `scripts\pagent.exe` inside the
/// plugin, never the launcher script beside it (`install::HOOK_EXE`): only the
/// plugin pagent stages carries it, so the hooks of a plugin kept from another
/// marketplace cannot start pagent there, and the user is told what removes it (`undo`).
fn say_windows_hooks(undo: &str, say: impl Fn(&str)) {
    if cfg!(windows) {
        say(&format!(
            "on Windows the hooks of that plugin cannot start pagent: they need the binary inside the plugin, which only pagent's own marketplace stages; run {undo}, then `pagent install` again"
        ));
    }
}

/// Claude Code's copy of the pagent marketplace (`plugins/cache/pagent`): each plugin
/// version in it is a copy of what pagent staged, so each carries pagent's marker.
fn cache_is_pagents(cache: &Path) -> bool {
    let Ok(files) = files::list_tree(cache) else {
        return false;
    };
    files::only_files_and_folders(cache)
        && !files.is_empty()
        && files
            .iter()
            .filter(|rel| rel.ends_with(".claude-plugin/plugin.json"))
            .all(|rel| {
                let version_dir =
                    cache.join(rel.parent().and_then(Path::parent).unwrap_or(Path::new("")));
                owned(&version_dir)
            })
}

fn copy_binary(binary: &Path, layout: &Layout, say: impl Fn(&str)) -> anyhow::Result<()> {
    if files::exists(&layout.data_dir) && !owned(&layout.data_dir) {
        anyhow::bail!(
            "{} holds files pagent did not put there (it has no {MARKER} marker); pagent will not write its binary into it",
            layout.data_dir.display()
        );
    }
    if files::same_bytes(binary, &layout.data_bin) {
        say(&format!(
            "the binary in {} is up to date",
            layout.data_bin.display()
        ));
    } else {
        files::copy_executable(binary, &layout.data_bin)?;
        say(&format!(
            "copied the binary {} to {}",
            binary.display(),
            layout.data_bin.display()
        ));
    }
    mark(&layout.data_dir)
}

fn install_short_names(layout: &Layout, say: impl Fn(&str)) -> anyhow::Result<()> {
    let launcher = layout.launcher();
    if !short_names::launcher_is_plain(&launcher) {
        say(&format!(
            "skipped the short command names: the path {} has characters a command line cannot hold as is",
            launcher.display()
        ));
        return Ok(());
    }
    let (mut names, mut kept) = (Vec::new(), Vec::new());
    for planned in short_names::plan(&layout.staging, &layout.commands_dir) {
        match short_names::install_one(&planned, &launcher)? {
            Outcome::KeptUsers => {
                say(&format!(
                    "kept your own {}: /{} stays yours (pagent's is /pagent:{})",
                    planned.target.display(),
                    planned.short,
                    planned.plugin_command
                ));
                kept.push(planned.short);
            }
            Outcome::Written | Outcome::Unchanged => names.push(format!("/{}", planned.short)),
        }
    }
    say(&format!(
        "short command names in {}: {}",
        layout.commands_dir.display(),
        if names.is_empty() {
            "none".to_owned()
        } else {
            names.join(" ")
        }
    ));
    Ok(())
}

pub fn uninstall(env: &Env, args: &UninstallArgs, io: &mut Io) -> anyhow::Result<ExitStatus> {
    let stdout: RefCell<&mut dyn Write> = RefCell::new(&mut *io.stdout);
    let say = sayer("uninstall", &stdout);
    let layout = Layout::resolve(&env.install)?;
    let mut tally = Tally::default();
    match find_claude(args.claude.as_deref(), env) {
        Some(claude) => remove_from_claude(&claude, &mut tally, &say)?,
        None => refuse_while_listed(&layout)?,
    }
    remove_short_names(&layout, &mut tally, &say)?;
    remove_marked_folders(&layout, &mut tally, &say)?;
    // Read before a purge removes the register.
    let in_projects = leftovers::in_projects(&crate::store::user::UserDir::of(env));
    let emptied = undo_record(&layout, &mut tally)?;
    if let Some(config) = &env.config_dir {
        if args.purge {
            purge_config(config, env, &mut tally)?;
        } else if let Some(kept) = leftovers::kept_config(config) {
            tally.left.push(kept);
        }
    }
    if !emptied.is_empty() {
        tally.removed.push(format!(
            "what the install created and is empty again ({})",
            list(&emptied)
        ));
    }
    tally.tell(&in_projects, &say);
    if let Ok(exe) = env.pagent_exe() {
        say(&leftovers::the_binary(&exe));
    }
    Ok(ExitStatus::Success)
}

/// What an uninstall removed and what it left, each a line it says at the end.
#[derive(Debug, Default)]
struct Tally {
    removed: Vec<String>,
    left: Vec<String>,
}

impl Tally {
    /// The removed first, then what is left (with what the projects still hold).
    fn tell(&self, in_projects: &[String], say: impl Fn(&str)) {
        if self.removed.is_empty() {
            say("nothing to remove: pagent is not installed here");
        }
        for item in &self.removed {
            say(&format!("removed {item}"));
        }
        for item in self.left.iter().chain(in_projects) {
            say(item);
        }
    }
}

/// The plugin pagent installed and its marketplace, through Claude Code's own commands; a
/// pagent plugin the user installed from elsewhere stays, and is named.
fn remove_from_claude(
    claude: &Claude,
    tally: &mut Tally,
    say: impl Fn(&str),
) -> anyhow::Result<()> {
    for plugin in claude.pagent_plugins()? {
        if plugin.id == claude::PLUGIN_ID {
            claude.plugin_uninstall(false)?;
            tally.removed.push(format!("plugin {}", claude::PLUGIN_ID));
        } else {
            say(&format!(
                "left plugin {}: pagent install did not install it; `claude plugin uninstall {}` removes it",
                plugin.id, plugin.id
            ));
        }
    }
    if claude.marketplace()?.is_some() {
        claude.marketplace_remove()?;
        tally.removed.push("marketplace pagent".to_owned());
    }
    Ok(())
}

/// Without `claude`, the staged files stay while Claude Code still lists them: removing
/// them would leave it a marketplace pointing at nothing.
fn refuse_while_listed(layout: &Layout) -> anyhow::Result<()> {
    let known = layout.config_dir.join("plugins/known_marketplaces.json");
    let listed =
        files::read_text(&known)?.is_some_and(|t| t.contains(&*layout.staging.to_string_lossy()));
    anyhow::ensure!(
        !listed,
        "claude is not on PATH, and Claude Code still lists the pagent marketplace ({}); run `pagent uninstall --claude PATH`, or `claude plugin uninstall {}` and `claude plugin marketplace remove pagent` first",
        known.display(),
        claude::PLUGIN_ID
    );
    Ok(())
}

/// The short command names pagent wrote; the user's own files of those names stay.
fn remove_short_names(
    layout: &Layout,
    tally: &mut Tally,
    say: impl Fn(&str),
) -> anyhow::Result<()> {
    let (names, kept) = short_names::remove_all(&layout.commands_dir)?;
    if !names.is_empty() {
        tally
            .removed
            .push(format!("short command names {}", names.join(" ")));
    }
    for file in kept {
        say(&format!(
            "left {} alone: pagent did not write it",
            file.display()
        ));
    }
    Ok(())
}

/// The folders the install made, each only when it carries pagent's marker (Claude Code's
/// copy of the plugin: when it is pagent's).
fn remove_marked_folders(
    layout: &Layout,
    tally: &mut Tally,
    say: impl Fn(&str),
) -> anyhow::Result<()> {
    for (what, path) in [
        (
            "the binary copy and the plugin's data folder",
            &layout.data_dir,
        ),
        ("Claude Code's copy of the plugin", &layout.plugin_cache),
        ("the staged plugin files", &layout.staging),
    ] {
        if !files::exists(path) {
            continue;
        }
        if owned(path) || (path == &layout.plugin_cache && cache_is_pagents(path)) {
            if files::remove_tree(path)? {
                tally.removed.push(format!("{what} ({})", path.display()));
            }
        } else {
            say(&format!(
                "left {} alone: it holds files pagent did not put there (no {MARKER} marker)",
                path.display()
            ));
        }
    }
    Ok(())
}

/// The first install's record: what it created and is empty again goes (returned), what
/// is not empty stays, each named with why.
fn undo_record(layout: &Layout, tally: &mut Tally) -> anyhow::Result<Vec<PathBuf>> {
    let record = Record::read(layout);
    files::remove_tree(&layout.record_file)?;
    let emptied: Vec<PathBuf> = record.undo();
    let mut still_there = record.left();
    // Contents before their folder.
    still_there.sort_by_key(|p| std::cmp::Reverse(p.components().count()));
    tally.left.extend(
        still_there
            .iter()
            .map(|p| format!("left {}: {}", p.display(), leftovers::why_left(layout, p))),
    );
    Ok(emptied)
}

/// `--purge`: pagent's config folder, or pagent's files in it when it holds others too.
fn purge_config(config: &Path, env: &Env, tally: &mut Tally) -> anyhow::Result<()> {
    let purged = leftovers::purge_config(config, env.install.home.as_deref())?;
    if purged.folder {
        tally
            .removed
            .push(format!("pagent's config folder ({})", config.display()));
        if !purged.emptied.is_empty() {
            tally.removed.push(format!(
                "what pagent created with it and is empty again ({})",
                list(&purged.emptied)
            ));
        }
        if let Some(parent) = config.parent().filter(|p| files::is_empty_dir(p)) {
            tally.left.push(format!(
                "left {}, now empty: other programs keep their settings there too",
                parent.display()
            ));
        }
    } else if !purged.removed.is_empty() {
        tally.removed.push(format!(
            "pagent's files in its config folder ({})",
            list(&purged.removed)
        ));
    }
    if !purged.left.is_empty() {
        tally.left.push(format!(
            "left {} in {}: pagent does not write them there",
            list(&purged.left),
            config.display()
        ));
    }
    Ok(())
}

fn list(paths: &[PathBuf]) -> String {
    paths
        .iter()
        .map(|p| p.display().to_string())
        .collect::<Vec<_>>()
        .join(", ")
}
