//! Every git and gh process the runner starts: `git push` and `gh pr create` after a loop
//! completes, `gh issue comment` after an iteration, `git commit-tree -S` for a signed
//! merge of `pagent parallel`, and `gh issue list` before a loop starts.
//!
//! An agent can write the repository's git configuration (`.git/config`, a file it
//! includes, a worktree's `config.worktree`), and git runs commands from it:
//! `core.sshCommand`, `credential.helper`, `core.fsmonitor`, `gpg.program`, filters, diff
//! and merge drivers, `url.*.insteadOf` towards an `ext::` transport, and more with every
//! release; a changed `remote.origin.url` or `pushurl` sends the user's work elsewhere.
//! Overriding the keys one by one cannot be complete (names with a subsection of the
//! agent's choosing, lists that a `-c` extends rather than replaces, keys git adds later),
//! so the rule is a comparison instead:
//!
//! - **At the loop's start** ([`record`]), before any agent of the loop runs, the
//!   repository's own settings are listed by git itself (`git config --list
//!   --show-scope --show-origin`, so every include is followed exactly as git follows it)
//!   and kept in the loop's sealed state as a digest per key.
//! - **Before each git or gh process after an agent ran** ([`RepoGit::launch`]), they are
//!   listed again; any key added, removed or changed means the process is not started,
//!   and the caller says so in one sentence with the keys and what to do.
//!
//! The repository's own settings are those of the `local` and `worktree` scopes and any
//! file inside the repository (an include from the user's global configuration of a file
//! in the project too). The user's global and system configuration and the environment
//! pagent was started with are the user's, never compared. Only two kinds of key may
//! change: `branch.*` (where pagent keeps a task's target and `git push -u` its
//! upstream; a push naming its remote and branch reads nothing there) and `user.name`,
//! `user.email` (who a commit is by).
//!
//! Hooks are files, not settings, and a hook the user installed often runs the project's
//! own files (pre-commit's `.pre-commit-config.yaml`, husky's `package.json` scripts),
//! which the agent wrote: so no git process pagent starts runs any hook
//! (`core.hooksPath` pointed at a folder that cannot exist), nor an fsmonitor, whatever
//! the configuration says. These two go in `GIT_CONFIG_PARAMETERS`, after the user's own,
//! so that the git processes `gh` starts get them too; and the variables that would
//! point git at another repository are removed.
//!
//! libgit2, which pagent uses in-process for the fingerprint, worktrees, checkpoints and
//! merges, runs nothing from the configuration: no hooks, no fsmonitor, only its built-in
//! filters and merge drivers, and no transport (it is built without network support).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::bail;
use sha2::{Digest, Sha256};

use crate::cli::env::{self, Env};
use crate::process::{Launch, Program, SearchPath};
use crate::store::door;

/// The repository's own git settings: each key and a digest of its values, in order.
pub type Settings = BTreeMap<String, String>;

/// How long listing the settings may take (an include of a FIFO would hang git).
const LIST_TIMEOUT: Duration = Duration::from_secs(30);
/// The most of git's listing kept; a larger one is refused.
const LIST_KEEP: usize = 4 * 1024 * 1024;
/// The most keys kept in a loop's state.
const MAX_KEYS: usize = 1000;
/// How many changed keys a refusal names.
const SHOWN: usize = 5;

/// A hooks folder that cannot exist: under a file.
const NO_HOOKS: &str = if cfg!(windows) { "NUL" } else { "/dev/null" };

/// Why a git or gh process was not started.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Refused {
    #[error(
        "the repository's git configuration changed since the loop started ({0}), and pagent runs no git with settings an agent may have written"
    )]
    Changed(String),
    #[error(
        "the repository's git configuration was not read when the loop started, so a change an agent made there cannot be told"
    )]
    Unknown,
    #[error("the repository's git configuration cannot be read ({0})")]
    Unreadable(String),
}

/// What a caller says when `refused` kept it from doing `what` ("push main"), and how
/// the user does it once they have looked (`then`: "push it yourself: git push ...").
pub fn refusal(what: &str, refused: &Refused, then: Option<&str>) -> String {
    let look = "Check it with `git config --list --show-origin`";
    match then {
        Some(then) => format!("pagent did not {what}: {refused}. {look}, then {then}"),
        None => format!("pagent did not {what}: {refused}. {look}"),
    }
}

/// When a process starts, as far as the repository's settings are concerned.
#[derive(Debug, Clone)]
pub enum When<'a> {
    /// No agent of the loop has run yet (`gh issue list` at set-up).
    BeforeAnyAgent,
    /// After agents ran: the settings must still be each of these (`None`: one was not
    /// read, so nothing is known).
    After(Vec<Option<&'a Settings>>),
}

/// Where git and gh run for a loop, and what they are compared with.
pub struct RepoGit<'a> {
    pub root: &'a Path,
    pub env: &'a Env,
    pub search: &'a SearchPath,
    pub when: When<'a>,
}

impl RepoGit<'_> {
    /// `name` (`git` or `gh`) found on the cleaned `PATH`, ready to start in the
    /// repository with pagent's settings, once the repository's own are what they were.
    pub fn launch(&self, name: &str) -> anyhow::Result<Launch> {
        let program = Program::named(name, self.search)?;
        self.check()?;
        Ok(hardened(
            Launch::new(program, self.root, self.search),
            self.env,
        ))
    }

    /// `Ok` when no process would run settings an agent may have written.
    pub fn check(&self) -> Result<(), Refused> {
        let When::After(baselines) = &self.when else {
            return Ok(());
        };
        let now = read(self.root, self.env, self.search)
            .map_err(|err| Refused::Unreadable(format!("{err:#}")))?;
        for baseline in baselines {
            let baseline = baseline.ok_or(Refused::Unknown)?;
            let changed = changed_keys(baseline, &now);
            if !changed.is_empty() {
                return Err(Refused::Changed(shown(&changed)));
            }
        }
        Ok(())
    }
}

/// The repository's settings at `root` now, for a new loop's state; `None` when they
/// cannot be read (no git on `PATH`: nothing will push then either).
pub fn record(root: &Path, env: &Env, search: &SearchPath) -> Option<Settings> {
    read(root, env, search).ok()
}

/// The repository's own settings at `root`, as git reads them.
fn read(root: &Path, env: &Env, search: &SearchPath) -> anyhow::Result<Settings> {
    let git = Program::named("git", search)?;
    let out = hardened(Launch::new(git, root, search), env)
        .args(["config", "--list", "--show-scope", "--show-origin", "-z"])
        .output(LIST_TIMEOUT, LIST_KEEP)
        .map_err(|why| anyhow::anyhow!("cannot run git: {why}"))?;
    if out.timed_out {
        bail!(
            "git config --list took more than {} s",
            LIST_TIMEOUT.as_secs()
        );
    }
    if !out.success() {
        bail!("git config --list failed: {}", out.stderr.trim());
    }
    if out.stdout.len() >= LIST_KEEP {
        bail!("it is larger than {} MiB", LIST_KEEP >> 20);
    }
    let folders = repository_folders(root);
    let settings = digest(
        parse(&out.stdout)
            .into_iter()
            .filter(|e| e.is_repositorys(root, &folders)),
    );
    if settings.len() > MAX_KEYS {
        bail!("it has more than {MAX_KEYS} settings");
    }
    Ok(settings)
}

/// pagent's settings for a git process (and the git processes gh starts): no hook, no
/// fsmonitor, the repository of the folder it runs in.
fn hardened(launch: Launch, env: &Env) -> Launch {
    let mut parameters = env.git_config_parameters.clone().unwrap_or_default();
    for setting in [
        format!("core.hookspath={NO_HOOKS}"),
        "core.fsmonitor=".to_owned(),
    ] {
        if !parameters.is_empty() {
            parameters.push(" ");
        }
        // The quoting `git -c` itself writes there; these values hold no quote.
        parameters.push(format!("'{setting}'"));
    }
    let mut launch = launch.env(env::GIT_CONFIG_PARAMETERS, parameters);
    for key in env::GIT_REPOSITORY_VARIABLES {
        launch = launch.env_remove(key);
    }
    launch
}

/// One line of git's listing.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Entry {
    scope: String,
    origin: String,
    key: String,
    /// `None` for a key written without `=` (a boolean true).
    value: Option<String>,
}

impl Entry {
    /// Set by the repository: its local or worktree configuration (with what they
    /// include), or any file inside the repository.
    fn is_repositorys(&self, root: &Path, folders: &[PathBuf]) -> bool {
        if matches!(self.scope.as_str(), "local" | "worktree") {
            return true;
        }
        let Some(file) = self.origin.strip_prefix("file:") else {
            return false;
        };
        let path = root.join(file);
        let real = door::canonical(&path).unwrap_or(path);
        folders.iter().any(|f| real.starts_with(f))
    }
}

/// `git config --list --show-scope --show-origin -z`: `scope NUL origin NUL key [LF
/// value] NUL`, again and again.
fn parse(listing: &str) -> Vec<Entry> {
    let mut fields = listing.split('\0');
    let mut entries = Vec::new();
    while let (Some(scope), Some(origin), Some(item)) =
        (fields.next(), fields.next(), fields.next())
    {
        let (key, value) = match item.split_once('\n') {
            Some((key, value)) => (key, Some(value.to_owned())),
            None => (item, None),
        };
        entries.push(Entry {
            scope: scope.to_owned(),
            origin: origin.to_owned(),
            key: key.to_owned(),
            value,
        });
    }
    entries
}

/// Keys that run nothing and send nothing elsewhere: a push that names its remote and
/// branch, and gh given `--head`, read nothing under `branch.`.
fn may_change(key: &str) -> bool {
    key.starts_with("branch.") || key == "user.name" || key == "user.email"
}

/// Each key (but those that may change) and a digest of its values in order.
fn digest(entries: impl Iterator<Item = Entry>) -> Settings {
    let mut hashers: BTreeMap<String, Sha256> = BTreeMap::new();
    for entry in entries.filter(|e| !may_change(&e.key)) {
        let hasher = hashers.entry(entry.key).or_default();
        match &entry.value {
            Some(value) => {
                hasher.update(b"=");
                hasher.update(value.as_bytes());
                hasher.update(b"\0");
            }
            None => hasher.update(b"!"),
        }
    }
    hashers
        .into_iter()
        .map(|(key, hasher)| {
            let sum = hasher.finalize();
            (key, pagent_engine::seal::hex(&sum[..8]))
        })
        .collect()
}

/// The keys added, removed or changed between `before` and `now`, sorted.
fn changed_keys(before: &Settings, now: &Settings) -> Vec<String> {
    let mut keys: Vec<String> = before
        .iter()
        .filter(|(key, value)| now.get(*key) != Some(*value))
        .map(|(key, _)| key.clone())
        .chain(now.keys().filter(|k| !before.contains_key(*k)).cloned())
        .collect();
    keys.sort();
    keys
}

/// A few keys, and how many more.
fn shown(keys: &[String]) -> String {
    let mut text = keys
        .iter()
        .take(SHOWN)
        .cloned()
        .collect::<Vec<_>>()
        .join(", ");
    if keys.len() > SHOWN {
        text.push_str(&format!(" and {} more", keys.len() - SHOWN));
    }
    text
}

/// The folders whose files are the repository's: the work tree (the main one, for a
/// worktree) and the git folders.
fn repository_folders(root: &Path) -> Vec<PathBuf> {
    let mut folders = vec![root.to_path_buf()];
    if let Some(repo) = crate::store::git::discover(root) {
        let common = repo.commondir().to_path_buf();
        folders.push(repo.path().to_path_buf());
        if let Some(main) = common.parent() {
            folders.push(main.to_path_buf());
        }
        folders.push(common);
        if let Some(tree) = crate::store::git::work_tree(&repo) {
            folders.push(tree);
        }
    }
    folders
        .into_iter()
        .map(|f| door::canonical(&f).unwrap_or(f))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A listing as git writes it: each entry `scope NUL origin NUL key LF value NUL`.
    fn listing(entries: &[(&str, &str, &str, Option<&str>)]) -> String {
        entries
            .iter()
            .map(|(scope, origin, key, value)| match value {
                Some(v) => format!("{scope}\0{origin}\0{key}\n{v}\0"),
                None => format!("{scope}\0{origin}\0{key}\0"),
            })
            .collect()
    }

    fn settings(entries: &[(&str, &str, &str, Option<&str>)]) -> Settings {
        let root = Path::new("/p");
        let folders = [PathBuf::from("/p")];
        digest(
            parse(&listing(entries))
                .into_iter()
                .filter(|e| e.is_repositorys(root, &folders)),
        )
    }

    #[test]
    fn the_repositorys_settings_are_its_scopes_and_its_files() {
        let user = (
            "global",
            "file:/home/u/.gitconfig",
            "core.sshcommand",
            Some("ssh -i k"),
        );
        let local = (
            "local",
            "file:.git/config",
            "core.sshcommand",
            Some("touch pwned"),
        );
        let included = ("global", "file:/p/team.gitconfig", "gpg.program", Some("x"));
        let env_set = ("command", "command line:", "core.fsmonitor", Some(""));
        let s = settings(&[user, local, included, env_set]);
        assert_eq!(
            s.keys().collect::<Vec<_>>(),
            ["core.sshcommand", "gpg.program"]
        );
        assert_eq!(
            s,
            settings(&[local, included]),
            "the user's own are not kept"
        );
    }

    #[test]
    fn any_change_of_a_key_is_one_but_branches_and_the_author_may_change() {
        let url = (
            "local",
            "file:.git/config",
            "remote.origin.url",
            Some("git@h:a/b"),
        );
        let before = settings(&[
            url,
            ("local", "file:.git/config", "credential.helper", Some("a")),
        ]);
        let reordered = settings(&[
            url,
            ("local", "file:.git/config", "credential.helper", Some("a")),
            (
                "local",
                "file:.git/config",
                "credential.helper",
                Some("!sh x"),
            ),
            (
                "local",
                "file:.git/config",
                "branch.pagent/t.pagenttarget",
                Some("main"),
            ),
            (
                "local",
                "file:.git/config",
                "branch.pagent/t.remote",
                Some("origin"),
            ),
            ("local", "file:.git/config", "user.email", Some("a@b")),
            ("worktree", "file:.git/config.worktree", "core.bare", None),
        ]);
        assert_eq!(
            changed_keys(&before, &reordered),
            ["core.bare", "credential.helper"]
        );
        assert!(changed_keys(&before, &before).is_empty());
        let moved = settings(&[(
            "local",
            "file:.git/config",
            "remote.origin.url",
            Some("/tmp/elsewhere"),
        )]);
        assert_eq!(
            changed_keys(&before, &moved),
            ["credential.helper", "remote.origin.url"]
        );
        let many: Vec<String> = (0..8).map(|i| format!("k.{i}")).collect();
        assert_eq!(shown(&many), "k.0, k.1, k.2, k.3, k.4 and 3 more");
    }
}
