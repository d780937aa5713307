//! `pagent pause` (and the dashboard's pause button, which is the same operation): a loop
//! in a session lets its stops through without counting them; a `pagent loop` finishes the
//! iteration it is in, counts it, and waits for `pagent resume` or `pagent cancel`.

use std::process::Stdio;
use std::time::Duration;

use serde_json::json;

use crate::util::*;

#[test]
fn pause_lets_the_sessions_stops_through_until_resume() {
    let env = TestEnv::new();
    let mut said = String::new();
    said += &env.cmd(&["pause"]).success().stdout;
    env.cmd(&["ralph", "Fix it"])
        .env("CLAUDE_CODE_SESSION_ID", SESSION)
        .success();
    said += &env.cmd(&["pause"]).success().stdout;
    said += &env.cmd(&["pause"]).success().stdout;
    insta::assert_snapshot!(said);
    let notice = env.stop(&env.stop_input("Not yet.")).allowed();
    assert_eq!(
        notice.as_deref(),
        Some(
            "pagent: paused the Ralph loop because you paused it (`pagent pause`). /pagent:resume continues it, /pagent:cancel ends it."
        )
    );
    assert_eq!(env.stop(&env.stop_input("Still not.")).allowed(), None);
    assert_eq!(env.state()["iterations"], json!([1]));
    env.cmd(&["resume"]).success();
    env.stop(&env.stop_input("Not yet.")).blocked();
    assert_eq!(env.state()["iterations"], json!([2]));
    assert_eq!(
        env.actions(),
        ["ralph", "pause", "paused", "resume", "block"]
    );
}

/// Lines of a running `pagent loop`'s stdout.
fn lines_of(child: &mut std::process::Child) -> Lines {
    Lines::of(child.stdout.take().unwrap())
}

/// Waits (at most 20 s) for a line containing `text`.
fn wait_for_line(lines: &mut Lines, text: &str) {
    lines.wait_for(Duration::from_secs(20), text, |l| l.contains(text));
}

/// The agent pauses the loop half way through its first run, as the user would from the
/// dashboard: that run still counts, the second does not start until `pagent resume`.
#[test]
fn a_paused_runner_finishes_its_iteration_then_waits_for_resume() {
    let env = TestEnv::new();
    env.write(
        "agent.sh",
        "cat > /dev/null\nn=$(cat .runs 2>/dev/null || echo 0); n=$((n+1)); echo $n > .runs\n\
         if [ $n = 1 ]; then \"$PAGENT_EXE\" pause > /dev/null; echo 'paused myself'; \
         else printf '<promise>DONE</promise>\\n'; fi\n",
    );
    let mut child = env
        .cmd(&[
            "loop",
            "--command",
            "sh agent.sh",
            "ralph",
            "--no-progress-limit",
            "0",
            "Task",
        ])
        .env("PAGENT_EXE", pagent_bin())
        .command()
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap();
    let mut lines = lines_of(&mut child);
    wait_for_line(&mut lines, "waiting for `pagent resume`");
    let state = env.state();
    assert_eq!(
        state["iterations"],
        json!([2]),
        "{}",
        lines.seen().join("\n")
    );
    assert_eq!(state["paused"]["why"], "you paused it (`pagent pause`)");
    assert_eq!(env.read(".runs").trim(), "1");
    env.cmd(&["resume"]).success();
    let status = child.wait().unwrap();
    let seen = lines.to_end(Duration::from_secs(20));
    assert_eq!(status.code(), Some(0), "{}", seen.join("\n"));
    assert_eq!(env.state()["status"], "complete");
    assert_eq!(env.read(".runs").trim(), "2");
    assert_eq!(
        env.actions(),
        ["ralph", "pause", "block", "resume", "complete"]
    );
}

#[test]
fn a_paused_runner_stops_when_the_loop_is_cancelled() {
    let env = TestEnv::new();
    env.write(
        "agent.sh",
        "cat > /dev/null\n\"$PAGENT_EXE\" pause > /dev/null\necho working\n",
    );
    let mut child = env
        .cmd(&["loop", "--command", "sh agent.sh", "ralph", "Task"])
        .env("PAGENT_EXE", pagent_bin())
        .command()
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap();
    let mut lines = lines_of(&mut child);
    wait_for_line(&mut lines, "waiting for `pagent resume`");
    env.cmd(&["cancel"]).success();
    let status = child.wait().unwrap();
    let seen = lines.to_end(Duration::from_secs(20));
    assert_eq!(status.code(), Some(130), "{}", seen.join("\n"));
    assert!(
        seen.iter().any(|l| l.contains("cancelled by the user")),
        "{}",
        seen.join("\n")
    );
    assert_eq!(env.state()["status"], "cancelled");
    assert_eq!(env.state()["iterations"], json!([2]));
}
