//! A team worker runs each story's loop through the same runner as `pagent loop`, with
//! its features (issue 32): the team's budget ends a story's loop, a usage limit of the
//! agent is waited out and the same iteration runs again, and a crashed run is retried.
//! A fake `claude` (`--agent claude --agent-bin FAKE`) prints what Claude Code prints in
//! each case (the texts of `usage_limits.rs`); the remote is a `git daemon` on loopback.

use std::time::Duration;

use super::*;
use crate::usage_limits::{CLAUDE_DONE, CLAUDE_LIMIT};

/// A fake `claude` for the team's worktrees: its run `n` runs `scripts[n - 1]` (the last
/// one for every later run) and exits with its code. `$reset` is now plus two seconds;
/// `work` does the story's work (a file in the worktree).
fn fake_claude(world: &World, scripts: &[(&str, i32)]) -> PathBuf {
    let dir = world.base.join("fake-claude");
    fs::create_dir_all(&dir).unwrap();
    let mut body = format!(
        "#!/bin/sh\ncat > /dev/null\nn=$(cat {runs} 2>/dev/null || echo 0); n=$((n+1)); echo $n > {runs}\n\
         reset=$(( $(date +%s) + 2 ))\nwork() {{ mkdir -p work; echo \"run $n\" >> \"work/$(basename \"$PWD\").txt\"; }}\n",
        runs = dir.join("runs").display()
    );
    for (i, (script, code)) in scripts.iter().enumerate() {
        let test = if i + 1 == scripts.len() {
            "true".to_owned()
        } else {
            format!("[ $n -eq {} ]", i + 1)
        };
        body.push_str(&format!("if {test}; then\n{script}\nexit {code}\nfi\n"));
    }
    let path = dir.join("claude");
    fs::write(&path, body).unwrap();
    use std::os::unix::fs::PermissionsExt;
    fs::set_permissions(&path, fs::Permissions::from_mode(0o755)).unwrap();
    path
}

fn runs(world: &World) -> u32 {
    fs::read_to_string(world.base.join("fake-claude/runs"))
        .unwrap_or_default()
        .trim()
        .parse()
        .unwrap_or(0)
}

/// A team of one story started with `args`, then one worker with the fake `claude` until
/// it ends: its run.
fn one_story(world: &World, args: &[&str], claude: &Path) -> Run {
    let mut all = vec![
        "prd.json", "--name", "runner", "--lease", "3s", "--agent", "claude",
    ];
    all.extend(args);
    let start = world.start(&all);
    assert_eq!(start.code, Some(0), "{start}");
    let (clone, home) = world.clone_for("w1");
    world
        .pagent(
            &clone,
            &home,
            &[
                "team",
                "work",
                "--team",
                "runner",
                "--name",
                "w1",
                "--agent-bin",
                claude.to_str().unwrap(),
            ],
        )
        .run()
}

/// Claude Code's answer that costs $0.42 and 20.4k tokens and makes no promise.
const CLAUDE_NOT_YET: &str = r#"work
printf '%s\n' '{"type":"result","subtype":"success","is_error":false,"num_turns":1,"result":"Not done yet.","total_cost_usd":0.42,"usage":{"input_tokens":18000,"output_tokens":2400}}'"#;

/// Issue 32: the team's `--max-cost` is each story's budget in every worker: a story
/// whose loop spends it ends on it (after the run that crossed it) and gives up, saying
/// so in status; the worker's spend counts every run.
#[test]
fn issue_32_a_team_workers_story_loop_ends_on_the_teams_budget() {
    let world = World::new(&[("prd.json", &prd(1, |_| vec![]))], false);
    let claude = fake_claude(&world, &[(CLAUDE_NOT_YET, 0)]);
    let work = one_story(
        &world,
        &["--max-cost", "1", "--max-iterations", "10"],
        &claude,
    );
    assert_eq!(work.code, Some(3), "a story gave up: {work}");
    assert_eq!(runs(&world), 3, "{work}");
    let status = world.status();
    let story = row(&status, "US-001");
    assert_eq!(story["state"], "gave_up", "{status}");
    let reason = story["reason"].as_str().unwrap();
    assert!(reason.contains("cost budget"), "{reason}");
    assert_eq!(status["workers"][0]["cost_microusd"], 1_260_000, "{status}");
    assert!(world.landings().is_empty());
}

/// Issue 32: a usage limit of the agent inside a team worker is waited out (until the
/// reset the agent named, plus the team's `--limit-margin`), the same iteration runs
/// again, and the story lands.
#[test]
fn issue_32_a_team_worker_waits_out_a_usage_limit_and_lands_the_story() {
    let world = World::new(&[("prd.json", &prd(1, |_| vec![]))], false);
    let done = format!("work\n{CLAUDE_DONE}");
    let claude = fake_claude(&world, &[(CLAUDE_LIMIT, 1), (&done, 0)]);
    let started = std::time::Instant::now();
    let work = one_story(&world, &["--limit-margin", "1s"], &claude);
    assert_eq!(work.code, Some(0), "{work}");
    assert!(
        started.elapsed() >= Duration::from_secs(2),
        "no wait: {work}"
    );
    assert_eq!(runs(&world), 2, "{work}");
    let said: Vec<&str> = work
        .stdout
        .lines()
        .filter(|l| l.starts_with("[US-001] "))
        .collect();
    assert!(
        said.iter().any(|l| l.starts_with(
            "[US-001] waiting for a usage limit until 20"
        ) && l.ends_with(
            ", then the same iteration runs again: You've hit your 5-hour limit · resets 3am (Europe/Paris)"
        )),
        "the wait is said, with when it ends: {work}"
    );
    assert!(
        said.iter()
            .any(|l| l.starts_with("[US-001] the usage limit was waited out (")),
        "{work}"
    );
    assert_eq!(world.landings().len(), 1, "{work}");
    assert_eq!(row(&world.status(), "US-001")["state"], "landed");
}

/// Issue 32: a crashed run inside a team worker is retried (the team's `--retries`,
/// after `--retry-delay`), and the story lands.
#[test]
fn issue_32_a_team_worker_retries_a_crashed_run_and_lands_the_story() {
    let world = World::new(&[("prd.json", &prd(1, |_| vec![]))], false);
    let done = format!("work\n{CLAUDE_DONE}");
    let claude = fake_claude(&world, &[("true", 1), (&done, 0)]);
    let work = one_story(&world, &["--retries", "2", "--retry-delay", "1s"], &claude);
    assert_eq!(work.code, Some(0), "{work}");
    assert!(
        work.stdout.lines().any(|l| l
            == "[US-001] agent crash or bad exit: the agent exited with code 1; retry 1 of 2 in 1s, not counted as an iteration"),
        "the retry is said: {work}"
    );
    assert_eq!(runs(&world), 2, "{work}");
    assert_eq!(world.landings().len(), 1, "{work}");
    // Without retries, the same crash is the story's end.
    let world = World::new(&[("prd.json", &prd(1, |_| vec![]))], false);
    let claude = fake_claude(&world, &[("true", 1), (&done, 0)]);
    let work = one_story(&world, &["--retries", "0"], &claude);
    assert_ne!(work.code, Some(0), "{work}");
    assert_eq!(runs(&world), 1, "{work}");
    assert!(world.landings().is_empty(), "{work}");
}
