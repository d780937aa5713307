//! `pagent loop`'s own options after its subcommand (issue 20, item 9):
//! `pagent loop ralph TASK --agent claude` used to fail with a tip to pass `--agent` as a
//! value, and `pagent loop ralph --help` listed none of them. The agent's and the loop's
//! options now work before or after `ralph`/`run`, and the subcommand's help shows them.

use crate::util::*;

/// A fake agent that makes its promise on its first run.
fn agent(env: &TestEnv) -> String {
    env.write(
        "agent.sh",
        "cat > /dev/null\nprintf 'Done.\\n<promise>DONE</promise>\\n'\n",
    );
    "sh agent.sh".to_owned()
}

#[test]
fn item_9_loop_options_after_the_subcommand_are_the_loops() {
    let env = TestEnv::new();
    let agent = agent(&env);
    let out = env
        .cmd(&[
            "loop",
            "ralph",
            "Count to one",
            "--command",
            &agent,
            "--json",
        ])
        .success();
    let last: serde_json::Value = serde_json::from_str(out.stdout.lines().last().unwrap()).unwrap();
    assert_eq!(last["event"], "finished", "{out}");
    assert_eq!(last["outcome"], "complete", "{out}");
    assert_eq!(env.state()["stages"][0]["prompt"], "Count to one");

    // Before the subcommand, as before.
    let env = TestEnv::new();
    let agent = self::agent(&env);
    env.cmd(&["loop", "--command", &agent, "--quiet", "ralph", "Count"])
        .success();
    assert_eq!(env.state()["status"], "complete");
}

#[test]
fn item_9_an_agent_named_after_the_subcommand_is_the_one_that_runs() {
    let env = TestEnv::new();
    let claude = env.fake_tool(
        "bin",
        "fake-codex",
        "echo \"$@\" > \"$HOME/argv\"; cat > /dev/null\n\
         echo '{\"type\":\"item.completed\",\"item\":{\"id\":\"i\",\"type\":\"agent_message\",\"text\":\"<promise>DONE</promise>\"}}'\n\
         echo '{\"type\":\"turn.completed\",\"usage\":{\"input_tokens\":1,\"output_tokens\":1}}'",
    );
    env.cmd(&[
        "loop",
        "ralph",
        "Fix it",
        "--agent",
        "codex",
        "--agent-bin",
        &claude.join("fake-codex").display().to_string(),
    ])
    .success();
    let argv = std::fs::read_to_string(env.home.join("argv")).unwrap();
    assert!(
        argv.starts_with("exec --json"),
        "codex was not run as codex: {argv}"
    );
}

#[test]
fn item_9_loop_ralph_help_lists_the_agent_options() {
    let env = TestEnv::new();
    let help = env.bin(&["loop", "ralph", "--help"]).success().stdout;
    insta::assert_snapshot!(help);
    let help = env.bin(&["loop", "run", "--help"]).success().stdout;
    assert!(
        help.contains("Agent options:\n      --agent <AGENT>"),
        "{help}"
    );
}

/// A word that is no option is still an error, with no tip that leads astray.
#[test]
fn item_9_an_unknown_option_after_the_subcommand_is_an_error_without_a_misleading_tip() {
    let env = TestEnv::new();
    let out = env
        .bin(&["loop", "ralph", "Fix it", "--agnet", "claude"])
        .failure();
    insta::assert_snapshot!(out.stderr);
}
