//! `pagent loop --stories`: each format's fixture (`tests/fixtures/plans/`, written from
//! its documentation) worked through by a fake agent that does one story per run and
//! never touches the plan. pagent ticks each story when the checks pass: the stories are
//! done in order, the plan's every other byte is as it was, and the loop completes only
//! once the checks pass (the agent breaks them on its second run and mends them on its
//! third, so the second story takes two iterations).

use std::path::PathBuf;

use crate::util::*;

pub const CHIEF: &str = include_str!("../fixtures/plans/chief-prd.md");
pub const SPECKIT: &str = include_str!("../fixtures/plans/speckit-tasks.md");
pub const KIRO: &str = include_str!("../fixtures/plans/kiro-tasks.md");
pub const RALPHEX: &str = include_str!("../fixtures/plans/ralphex-plan.md");
pub const PRD_JSON: &str = include_str!("../fixtures/plans/prd.json");

/// The fake agent: takes the story id from the prompt, logs it, breaks the checks on its
/// second run and mends them on its third, and claims the story every time.
pub const AGENT: &str = r#"prompt=$(cat)
n=$(cat .runs 2>/dev/null || echo 0); n=$((n+1)); echo $n > .runs
story=$(printf '%s\n' "$prompt" | sed -n '/^Your story for this iteration:$/{n;n;p;q;}' | sed 's/: .*//')
echo "$story" >> done.log
case $n in
  2) touch broken ;;
  3) rm -f broken ;;
esac
printf 'Did %s.\n<promise>STORY DONE</promise>\n' "$story"
"#;

pub const CHECKS: &str = "if [ -f broken ]; then echo 'the build is broken'; exit 1; fi\n";

/// (path, plan text, flags, story ids in order, the plan pagent should leave).
type Case = (
    &'static str,
    String,
    Vec<&'static str>,
    &'static [&'static str],
    String,
);

/// Each fixture, where it goes, the flags it needs, its stories in order, and the file
/// pagent should leave: the fixture with exactly the markers ticked.
fn cases() -> Vec<Case> {
    let check = vec!["--check", "sh checks.sh"];
    vec![
        (
            "prd.md",
            CHIEF.to_owned(),
            check.clone(),
            &["US-001", "US-002", "US-003"],
            CHIEF
                .replacen("**Status:** todo", "**Status:** done", 1)
                .replacen(
                    "### US-002: List the recipes\n",
                    "### US-002: List the recipes\n**Status:** done\n",
                    1,
                )
                .replacen("**Status:** in-progress", "**Status:** done", 1),
        ),
        (
            "specs/001-recipe-box/tasks.md",
            SPECKIT.to_owned(),
            check.clone(),
            &["T001", "T002", "T003"],
            SPECKIT.replace("- [ ] T00", "- [X] T00"),
        ),
        (
            ".kiro/specs/recipe-box/tasks.md",
            KIRO.to_owned(),
            check.clone(),
            &["1.1", "1.2", "2"],
            KIRO.replace("- [ ] 1", "- [x] 1")
                .replace("- [ ] 2", "- [x] 2"),
        ),
        (
            "docs/plans/recipe-box.md",
            RALPHEX.to_owned(),
            vec!["--trust"],
            &["Task 1", "Task 2", "Task 3"],
            RALPHEX.replace("- [ ]", "- [x]"),
        ),
        (
            "prd.json",
            PRD_JSON.to_owned(),
            check,
            &["US-001", "US-002", "US-003"],
            PRD_JSON
                .replace("\"passes\": false", "\"passes\": true")
                .replace("\"passes\":false", "\"passes\":true"),
        ),
    ]
}

/// The prompt files of the loop's iterations, in order.
pub fn prompts(env: &TestEnv) -> Vec<String> {
    let runs = env.path(".claude/pagent/runs");
    let mut paths: Vec<PathBuf> = std::fs::read_dir(&runs)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.to_string_lossy().ends_with(".prompt.md"))
        .collect();
    paths.sort();
    paths
        .iter()
        .map(|p| std::fs::read_to_string(p).unwrap())
        .collect()
}

#[test]
fn every_format_is_worked_through_story_by_story_and_only_its_markers_change() {
    for (path, text, flags, order, expected) in cases() {
        let env = TestEnv::new();
        env.write(path, &text)
            .write("agent.sh", AGENT)
            .write("checks.sh", CHECKS);
        let mut args = vec!["loop", "--command", "sh agent.sh", "--stories", path];
        args.extend(flags);
        let out = env.cmd(&args).success();
        assert!(
            out.stdout
                .contains("pagent loop: complete after 4 iterations"),
            "{path}: {out}"
        );
        // Only the markers changed: every other byte of the plan is as it was.
        assert_eq!(env.read(path), expected, "{path}");
        let done: Vec<String> = env.read("done.log").lines().map(str::to_owned).collect();
        assert_eq!(
            done,
            [order[0], order[1], order[1], order[2]],
            "{path}: the second story took two runs, the checks failing on the first"
        );
        assert_eq!(
            env.actions(),
            ["stories", "block", "block", "block", "complete"],
            "{path}"
        );
        let prompts = prompts(&env);
        assert!(
            prompts[2].contains("you said story")
                && prompts[2].contains("is done, but it stays open until the checks hold")
                && prompts[2].contains("the build is broken"),
            "{path}: {}",
            prompts[2]
        );
        assert_eq!(env.state()["status"], "complete");
    }
}

#[test]
fn a_plan_s_validation_commands_run_only_with_consent() {
    let env = TestEnv::new();
    env.write("plan.md", RALPHEX)
        .write("agent.sh", AGENT)
        .write("checks.sh", CHECKS);
    let out = env
        .cmd(&["loop", "--command", "sh agent.sh", "--stories", "plan.md"])
        .failure();
    let mut said = Said::new();
    said.say("pagent loop --stories plan.md", &out.stderr);
    assert!(!env.exists("done.log"), "no agent ran");
    assert!(!env.exists(".claude/pagent-pipeline.json"));
    // Trusted, the loop runs; ticking the plan does not revoke the trust of its commands.
    env.cmd(&["trust", "plan.md"]).success();
    env.cmd(&["loop", "--command", "sh agent.sh", "--stories", "plan.md"])
        .success();
    assert!(env.read("plan.md").contains("- [x] add `box.sh list`"));
    let listed = env.cmd(&["trust", "--list", "plan.md"]).success().stdout;
    said.say("after the loop: pagent trust --list plan.md", &listed);
    assert_text!(said.text());
}

#[test]
fn what_cannot_be_worked_is_refused_before_any_agent_runs() {
    let env = TestEnv::new();
    env.write("agent.sh", AGENT);
    let mut said = Said::new();
    for text in [
        "- [ ] buy milk\n",
        "- [x] T001 Done\n",
        "- [ ] 1. A\n  - _Depends: 2_\n- [ ] 2. B\n  - _Depends: 1_\n",
    ] {
        env.write("plan.md", text);
        let out = env
            .cmd(&["loop", "--command", "sh agent.sh", "--stories", "plan.md"])
            .failure();
        said.say(&format!("plan.md: {text:?}"), &out.stderr);
    }
    let out = env
        .cmd(&[
            "loop",
            "--command",
            "sh agent.sh",
            "--stories",
            "plan.md",
            "--format",
            "jira",
        ])
        .failure();
    said.say("--format jira", &out.stderr);
    assert!(!env.exists("done.log"));
    assert_text!(said.text());
}

#[test]
fn the_run_subcommand_of_loop_takes_a_plan_too() {
    let env = TestEnv::new();
    env.write("tasks.md", SPECKIT)
        .write("agent.sh", AGENT)
        .write("checks.sh", CHECKS);
    let out = env
        .cmd(&[
            "loop",
            "--command",
            "sh agent.sh",
            "run",
            "--stories",
            "tasks.md",
            "--check",
            "sh checks.sh",
        ])
        .success();
    assert!(out.stdout.contains("complete after 4 iterations"), "{out}");
    assert_eq!(
        env.read("tasks.md"),
        SPECKIT.replace("- [ ] T00", "- [X] T00")
    );
    let out = env
        .cmd(&["run", "prd.md", "--check", "sh checks.sh"])
        .failure();
    assert_text!(out.stderr);
}
