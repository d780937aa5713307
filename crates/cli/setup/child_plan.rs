//! A `pagent parallel` child's plan as data (issue 31): what the child loop is started
//! with (the agent's options, the limits, the task) is written by its parent into
//! `.claude/pagent/parallel/NAME.json` through the file door, and the child, started as
//! `pagent loop --json --worktree NAME --child-plan FILE --child-plan-sha256 HEX`, reads
//! it back into its plan ([`crate::setup::plan::LoopPlan::from_child`]). One
//! representation, these types through serde: nothing is written as flags to be parsed
//! again.
//!
//! The file lies in the project, where a cloned repository or the agent of another task
//! can write too. So the child reads it through the door (no symlink, at most
//! [`FILE_CAP`] bytes) and only from the plans folder, takes it only when its SHA-256 is
//! the one its parent put on its command line, refuses a version other than its own and
//! a field it does not know, and checks every value against the bounds its flags have.

use std::path::{Component, Path, PathBuf};

use anyhow::{Context, bail, ensure};
use pagent_engine::Budget;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::agent::Options;
use crate::store::project::{CHILD_PLANS_DIR, Project};

/// The version of the file this pagent writes and reads.
pub const VERSION: u32 = 1;

/// The largest plan file read: a task as long as the largest plan, and the rest.
pub const FILE_CAP: u64 = pagent_stories::MAX_PLAN_BYTES as u64 + 64 * 1024;

/// The most agent arguments a plan may carry.
const AGENT_ARGS_CAP: usize = 256;

/// What one child loop of `pagent parallel` is started with.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ChildPlan {
    pub version: u32,
    /// The agent and how it runs: the same for every task.
    pub agent: Options,
    /// Each task's limits (a new loop's; a resumed one keeps its own).
    pub budget: Budget,
    /// Commit after every iteration.
    pub checkpoint: bool,
    /// A new ralph loop for the task; none: the loop active in the worktree continues.
    pub start: Option<ChildStart>,
}

/// A new ralph loop for a task.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ChildStart {
    pub task: String,
    pub promise: String,
    pub max_iterations: u32,
    /// Trust the project files the loop uses that can make pagent run commands.
    pub trust: bool,
    /// Replace a loop that is active in the worktree.
    pub force: bool,
}

/// Where the plan of the task `name` is written, from the project's root.
pub fn file_of(name: &str) -> PathBuf {
    Path::new(CHILD_PLANS_DIR).join(format!("{name}.json"))
}

impl ChildPlan {
    pub fn new(
        agent: Options,
        budget: Budget,
        checkpoint: bool,
        start: Option<ChildStart>,
    ) -> ChildPlan {
        ChildPlan {
            version: VERSION,
            agent,
            budget,
            checkpoint,
            start,
        }
    }

    /// Writes the plan of the task `name`; its file (from the project's root) and the
    /// SHA-256 of what was written, for the child's command line.
    pub fn write(&self, project: &Project, name: &str) -> anyhow::Result<(PathBuf, String)> {
        let bytes = serde_json::to_vec_pretty(self)?;
        let rel = file_of(name);
        project
            .dir()
            .write_atomic(&rel, &bytes)
            .with_context(|| format!("cannot write the plan of task {name}"))?;
        Ok((rel, sha256_hex(&bytes)))
    }

    /// The plan in `rel`, when it is one of the plans folder's files, its SHA-256 is
    /// `sha256`, and every value is one the flags could have given.
    pub fn read(project: &Project, rel: &Path, sha256: &str) -> anyhow::Result<ChildPlan> {
        ensure!(
            in_plans_folder(rel),
            "{} is not a file of {CHILD_PLANS_DIR}",
            rel.display()
        );
        let bytes = project
            .dir()
            .read(rel, FILE_CAP)
            .with_context(|| format!("cannot read the loop's plan {}", rel.display()))?;
        ensure!(
            sha256_hex(&bytes).eq_ignore_ascii_case(sha256),
            "the loop's plan {} changed after pagent parallel wrote it; nothing was started",
            rel.display()
        );
        let plan: ChildPlan = serde_json::from_slice(&bytes)
            .with_context(|| format!("the loop's plan {} cannot be read", rel.display()))?;
        plan.check()
            .with_context(|| format!("the loop's plan {} is refused", rel.display()))?;
        Ok(plan)
    }

    /// The bounds the flags have.
    fn check(&self) -> anyhow::Result<()> {
        use pagent_engine::budget::{MAX_COST_MICROUSD, MAX_DURATION_SECS, MAX_TOKENS};
        if self.version != VERSION {
            bail!(
                "it is version {}, this pagent reads version {VERSION}",
                self.version
            );
        }
        let agent = &self.agent;
        ensure!(agent.retries <= 20, "more than 20 retries");
        ensure!(
            agent.agent_args.len() <= AGENT_ARGS_CAP,
            "more than {AGENT_ARGS_CAP} agent arguments"
        );
        ensure!(
            agent.allow_hosts.len() <= AGENT_ARGS_CAP
                && agent
                    .allow_hosts
                    .iter()
                    .all(|host| crate::cli::agent_args::parse_host(host).as_deref() == Ok(host)),
            "a host --allow-host would refuse"
        );
        let budget = &self.budget;
        ensure!(
            budget
                .max_duration_secs
                .is_none_or(|v| v <= MAX_DURATION_SECS)
                && budget.max_tokens.is_none_or(|v| v <= MAX_TOKENS)
                && budget
                    .max_cost_microusd
                    .is_none_or(|v| v <= MAX_COST_MICROUSD),
            "a limit past its bound"
        );
        if let Some(start) = &self.start {
            ensure!(
                (1..=1000).contains(&start.max_iterations),
                "{} iterations (1 to 1000)",
                start.max_iterations
            );
        }
        Ok(())
    }
}

/// `rel` names a file right in the plans folder: no other folder, no `..`.
fn in_plans_folder(rel: &Path) -> bool {
    rel.parent() == Some(Path::new(CHILD_PLANS_DIR))
        && rel.extension().is_some_and(|e| e == "json")
        && rel.components().all(|c| matches!(c, Component::Normal(_)))
}

fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use serde_json::{Value, json};

    use super::*;
    use crate::setup::plan::LoopPlan;

    fn plan() -> ChildPlan {
        ChildPlan::new(
            Options {
                agent: pagent_protocol::stream::AgentKind::Codex,
                command: None,
                agent_bin: Some("/opt/codex".into()),
                agent_args: vec!["--model".into(), "o3".into()],
                permission_mode: "plan".into(),
                iteration_timeout: Duration::from_secs(60),
                idle_timeout: Duration::from_secs(30),
                retries: 1,
                retry_delay: Duration::from_secs(2),
                outage_wait: Duration::from_secs(900),
                limit_wait: Duration::from_secs(600),
                limit_margin: Duration::from_secs(5),
                no_limit_wait: true,
                sandbox: true,
                allow_hosts: vec!["registry.example.org".into()],
            },
            Budget {
                max_duration_secs: Some(5_400),
                max_tokens: Some(2_000_000),
                max_cost_microusd: Some(2_500_001),
            },
            true,
            Some(ChildStart {
                task: "Fix it --force; $(id)".into(),
                promise: "SHIPPED".into(),
                max_iterations: 9,
                trust: true,
                force: true,
            }),
        )
    }

    #[test]
    fn issue_31_item_2_the_plan_a_parent_writes_is_the_plan_its_child_reads() {
        let dir = tempfile::tempdir().unwrap();
        let project = Project::at(dir.path()).unwrap();
        let (rel, sha256) = plan().write(&project, "alpha").unwrap();
        assert_eq!(rel, Path::new(".claude/pagent/parallel/alpha.json"));
        let read = ChildPlan::read(&project, &rel, &sha256).unwrap();
        assert_eq!(read, plan());
        let loop_plan = LoopPlan::from_child(read, Some("alpha".into()));
        assert_eq!(loop_plan.agent, plan().agent);
        assert_eq!(loop_plan.budget, plan().budget);
        assert!(loop_plan.checkpoint && loop_plan.trusts());
        assert_eq!(loop_plan.worktree.as_deref(), Some("alpha"));
        let start = format!("{:?}", loop_plan.start.unwrap());
        for part in [
            "prompt: [\"Fix it --force; $(id)\"]",
            "max_iterations: Some(9)",
            "promise: \"SHIPPED\"",
            "force: true",
            "trust: true",
        ] {
            assert!(start.contains(part), "{part} in {start}");
        }
    }

    #[test]
    fn issue_31_item_2_a_plan_past_the_flags_bounds_or_of_another_version_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let project = Project::at(dir.path()).unwrap();
        let mut cases: Vec<(&str, Value)> = Vec::new();
        let good = serde_json::to_value(plan()).unwrap();
        for (why, pointer, value) in [
            ("version 2", "/version", json!(2)),
            ("more than 20 retries", "/agent/retries", json!(21)),
            ("1001 iterations", "/start/max_iterations", json!(1001)),
            ("0 iterations", "/start/max_iterations", json!(0)),
            (
                "a limit past its bound",
                "/budget/max_tokens",
                json!(u64::MAX),
            ),
            ("is not an agent", "/agent/agent", json!("rm")),
            (
                "a host --allow-host would refuse",
                "/agent/allow_hosts",
                json!(["evil.example\"},{\"x"]),
            ),
            ("unknown field", "/agent/shell", json!("sh")),
        ] {
            let mut bad = good.clone();
            let (parent, key) = pointer.rsplit_once('/').unwrap();
            bad.pointer_mut(parent).unwrap()[key] = value;
            cases.push((why, bad));
        }
        for (why, bad) in cases {
            let bytes = serde_json::to_vec(&bad).unwrap();
            let rel = file_of("alpha");
            project.dir().write_atomic(&rel, &bytes).unwrap();
            let err = ChildPlan::read(&project, &rel, &sha256_hex(&bytes)).unwrap_err();
            assert!(format!("{err:#}").contains(why), "{why}: {err:#}");
        }
    }
}
