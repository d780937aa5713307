//! The names a team puts into refs, folders and branches: the team's, each story's and
//! each worker's. They come from other machines (a plan, a claim, a ref listed by the
//! remote), so each is checked before it names anything: letters, digits, `.`, `_` and
//! `-`, 1 to 64 of them, not starting with `.` or `-`, no `..`, not ending with `.` or
//! `.lock` (git's own refusals). A name that passes is safe as one ref component, one
//! folder name and one branch suffix; nothing else is ever joined into a path.
//!
//! Every ref pagent keeps on the remote lives under one namespace, apart from the user's
//! branches (a clone does not fetch it by default):
//!
//! ```text
//! refs/pagent/teams/TEAM/plan                the plan and settings (written once)
//! refs/pagent/teams/TEAM/state               control, landed, gave up (compare-and-swap)
//! refs/pagent/teams/TEAM/claims/STORY        a claim, the story's work as its parent
//! refs/pagent/teams/TEAM/workers/WORKER      a worker's record (its own)
//! refs/pagent/teams/TEAM/salvage/STORY/WORKER  work of a claim that was lost
//! ```
//!
//! A worker fetches that namespace and the shared branch into `refs/pagent/seen/TEAM/`
//! of its clone, and reads everything there.

/// The longest name.
pub const MAX_NAME: usize = 64;

/// Whether `name` may name a team, a story or a worker.
pub fn is_valid(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= MAX_NAME
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'))
        && !name.starts_with(['.', '-'])
        && !name.ends_with('.')
        && !name.ends_with(".lock")
        && !name.contains("..")
}

/// `name`, or an error that says what it names and why it is refused.
pub fn checked<'a>(what: &str, name: &'a str) -> anyhow::Result<&'a str> {
    anyhow::ensure!(
        is_valid(name),
        "{what} {name:?} is not a name pagent uses: 1 to {MAX_NAME} letters, digits, '.', '_' or '-', not starting with '.' or '-'",
        name = shown(name)
    );
    Ok(name)
}

/// A name from elsewhere, cut and made printable for a message.
pub fn shown(name: &str) -> String {
    let mut out: String = name.chars().take(80).filter(|c| !c.is_control()).collect();
    if name.chars().count() > 80 {
        out.push('…');
    }
    out
}

/// The refs of one team on the remote, and their copies in a clone.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TeamRefs {
    pub team: String,
}

impl TeamRefs {
    pub fn new(team: &str) -> anyhow::Result<TeamRefs> {
        checked("the team name", team)?;
        Ok(TeamRefs {
            team: team.to_owned(),
        })
    }

    /// Where everything of the team lives on the remote.
    pub fn remote_prefix(&self) -> String {
        format!("refs/pagent/teams/{}/", self.team)
    }

    pub fn plan(&self) -> String {
        format!("{}plan", self.remote_prefix())
    }

    pub fn state(&self) -> String {
        format!("{}state", self.remote_prefix())
    }

    pub fn claim(&self, story: &str) -> String {
        format!("{}claims/{story}", self.remote_prefix())
    }

    pub fn worker(&self, worker: &str) -> String {
        format!("{}workers/{worker}", self.remote_prefix())
    }

    pub fn salvage(&self, story: &str, worker: &str) -> String {
        format!("{}salvage/{story}/{worker}", self.remote_prefix())
    }

    /// Where a clone keeps what it fetched of the team.
    pub fn seen_prefix(&self) -> String {
        format!("refs/pagent/seen/{}/team/", self.team)
    }

    /// The local copy of a remote ref of the team (`remote` starts with the prefix).
    pub fn seen(&self, remote: &str) -> Option<String> {
        remote
            .strip_prefix(&self.remote_prefix())
            .map(|rest| format!("{}{rest}", self.seen_prefix()))
    }

    /// Where a clone keeps the shared branch as last fetched.
    pub fn seen_branch(&self) -> String {
        format!("refs/pagent/seen/{}/branch", self.team)
    }

    /// The fetch refspecs of what `status` reads and nothing more (the dashboard's): the
    /// plan, the state, every claim and every worker's record.
    pub fn record_refspecs(&self) -> Vec<String> {
        let (remote, seen) = (self.remote_prefix(), self.seen_prefix());
        ["plan", "state", "claims/*", "workers/*"]
            .iter()
            .map(|r| format!("+{remote}{r}:{seen}{r}"))
            .collect()
    }

    /// The fetch refspecs, forced (the remote is the truth), into the clone's `seen`
    /// namespace: the plan, the state, every claim and the shared branch; and every
    /// worker's record and salvage (`worker: None`, for status) or only this worker's
    /// record (a worker needs no other's, and fetching them on every look costs).
    pub fn refspecs(&self, branch: Option<&str>, worker: Option<&str>) -> Vec<String> {
        let (remote, seen) = (self.remote_prefix(), self.seen_prefix());
        let mut specs = match worker {
            None => vec![format!("+{remote}*:{seen}*")],
            Some(worker) => vec![
                format!("+{remote}plan:{seen}plan"),
                format!("+{remote}state:{seen}state"),
                format!("+{remote}claims/*:{seen}claims/*"),
                // A pattern, so that the fetch does not fail before the record exists
                // (it matches the names that start with this one's too: harmless).
                format!("+{remote}workers/{worker}*:{seen}workers/{worker}*"),
            ],
        };
        if let Some(branch) = branch {
            specs.push(format!("+refs/heads/{branch}:{}", self.seen_branch()));
        }
        specs
    }
}

/// Whether `branch` may be the shared branch: a plain branch name git accepts, checked
/// the way git checks one (`git check-ref-format --branch` would run a process).
pub fn is_branch(branch: &str) -> bool {
    !branch.is_empty()
        && branch.len() <= 200
        && !branch.starts_with(['-', '/', '.'])
        && !branch.ends_with(['/', '.'])
        && !branch.ends_with(".lock")
        && !branch.contains("..")
        && !branch.contains("//")
        && !branch.contains("@{")
        && !branch.contains("/.")
        && branch
            .chars()
            .all(|c| !c.is_control() && !" ~^:?*[\\".contains(c))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_from_elsewhere_name_one_thing_or_nothing() {
        for good in [
            "US-001",
            "task-1-2",
            "a",
            "T014",
            "w.host_1",
            &"x".repeat(64),
        ] {
            assert!(is_valid(good), "{good}");
        }
        for bad in [
            "",
            "..",
            "../x",
            "a/b",
            ".hidden",
            "-rf",
            "a..b",
            "x.lock",
            "x.",
            "a b",
            "a\nb",
            "é",
            &"x".repeat(65),
            "refs/heads/main",
            "a@{1}",
        ] {
            assert!(!is_valid(bad), "{bad:?}");
        }
        assert!(checked("the story", "../../etc").is_err());
    }

    #[test]
    fn every_ref_is_under_the_teams_namespace() {
        let refs = TeamRefs::new("night").unwrap();
        assert_eq!(refs.claim("US-1"), "refs/pagent/teams/night/claims/US-1");
        assert_eq!(
            refs.seen(&refs.claim("US-1")).unwrap(),
            "refs/pagent/seen/night/team/claims/US-1"
        );
        assert_eq!(refs.seen("refs/heads/main"), None);
        assert_eq!(
            refs.refspecs(Some("main"), Some("w1")),
            [
                "+refs/pagent/teams/night/plan:refs/pagent/seen/night/team/plan",
                "+refs/pagent/teams/night/state:refs/pagent/seen/night/team/state",
                "+refs/pagent/teams/night/claims/*:refs/pagent/seen/night/team/claims/*",
                "+refs/pagent/teams/night/workers/w1*:refs/pagent/seen/night/team/workers/w1*",
                "+refs/heads/main:refs/pagent/seen/night/branch",
            ]
        );
        assert!(TeamRefs::new("a/b").is_err());
    }

    #[test]
    fn branches_are_what_git_accepts() {
        for good in ["main", "feature/x", "release-1.2"] {
            assert!(is_branch(good), "{good}");
        }
        for bad in [
            "", "-x", "a..b", "a b", "x.lock", "a//b", "/a", "a/", "a:b", "a@{b",
        ] {
            assert!(!is_branch(bad), "{bad:?}");
        }
    }
}
