//! The `review` exit condition with a fake reviewer: a script standing in for `claude`
//! (through `PAGENT_REVIEWER_BIN`) or a reviewer command. It records how pagent started
//! it, runs pagent's Stop hook the way a reviewer session would, and answers with the
//! verdict the test wrote. Then the attacks: a reviewer that hangs, that answers nonsense,
//! that is missing, a planted workflow that declares one, a cancel while it runs.

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::util::*;

const CRITERIA: &str = "the parser handles the empty input, with a test";

/// A claude stream-json `result` line whose final message is `text`.
fn result_line(text: &str) -> String {
    json!({"type": "result", "subtype": "success", "is_error": false, "result": text}).to_string()
}

/// A fake `claude` that records its arguments, environment and prompt under HOME, runs
/// pagent's Stop hook for the loop's own session (as a reviewer session with pagent
/// installed would), then prints `$HOME/verdict` after waiting `$HOME/delay` seconds.
fn fake_claude(env: &TestEnv) -> std::path::PathBuf {
    let folder = env.fake_tool(
        "bin",
        "claude",
        &format!(
            "printf '%s\\n' \"$@\" > \"$HOME/reviewer-args\"\n\
             echo \"driver=${{PAGENT_DRIVER:-}} claudecode=${{CLAUDECODE:-unset}} session=${{CLAUDE_CODE_SESSION_ID:-unset}}\" > \"$HOME/reviewer-env\"\n\
             cat > \"$HOME/reviewer-prompt\"\n\
             echo '{{\"session_id\":\"{SESSION}\",\"hook_event_name\":\"Stop\",\"last_assistant_message\":\"<promise>DONE</promise>\"}}' \
               | \"$PAGENT_UNDER_TEST\" hook stop > \"$HOME/reviewer-hook\" 2>&1\n\
             echo \"exit=$?\" >> \"$HOME/reviewer-hook\"\n\
             sleep \"$(cat \"$HOME/delay\" 2>/dev/null || echo 0)\"\n\
             cat \"$HOME/verdict\" 2>/dev/null\n"
        ),
    );
    folder.join("claude")
}

fn verdict(env: &TestEnv, text: &str) {
    std::fs::write(env.home.join("verdict"), result_line(text) + "\n").unwrap();
}

fn start_reviewed_ralph(env: &TestEnv, extra: &[&str]) {
    let mut args = vec!["ralph", "Parse the input", "--review", CRITERIA];
    args.extend_from_slice(extra);
    env.cmd(&args)
        .env("CLAUDE_CODE_SESSION_ID", SESSION)
        .success();
}

/// The Stop hook as Claude Code runs it, inside a session (`CLAUDECODE=1`), with the
/// fake reviewer: the real binary, whose children inherit the environment given here.
fn stop_with_reviewer(env: &TestEnv, message: &str) -> Run {
    env.bin(&["hook", "stop"])
        .env("CLAUDE_PROJECT_DIR", &env.root)
        .env("CLAUDECODE", "1")
        .env("CLAUDE_CODE_SESSION_ID", SESSION)
        .env("PAGENT_REVIEWER_BIN", fake_claude(env))
        .env("PAGENT_UNDER_TEST", pagent_bin())
        .stdin(env.stop_input(message).to_string())
        .run()
}

fn review_events(env: &TestEnv) -> Vec<Value> {
    env.events()
        .into_iter()
        .filter(|e| e["action"] == "review")
        .collect()
}

#[test]
fn the_reviewer_starts_read_only_outside_the_session_with_its_hooks_standing_aside() {
    let env = TestEnv::new();
    start_reviewed_ralph(&env, &[]);
    verdict(
        &env,
        "{\"met\": false, \"missing\": [\"no test for the empty input\"], \"files\": [\"src/parse.rs:3\"]}",
    );
    let before = env.state();
    let reason = stop_with_reviewer(&env, "Done.\n<promise>DONE</promise>").blocked();
    let mut said = Said::new();
    said.say("stop with the promise, the reviewer finds a gap", &reason);

    let args = std::fs::read_to_string(env.home.join("reviewer-args")).unwrap();
    let args: Vec<&str> = args.lines().collect();
    let after = |flag: &str| args[args.iter().position(|a| *a == flag).unwrap() + 1];
    assert_eq!(after("--permission-mode"), "default", "{args:?}");
    assert_eq!(
        after("--disallowedTools"),
        "Write,Edit,MultiEdit,NotebookEdit"
    );
    assert_eq!(after("--allowedTools"), "Read,Grep,Glob,LS");
    assert_eq!(
        std::fs::read_to_string(env.home.join("reviewer-env")).unwrap(),
        "driver=loop claudecode=unset session=unset\n"
    );
    let prompt = std::fs::read_to_string(env.home.join("reviewer-prompt")).unwrap();
    said.say("the reviewer's prompt", &prompt);
    // The reviewer's own Stop hook, for the very session that owns the loop, allowed
    // silently and changed nothing.
    assert_eq!(
        std::fs::read_to_string(env.home.join("reviewer-hook")).unwrap(),
        "exit=0\n"
    );
    let state = env.state();
    assert_eq!(state["iterations"], json!([2]));
    assert_eq!(
        state["generation"],
        before["generation"].as_u64().unwrap() + 1
    );
    assert_eq!(
        state["review"]["summary"],
        "not met: no test for the empty input"
    );
    let reviews = review_events(&env);
    assert_eq!(reviews.len(), 1);
    assert_eq!(reviews[0]["iteration"], 1);

    let status = env.cmd(&["status"]).success();
    said.say("pagent status", &status.stdout);

    verdict(&env, "{\"met\": true, \"missing\": []}");
    let done = stop_with_reviewer(&env, "Added it.\n<promise>DONE</promise>");
    said.say(
        "stop with the promise, the reviewer agrees",
        &done.allowed().unwrap(),
    );
    assert_text!(said.text());
    assert_eq!(env.state()["status"], "complete");
    assert_eq!(review_events(&env).len(), 2);
}

#[test]
fn no_promise_no_reviewer() {
    let env = TestEnv::new();
    start_reviewed_ralph(&env, &[]);
    verdict(&env, "{\"met\": true}");
    let reason = stop_with_reviewer(&env, "Still working.").blocked();
    assert_text!(reason);
    assert!(!env.home.join("reviewer-args").exists(), "the reviewer ran");
}

#[test]
fn a_reviewer_that_answers_without_a_verdict_is_not_met() {
    let env = TestEnv::new();
    start_reviewed_ralph(&env, &[]);
    verdict(&env, "Looks great to me, ship it!");
    let reason = stop_with_reviewer(&env, "<promise>DONE</promise>").blocked();
    assert_text!(reason);
    assert_eq!(env.state()["status"], "active");
    assert_eq!(env.state()["review"]["met"], false);
}

#[test]
fn a_hanging_reviewer_is_stopped_at_its_timeout_and_is_not_met() {
    let env = TestEnv::new();
    start_reviewed_ralph(&env, &["--review-timeout", "10"]);
    std::fs::write(env.home.join("delay"), "120").unwrap();
    verdict(&env, "{\"met\": true}");
    let baseline = env.baseline();
    let started = Instant::now();
    let reason = stop_with_reviewer(&env, "<promise>DONE</promise>").blocked();
    let took = started.elapsed();
    // The 10 s timeout, then the kill; left alone the reviewer takes 120 s.
    baseline.assert_within(
        took.saturating_sub(Duration::from_secs(10)),
        100,
        Duration::from_secs(10),
        "a hook whose reviewer hangs",
    );
    assert_text!(reason);
    assert_eq!(env.state()["review"]["summary"], "timed out");
}

#[test]
fn a_missing_reviewer_program_is_not_met_and_says_what_to_do() {
    let env = TestEnv::new();
    start_reviewed_ralph(&env, &[]);
    let reason = env
        .bin(&["hook", "stop"])
        .env("CLAUDE_PROJECT_DIR", &env.root)
        .env("PATH", env.home.join("nothing-here"))
        .stdin(env.stop_input("<promise>DONE</promise>").to_string())
        .run()
        .blocked();
    assert_text!(reason);
}

#[test]
fn bad_review_flags_are_refused_at_set_up() {
    let env = TestEnv::new();
    let out = env
        .cmd(&[
            "ralph",
            "x",
            "--review",
            CRITERIA,
            "--review-timeout",
            "5000",
        ])
        .failure();
    let mut said = Said::new();
    said.say("--review-timeout 5000", &out.stderr);
    let out = env.cmd(&["ralph", "x", "--review", "  "]).failure();
    said.say("--review '  '", &out.stderr);
    let out = env.cmd(&["ralph", "x", "--reviewer", "codex"]).failure();
    said.say("--reviewer codex without --review", &out.stderr);
    assert!(!env.exists(".claude/pagent-pipeline.json"));
    assert_text!(said.text());
}

#[test]
fn a_planted_workflow_review_runs_nothing_until_trusted() {
    let env = TestEnv::new();
    env.write("prd.md", "# PRD\n");
    env.write(
        ".claude/pagent/workflows/rev.json",
        &json!({"stages": [{"name": "only", "prompt": "p",
            "exit_when": {"review": "fine", "reviewer_command": "touch pwned; echo '{\"met\": true}'"}}]})
        .to_string(),
    );
    let refused = env.cmd(&["run", "prd.md", "--workflow", "rev"]).failure();
    assert_text!(refused.stderr);
    assert!(!env.exists("pwned"), "{refused}");
    assert!(!env.exists(".claude/pagent-pipeline.json"));
    env.cmd(&["trust", ".claude/pagent/workflows/rev.json"])
        .success();
    env.cmd(&["run", "prd.md", "--workflow", "rev"])
        .env("CLAUDE_CODE_SESSION_ID", SESSION)
        .success();
    let done = env
        .bin(&["hook", "stop"])
        .env("CLAUDE_PROJECT_DIR", &env.root)
        .stdin(env.stop_input("done").to_string())
        .run();
    done.allowed();
    assert!(
        env.exists("pwned"),
        "trusted: the reviewer command ran\n{done}"
    );
    assert_eq!(env.state()["status"], "complete", "{done}");
}

#[test]
fn run_review_goes_to_the_verifier_stage() {
    let env = TestEnv::new();
    env.write("prd.md", "# PRD\n");
    env.cmd(&["run", "prd.md", "--review", CRITERIA, "--reviewer", "codex"])
        .env("CLAUDE_CODE_SESSION_ID", SESSION)
        .success();
    let stages = env.state()["stages"].as_array().unwrap().clone();
    let verifier = stages.iter().find(|s| s["name"] == "verifier").unwrap();
    let review = &verifier["exit_when"]["all"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()
        .clone();
    assert_eq!(review["review"], CRITERIA);
    assert_eq!(review["reviewer"], "codex");
    let others: Vec<&Value> = stages.iter().filter(|s| s["name"] != "verifier").collect();
    assert!(
        others
            .iter()
            .all(|s| !s["exit_when"].to_string().contains("review"))
    );
}

#[test]
fn pagent_loop_reviews_with_a_reviewer_command_and_re_prompts_with_its_finding() {
    let env = TestEnv::new();
    env.write(
        "agent.sh",
        "cat > /dev/null\nprintf 'Done.\\n<promise>DONE</promise>\\n'\n",
    );
    // The first review finds a gap, the second agrees.
    env.write(
        "review.sh",
        "cat > \"$HOME/last-review-prompt\"\n\
         if [ -e .reviewed ]; then echo '{\"met\": true}'; else touch .reviewed; \
         echo '{\"met\": false, \"missing\": [\"no test for the empty input\"]}'; fi\n",
    );
    let out = env
        .cmd(&[
            "loop",
            "--command",
            "sh agent.sh",
            "ralph",
            "--review",
            CRITERIA,
            "--reviewer-command",
            "sh review.sh",
            "Parse the input",
        ])
        .success();
    assert_text!("loop", out.stdout);
    let state = env.state();
    assert_eq!(state["status"], "complete", "{out}");
    assert_eq!(state["iterations"], json!([2]));
    let runs = env.path(".claude/pagent/runs");
    let second = std::fs::read_dir(&runs)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.to_string_lossy().ends_with("-ralph-002.prompt.md"))
        .unwrap();
    let second = std::fs::read_to_string(second).unwrap();
    assert_text!("second_prompt", second);
    assert_eq!(review_events(&env).len(), 2);
}

#[test]
fn cancel_while_the_reviewer_runs_stops_it_and_the_stop_goes_through() {
    let env = TestEnv::new();
    start_reviewed_ralph(&env, &[]);
    std::fs::write(env.home.join("delay"), "120").unwrap();
    verdict(&env, "{\"met\": false, \"missing\": [\"x\"]}");
    let hook = std::thread::scope(|scope| {
        let hook = scope.spawn(|| {
            let started = Instant::now();
            (
                stop_with_reviewer(&env, "<promise>DONE</promise>"),
                started.elapsed(),
            )
        });
        // The reviewer has started once it recorded its prompt.
        wait_showing(Duration::from_secs(30), "the reviewer's start", || {
            if env.home.join("reviewer-hook").exists() {
                Ok(())
            } else {
                Err(env.dump())
            }
        });
        env.cmd(&["cancel"]).success();
        hook.join().unwrap()
    });
    let (run, took) = hook;
    // The reviewer's start and the cancel; left alone the reviewer takes 120 s.
    env.baseline().assert_within(
        took,
        150,
        Duration::from_secs(20),
        "a hook whose loop was cancelled while its reviewer ran",
    );
    assert_eq!(run.allowed(), None, "a cancelled loop blocked: {run}");
    assert_eq!(env.state()["status"], "cancelled");
}

#[test]
fn a_planted_runs_folder_link_gets_no_reviewer_files_outside_the_project() {
    let env = TestEnv::new();
    start_reviewed_ralph(&env, &[]);
    let outside = env.home.join("outside");
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::create_dir_all(env.path(".claude/pagent")).unwrap();
    std::os::unix::fs::symlink(&outside, env.path(".claude/pagent/runs")).unwrap();
    verdict(&env, "{\"met\": true}");
    let reason = stop_with_reviewer(&env, "<promise>DONE</promise>").blocked();
    assert_text!(reason);
    assert_eq!(std::fs::read_dir(&outside).unwrap().count(), 0);
    assert!(!env.home.join("reviewer-args").exists(), "the reviewer ran");
    assert_eq!(env.state()["status"], "active");
}

/// Issue 21, which pool pays: set-up says what a Claude reviewer spends, and what the
/// reviewer reports spending (`total_cost_usd`) counts in the loop's usage and budgets.
#[test]
fn issue_21_a_claude_reviewer_says_what_it_spends_and_its_cost_counts() {
    let env = TestEnv::new();
    let out = env
        .cmd(&["ralph", "Parse the input", "--review", CRITERIA])
        .env("CLAUDE_CODE_SESSION_ID", SESSION)
        .success();
    assert_text!(out.stdout);
    let mut line = json!({"type": "result", "subtype": "success", "is_error": false, "total_cost_usd": 0.25,
        "result": "{\"met\": false, \"missing\": [\"no test\"], \"files\": []}"});
    line["usage"] = json!({"input_tokens": 1000, "output_tokens": 100});
    std::fs::write(env.home.join("verdict"), format!("{line}\n")).unwrap();
    stop_with_reviewer(&env, "Done.\n<promise>DONE</promise>").blocked();
    let usage = &env.state()["usage"];
    assert_eq!(usage["cost_microusd"], 250_000, "{usage}");
    assert_eq!(usage["tokens"]["input"], 1000, "{usage}");
}
