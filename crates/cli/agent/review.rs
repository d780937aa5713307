//! The reviewer of a `review` condition: one fresh agent process, started through the
//! same agent layer as `pagent loop`'s workers, that reads the work and answers with a
//! verdict (the engine reads the verdict; this file only runs the process).
//!
//! It runs in the project with pagent's own hooks standing aside (`PAGENT_DRIVER=loop`,
//! set by the agent layer, so its Stop hook never drives the loop a second time) and
//! without the marks of the session it runs inside (`CLAUDECODE` and the session id),
//! read-only: Claude Code in its default permission mode with the edit tools refused and
//! only reading tools and the stage's check commands allowed; Codex in its read-only
//! sandbox. OpenCode has no read-only switch for `run`: the prompt forbids changes, and
//! docs/review.md and docs/limitations.md say so. Its time is its own timeout, cut to what is left of the caller's
//! limit (the Stop hook's), so a slow reviewer is stopped and counted "not met" before
//! Claude Code would kill the hook.
//!
//! A reviewer always runs with the user's own agent configuration, never the project's:
//! in print mode Claude Code shows no folder trust dialog, so a repository's
//! `.claude/settings.json` hooks would run and its `permissions.allow` would widen the
//! reviewer's tools. So Claude Code gets `--setting-sources user` (no project or local
//! settings: no project hooks, permissions or plugins), `--strict-mcp-config` (no
//! `.mcp.json` servers) and `--disable-slash-commands` (no project commands or skills
//! with tools of their own), verified on 2.1.197 and 2.1.330 by the end-to-end suite;
//! Codex gets the project marked untrusted for the run, whatever the user's own Codex
//! config says (its project `.codex/` layer, MCP servers and hooks are then not loaded)
//! and `--ignore-rules`; OpenCode gets `OPENCODE_DISABLE_PROJECT_CONFIG`, and since
//! OpenCode 1.18.33 loads a project's `.opencode/` plugins even so, an OpenCode reviewer is
//! not started at all in a project whose OpenCode configuration the user has not trusted.
//! Each is proven against the real CLI by the end-to-end suite.
//!
//! In a contained loop (`--sandbox`), a reviewer command (`--reviewer-command`) runs inside
//! the loop's walls, like its checks; a Claude Code reviewer inside Claude Code's own
//! sandbox (its API is reached by Claude Code itself, outside), with the loop's settings
//! made read-only: its commands write nowhere, the project included, reach no host, and
//! still need its allowed tools (no Bash command is allowed just for being sandboxed).
//! Codex and OpenCode reviewers are not contained yet: a contained loop refuses them.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use pagent_engine::{CheckShape, ReviewOutcome, ReviewRecord, ReviewRequest, Reviewer, State};
use pagent_protocol::stream::AgentKind;

use crate::agent::{self, AgentSpec, End, Limits};
use crate::cli::env;
use crate::store::project::{Project, RUNS_DIR};
use crate::store::user::UserDir;
use pagent_door::process::{Containment, Program, SearchPath};

/// The Stop hook's `timeout` in `hooks/hooks.json` (a test keeps them equal).
pub const STOP_HOOK_TIMEOUT_SECS: u64 = 600;
/// What the Stop hook keeps for itself after a review (writing the state, the log).
pub const STOP_HOOK_MARGIN: Duration = Duration::from_secs(30);
/// Below this much time left, a reviewer is not started at all.
const MIN_REVIEW_TIME: Duration = Duration::from_secs(10);
/// Claude Code tools that only read.
const READ_TOOLS: &[&str] = &["Read", "Grep", "Glob", "LS"];
/// Claude Code tools that change files: refused outright.
const EDIT_TOOLS: &str = "Write,Edit,MultiEdit,NotebookEdit";

/// Where the reviewer's program comes from, and how long the caller can wait.
#[derive(Debug, Clone, Default)]
pub struct ReviewSetup {
    /// `PATH`, to find `claude`, `codex` or `opencode`.
    pub path: Option<OsString>,
    /// The program the user named for reviewers (`PAGENT_REVIEWER_BIN`).
    pub program: Option<PathBuf>,
    /// `pagent loop`'s own agent and its program: used when the review asks for the
    /// same agent, so `--agent-bin` serves the reviewer too.
    pub own_agent: Option<(AgentKind, Program)>,
    /// The caller's own limit: the reviewer must end before it.
    pub deadline: Option<Instant>,
    /// pagent's config folder, where the user's trust is kept.
    pub config_dir: Option<PathBuf>,
    /// What a contained loop's reviewer runs inside; `None` for an uncontained loop.
    pub sandbox: Option<ReviewSandbox>,
}

/// A contained loop's reviewer: a reviewer command inside the loop's walls (`walls`),
/// Claude Code inside its own sandbox with these read-only `claude_settings` (JSON, handed
/// with `--settings`).
#[derive(Debug, Clone)]
pub struct ReviewSandbox {
    pub walls: Option<Containment>,
    pub claude_settings: String,
}

impl ReviewSetup {
    /// For the Stop hook started at `started`: the reviewer must end in time for the
    /// hook to write its decision within Claude Code's limit.
    pub fn for_stop_hook(env: &crate::cli::env::Env, started: Instant) -> ReviewSetup {
        ReviewSetup {
            path: env.path.clone(),
            program: env.reviewer_bin.clone(),
            own_agent: None,
            deadline: Some(
                started + Duration::from_secs(STOP_HOOK_TIMEOUT_SECS) - STOP_HOOK_MARGIN,
            ),
            config_dir: env.config_dir.clone(),
            sandbox: None,
        }
    }
}

/// The verdict `after` holds that `before` did not: a review ran in this decision.
pub fn new_verdict<'s>(before: &State, after: &'s State) -> Option<&'s ReviewRecord> {
    after
        .review
        .as_ref()
        .filter(|r| before.review.as_ref() != Some(*r))
}

/// Starts the reviewer for `request` in the project and waits for it, stopping it when
/// `keep_going` says no (the loop was cancelled meanwhile). What the reviewer reported
/// using (Claude Code's `total_cost_usd`, tokens) is added to `spent`, for the loop's
/// budgets: a reviewer is paid for like the loop's own agent.
pub fn run_review(
    project: &Project,
    request: &ReviewRequest,
    setup: &ReviewSetup,
    label: &str,
    keep_going: &mut dyn FnMut() -> bool,
    spent: &mut Vec<pagent_protocol::stream::UsageRecord>,
) -> ReviewOutcome {
    let timeout = match review_time(request.timeout_secs, setup.deadline, Instant::now()) {
        Ok(timeout) => timeout,
        Err(why) => return ReviewOutcome::Failed(why),
    };
    if matches!(request.reviewer, Reviewer::Opencode)
        && let Some(why) =
            untrusted_opencode_config(project, &UserDir::at(setup.config_dir.as_deref()))
    {
        return ReviewOutcome::Failed(why);
    }
    let search = SearchPath::new(setup.path.as_deref(), &[&project.root]);
    let spec = match spec_of(&request.reviewer, request, setup, &search, &project.root) {
        Ok(spec) => spec,
        Err(why) => return ReviewOutcome::Failed(why),
    };
    let base = Path::new(RUNS_DIR).join(format!("review-{label}"));
    let prompt_rel = base.with_extension("prompt.md");
    if let Err(err) = project
        .dir()
        .write_atomic(&prompt_rel, request.prompt.as_bytes())
    {
        return ReviewOutcome::Failed(format!("cannot write its prompt file: {err}"));
    }
    // A night of reviews stays under the same cap as the runs beside them.
    crate::store::runs::keep_under(
        project,
        crate::store::config::logs_cap(&UserDir::at(setup.config_dir.as_deref())),
    );
    let log = project.dir().create(&base.with_extension("log")).ok();
    let mut env = vec![(env::PAGENT_REVIEW, "1".to_owned())];
    if matches!(request.reviewer, Reviewer::Opencode) {
        env.push((OPENCODE_NO_PROJECT, "1".to_owned()));
    }
    let prompt_file = project.root.join(&prompt_rel);
    let run = agent::Invocation {
        spec: &spec,
        search: &search,
        cwd: &project.root,
        prompt: &request.prompt,
        prompt_file: &prompt_file,
        log,
        env: &env,
        remove: &[
            "CLAUDECODE",
            "CLAUDE_CODE_SESSION_ID",
            "CLAUDE_CODE_ENTRYPOINT",
        ],
        limits: Limits {
            iteration_timeout: timeout,
            idle_timeout: timeout,
        },
    }
    .run(&mut |_| keep_going());
    spent.extend(run.usage.iter().cloned());
    match &run.end {
        End::TimedOut | End::Stalled => {
            return ReviewOutcome::TimedOut {
                after_secs: timeout.as_secs(),
            };
        }
        End::Interrupted | End::Stopped => {
            return ReviewOutcome::Failed("stopped: the loop ended while it ran".into());
        }
        End::NotStarted(why) => return ReviewOutcome::Failed(why.clone()),
        End::Exited(_) => {}
    }
    if let Some(why) = run.failure(&spec) {
        return ReviewOutcome::Failed(why);
    }
    ReviewOutcome::Answered(run.final_message().unwrap_or_default())
}

/// How long the reviewer may run: its own timeout, cut to what is left before the
/// caller's deadline; an error when too little is left to be worth starting it.
fn review_time(
    timeout_secs: u64,
    deadline: Option<Instant>,
    now: Instant,
) -> Result<Duration, String> {
    let own = Duration::from_secs(timeout_secs);
    let Some(deadline) = deadline else {
        return Ok(own);
    };
    let left = deadline.saturating_duration_since(now);
    if left < MIN_REVIEW_TIME {
        return Err(format!(
            "no time was left for it within the Stop hook's limit of {STOP_HOOK_TIMEOUT_SECS} s (slow checks before it?)"
        ));
    }
    Ok(own.min(left))
}

/// OpenCode's switch that leaves the project's `opencode.json` and `.opencode/` config
/// unread.
const OPENCODE_NO_PROJECT: &str = "OPENCODE_DISABLE_PROJECT_CONFIG";

/// Why an OpenCode reviewer cannot start: OpenCode 1.18.33 loads the plugins in a
/// project's `.opencode/` even with [`OPENCODE_NO_PROJECT`] set (proven by the end-to-end
/// suite), so a project with OpenCode configuration the user has not trusted gets no
/// OpenCode reviewer at all.
fn untrusted_opencode_config(project: &Project, user_dir: &UserDir) -> Option<String> {
    let untrusted: Vec<String> = crate::store::agent_config::sources(project, AgentKind::Opencode)
        .into_iter()
        .filter(|source| {
            crate::store::consent::verdict(project, user_dir, source)
                != crate::store::trust::Verdict::Trusted
        })
        .map(|source| crate::store::consent::shell_word(&source.rel.display().to_string()))
        .collect();
    (!untrusted.is_empty()).then(|| {
        format!(
            "the project has OpenCode configuration you have not trusted ({}), which an OpenCode reviewer would load; trust it with `pagent trust {}`, or choose another reviewer",
            untrusted.join(", "),
            untrusted.join(" ")
        )
    })
}

/// The first reviewer agent of `state`'s stages that a contained loop cannot contain
/// (Codex, OpenCode), refused before the loop starts.
pub fn uncontained_reviewer(state: &State) -> Option<AgentKind> {
    state
        .stages
        .iter()
        .filter_map(|stage| stage.exit_when.review())
        .filter_map(|review| agent_of(&review.reviewer))
        .find(|kind| *kind != AgentKind::Claude)
}

/// The agent a workflow's reviewer names; `None` for a reviewer command. The engine reads
/// the names in workflows (it knows no wire types: docs/architecture.md), the agent layer
/// runs them: the match is exhaustive and a test keeps both tables naming the same agents.
fn agent_of(reviewer: &Reviewer) -> Option<AgentKind> {
    match reviewer {
        Reviewer::Command(_) => None,
        Reviewer::Claude => Some(AgentKind::Claude),
        Reviewer::Codex => Some(AgentKind::Codex),
        Reviewer::Opencode => Some(AgentKind::Opencode),
    }
}

/// The agent to run: the program found now, with read-only permissions and the user's
/// configuration only.
fn spec_of(
    reviewer: &Reviewer,
    request: &ReviewRequest,
    setup: &ReviewSetup,
    search: &SearchPath,
    root: &Path,
) -> Result<AgentSpec, String> {
    let Some(kind) = agent_of(reviewer) else {
        return Ok(AgentSpec::Command {
            line: reviewer.name().to_owned(),
            contain: setup
                .sandbox
                .as_ref()
                .and_then(|s| s.walls.clone())
                .map(agent::Sandbox::Walls),
        });
    };
    let contain = match (&setup.sandbox, kind) {
        (None, _) => None,
        (Some(sandbox), AgentKind::Claude) => Some(agent::Sandbox::ClaudeCode {
            settings: sandbox.claude_settings.clone(),
            checks: None,
        }),
        (Some(_), kind) => return Err(crate::cli::sandbox::uncontained_reviewer(kind)),
    };
    let name = kind.name();
    let own = setup
        .own_agent
        .as_ref()
        .filter(|(own, _)| *own == kind)
        .map(|(_, program)| program.clone());
    let program = match (&setup.program, own) {
        (Some(program), _) => Program::from_setting(program, env::PAGENT_REVIEWER_BIN, search)
            .map_err(|e| e.to_string())?,
        (None, Some(own)) => own,
        (None, None) => Program::named(name, search).map_err(|_| {
            format!("{name} is not on PATH (set PAGENT_REVIEWER_BIN to the program to use)")
        })?,
    };
    Ok(AgentSpec::Known {
        kind,
        program,
        permission_mode: "default".to_owned(),
        extra_args: reviewer_args(kind, request, root, contain.is_some()),
        contain,
    })
}

/// The arguments that make `kind` a read-only reviewer with the user's configuration.
/// A `contained` Claude Code reviewer is not given its reading tools outright (which
/// would let them read anywhere, `~/.ssh` included): its permission mode lets them read
/// in the project, and refuses them outside it.
fn reviewer_args(
    kind: AgentKind,
    request: &ReviewRequest,
    root: &Path,
    contained: bool,
) -> Vec<String> {
    match kind {
        AgentKind::Claude => {
            let reads: &[&str] = if contained { &[] } else { READ_TOOLS };
            let mut allowed: Vec<String> = reads.iter().map(|t| (*t).to_owned()).collect();
            allowed.extend(request.checks.iter().map(|check| match &check.shape {
                CheckShape::Shell(line) => format!("Bash({line})"),
                CheckShape::Argv(argv) => format!("Bash({})", argv.join(" ")),
            }));
            vec![
                "--setting-sources".to_owned(),
                "user".to_owned(),
                "--strict-mcp-config".to_owned(),
                "--disable-slash-commands".to_owned(),
                "--allowedTools".to_owned(),
                allowed.join(","),
                "--disallowedTools".to_owned(),
                EDIT_TOOLS.to_owned(),
            ]
        }
        AgentKind::Codex => vec![
            "--sandbox".to_owned(),
            "read-only".to_owned(),
            "--ignore-rules".to_owned(),
            "-c".to_owned(),
            // A dotted `projects."<path>".trust_level` is split at the path's own dots
            // and slashes by Codex 0.169; an inline table is read as meant.
            format!(
                "projects={{{}={{trust_level=\"untrusted\"}}}}",
                toml_key(&root.to_string_lossy())
            ),
        ],
        AgentKind::Opencode => Vec::new(),
    }
}

/// `text` as a quoted TOML key.
fn toml_key(text: &str) -> String {
    let mut out = String::from("\"");
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if c.is_control() => out.push_str(&format!("\\u{:04x}", u32::from(c))),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The engine's reviewer names and the agents pagent runs are one list: every agent
    /// can review under its own name, and every named reviewer is that agent.
    #[test]
    fn issue_22_a_workflow_reviewer_is_named_as_the_agent_it_runs() {
        let named = [Reviewer::Claude, Reviewer::Codex, Reviewer::Opencode];
        let agents: Vec<AgentKind> = named.iter().filter_map(agent_of).collect();
        assert_eq!(agents, AgentKind::ALL);
        for (reviewer, kind) in named.iter().zip(AgentKind::ALL) {
            assert_eq!(reviewer.name(), kind.name());
        }
        assert_eq!(agent_of(&Reviewer::Command("my-reviewer".into())), None);
    }

    #[test]
    fn the_stop_hook_limit_here_is_the_one_in_hooks_json() {
        let hooks: serde_json::Value =
            serde_json::from_str(include_str!("../../../hooks/hooks.json")).unwrap();
        assert_eq!(
            hooks["hooks"]["Stop"][0]["hooks"][0]["timeout"],
            STOP_HOOK_TIMEOUT_SECS
        );
        // The longest review a workflow may ask for fits inside it with the margin.
        let longest = Duration::from_secs(pagent_engine::review::MAX_REVIEW_TIMEOUT_SECS);
        assert!(longest + STOP_HOOK_MARGIN < Duration::from_secs(STOP_HOOK_TIMEOUT_SECS));
    }

    #[test]
    fn a_review_gets_what_is_left_of_the_hooks_time_or_does_not_start() {
        let now = Instant::now();
        let secs = Duration::from_secs;
        assert_eq!(review_time(240, None, now), Ok(secs(240)));
        assert_eq!(review_time(240, Some(now + secs(600)), now), Ok(secs(240)));
        assert_eq!(review_time(240, Some(now + secs(60)), now), Ok(secs(60)));
        for left in [secs(9), secs(0)] {
            let why = review_time(240, Some(now + left), now).unwrap_err();
            assert!(why.contains("no time was left"), "{why}");
        }
        // A deadline already behind: no panic, no start.
        assert!(review_time(240, Some(now), now + secs(5)).is_err());
    }
}
