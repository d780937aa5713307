//! The stories loop inside a Claude Code session (`pagent run --stories`, what
//! `/pagent:run --stories FILE` runs), driven by the Stop hook; and the whole of every
//! text a stories loop shows the model, snapshotted: the session's start output, each
//! format's first prompt, and the re-prompt after a failed check.

use crate::stories::{AGENT, CHECKS, CHIEF, KIRO, PRD_JSON, RALPHEX, SPECKIT, prompts};
use crate::util::*;
use pagent_engine::contains_promise;
use pagent_engine::stories::STORY_PROMISE;

const CLAIM: &str = "Implemented it.\n<promise>STORY DONE</promise>";

#[test]
fn a_session_works_through_the_stories_one_stop_at_a_time() {
    let env = TestEnv::new();
    env.write("tasks.md", SPECKIT).write("checks.sh", CHECKS);
    let out = env
        .cmd(&["run", "--stdin-args"])
        .stdin("--stories tasks.md --check 'sh checks.sh'")
        .env("CLAUDE_CODE_SESSION_ID", SESSION)
        .success();
    insta::assert_snapshot!("session_start", out.stdout);
    assert!(!contains_promise(&out.stdout, STORY_PROMISE));
    assert_eq!(env.state()["story"], "T001");

    // A stop without the promise: T001 is not ticked, the same story again.
    let reason = env.stop(&env.stop_input("Working on it.")).blocked();
    let mut said = Said::new();
    said.say("a stop without the promise", &reason);
    assert_eq!(env.read("tasks.md"), SPECKIT);

    let reason = env.stop(&env.stop_input(CLAIM)).blocked();
    said.say("T001 claimed", &reason);
    // The checks fail: the claim of T002 waits.
    env.write("broken", "");
    let reason = env.stop(&env.stop_input(CLAIM)).blocked();
    said.say("T002 claimed, the checks fail", &reason);
    assert!(env.read("tasks.md").contains("- [ ] T002"));
    std::fs::remove_file(env.path("broken")).unwrap();
    env.stop(&env.stop_input(CLAIM)).blocked();
    let done = env.stop(&env.stop_input(CLAIM)).allowed().unwrap();
    said.say("the last story claimed", &done);
    assert_text!("session_stops", said.text());
    assert_eq!(
        env.read("tasks.md"),
        SPECKIT.replace("- [ ] T00", "- [X] T00")
    );
}

#[test]
fn each_format_s_first_prompt_whole() {
    for (name, path, text, flags) in [
        ("chief", "prd.md", CHIEF, vec!["--check", "sh checks.sh"]),
        (
            "spec-kit",
            "tasks.md",
            SPECKIT,
            vec!["--check", "sh checks.sh"],
        ),
        (
            "kiro",
            ".kiro/specs/box/tasks.md",
            KIRO,
            vec!["--check", "sh checks.sh"],
        ),
        ("ralphex", "plan.md", RALPHEX, vec!["--trust"]),
        (
            "prd-json",
            "prd.json",
            PRD_JSON,
            vec!["--check", "sh checks.sh"],
        ),
    ] {
        let env = TestEnv::new();
        env.write(path, text)
            .write("agent.sh", AGENT)
            .write("checks.sh", CHECKS);
        let mut args = vec!["loop", "--command", "sh agent.sh", "--stories", path];
        args.extend(flags);
        env.cmd(&args).success();
        let prompts = prompts(&env);
        for prompt in &prompts {
            assert!(
                !contains_promise(prompt, STORY_PROMISE),
                "a prompt that makes the promise itself: {prompt}"
            );
        }
        insta::assert_snapshot!(format!("first_prompt_{name}"), prompts[0]);
        if name == "ralphex" {
            insta::assert_snapshot!("reprompt_after_a_failed_check", prompts[2]);
        }
    }
}
