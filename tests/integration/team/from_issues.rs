//! `pagent team start --issues QUERY`: a team started from GitHub issues, asked of a fake
//! `gh` on PATH (the one `pagent loop --issues` is tested with, tests/integration/
//! issues.rs) through the same code path as the loop, the issues written down as
//! `.claude/pagent/issues.md` and published from it.

use std::fs;
use std::path::PathBuf;
use std::time::Duration;

use serde_json::{Value, json};

use super::World;
use crate::util::*;

/// The fake `gh` in the world's own folder, `list` as what `gh issue list` prints; the
/// PATH and the folder of its answers and calls.
fn fake_gh(world: &World, list: &[u8]) -> (String, PathBuf) {
    use std::os::unix::fs::PermissionsExt;
    let bin = world.base.join("fake-bin");
    fs::create_dir_all(&bin).unwrap();
    let gh = bin.join("gh");
    fs::write(&gh, format!("#!/bin/sh\n{}\n", crate::issues::FAKE_GH)).unwrap();
    fs::set_permissions(&gh, fs::Permissions::from_mode(0o755)).unwrap();
    let answers = world.base.join("gh");
    fs::create_dir_all(&answers).unwrap();
    fs::write(answers.join("list.json"), list).unwrap();
    let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap());
    (path, answers)
}

fn issue(number: u32, title: &str) -> Value {
    json!({"number": number, "title": title, "body": format!("Body of {number}.\nSecond line.")})
}

/// `pagent team start ARGS` in the seed clone with the fake `gh` on PATH.
fn start_with_gh(world: &World, path: &str, answers: &std::path::Path, args: &[&str]) -> Run {
    let home = world.base.join("home-seed");
    fs::create_dir_all(&home).unwrap();
    let mut all = vec!["team", "start"];
    all.extend(args);
    world
        .pagent(&world.seed, &home, &all)
        .env("PATH", path)
        .env("GH_DIR", answers)
        .run()
}

/// The fake `gh`'s calls, one line each.
fn gh_calls(answers: &std::path::Path) -> Vec<String> {
    fs::read_to_string(answers.join("calls"))
        .unwrap_or_default()
        .split_terminator('\u{1e}')
        .map(str::to_owned)
        .collect()
}

/// The teams on the remote (their plan refs).
fn teams_on_remote(world: &World) -> String {
    let out = std::process::Command::new("git")
        .args(["for-each-ref", "--format=%(refname)"])
        .current_dir(&world.remote.bare)
        .output()
        .unwrap();
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .filter(|r| !r.starts_with("refs/heads/"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The stories of the plan published on the remote: (name, task), read from the bare
/// repository itself.
fn published_stories(world: &World, team: &str) -> Vec<(String, String)> {
    let out = std::process::Command::new("git")
        .args(["show", &format!("refs/pagent/teams/{team}/plan:plan.json")])
        .current_dir(&world.remote.bare)
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let plan: Value = serde_json::from_slice(&out.stdout).unwrap();
    plan["stories"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["name"].as_str().unwrap().to_owned(),
                s["task"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

#[test]
fn issue_32_team_start_issues_publishes_the_issues_as_stories() {
    let world = World::new(&[("README.md", "hi\n")], false);
    let list = json!([issue(21, "Export"), issue(7, "Save"), issue(13, "List")]);
    let (path, answers) = fake_gh(&world, list.to_string().as_bytes());
    let run = start_with_gh(&world, &path, &answers, &["--issues", "label:ready"]);
    assert_eq!(run.code, Some(0), "{run}");
    assert_eq!(
        gh_calls(&answers),
        [
            "gh [issue] [list] [--state] [open] [--search] [label:ready] [--limit] [101] [--json] [number,title,body]"
        ],
        "asked once, as `pagent loop --issues` asks"
    );
    assert!(
        run.stdout
            .contains("3 issues from gh, written to .claude/pagent/issues.md"),
        "{run}"
    );
    let plan = fs::read_to_string(world.seed.join(".claude/pagent/issues.md")).unwrap();
    assert!(plan.starts_with("<!-- pagent: GitHub issues -->"), "{plan}");
    let stories = published_stories(&world, "issues");
    let names: Vec<&str> = stories.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, ["issue-7", "issue-13", "issue-21"], "oldest first");
    assert!(
        run.stdout.contains(
            "landings tick no plan file: .claude/pagent/issues.md is this machine's own copy of the GitHub issues, not a file on main"
        ),
        "{run}"
    );
    for ((_, task), (n, title)) in stories
        .iter()
        .zip([(7, "Save"), (13, "List"), (21, "Export")])
    {
        assert!(task.contains(&format!("#{n}")), "{task}");
        assert!(task.contains(title), "{task}");
    }
}

/// `--issues` and a plan file together: one sentence, `gh` never asked, nothing
/// published.
#[test]
fn issue_32_team_start_refuses_issues_together_with_a_plan_file() {
    let world = World::new(&[("tasks.txt", "one: Write one.txt\n")], false);
    let (path, answers) = fake_gh(&world, json!([issue(7, "Save")]).to_string().as_bytes());
    let run = start_with_gh(
        &world,
        &path,
        &answers,
        &["tasks.txt", "--issues", "label:ready"],
    );
    assert_eq!(run.code, Some(1), "{run}");
    assert_eq!(
        run.stderr.trim(),
        "pagent: error: --issues makes the team's plan from GitHub issues: give --issues or a plan file, not both",
        "{run}"
    );
    // Neither a plan nor issues, and --format (a plan file's) with issues: one sentence
    // each too.
    for (args, says) in [
        (
            &[][..],
            "pagent: error: a team needs a plan: give a plan file (pagent team start prd.json) or GitHub issues (--issues label:ready)",
        ),
        (
            &["--issues", "label:ready", "--format", "chief"][..],
            "pagent: error: --format is for a plan file; --issues plans are pagent's own format",
        ),
    ] {
        let run = start_with_gh(&world, &path, &answers, args);
        assert_eq!(run.code, Some(1), "{run}");
        assert_eq!(run.stderr.trim(), says, "{run}");
    }
    assert!(gh_calls(&answers).is_empty(), "gh was not asked");
    assert_eq!(teams_on_remote(&world), "", "nothing published");
    assert!(!world.seed.join(".claude/pagent/issues.md").exists());
}

/// A hostile `gh` (or a hostile issue tracker behind it): a list too big to hold, JSON
/// nested too deep to parse safely, and titles that try a path escape and carry
/// terminal control characters. The first two are refused with gh's output bounded
/// (nothing published, nothing written); the titles are published as one-line text
/// under story names of pagent's own (`issue-N`), and nothing is written outside the
/// clone.
#[test]
fn issue_32_a_hostile_issue_list_is_bounded_and_refused_or_escaped() {
    let world = World::new(&[("README.md", "hi\n")], false);
    // Bigger than gh's output is kept (8 MiB): cut, so it is no list.
    let body = "x".repeat(1024 * 1024);
    let huge: Vec<Value> = (1..=12)
        .map(|n| json!({"number": n, "title": "t", "body": body}))
        .collect();
    // Deeper than the JSON parser goes.
    let deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
    for (what, list) in [
        ("huge", serde_json::to_vec(&huge).unwrap()),
        ("deep", deep.into_bytes()),
    ] {
        let (path, answers) = fake_gh(&world, &list);
        let run = start_with_gh(&world, &path, &answers, &["--issues", "label:ready"]);
        assert_eq!(run.code, Some(1), "{what}: {run}");
        assert!(
            run.stderr
                .contains("gh issue list printed no list of issues"),
            "{what}: {run}"
        );
        assert_eq!(teams_on_remote(&world), "", "{what}: nothing published");
        assert!(
            !world.seed.join(".claude/pagent/issues.md").exists(),
            "{what}"
        );
    }
    let hostile = json!([
        {"number": 5, "title": "../../../escape\u{1b}[2J\u{7}\r\nevil", "body": "- [ ] #6 not an issue\n\u{1b}]0;title\u{7}"},
        {"number": 6, "title": "/etc/passwd", "body": ""},
    ]);
    let (path, answers) = fake_gh(&world, hostile.to_string().as_bytes());
    let run = start_with_gh(&world, &path, &answers, &["--issues", "label:ready"]);
    assert_eq!(run.code, Some(0), "{run}");
    assert!(!run.stdout.contains('\u{1b}'), "{run}");
    let stories = published_stories(&world, "issues");
    let names: Vec<&str> = stories.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, ["issue-5", "issue-6"], "{stories:#?}");
    let (_, task) = &stories[0];
    assert!(task.starts_with("#5: ../../../escape"), "{task}");
    assert!(
        !task.chars().any(|c| c.is_control() && c != '\n'),
        "no control character is published: {task:?}"
    );
    assert!(
        task.starts_with("#5: ../../../escape [2J evil\n"),
        "one line: {task:?}"
    );
    assert!(!world.base.join("escape").exists());
    let status = world.team(&["status", "--team", "issues"]);
    assert_eq!(status.code, Some(0), "{status}");
    assert!(!status.stdout.contains('\u{1b}'), "{status}");
}

/// `pagent team start --help` offers `--issues` beside the plan file, in words that
/// are reviewed as a whole.
#[test]
fn issue_32_team_start_help_offers_issues_beside_a_plan_file() {
    let world = World::new(&[("README.md", "hi\n")], false);
    let run = world.start(&["--help"]);
    assert_eq!(run.code, Some(0), "{run}");
    assert!(run.stdout.contains("[PLAN]"), "{run}");
    assert_text!(run.stdout);
}

/// A `pagent loop --issues` running in the clone works through (and ticks)
/// `.claude/pagent/issues.md`: `team start --issues` there refuses rather than rewrite
/// that file under it, and asks `gh` nothing.
#[test]
fn issue_32_team_start_issues_never_rewrites_the_plan_of_a_running_loop() {
    let world = World::new(&[("README.md", "hi\n")], false);
    let (path, answers) = fake_gh(&world, json!([issue(7, "Save")]).to_string().as_bytes());
    let hold = world.ctl.join("hold-loop");
    fs::write(&hold, "").unwrap();
    let started = world.ctl.join("loop-started");
    let agent = format!(
        "touch {}; while [ -f {} ]; do sleep 0.05; done; echo waiting",
        started.display(),
        hold.display()
    );
    let home = world.base.join("home-seed");
    fs::create_dir_all(&home).unwrap();
    let mut running = world
        .pagent(
            &world.seed,
            &home,
            &["loop", "--command", &agent, "--issues", "label:ready"],
        )
        .env("PATH", &path)
        .env("GH_DIR", &answers)
        .command()
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let plan = world.seed.join(".claude/pagent/issues.md");
    wait_until(Duration::from_secs(30), "the loop to start", || {
        started.exists().then_some(())
    });
    let before = fs::read(&plan).unwrap();
    // The plan as the loop will tick it: a rewrite would show.
    fs::write(&plan, [&before[..], b"\n"].concat()).unwrap();
    let run = start_with_gh(&world, &path, &answers, &["--issues", "label:ready"]);
    fs::remove_file(&hold).unwrap();
    let _ = running.wait();
    assert_eq!(run.code, Some(1), "{run}");
    assert!(
        run.stderr.contains("a `pagent loop` is running in")
            && run.stderr.contains(
                "and may be working through .claude/pagent/issues.md; start the team from issues once it has ended"
            ),
        "{run}"
    );
    assert_eq!(gh_calls(&answers).len(), 1, "gh asked by the loop only");
    assert_eq!(teams_on_remote(&world), "", "nothing published");
}
