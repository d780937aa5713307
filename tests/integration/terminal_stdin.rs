//! A task is read from stdin only when stdin is not a terminal (issue 20, item 8):
//! `pagent ralph` with no task at a terminal used to wait silently for an end of file.
//! Now it says at once how to give the task, in a real terminal (tmux); piped, the task
//! still comes from stdin.

use crate::util::*;

/// `pagent ARGS` typed at a terminal with nothing on stdin: its screen once it exited
/// (wrapped lines joined).
fn at_a_terminal(env: &TestEnv, args: &str) -> String {
    let script = pagent_script(env, args);
    let tmux = Tmux::start((100, 24), &env.root, &script);
    tmux.wait_until("pagent to exit", |rows| {
        rows.iter().any(|r| r.starts_with("[exit "))
    });
    tmux.joined()
}

#[test]
fn item_8_ralph_at_a_terminal_without_a_task_says_how_to_give_it() {
    let env = TestEnv::new();
    let screen = at_a_terminal(&env, "ralph");
    assert!(
        screen.contains("pagent: error: no task given: name it after `ralph`"),
        "{screen}"
    );
    assert!(screen.contains("[exit 1]"), "{screen}");
    assert!(
        !env.exists(".claude/pagent-pipeline.json"),
        "a loop was set up"
    );
    // What the terminal showed, whole: the real binary's words (also when it is the
    // arm64 package's, run under qemu, which cannot run in-process).
    let shown: String = screen
        .lines()
        .skip_while(|l| l.trim().is_empty())
        .take_while(|l| !l.starts_with("[exit "))
        .map(|l| format!("{}\n", l.trim_end()))
        .collect();
    insta::assert_snapshot!(shown);
}

#[test]
fn item_8_loop_ralph_at_a_terminal_without_a_task_says_how_to_give_it() {
    let env = TestEnv::new();
    let screen = at_a_terminal(&env, "loop --command cat ralph");
    assert!(
        screen.contains("(`pagent loop ralph \"Make the tests pass\"`)"),
        "{screen}"
    );
    assert!(screen.contains("[exit 1]"), "{screen}");
}

#[test]
fn item_8_a_piped_task_is_still_read() {
    let env = TestEnv::new();
    env.cmd(&["ralph"]).stdin("Fix the parser\n").success();
    assert_eq!(env.state()["stages"][0]["prompt"], "Fix the parser");
    // An empty pipe is no task either, and says so.
    let out = env.cmd(&["ralph", "--force"]).stdin("").failure();
    assert!(out.stderr.contains("give the task"), "{out}");
}
