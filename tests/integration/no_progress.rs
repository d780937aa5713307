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
