//! `pagent team workflow`: a GitHub Actions workflow that runs a team's workers as a
//! matrix of jobs, each a fresh runner with a clone, the agent CLI, the user's agent
//! credentials as a secret, and the job's time limit handed to the worker as `--until`
//! (the worker stops a few minutes before the runner would be killed and releases its
//! claims with their work, so the next worker takes them over at once).
//!
//! The clone keeps no credentials (`persist-credentials: false`): the job's token goes to
//! pagent alone as `PAGENT_GIT_TOKEN`, which pagent hands to its own `git fetch` and `git
//! push` as a header and removes from every other child, so no agent can push with it.
//! The team's commands (its checks, an agent command) are written into the workflow as
//! the worker's own flags: the workflow file is what the user reviews and commits, and
//! the workers then need no `pagent team trust` on the runners.

use std::fmt::Write as _;

use super::records::TeamPlan;

/// The actions, pinned by commit as the release workflow pins them (the comment names
/// the release).
const CHECKOUT: &str = "actions/checkout@3d3c42e5aac5ba805825da76410c181273ba90b1 # v7.0.1";
const SETUP_NODE: &str = "actions/setup-node@820762786026740c76f36085b0efc47a31fe5020 # v7.0.0";

/// What the workflow is made of.
#[derive(Debug, Clone)]
pub struct WorkflowSettings {
    pub workers: u32,
    /// Stories each worker runs at once.
    pub jobs: u32,
    /// The job's time limit, in minutes (GitHub's own limit is 360).
    pub timeout_minutes: u32,
    /// The pagent version to install (the one that wrote the workflow).
    pub pagent_version: String,
    /// The most each worker spends, in US dollars, if given.
    pub spend_limit: Option<String>,
}

/// The npm package of an agent CLI, and the secret its key comes from.
fn agent_install(kind: &str) -> (&'static str, &'static str, &'static str) {
    match kind {
        "codex" => ("@openai/codex", "OPENAI_API_KEY", "OPENAI_API_KEY"),
        "opencode" => ("opencode-ai", "ANTHROPIC_API_KEY", "ANTHROPIC_API_KEY"),
        _ => (
            "@anthropic-ai/claude-code",
            "ANTHROPIC_API_KEY",
            "ANTHROPIC_API_KEY",
        ),
    }
}

/// The workflow for the team `plan`.
pub fn workflow(plan: &TeamPlan, settings: &WorkflowSettings) -> anyhow::Result<String> {
    let lines = plan
        .checks
        .iter()
        .chain(plan.agent.command.iter())
        .chain(plan.agent.args.iter());
    if let Some(line) = lines.into_iter().find(|l| l.contains(['\n', '\r'])) {
        anyhow::bail!(
            "the team's command {:?} spans lines, which a workflow's command line cannot carry; give the workers your own with --check or --command",
            super::names::shown(line)
        );
    }
    let team = &plan.team;
    let (package, variable, secret) = agent_install(&plan.agent.kind);
    let until = settings.timeout_minutes.saturating_sub(10).max(5);
    let workers: Vec<String> = (1..=settings.workers).map(|n| n.to_string()).collect();
    let mut y = String::new();
    let _ = writeln!(
        y,
        "# pagent team {team}: {} workers on GitHub Actions, written by `pagent team workflow`.",
        settings.workers
    );
    y.push_str("# Start the team on any machine first (pagent team start PLAN), add the secret\n");
    let _ = writeln!(
        y,
        "# {secret} to the repository, then run this workflow from the Actions tab."
    );
    y.push_str("# See the team from anywhere with `pagent team status`; stop it with `pagent team cancel`.\n");
    let _ = writeln!(y, "name: pagent team {team}\n");
    y.push_str("on:\n  workflow_dispatch:\n\n");
    y.push_str("permissions:\n  contents: write\n\n");
    let _ = writeln!(
        y,
        "concurrency:\n  group: pagent-team-{team}\n  cancel-in-progress: false\n"
    );
    y.push_str("jobs:\n  worker:\n    runs-on: ubuntu-latest\n");
    let _ = writeln!(y, "    timeout-minutes: {}", settings.timeout_minutes);
    y.push_str("    strategy:\n      fail-fast: false\n      matrix:\n");
    let _ = writeln!(y, "        worker: [{}]", workers.join(", "));
    y.push_str("    steps:\n");
    let _ = writeln!(
        y,
        "      - uses: {CHECKOUT}\n        with:\n          fetch-depth: 0\n          persist-credentials: false"
    );
    let _ = writeln!(
        y,
        "      - uses: {SETUP_NODE}\n        with:\n          node-version: 22"
    );
    y.push_str("      - name: Install pagent and the agent\n");
    let _ = writeln!(
        y,
        "        run: npm install --global pagent@{} {package}",
        settings.pagent_version
    );
    y.push_str("      - name: Commit as the team\n        run: |\n");
    y.push_str("          git config user.name \"pagent team\"\n");
    y.push_str("          git config user.email \"pagent-team@users.noreply.github.com\"\n");
    y.push_str("      - name: Work on the team's stories\n        env:\n");
    let _ = writeln!(y, "          {variable}: ${{{{ secrets.{secret} }}}}");
    y.push_str("          PAGENT_GIT_TOKEN: ${{ github.token }}\n");
    y.push_str("          WORKER: ${{ matrix.worker }}\n");
    y.push_str("        run: >-\n");
    let _ = writeln!(y, "          pagent team work --team {team}");
    y.push_str("          --remote \"$GITHUB_SERVER_URL/$GITHUB_REPOSITORY.git\"\n");
    y.push_str("          --name \"gh-$GITHUB_RUN_ID-$WORKER\"\n");
    let _ = writeln!(y, "          -j {} --until {until}m", settings.jobs);
    for line in own_flags(plan, settings) {
        let _ = writeln!(y, "          {line}");
    }
    Ok(y)
}

/// The team's commands as the worker's own flags, each shell-quoted.
fn own_flags(plan: &TeamPlan, settings: &WorkflowSettings) -> Vec<String> {
    let mut flags = Vec::new();
    for check in &plan.checks {
        flags.push(format!("--check {}", quote(check)));
    }
    let agent = &plan.agent;
    if let Some(command) = &agent.command {
        flags.push(format!("--command {}", quote(command)));
    } else if !agent.commands().is_empty() {
        flags.push(format!("--agent {}", agent.kind));
        for arg in &agent.args {
            flags.push(format!("--agent-arg={}", quote(arg)));
        }
        flags.push(format!(
            "--permission-mode {}",
            quote(&agent.permission_mode)
        ));
    }
    if let Some(limit) = &settings.spend_limit {
        flags.push(format!("--spend-limit {}", quote(limit)));
    }
    flags
}

/// A word for `sh`: plain words as they are, the rest in single quotes.
fn quote(text: &str) -> String {
    if !text.is_empty()
        && text
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./=:@,+".contains(c))
    {
        text.to_owned()
    } else {
        format!("'{}'", text.replace('\'', r"'\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runner::team::records::{AgentSettings, VERSION};

    /// The example in the docs: a team of the PRD pipeline's stories, gated by its tests.
    fn example_plan() -> TeamPlan {
        TeamPlan {
            version: VERSION,
            team: "night".into(),
            branch: "main".into(),
            created_at: pagent_engine::Timestamp(0),
            created_by: "laptop".into(),
            lease_secs: 300,
            plan_file: None,
            stories: Vec::new(),
            agent: AgentSettings {
                kind: "claude".into(),
                command: None,
                args: Vec::new(),
                permission_mode: "acceptEdits".into(),
                iteration_timeout_secs: 1800,
                idle_timeout_secs: 600,
                retries: 3,
                retry_delay_secs: 5,
                outage_wait_secs: 3600,
                limit_wait_secs: 1800,
                limit_margin_secs: 60,
                no_limit_wait: false,
                sandbox: false,
            },
            max_iterations: 25,
            budget: pagent_engine::Budget::default(),
            checks: vec!["cargo test --locked".into()],
        }
    }

    fn example() -> String {
        workflow(
            &example_plan(),
            &WorkflowSettings {
                workers: 16,
                jobs: 1,
                timeout_minutes: 350,
                pagent_version: "0.1.0".into(),
                spend_limit: Some("20".into()),
            },
        )
        .unwrap()
    }

    /// Issue 32: the workflow as a user reads it; it is also `docs/team-workflow.yml`,
    /// which `scripts/check-workflow.sh` holds to actionlint (`PAGENT_BLESS_DOCS=1`
    /// rewrites it).
    #[test]
    #[allow(clippy::disallowed_methods)]
    fn issue_32_the_generated_workflow_reads_whole_and_is_the_docs_example() {
        let text = example();
        insta::assert_snapshot!(text);
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/team-workflow.yml");
        if crate::cli::env::bless_docs() {
            std::fs::write(&path, &text).unwrap();
        }
        assert_eq!(
            std::fs::read_to_string(&path).unwrap_or_default(),
            text,
            "PAGENT_BLESS_DOCS=1 rewrites {}",
            path.display()
        );
    }

    #[test]
    fn a_command_that_spans_lines_is_refused() {
        let mut plan = example_plan();
        plan.checks = vec!["cargo test\nrm -rf ~".into()];
        let settings = WorkflowSettings {
            workers: 1,
            jobs: 1,
            timeout_minutes: 60,
            pagent_version: "0.1.0".into(),
            spend_limit: None,
        };
        assert!(workflow(&plan, &settings).is_err());
        plan.checks = vec!["it's `quoted` $HOME".into()];
        assert!(
            workflow(&plan, &settings)
                .unwrap()
                .contains(r"--check 'it'\''s `quoted` $HOME'")
        );
    }
}
