//! `pagent loop --issues`: GitHub issues through a fake `gh` on PATH that records every
//! call, so the scenario is exact: the issues asked for once, one issue per iteration
//! (oldest first), a comment per issue done when asked (and none by default), and a pull
//! request whose body closes every issue.

use std::path::PathBuf;

use crate::stories::AGENT;
use crate::util::*;

pub const FAKE_GH: &str = r#"printf 'gh' >> "$GH_DIR/calls"
for arg in "$@"; do printf ' [%s]' "$arg" >> "$GH_DIR/calls"; done
printf '\036' >> "$GH_DIR/calls"
case "$1 $2" in
  "issue list") cat "$GH_DIR/list.json" ;;
  "issue view") cat "$GH_DIR/issue-$3.json" ;;
  "issue comment") ;;
  "pr create")
    while [ $# -gt 0 ]; do
      if [ "$1" = "--body" ]; then printf '%s' "$2" > "$GH_DIR/pr-body"; fi
      shift
    done
    echo "https://example.invalid/acme/box/pull/1" ;;
  *) echo "gh: unexpected call" >&2; exit 1 ;;
esac"#;

fn issue(number: u32, title: &str) -> serde_json::Value {
    serde_json::json!({"number": number, "title": title, "body": format!("Body of {number}.\nSecond line.")})
}

/// A project with a fake `gh` (and its folder of answers) and the fake agent.
fn with_fake_gh() -> (TestEnv, PathBuf, String) {
    let env = TestEnv::new();
    let bin = env.fake_tool("fake-bin", "gh", FAKE_GH);
    let answers = env.home.join("gh");
    std::fs::create_dir_all(&answers).unwrap();
    let list = serde_json::json!([issue(21, "Export"), issue(7, "Save"), issue(13, "List")]);
    std::fs::write(answers.join("list.json"), list.to_string()).unwrap();
    for (n, title) in [(7, "Save"), (13, "List")] {
        std::fs::write(
            answers.join(format!("issue-{n}.json")),
            issue(n, title).to_string(),
        )
        .unwrap();
    }
    env.write("agent.sh", AGENT);
    let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap());
    (env, answers, path)
}

/// Each call to the fake `gh`, its arguments in brackets (a call ends with an ASCII
/// record separator, since a pull request's body has lines of its own).
fn calls(answers: &std::path::Path) -> Vec<String> {
    std::fs::read_to_string(answers.join("calls"))
        .unwrap()
        .split_terminator('\u{1e}')
        .map(str::to_owned)
        .collect()
}

#[test]
fn three_issues_three_iterations_and_a_pull_request_that_closes_them_all() {
    let (env, answers, path) = with_fake_gh();
    // A branch to push: the project's first commit, and a bare repository as origin.
    let origin = env.home.join("origin.git");
    git2::Repository::init_bare(&origin).unwrap();
    crate::git::git(
        &env.root,
        &["remote", "add", "origin", origin.to_str().unwrap()],
    );
    crate::git::git(&env.root, &["add", "agent.sh"]);
    crate::git::git(&env.root, &["commit", "-q", "-m", "start"]);
    let repo = git2::Repository::open(&env.root).unwrap();
    let out = env
        .cmd(&[
            "loop",
            "--command",
            "sh agent.sh",
            "--issues",
            "label:ready",
            "--comment-progress",
            "--checkpoint",
            "--pr",
        ])
        .env("PATH", &path)
        .env("GH_DIR", &answers)
        .run();
    assert_eq!(out.code, Some(0), "{out}\n{}", env.dump());
    assert!(out.stdout.contains("complete after 3 iterations"), "{out}");
    assert_eq!(
        env.read("done.log"),
        "#7\n#13\n#21\n",
        "oldest first, one per run"
    );
    let branch = repo.head().unwrap().shorthand().unwrap().to_owned();
    let comment = |n: u32| {
        format!(
            "gh [issue] [comment] [{n}] [--body] [pagent: the story for this issue is done (iteration"
        )
    };
    let calls = calls(&answers);
    assert_eq!(calls.len(), 5, "{calls:#?}");
    assert_eq!(
        calls[0],
        "gh [issue] [list] [--state] [open] [--search] [label:ready] [--limit] [101] [--json] [number,title,body]"
    );
    for (call, n) in calls[1..4].iter().zip([7, 13, 21]) {
        assert!(call.starts_with(&comment(n)), "{call}");
    }
    assert!(
        calls[4].starts_with(&format!(
            "gh [pr] [create] [--head] [{branch}] [--title] [pagent: the stories of .claude/pagent/issues.md]"
        )),
        "{}",
        calls[4]
    );
    let body = std::fs::read_to_string(answers.join("pr-body")).unwrap();
    assert!(
        body.ends_with("\n\nCloses #7\nCloses #13\nCloses #21"),
        "{body}"
    );
    let plan = env.read(".claude/pagent/issues.md");
    assert_eq!(plan.matches("- [x] #").count(), 3, "{plan}");
    assert!(
        out.stdout
            .contains("opened a pull request: https://example.invalid/acme/box/pull/1"),
        "{out}"
    );
}

#[test]
fn issue_numbers_are_viewed_one_by_one_and_no_comment_is_made_unless_asked() {
    let (env, answers, path) = with_fake_gh();
    env.cmd(&["loop", "--command", "sh agent.sh", "--issues", "13,#7"])
        .env("PATH", &path)
        .env("GH_DIR", &answers)
        .success();
    assert_eq!(env.read("done.log"), "#7\n#13\n");
    assert_eq!(
        calls(&answers),
        [
            "gh [issue] [view] [13] [--json] [number,title,body]",
            "gh [issue] [view] [7] [--json] [number,title,body]"
        ]
    );
    // The issue's body reached the agent's prompt.
    let first = &crate::stories::prompts(&env)[0];
    assert!(
        first.contains("#7: Save\nBody of 7.\nSecond line."),
        "{first}"
    );
}

#[test]
fn a_failing_gh_says_so_and_nothing_starts() {
    let env = TestEnv::new();
    let bin = env.fake_tool("fake-bin", "gh", "echo 'gh: not logged in' >&2; exit 4");
    env.write("agent.sh", AGENT);
    let out = env
        .cmd(&[
            "loop",
            "--command",
            "sh agent.sh",
            "--issues",
            "label:ready",
        ])
        .env(
            "PATH",
            format!("{}:{}", bin.display(), std::env::var("PATH").unwrap()),
        )
        .failure();
    assert_text!(out.stderr);
    assert!(!env.exists(".claude/pagent-pipeline.json"));
}
