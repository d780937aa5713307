//! Issue 21, item 1: progress that sees all work, the same in both drivers.
//!
//! Each case is one turn of an agent, written as a shell snippet, and the answer it must
//! get: progress or not. Every case runs through the Stop hook (a process per stop) and
//! through `pagent loop` (one process for the whole run, where the bug was: the runner
//! kept one descriptor of the project and stopped seeing new files from its second
//! decision on), each time after an idle turn, and both must give the table's answer.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::git::git;
use crate::util::*;

/// What the project holds before a case: a committed README and `tracked.txt`, a
/// `.gitignore` for build output, logs and an ignored plan folder, and one untracked
/// file.
fn project() -> TestEnv {
    let env = TestEnv::new();
    env.write("README.md", "hello\n")
        .write("tracked.txt", "one\ntwo\n")
        .write(".gitignore", "build/\n*.log\nignored-plan/\n");
    git(&env.root, &["add", "-A"]);
    git(&env.root, &["commit", "-qm", "base"]);
    env.write("scratch.txt", "x\n");
    env
}

const COMMIT: &str = "git -c user.name=t -c user.email=t@t -c commit.gpgsign=false commit -q";
const PLAN: &str = "# Plan\n\n### Task 1: one\n- [ ] first\n\n### Task 2: two\n- [ ] second\n";

/// How a case's loop is set up: a Ralph loop, or a stories loop over this plan file.
#[derive(Clone, Copy)]
enum Loop {
    Ralph,
    Stories(&'static str),
}

struct Case {
    what: &'static str,
    setup: Loop,
    turn: String,
    progress: bool,
}

fn case(what: &'static str, turn: &str, progress: bool) -> Case {
    Case {
        what,
        setup: Loop::Ralph,
        turn: turn.to_owned(),
        progress,
    }
}

fn cases() -> Vec<Case> {
    let tick = |plan: &'static str| Case {
        what: plan,
        setup: Loop::Stories(plan),
        turn: format!("sed 's/- \\[ \\] first/- [x] first/' {plan} > t && cat t > {plan} && rm t"),
        progress: true,
    };
    vec![
        case("a turn that changes nothing", ":", false),
        case("a new file at the root", "echo x > new.txt", true),
        case(
            "a new file in a new folder",
            "mkdir fresh && echo x > fresh/new.txt",
            true,
        ),
        case(
            "a new file deep in new folders",
            "mkdir -p a/b/c && echo x > a/b/c/new.txt",
            true,
        ),
        case("a new empty file", ": > empty.txt", true),
        case("a new empty folder", "mkdir nothing-in-it", false),
        case(
            "an edit of a tracked file that keeps its size",
            "printf 'one\\nTWO\\n' > tracked.txt",
            true,
        ),
        case("a deleted tracked file", "rm tracked.txt", true),
        case("an edit of an untracked file", "echo y > scratch.txt", true),
        case("a deleted untracked file", "rm scratch.txt", true),
        case(
            "a commit of the work (a clean tree, HEAD moved)",
            &format!("git add scratch.txt && {COMMIT} -m work"),
            true,
        ),
        case(
            "an empty commit (HEAD moved, no file)",
            &format!("{COMMIT} --allow-empty -m empty"),
            true,
        ),
        case(
            "ignored build output",
            "mkdir -p build && echo x > build/out.o && echo x > run.log",
            false,
        ),
        case(
            "pagent's own files",
            "mkdir -p .claude/pagent && echo x > .claude/pagent/notes",
            false,
        ),
        tick("plan.md"),
        tick("ignored-plan/plan.md"),
        Case {
            what: "a plan left as it was",
            setup: Loop::Stories("ignored-plan/plan.md"),
            turn: ":".to_owned(),
            progress: false,
        },
    ]
}

/// Sets the case's loop up (hook driver, as `/ralph` or `/pagent:run --stories` would).
fn set_up(env: &TestEnv, setup: Loop) {
    match setup {
        Loop::Ralph => {
            env.cmd(&[
                "ralph",
                "--no-progress-limit",
                "0",
                "--max-iterations",
                "3",
                "task",
            ])
            .success();
        }
        Loop::Stories(plan) => {
            env.write(plan, PLAN);
            env.cmd(&[
                "run",
                "--stories",
                plan,
                "--no-progress-limit",
                "0",
                "--max-iterations",
                "3",
            ])
            .success();
        }
    }
}

fn run_turn(env: &TestEnv, turn: &str) {
    let out = Command::new("sh")
        .args(["-c", turn])
        .current_dir(&env.root)
        .output()
        .unwrap();
    assert!(out.status.success(), "{turn}: {out:?}");
}

/// The no-progress count as the state has it now.
fn count(env: &TestEnv) -> u64 {
    env.state()["no_progress_count"].as_u64().unwrap()
}

/// Through the Stop hook: an idle turn, then the case's turn; whether it was progress.
fn through_the_stop_hook(case: &Case) -> bool {
    let env = project();
    set_up(&env, case.setup);
    env.stop(&env.stop_input("idle")).blocked();
    assert_eq!(
        count(&env),
        1,
        "{}: the idle turn\n{}",
        case.what,
        env.dump()
    );
    run_turn(&env, &case.turn);
    env.stop(&env.stop_input("worked")).blocked();
    match count(&env) {
        0 => true,
        2 => false,
        other => panic!("{}: count {other}\n{}", case.what, env.dump()),
    }
}

/// An agent outside the project: run 2 does the turn in `turn.sh`, every run notes the
/// no-progress count it finds in `count-N`.
fn outside_agent(env: &TestEnv, turn: &str) -> PathBuf {
    let out = env.root.parent().unwrap().join("agent");
    std::fs::create_dir_all(&out).unwrap();
    std::fs::write(out.join("turn.sh"), turn).unwrap();
    let dir = out.display();
    std::fs::write(
        out.join("agent.sh"),
        format!(
            "n=$(cat {dir}/runs 2>/dev/null || echo 0); n=$((n+1)); echo $n > {dir}/runs\n\
             grep -o '\"no_progress_count\": *[0-9]*' .claude/pagent-pipeline.json | tr -dc 0-9 > {dir}/count-$n\n\
             if [ $n -eq 2 ]; then sh {dir}/turn.sh; fi\n\
             echo run $n\n"
        ),
    )
    .unwrap();
    out
}

fn noted(dir: &Path, run: u32) -> u64 {
    std::fs::read_to_string(dir.join(format!("count-{run}")))
        .unwrap()
        .trim()
        .parse()
        .unwrap()
}

/// Through `pagent loop`: an idle run, the case's turn, and a third run that notes the
/// count the second decision left.
fn through_pagent_loop(case: &Case) -> bool {
    let env = project();
    set_up(&env, case.setup);
    let dir = outside_agent(&env, &case.turn);
    let agent = format!("sh {}/agent.sh", dir.display());
    let run = env.cmd(&["loop", "--command", &agent]).run();
    assert_eq!(
        run.code,
        Some(3),
        "{}: gave up on its iterations\n{run}",
        case.what
    );
    assert_eq!(
        noted(&dir, 2),
        1,
        "{}: the idle turn\n{}",
        case.what,
        env.dump()
    );
    match noted(&dir, 3) {
        0 => true,
        2 => false,
        other => panic!("{}: count {other}\n{}", case.what, env.dump()),
    }
}

#[test]
fn issue_21_progress_is_the_same_answer_in_the_stop_hook_and_in_pagent_loop() {
    let mut wrong = Vec::new();
    for case in cases() {
        let hook = through_the_stop_hook(&case);
        let runner = through_pagent_loop(&case);
        if hook != case.progress || runner != case.progress {
            wrong.push(format!(
                "{}: expected {}, the Stop hook said {hook}, pagent loop said {runner}",
                case.what, case.progress
            ));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// The agent of the issue: one new file per turn, at the root or in a new folder, after
/// `sleep` seconds.
fn new_file_agent(env: &TestEnv, folder: &str, sleep: &str) {
    env.write(
        "agent.sh",
        &format!(
            "#!/bin/sh\nsleep {sleep}\nn=$(cat .runs 2>/dev/null || echo 0); n=$((n+1)); echo $n > .runs\n\
             mkdir -p ./{folder}\necho \"work $n\" > ./{folder}/work-$n.txt\necho wrote work-$n.txt\n"
        ),
    );
    std::fs::set_permissions(
        env.path("agent.sh"),
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .unwrap();
}

/// The issue's reproduction, through `pagent loop`: every turn adds a file, so the loop
/// runs the agent all `iterations` times and ends on its iteration limit.
fn new_files_through_pagent_loop(folder: &str, sleep: &str, iterations: u32, limit: &str) {
    let env = TestEnv::new();
    env.write("README.md", "hello\n");
    git(&env.root, &["add", "README.md"]);
    git(&env.root, &["commit", "-qm", "readme"]);
    new_file_agent(&env, folder, sleep);
    let max = iterations.to_string();
    env.cmd(&[
        "ralph",
        "--max-iterations",
        &max,
        "--no-progress-limit",
        limit,
        "task",
    ])
    .success();
    let out = env.cmd(&["loop", "--command", "./agent.sh"]).run();
    assert_eq!(out.code, Some(3), "gave up on its iterations\n{out}");
    assert_eq!(env.read(".runs").trim(), max, "{out}\n{}", env.dump());
    assert!(
        out.stdout
            .contains(&format!("used all {iterations} iterations")),
        "{folder}: {out}"
    );
    assert!(!out.stdout.contains("changed no file"), "{folder}: {out}");
}

#[test]
fn issue_21_new_files_are_progress_in_pagent_loop() {
    new_files_through_pagent_loop(".", "0", 6, "3");
    new_files_through_pagent_loop("notes", "0", 6, "3");
}

/// Turns of 3 s: every file is older than the fingerprint cache's two-second window by
/// the next decision, so its hashes are cached, and still each new file counts (a limit
/// of 2 turns, so that four iterations are enough to catch a runner that goes blind).
#[test]
fn issue_21_new_files_are_progress_in_pagent_loop_with_slow_turns() {
    new_files_through_pagent_loop("notes", "3", 4, "2");
}

#[test]
fn issue_21_new_files_are_progress_in_the_stop_hook() {
    for folder in [".", "notes"] {
        let env = TestEnv::new();
        env.write("README.md", "hello\n");
        git(&env.root, &["add", "README.md"]);
        git(&env.root, &["commit", "-qm", "readme"]);
        env.cmd(&[
            "ralph",
            "--max-iterations",
            "6",
            "--no-progress-limit",
            "3",
            "task",
        ])
        .success();
        for n in 1..=5 {
            env.write(&format!("{folder}/work-{n}.txt"), &format!("work {n}\n"));
            env.stop(&env.stop_input("worked")).blocked();
            assert_eq!(count(&env), 0, "{folder}, turn {n}\n{}", env.dump());
        }
        env.write(&format!("{folder}/work-6.txt"), "work 6\n");
        let message = env.stop(&env.stop_input("worked")).allowed().unwrap();
        assert!(message.contains("used all 6 iterations"), "{message}");
    }
}
