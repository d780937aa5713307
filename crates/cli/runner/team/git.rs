//! The team's git over the network: `git fetch` and `git push` against the remote, the
//! only two git processes a worker starts (everything else is libgit2, in-process).
//!
//! A push carries a lease for every ref it touches ([`Expect`]): the ref must still be
//! what this worker last saw, or be absent, or the push is rejected. The server checks
//! each lease in the same ref transaction that updates the ref, so a push with lease is a
//! compare-and-swap; `--atomic` makes a set of them all-or-nothing. The outcome is read
//! from `--porcelain` output, one line per ref; a push that reached no server says so
//! with an error instead, and the caller cannot tell whether it landed: it finds out from
//! the next fetch.
//!
//! Each process starts through the process door, in the clone, with the remote's URL as
//! resolved before any agent ran (a remote name is never looked up again), with no hook
//! and no fsmonitor, no terminal prompt, and a time limit. A token for the remote
//! (`PAGENT_GIT_TOKEN`, what a GitHub Actions job hands pagent) reaches these processes
//! alone, as an HTTP header in git's environment: never on a command line, never in a
//! file, never in an agent's environment.

use std::path::{Path, PathBuf};
use std::time::Duration;

use git2::Oid;

use crate::cli::env::{self, Env};
use crate::runner::repo_git::{self, Refused, RepoGit, Settings, When, refusal};
use pagent_door::process::{Launch, SearchPath};

/// How long one fetch or push may take.
const NETWORK_TIMEOUT: Duration = Duration::from_secs(120);
/// Bytes of git's output kept.
const KEEP: usize = 256 * 1024;

/// A hooks folder that cannot exist: under a file.
const NO_HOOKS: &str = if cfg!(windows) { "NUL" } else { "/dev/null" };

/// What a ref must be on the remote for a push to it to go through.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Expect {
    /// It must not exist (a create-only push: a claim).
    Absent,
    /// It must be this commit.
    Is(Oid),
}

/// One ref a push sets (`Some`) or deletes (`None`), with its lease.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Update {
    pub new: Option<Oid>,
    pub dst: String,
    pub expect: Expect,
}

/// What the remote said of one ref of a push.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pushed {
    pub dst: String,
    pub ok: bool,
    /// `[rejected] (stale info)`, `[new reference]`, ...
    pub summary: String,
    /// Accepted as a forced update (`+`): never expected of a fast-forward.
    pub forced: bool,
}

/// Why a fetch or push did not tell.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NetError {
    /// The remote could not be reached, or its answer could not be read: a push may or
    /// may not have landed.
    #[error("{0}")]
    Unreachable(String),
    /// No git was started: the repository's git configuration changed since the worker
    /// started (an agent may have written it), and git would run what it says.
    #[error("{0}")]
    Refused(String),
}

impl NetError {
    pub fn text(&self) -> &str {
        match self {
            NetError::Unreachable(text) | NetError::Refused(text) => text,
        }
    }
}

use NetError::Unreachable;

/// Git for one clone and one remote.
#[derive(Debug, Clone)]
pub struct TeamGit {
    root: PathBuf,
    pub url: String,
    search: SearchPath,
    /// `GIT_CONFIG_PARAMETERS` for every process: the user's own, then pagent's.
    parameters: std::ffi::OsString,
    env: Env,
    /// The repository's git settings when the worker started, before any agent of it
    /// ran (`None`: no agent runs in this process, a command of people's own).
    baseline: Option<Option<Settings>>,
    /// How long one fetch or push may take.
    timeout: Duration,
    /// Fetches take only the commits the refs name, not their history (`--depth=1`).
    shallow: bool,
}

impl TeamGit {
    pub fn new(root: &Path, url: &str, env: &Env) -> TeamGit {
        let search = SearchPath::new(env.path.as_deref(), &[root]);
        TeamGit {
            root: root.to_path_buf(),
            url: url.to_owned(),
            search,
            parameters: parameters(env, url),
            env: env.clone(),
            baseline: None,
            timeout: NETWORK_TIMEOUT,
            shallow: false,
        }
    }

    /// This git only watches (the dashboard): each fetch takes the commits the refs name
    /// and not their history, and gives up after `timeout`.
    pub fn watching(mut self, timeout: Duration) -> TeamGit {
        self.timeout = timeout;
        self.shallow = true;
        self
    }

    /// This git acts for a worker whose agents may write the repository's git
    /// configuration: the configuration is read now, and every git process after is
    /// started only while it is still the same (`repo_git`).
    pub fn with_baseline(mut self) -> TeamGit {
        self.baseline = Some(repo_git::record(&self.root, &self.env, &self.search));
        self
    }

    fn launch(&self) -> Result<Launch, NetError> {
        let when = match &self.baseline {
            None => When::BeforeAnyAgent,
            Some(baseline) => When::After(vec![baseline.as_ref()]),
        };
        let repo_git = RepoGit {
            root: &self.root,
            env: &self.env,
            search: &self.search,
            when,
        };
        let launch = repo_git
            .launch("git")
            .map_err(|err| match err.downcast::<Refused>() {
                Ok(refused) => {
                    NetError::Refused(refusal("fetch or push for the team", &refused, None))
                }
                Err(err) => Unreachable(format!("{err:#}")),
            })?;
        // pagent's own settings over the hardening: the same, and the team's.
        let mut launch = launch
            .env(env::GIT_CONFIG_PARAMETERS, &self.parameters)
            .env("GIT_TERMINAL_PROMPT", "0");
        for key in env::GIT_REPOSITORY_VARIABLES {
            launch = launch.env_remove(key);
        }
        Ok(launch)
    }

    /// `git fetch` of `refspecs` from the remote (forced, pruned, no tags).
    pub fn fetch(&self, refspecs: &[String]) -> Result<(), NetError> {
        let out = self
            .launch()?
            .args([
                "fetch",
                "--quiet",
                "--no-tags",
                "--prune",
                "--no-write-fetch-head",
                "--no-recurse-submodules",
            ])
            .args(self.shallow.then_some("--depth=1"))
            .arg(&self.url)
            .args(refspecs)
            .output(self.timeout, KEEP)
            .map_err(|why| Unreachable(format!("cannot run git fetch: {why}")))?;
        if out.success() {
            return Ok(());
        }
        Err(Unreachable(failure(
            "git fetch",
            self.timeout,
            out.timed_out,
            &out.stderr,
        )))
    }

    /// The repository's git settings the worker started with, when it records them.
    pub fn baseline(&self) -> Option<&Settings> {
        self.baseline.as_ref().and_then(Option::as_ref)
    }

    /// The teams on the remote: the names under `refs/pagent/teams/` with a plan.
    pub fn teams(&self) -> Result<Vec<String>, NetError> {
        let out = self
            .launch()?
            .args(["ls-remote", "--refs", &self.url, "refs/pagent/teams/*"])
            .output(self.timeout, KEEP)
            .map_err(|why| Unreachable(format!("cannot run git ls-remote: {why}")))?;
        if !out.success() {
            return Err(Unreachable(failure(
                "git ls-remote",
                self.timeout,
                out.timed_out,
                &out.stderr,
            )));
        }
        let mut teams: Vec<String> = out
            .stdout
            .lines()
            .filter_map(|line| line.split_once('\t'))
            .filter_map(|(_, name)| {
                name.strip_prefix("refs/pagent/teams/")?
                    .strip_suffix("/plan")
            })
            .filter(|team| super::names::is_valid(team))
            .map(str::to_owned)
            .collect();
        teams.sort();
        teams.dedup();
        Ok(teams)
    }

    /// `git push --porcelain` of `updates`, each with its lease; all or nothing when
    /// `atomic`. What the remote said of each ref, or why it could not be told.
    pub fn push(&self, updates: &[Update], atomic: bool) -> Result<Vec<Pushed>, NetError> {
        let mut args: Vec<String> = vec!["push".into(), "--porcelain".into(), "--no-verify".into()];
        if atomic {
            args.push("--atomic".into());
        }
        args.push(self.url.clone());
        for update in updates {
            let src = update.new.map(|o| o.to_string()).unwrap_or_default();
            args.push(format!("{src}:{}", update.dst));
        }
        for update in updates {
            let expected = match update.expect {
                Expect::Absent => String::new(),
                Expect::Is(oid) => oid.to_string(),
            };
            args.push(format!("--force-with-lease={}:{expected}", update.dst));
        }
        let out = self
            .launch()?
            .args(&args)
            .output(self.timeout, KEEP)
            .map_err(|why| Unreachable(format!("cannot run git push: {why}")))?;
        let pushed = parse_porcelain(&out.stdout);
        let all_told = updates
            .iter()
            .all(|u| pushed.iter().any(|p| p.dst == u.dst));
        if out.timed_out || !all_told {
            return Err(Unreachable(failure(
                "git push",
                self.timeout,
                out.timed_out,
                &out.stderr,
            )));
        }
        Ok(pushed)
    }
}

/// The user's `-c` settings, then pagent's: no hooks, no fsmonitor, no `ext::` transport,
/// and the token's header for this remote when one was given.
fn parameters(env: &Env, url: &str) -> std::ffi::OsString {
    let mut parameters = env.git_config_parameters.clone().unwrap_or_default();
    let mut settings = vec![
        format!("core.hookspath={NO_HOOKS}"),
        "core.fsmonitor=".to_owned(),
        "protocol.ext.allow=never".to_owned(),
        // A blob larger than this is streamed, never held whole: a remote cannot make a
        // fetch take memory by the size of what it sends.
        "core.bigfilethreshold=1m".to_owned(),
    ];
    if let Some(token) = &env.git_token
        && (url.starts_with("https://") || url.starts_with("http://"))
    {
        let basic = base64(format!("x-access-token:{token}").as_bytes());
        settings.push(format!(
            "http.{url}.extraheader=AUTHORIZATION: basic {basic}"
        ));
    }
    for setting in settings {
        if !parameters.is_empty() {
            parameters.push(" ");
        }
        // The quoting `git -c` writes there; a quote in a value is written as git does.
        parameters.push(format!("'{}'", setting.replace('\'', r"'\''")));
    }
    parameters
}

/// Standard base64 with padding (the header's encoding), without a crate for it.
fn base64(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            *chunk.get(1).unwrap_or(&0),
            *chunk.get(2).unwrap_or(&0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(char::from(ALPHABET[(n >> (18 - 6 * i)) as usize & 63]));
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// `git push --porcelain`'s lines: `FLAG \t FROM:TO \t SUMMARY`.
fn parse_porcelain(stdout: &str) -> Vec<Pushed> {
    stdout
        .lines()
        .filter_map(|line| {
            let mut chars = line.chars();
            let flag = chars.next()?;
            let rest = chars.as_str().strip_prefix('\t')?;
            let (refs, summary) = rest.split_once('\t').unwrap_or((rest, ""));
            let (_, dst) = refs.split_once(':')?;
            let ok = matches!(flag, ' ' | '+' | '-' | '*' | '=');
            if !ok && flag != '!' {
                return None;
            }
            Some(Pushed {
                dst: dst.to_owned(),
                ok,
                summary: summary.to_owned(),
                forced: flag == '+',
            })
        })
        .collect()
}

/// What a failed git process said, in one line.
fn failure(what: &str, timeout: Duration, timed_out: bool, stderr: &str) -> String {
    if timed_out {
        return format!("{what} took more than {} s", timeout.as_secs());
    }
    let said = stderr
        .lines()
        .map(str::trim)
        .rfind(|l| !l.is_empty() && !l.starts_with("hint:"))
        .unwrap_or("no word from git");
    format!("{what} failed: {}", super::records::one_line(said))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn porcelain_says_each_refs_fate() {
        let out = "To git://127.0.0.1:1/r.git\n\
            *\tabc:refs/pagent/teams/t/claims/a\t[new reference]\n\
            !\tdef:refs/heads/main\t[rejected] (atomic push failed)\n\
            !\tdef:refs/pagent/teams/t/state\t[rejected] (stale info)\n\
            -\t:refs/pagent/teams/t/claims/b\t[deleted]\n\
            +\tabc:refs/heads/x\te57dac8...0e1b018 (forced update)\n\
            Done\n";
        let pushed = parse_porcelain(out);
        let fates: Vec<(&str, bool, bool)> = pushed
            .iter()
            .map(|p| (p.dst.as_str(), p.ok, p.forced))
            .collect();
        assert_eq!(
            fates,
            [
                ("refs/pagent/teams/t/claims/a", true, false),
                ("refs/heads/main", false, false),
                ("refs/pagent/teams/t/state", false, false),
                ("refs/pagent/teams/t/claims/b", true, false),
                ("refs/heads/x", true, true),
            ]
        );
        assert_eq!(pushed[2].summary, "[rejected] (stale info)");
    }

    #[test]
    fn the_token_is_a_header_for_the_remote_alone() {
        assert_eq!(base64(b"x-access-token:abc"), "eC1hY2Nlc3MtdG9rZW46YWJj");
        assert_eq!(base64(b"a"), "YQ==");
        assert_eq!(base64(b"ab"), "YWI=");
        let env = Env {
            git_token: Some("s3cret".into()),
            ..Env::default()
        };
        let https = parameters(&env, "https://example.invalid/o/r.git");
        let text = https.to_string_lossy();
        assert!(
            text.contains(
                "'http.https://example.invalid/o/r.git.extraheader=AUTHORIZATION: basic "
            )
        );
        assert!(!text.contains("s3cret"), "{text}");
        let ssh = parameters(&env, "git@example.invalid:o/r.git");
        assert!(!ssh.to_string_lossy().contains("extraheader"));
        assert!(ssh.to_string_lossy().contains("'core.hookspath="));
    }
}
