//! What a team keeps on the remote, as JSON inside commits: the plan (`plan.json`), the
//! state (`state.json`), a claim (`claim.json`) and a worker's record (`worker.json`).
//!
//! Every one of them comes from another machine, so reading one is bounded and checked
//! before anything uses it: the blob's size is known before it is read ([`decode`] is
//! handed bytes the caller read only after the object's header said they fit), JSON
//! nesting never overflows the stack (serde_json stops at 128 levels in what it reads,
//! and skips an unknown field's value, however deep, without recursing), unknown fields
//! are ignored, and each record's
//! [`validate`](TeamPlan::validate) checks every name, count and length before the
//! record names a ref, a folder, a branch or a command. Times inside are for people
//! (status); no decision is made on another machine's clock.

use std::collections::BTreeMap;

use pagent_engine::{Budget, Timestamp};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use super::names;

/// The version every record carries; another one is refused, not guessed at.
pub const VERSION: u32 = 1;

/// The largest plan and state blobs read.
pub const MAX_PLAN_BYTES: u64 = 8 * 1024 * 1024;
pub const MAX_STATE_BYTES: u64 = 8 * 1024 * 1024;
/// The largest claim and worker blobs read.
pub const MAX_SMALL_BYTES: u64 = 64 * 1024;
/// The most stories a team takes (the plan readers' own limit).
pub const MAX_STORIES: usize = pagent_stories::MAX_STORIES;
/// The longest story text kept for the agent.
pub const MAX_TASK: usize = 64 * 1024;
/// The most checks, and the longest command line.
pub const MAX_CHECKS: usize = 20;
pub const MAX_COMMAND: usize = 4096;
/// The shortest and longest lease.
pub const MIN_LEASE_SECS: u64 = 2;
pub const MAX_LEASE_SECS: u64 = 24 * 3600;
/// Free text kept from a record (a reason, a host name): longer is cut.
pub const MAX_TEXT: usize = 2000;

/// A team's plan and settings: `plan.json` at `refs/pagent/teams/TEAM/plan`, written once
/// by `pagent team start`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TeamPlan {
    pub version: u32,
    pub team: String,
    /// The shared branch stories land on.
    pub branch: String,
    pub created_at: Timestamp,
    pub created_by: String,
    pub lease_secs: u64,
    /// The plan file in the repository, whose markers the landings tick.
    #[serde(default)]
    pub plan_file: Option<PlanFile>,
    pub stories: Vec<TeamStory>,
    pub agent: AgentSettings,
    pub max_iterations: u32,
    #[serde(default)]
    pub budget: Budget,
    /// The gate: commands that must pass on the merged tree before a landing.
    #[serde(default)]
    pub checks: Vec<String>,
}

/// Where the plan file is and how it is read.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PlanFile {
    /// Relative to the repository's root, `/`-separated.
    pub path: String,
    /// The format's name (`prd-json`, `chief`, ...).
    pub format: String,
}

/// One story of the team.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TeamStory {
    /// Its name: the claim's ref, the branch `pagent/NAME`, the worktree's folder.
    pub name: String,
    /// Its id in the plan file (`US-001`), whose marker a landing ticks.
    #[serde(default)]
    pub id: Option<String>,
    /// What the agent is asked to do.
    pub task: String,
    /// The stories it waits for (names).
    #[serde(default)]
    pub after: Vec<String>,
    #[serde(default)]
    pub max_iterations: Option<u32>,
    #[serde(default)]
    pub promise: Option<String>,
}

/// The agent every story's loop runs, as the team was started with it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AgentSettings {
    /// `claude`, `codex` or `opencode`.
    pub kind: String,
    /// A command line instead of an agent CLI.
    #[serde(default)]
    pub command: Option<String>,
    #[serde(default)]
    pub args: Vec<String>,
    pub permission_mode: String,
    pub iteration_timeout_secs: u64,
    pub idle_timeout_secs: u64,
    pub retries: u32,
    pub retry_delay_secs: u64,
    /// How long a loop waits out the agent's service being down.
    #[serde(default = "an_hour")]
    pub outage_wait_secs: u64,
    pub limit_wait_secs: u64,
    pub limit_margin_secs: u64,
    #[serde(default)]
    pub no_limit_wait: bool,
    /// `pagent team start --sandbox`: the workers run their agents contained.
    #[serde(default)]
    pub sandbox: bool,
}

fn an_hour() -> u64 {
    3600
}

/// The permission mode a worker may take from a plan without consent.
pub const DEFAULT_PERMISSION_MODE: &str = "acceptEdits";

impl AgentSettings {
    /// What of these settings can make a worker run something other than the agent CLI
    /// as its own defaults run it: a command, extra arguments, another permission mode.
    /// Each needs the worker's user's consent (or their own flags).
    pub fn commands(&self) -> Vec<String> {
        let mut out = Vec::new();
        if let Some(command) = &self.command {
            out.push(format!("agent command: {command}"));
        }
        if !self.args.is_empty() {
            out.push(format!("agent arguments: {}", self.args.join(" ")));
        }
        if self.permission_mode != DEFAULT_PERMISSION_MODE {
            out.push(format!("agent permission mode: {}", self.permission_mode));
        }
        out
    }
}

impl TeamPlan {
    /// Everything of the plan that runs as a command on a worker: its checks and the
    /// agent settings that need consent. Empty: a worker may run it as it is.
    pub fn commands(&self) -> Vec<String> {
        let mut out: Vec<String> = self.checks.iter().map(|c| format!("check: {c}")).collect();
        out.extend(self.agent.commands());
        out
    }

    pub fn story(&self, name: &str) -> Option<&TeamStory> {
        self.stories.iter().find(|s| s.name == name)
    }

    /// The plan, checked as a stranger's: `team` is the name its ref was found under.
    pub fn validate(&self, team: &str) -> Result<(), String> {
        ensure(self.version == VERSION, || {
            format!("its version is {}, not {VERSION}", self.version)
        })?;
        ensure(self.team == team, || {
            format!(
                "it names the team {:?}, not {team:?}",
                names::shown(&self.team)
            )
        })?;
        ensure(names::is_branch(&self.branch), || {
            format!(
                "its branch {:?} is not a branch name",
                names::shown(&self.branch)
            )
        })?;
        ensure(
            (MIN_LEASE_SECS..=MAX_LEASE_SECS).contains(&self.lease_secs),
            || format!("its lease of {} s is out of bounds", self.lease_secs),
        )?;
        ensure(self.created_by.len() <= MAX_TEXT, || {
            "its creator is too long".into()
        })?;
        ensure((1..=1000).contains(&self.max_iterations), || {
            "its iterations are out of bounds".into()
        })?;
        self.validate_stories()?;
        if let Some(file) = &self.plan_file {
            ensure(is_relative_path(&file.path), || {
                format!(
                    "its plan file {:?} is not a path in the repository",
                    names::shown(&file.path)
                )
            })?;
            ensure(
                pagent_stories::Format::from_name(&file.format).is_some(),
                || "its plan format is unknown".into(),
            )?;
        }
        ensure(self.checks.len() <= MAX_CHECKS, || {
            "it has too many checks".into()
        })?;
        for check in &self.checks {
            command_text("a check", check)?;
        }
        self.validate_agent()?;
        ensure(budget_in_bounds(&self.budget), || {
            "its budget is out of bounds".into()
        })
    }

    fn validate_stories(&self) -> Result<(), String> {
        ensure(!self.stories.is_empty(), || "it has no stories".into())?;
        ensure(self.stories.len() <= MAX_STORIES, || {
            format!("it has more than {MAX_STORIES} stories")
        })?;
        let mut seen = std::collections::HashSet::new();
        for story in &self.stories {
            ensure(names::is_valid(&story.name), || {
                format!(
                    "a story's name {:?} is not a name pagent uses",
                    names::shown(&story.name)
                )
            })?;
            ensure(seen.insert(story.name.as_str()), || {
                format!("two stories are named {}", story.name)
            })?;
            ensure(
                !story.task.trim().is_empty() && story.task.len() <= MAX_TASK,
                || format!("the story {}'s text is empty or too long", story.name),
            )?;
            if let Some(id) = &story.id {
                ensure(
                    !id.is_empty() && id.len() <= 200 && !id.contains(char::is_control),
                    || format!("the story {}'s id is not one line", story.name),
                )?;
            }
            if let Some(promise) = &story.promise {
                ensure(
                    !promise.trim().is_empty()
                        && promise.len() <= 200
                        && !promise.contains(char::is_control),
                    || format!("the story {}'s promise is not one short line", story.name),
                )?;
            }
            if let Some(max) = story.max_iterations {
                ensure((1..=1000).contains(&max), || {
                    format!("the story {}'s iterations are out of bounds", story.name)
                })?;
            }
            ensure(story.after.len() <= MAX_STORIES, || {
                "too many dependencies".into()
            })?;
        }
        for story in &self.stories {
            if let Some(dep) = story.after.iter().find(|d| !seen.contains(d.as_str())) {
                return Err(format!(
                    "the story {} waits for {:?}, which the plan does not have",
                    story.name,
                    names::shown(dep)
                ));
            }
        }
        ensure(never_stuck(&self.stories), || {
            "some of its stories wait for each other, so none of them could start".into()
        })
    }

    fn validate_agent(&self) -> Result<(), String> {
        let agent = &self.agent;
        ensure(
            pagent_protocol::stream::AgentKind::from_name(&agent.kind).is_some(),
            || {
                format!(
                    "its agent {:?} is not one pagent runs",
                    names::shown(&agent.kind)
                )
            },
        )?;
        if let Some(command) = &agent.command {
            command_text("the agent command", command)?;
        }
        ensure(agent.args.len() <= 64, || {
            "it has too many agent arguments".into()
        })?;
        for arg in &agent.args {
            ensure(arg.len() <= MAX_COMMAND && !arg.contains('\0'), || {
                "an agent argument is too long".into()
            })?;
        }
        ensure(
            !agent.permission_mode.is_empty()
                && agent.permission_mode.len() <= 64
                && agent
                    .permission_mode
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric()),
            || "its permission mode is not a word".into(),
        )?;
        let day = 24 * 3600;
        ensure(
            agent.iteration_timeout_secs <= 7 * day
                && agent.idle_timeout_secs <= 7 * day
                && agent.retries <= 20
                && agent.retry_delay_secs <= day
                && agent.outage_wait_secs <= 7 * day
                && agent.limit_wait_secs <= 7 * day
                && agent.limit_margin_secs <= day,
            || "its agent's time limits are out of bounds".into(),
        )
    }
}

/// Whether every story can start once the ones it waits for landed (no cycle).
fn never_stuck(stories: &[TeamStory]) -> bool {
    let mut started: std::collections::HashSet<&str> = std::collections::HashSet::new();
    loop {
        let ready: Vec<&str> = stories
            .iter()
            .filter(|s| !started.contains(s.name.as_str()))
            .filter(|s| s.after.iter().all(|d| started.contains(d.as_str())))
            .map(|s| s.name.as_str())
            .collect();
        if ready.is_empty() {
            return started.len() == stories.len();
        }
        started.extend(ready);
    }
}

/// A plain relative path: `a/b.md`, no `..`, no absolute part, no control character.
fn is_relative_path(path: &str) -> bool {
    !path.is_empty()
        && path.len() <= 1024
        && !path.starts_with('/')
        && !path.contains('\\')
        && !path.contains(char::is_control)
        && path
            .split('/')
            .all(|part| !part.is_empty() && part != "." && part != ".." && !part.contains(':'))
}

fn command_text(what: &str, command: &str) -> Result<(), String> {
    ensure(
        !command.trim().is_empty() && command.len() <= MAX_COMMAND && !command.contains('\0'),
        || format!("{what} is empty or longer than {MAX_COMMAND} bytes"),
    )
}

fn budget_in_bounds(budget: &Budget) -> bool {
    use pagent_engine::budget::{MAX_COST_MICROUSD, MAX_DURATION_SECS, MAX_TOKENS};
    budget
        .max_duration_secs
        .is_none_or(|v| v <= MAX_DURATION_SECS)
        && budget.max_tokens.is_none_or(|v| v <= MAX_TOKENS)
        && budget
            .max_cost_microusd
            .is_none_or(|v| v <= MAX_COST_MICROUSD)
}

fn ensure(ok: bool, why: impl FnOnce() -> String) -> Result<(), String> {
    if ok { Ok(()) } else { Err(why()) }
}

/// Whether the team works, waits or has been stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Control {
    Running,
    /// No new claims and no landings; work in progress waits.
    Paused,
    /// For good: no landing after it, nothing pushed by a worker that saw it.
    Cancelled,
}

impl Control {
    pub fn as_str(self) -> &'static str {
        match self {
            Control::Running => "running",
            Control::Paused => "paused",
            Control::Cancelled => "cancelled",
        }
    }
}

/// The team's state: `state.json` at `refs/pagent/teams/TEAM/state`. Every change is a
/// new commit whose parent is the one it replaced (the team's audit log), pushed with a
/// lease on that parent; every landing changes it, so a landing and a cancel can never
/// both succeed against the same state.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TeamState {
    pub version: u32,
    pub control: Control,
    /// Who changed `control` last, and when (for people).
    #[serde(default)]
    pub control_by: String,
    #[serde(default)]
    pub control_at: Option<Timestamp>,
    #[serde(default)]
    pub landed: BTreeMap<String, Landed>,
    #[serde(default)]
    pub gave_up: BTreeMap<String, GaveUp>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Landed {
    /// The commit on the shared branch that landed the story.
    pub commit: String,
    pub worker: String,
    pub at: Timestamp,
    /// Pushes that were rejected before this one (someone landed first).
    #[serde(default)]
    pub rejected: u32,
    /// Why the plan's marker was not ticked, when it was not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub not_ticked: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GaveUp {
    pub worker: String,
    pub at: Timestamp,
    pub reason: String,
}

impl TeamState {
    pub fn new(by: &str, at: Timestamp) -> TeamState {
        TeamState {
            version: VERSION,
            control: Control::Running,
            control_by: by.to_owned(),
            control_at: Some(at),
            landed: BTreeMap::new(),
            gave_up: BTreeMap::new(),
        }
    }

    /// The state, checked against the plan it belongs to.
    pub fn validate(&self, plan: &TeamPlan) -> Result<(), String> {
        ensure(self.version == VERSION, || {
            format!("its version is {}, not {VERSION}", self.version)
        })?;
        for name in self.landed.keys().chain(self.gave_up.keys()) {
            ensure(plan.story(name).is_some(), || {
                format!(
                    "it names a story {:?} the plan does not have",
                    names::shown(name)
                )
            })?;
        }
        for landed in self.landed.values() {
            ensure(
                git2::Oid::from_str(&landed.commit).is_ok() && landed.commit.len() >= 40,
                || "a landing names no commit".into(),
            )?;
        }
        Ok(())
    }

    pub fn is_settled(&self, story: &str) -> bool {
        self.landed.contains_key(story) || self.gave_up.contains_key(story)
    }
}

/// What a claim says its holder is doing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Phase {
    Working,
    Landing,
    Resolving,
    Paused,
    /// Let go by its worker (stopped, out of time): anyone may take it over at once.
    Released,
    /// The story landed: the claim stays, so nobody claims it again from a stale view.
    Landed,
    /// The story gave up: likewise.
    GaveUp,
}

impl Phase {
    pub fn as_str(self) -> &'static str {
        match self {
            Phase::Working => "working",
            Phase::Landing => "landing",
            Phase::Resolving => "resolving",
            Phase::Paused => "paused",
            Phase::Released => "released",
            Phase::Landed => "landed",
            Phase::GaveUp => "gave up",
        }
    }

    /// A claim in this phase is over: nobody may claim or take over the story.
    pub fn is_final(self) -> bool {
        matches!(self, Phase::Landed | Phase::GaveUp)
    }
}

/// A claim: `claim.json` at `refs/pagent/teams/TEAM/claims/STORY`. Its commit's parent,
/// when it has one, is the story's work in progress.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Claim {
    pub version: u32,
    pub story: String,
    pub worker: String,
    #[serde(default)]
    pub host: String,
    /// This holding's nonce: every claim commit of one holding carries it, with `seq`,
    /// so no two workers ever push the same commit (a push of a commit the ref already
    /// has is accepted whatever its lease says).
    pub holding: String,
    pub seq: u64,
    pub since: Timestamp,
    pub renewed_at: Timestamp,
    pub lease_secs: u64,
    pub phase: Phase,
    #[serde(default)]
    pub iterations: u32,
    /// Taken over from another worker's work in progress.
    #[serde(default)]
    pub taken_over: bool,
}

impl Claim {
    pub fn validate(&self, story: &str) -> Result<(), String> {
        ensure(self.version == VERSION, || "its version is not 1".into())?;
        ensure(self.story == story, || "it names another story".into())?;
        ensure(names::is_valid(&self.worker), || {
            "its worker is not a name".into()
        })?;
        ensure(
            self.host.len() <= MAX_TEXT && self.holding.len() <= 64,
            || "a field is too long".into(),
        )
    }
}

/// A worker's record: `worker.json` at `refs/pagent/teams/TEAM/workers/WORKER`, pushed by
/// that worker alone with its renewals.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WorkerRecord {
    pub version: u32,
    pub worker: String,
    #[serde(default)]
    pub host: String,
    pub started_at: Timestamp,
    pub updated_at: Timestamp,
    pub jobs: u32,
    /// `working`, `paused`, `idle`, `stopped`, `done`.
    pub state: String,
    #[serde(default)]
    pub holds: Vec<String>,
    #[serde(default)]
    pub landed: u32,
    #[serde(default)]
    pub tokens: u64,
    #[serde(default)]
    pub cost_microusd: u64,
    #[serde(default)]
    pub cost_known: bool,
    /// The worker's own time limit (`--until`), when it has one.
    #[serde(default)]
    pub until: Option<Timestamp>,
    #[serde(default)]
    pub seq: u64,
}

impl WorkerRecord {
    pub fn validate(&self, worker: &str) -> Result<(), String> {
        ensure(self.version == VERSION && self.worker == worker, || {
            "it is not this worker's record".into()
        })?;
        ensure(
            self.host.len() <= MAX_TEXT && self.state.len() <= 16 && self.holds.len() <= 64,
            || "a field is too long".into(),
        )?;
        ensure(self.holds.iter().all(|h| names::is_valid(h)), || {
            "it holds something that is not a story name".into()
        })
    }
}

/// Text from elsewhere, cut to `MAX_TEXT` characters on one line.
pub fn one_line(text: &str) -> String {
    let line: String = text
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .take(MAX_TEXT)
        .collect();
    line.trim().to_owned()
}

/// `bytes` (read by the caller only once their size was known to be at most `cap`) as a
/// record of type `T`; the words of why not.
pub fn decode<T: DeserializeOwned>(bytes: &[u8], cap: u64) -> Result<T, String> {
    if bytes.len() as u64 > cap {
        return Err(format!("it is larger than {} KiB", cap / 1024));
    }
    serde_json::from_slice(bytes).map_err(|e| format!("it is not valid JSON of its kind ({e})"))
}

/// A record as the bytes of its blob: pretty JSON with a final newline.
pub fn encode<T: Serialize>(record: &T) -> Vec<u8> {
    let mut text = serde_json::to_string_pretty(record).unwrap_or_default();
    text.push('\n');
    text.into_bytes()
}

#[cfg(test)]
mod tests;
