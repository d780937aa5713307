//! No-progress detection through the binary and a real git repository.

use serde_json::json;

use crate::git::git;
use crate::util::*;

#[test]
fn three_stops_with_an_unchanged_tree_end_the_loop() {
    let env = TestEnv::new();
    env.cmd(&["ralph", "Fix it"]).success();
    env.stop(&env.stop_input("thinking")).blocked();
    env.stop(&env.stop_input("still thinking")).blocked();
    let message = env.stop(&env.stop_input("hmm")).allowed().unwrap();
    assert_text!(message);
    assert_eq!(env.state()["status"], "gave_up");
}

/// Something the agent does to the project.
type Change = fn(&TestEnv);

#[test]
fn edits_new_files_and_commits_each_count_as_progress() {
    let env = TestEnv::new();
    env.write("a.txt", "one\ntwo\n");
    git(&env.root, &["add", "a.txt"]);
    git(&env.root, &["commit", "-qm", "base"]);
    env.cmd(&["ralph", "Fix it"]).success();

    let changes: [(&str, Change); 4] = [
        ("an edit that keeps the line count", |e: &TestEnv| {
            e.write("a.txt", "one\nTWO\n");
        }),
        ("a new untracked file", |e: &TestEnv| {
            e.write("new.txt", "x");
        }),
        ("a commit", |e: &TestEnv| {
            git(&e.root, &["add", "a.txt", "new.txt"]);
            git(&e.root, &["commit", "-qm", "work"]);
        }),
        ("an edit of an untracked file", |e: &TestEnv| {
            e.write("other.txt", "1");
        }),
    ];
    // Two idle stops, then a change: the count must fall back to zero each time.
    for (what, change) in changes {
        env.stop(&env.stop_input("idle")).blocked();
        assert_eq!(env.state()["no_progress_count"], 1, "{what}");
        change(&env);
        env.stop(&env.stop_input("worked")).blocked();
        assert_eq!(
            env.state()["no_progress_count"],
            0,
            "{what} did not count as progress\n{}",
            env.dump()
        );
    }
    assert_eq!(env.state()["status"], "active");
}

#[test]
fn outside_git_file_changes_still_count() {
    let env = TestEnv::plain();
    env.cmd(&["ralph", "--no-progress-limit", "2", "Fix it"])
        .success();
    env.stop(&env.stop_input("idle")).blocked();
    env.write("x.txt", "1");
    env.stop(&env.stop_input("worked")).blocked();
    assert_eq!(env.state()["no_progress_count"], json!(0));
    env.stop(&env.stop_input("idle")).blocked();
    assert!(
        env.stop(&env.stop_input("idle"))
            .allowed()
            .unwrap()
            .contains("gave up")
    );
}

/// Issue 33: a monorepo's index, past what pagent used to read (16 MiB, 100,000
/// entries; written by git itself, here 150,000 entries and 25 MB), is fingerprinted:
/// streamed within a Stop's memory bound, with no notice, and the no-progress check
/// works there (a new file is progress, an unchanged tree is not).
#[test]
fn a_monorepo_index_past_the_old_caps_is_fingerprinted_in_bounded_memory() {
    use std::io::Write;
    let env = TestEnv::new();
    let blob = std::process::Command::new("git")
        .args(["hash-object", "-w", "--stdin"])
        .current_dir(&env.root)
        .stdin(std::fs::File::open(env.write("x.txt", "x\n").path("x.txt")).unwrap())
        .output()
        .unwrap();
    let blob = String::from_utf8(blob.stdout).unwrap();
    let blob = blob.trim();
    let mut lines = String::new();
    for i in 0..150_000 {
        lines.push_str(&format!(
            "100644 {blob}\tservices/team-{:02}/service-{:03}/src/main/java/Handler{i:06}.java\n",
            i / 50_000,
            i % 50_000 / 1_000
        ));
    }
    let mut update = std::process::Command::new("git")
        .args(["update-index", "--index-info"])
        .current_dir(&env.root)
        .stdin(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    update
        .stdin
        .take()
        .unwrap()
        .write_all(lines.as_bytes())
        .unwrap();
    assert!(update.wait().unwrap().success());
    let size = std::fs::metadata(env.root.join(".git/index"))
        .unwrap()
        .len();
    assert!(size > 16 << 20, "{size} bytes");
    env.cmd(&["ralph", "--no-progress-limit", "2", "Fix it"])
        .env("CLAUDE_CODE_SESSION_ID", SESSION)
        .success();
    let stop = |env: &TestEnv| {
        env.bin(&["hook", "stop"])
            .env("CLAUDE_PROJECT_DIR", &env.root)
            .stdin(env.stop_input("working").to_string())
            .run_bounded(crate::hostile_repo::HANG)
    };
    let first = stop(&env);
    let bound = memory_limit_kb(crate::hostile_repo::MEMORY_KB);
    assert!(
        first.max_rss_kb < bound,
        "{} KiB\n{}",
        first.max_rss_kb,
        first.run
    );
    first.run.blocked();
    let said = first.run.system_message().unwrap_or_default();
    assert!(!said.contains("no-progress detection is off"), "{said}");
    let fingerprint = env.state()["fingerprint"].clone();
    assert!(fingerprint.is_string(), "{}", env.state());
    env.write("services/team-00/new.java", "class New {}");
    stop(&env).run.blocked();
    assert_ne!(
        env.state()["fingerprint"],
        fingerprint,
        "a new file is progress"
    );
    assert_eq!(env.state()["no_progress_count"], 0);
    let unchanged = stop(&env);
    assert!(unchanged.max_rss_kb < bound, "{} KiB", unchanged.max_rss_kb);
    assert_eq!(env.state()["no_progress_count"], 1, "{}", env.state());
}
