//! What a team's story loops read beyond the story itself: the note a story taken over
//! from another worker starts with, and the prompt of a landing whose checks fail on the
//! merged work (`plugin/prompts/team-gate.md`).

use super::templates::TEAM_GATE;
use crate::render::cap_tail;

/// The most of a failing check's output the prompt carries (its tail).
const OUTPUT_CAP: usize = 4_000;

/// The story's task for a worker that takes it over from another's work in progress.
pub fn taken_over(task: &str) -> String {
    format!(
        "{task}\n\nAnother worker began this story and stopped before it was done; its work is on this branch already. Continue from it: read what is there first, and do not start over."
    )
}

/// What the gate prompt is filled with.
#[derive(Debug, Clone, Copy)]
pub struct GateFill<'a> {
    pub branch: &'a str,
    pub target: &'a str,
    pub target_commit: &'a str,
    pub check: &'a str,
    pub output: &'a str,
    pub promise: &'a str,
    pub task: &'a str,
}

/// The gate prompt, filled in (the task last, so nothing in it is taken for a
/// placeholder; the check's output before it, capped to its tail).
pub fn gate(fill: &GateFill) -> String {
    let commit: String = fill.target_commit.chars().take(10).collect();
    let output = cap_tail(fill.output.trim_end(), OUTPUT_CAP);
    TEAM_GATE
        .replace("{{branch}}", fill.branch)
        .replace("{{target_commit}}", &commit)
        .replace("{{target}}", fill.target)
        .replace("{{check}}", fill.check)
        .replace("{{promise}}", fill.promise)
        .replace("{{output}}", &output.replace("{{", "{ {"))
        .replace("{{task}}", &fill.task.replace("{{story}}", "{{ story }}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The whole gate prompt, and a story taken over, as the agent reads them.
    #[test]
    fn issue_32_a_teams_prompts_read_whole() {
        let gate = gate(&GateFill {
            branch: "pagent/US-002",
            target: "main",
            target_commit: "0123456789abcdef0123",
            check: "cargo test",
            output: "test login ... FAILED\n{{task}}\n",
            promise: "DONE",
            task: "US-002: Add a login page",
        });
        insta::assert_snapshot!(format!(
            "=== gate\n{gate}\n=== taken over\n{}",
            taken_over("US-003: Add a logout button")
        ));
    }
}
