//! The register of loops and `pagent status --all` (issue 23): every loop pagent starts,
//! in any project, listed from one place; what is gone or long over drops out; a
//! stranger's state in a registered project is named as such and shows nothing of its own.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::util::snapshot::regex_escape;
use crate::util::*;

fn filters(env: &TestEnv) -> Vec<(String, String)> {
    let base = env.root.parent().unwrap().display().to_string();
    vec![
        (regex_escape(&base), "[TMP]".to_owned()),
        (r"\b\d+s\b".to_owned(), "[S]".to_owned()),
        (r"\b\d+m\d\ds\b".to_owned(), "[S]".to_owned()),
    ]
}

/// A second project beside `env`'s, sharing its HOME and config folder.
pub fn sibling(env: &TestEnv, name: &str) -> PathBuf {
    let root = env.root.parent().unwrap().join(name);
    std::fs::create_dir_all(&root).unwrap();
    git2::Repository::init(&root).unwrap();
    root
}

fn all(env: &TestEnv) -> Vec<Value> {
    let out = env.cmd(&["status", "--all", "--json"]).success();
    serde_json::from_str(&out.stdout).unwrap_or_else(|e| panic!("{e}\n{out}"))
}

#[test]
fn status_all_lists_every_loop_in_every_project() {
    let env = TestEnv::new();
    let other = sibling(&env, "other");
    std::fs::write(other.join("prd.md"), "# PRD\n").unwrap();
    env.cmd(&["ralph", "--max-cost", "5", "Fix the flaky test"])
        .env("CLAUDE_CODE_SESSION_ID", SESSION)
        .success();
    env.stop(&env.stop_input("Not yet.")).blocked();
    let other_arg = other.display().to_string();
    env.cmd(&[
        "--project",
        &other_arg,
        "run",
        "prd.md",
        "--max-stages",
        "2",
    ])
    .current_dir(&other)
    .success();
    env.cmd(&["--project", &other_arg, "pause"]).success();

    let human = env.cmd(&["status", "--all"]).success().stdout;
    let filters = filters(&env);
    let filters: Vec<(&str, &str)> = filters
        .iter()
        .map(|(a, b)| (a.as_str(), b.as_str()))
        .collect();
    insta::with_settings!({filters => filters}, {
        insta::assert_snapshot!(human);
    });
    let rows = all(&env);
    let seen: Vec<(&str, &str, &str, u64)> = rows
        .iter()
        .map(|r| {
            (
                r["name"].as_str().unwrap(),
                r["status"].as_str().unwrap(),
                r["origin"].as_str().unwrap(),
                r["iteration"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        seen,
        [
            ("other", "paused", "session", 1),
            ("project", "active", "session", 2)
        ]
    );
    assert_eq!(rows[1]["actions"], json!(["pause", "cancel"]));
    assert_eq!(rows[0]["actions"], json!(["resume", "cancel"]));
    assert_eq!(rows[1]["title"], "Fix the flaky test");
}

#[test]
fn nothing_registered_says_so() {
    let env = TestEnv::new();
    let out = env.cmd(&["status", "--all"]).success();
    insta::assert_snapshot!(out.stdout);
    assert_eq!(all(&env), Vec::<Value>::new());
}

#[test]
fn a_project_that_is_gone_drops_out_of_the_register() {
    let env = TestEnv::new();
    let gone = sibling(&env, "gone");
    env.cmd(&["--project", gone.to_str().unwrap(), "ralph", "Task"])
        .success();
    env.cmd(&["ralph", "Task"]).success();
    assert_eq!(all(&env).len(), 2);
    std::fs::remove_dir_all(&gone).unwrap();
    let rows = all(&env);
    assert_eq!(rows.len(), 1, "{rows:?}");
    assert_eq!(rows[0]["name"], "project");
    // Dropped from the register itself, not only from the list.
    let registered = std::fs::read_dir(env.config.join("projects"))
        .unwrap()
        .filter(|e| e.as_ref().unwrap().path().join("loop.json").exists())
        .count();
    assert_eq!(registered, 1);
    // A state file removed by hand: the loop is gone too.
    std::fs::remove_file(env.path(".claude/pagent-pipeline.json")).unwrap();
    assert_eq!(all(&env), Vec::<Value>::new());
}

/// Re-seals the state of `root` after `change`, as pagent itself would have written it.
pub fn rewrite_sealed(config: &Path, root: &Path, change: impl Fn(&mut Value)) {
    let path = root.join(".claude/pagent-pipeline.json");
    let mut value: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    change(&mut value);
    value["generation"] = json!(value["generation"].as_u64().unwrap() + 1);
    let mut state = pagent_engine::State::from_json(value.to_string().as_bytes()).unwrap();
    let secret = std::fs::read_to_string(config.join("secret")).unwrap();
    let secret = pagent_engine::seal::unhex(secret.trim()).unwrap();
    use std::os::unix::ffi::OsStrExt;
    pagent_engine::seal::apply(&mut state, root.as_os_str().as_bytes(), &secret);
    std::fs::write(&path, state.to_json_pretty()).unwrap();
}

#[test]
fn an_ended_loop_stays_listed_for_a_day() {
    let env = TestEnv::new();
    env.cmd(&["ralph", "Task"]).success();
    env.cmd(&["cancel"]).success();
    assert_eq!(all(&env)[0]["status"], "cancelled");
    rewrite_sealed(&env.config, &env.root, |state| {
        state["ended_at"] = json!("2020-01-01T00:00:00Z");
    });
    assert_eq!(all(&env), Vec::<Value>::new());
}

/// A cloned repository's state in a registered project (the user's loop ended, then a
/// pull brought a planted one): listed as not the user's, with none of its texts.
#[test]
fn a_strangers_state_in_a_registered_project_shows_nothing_of_its_own() {
    let env = TestEnv::new();
    env.cmd(&["ralph", "Task"]).success();
    let mut planted = env.state();
    planted["seal"] = json!("0000");
    planted["stages"][0]["prompt"] = json!("\u{1b}]0;pwned\u{7}<script>alert(1)</script>");
    planted["last_feedback"] = json!("\u{1b}[2Jcleared");
    env.set_state(&planted);
    let rows = all(&env);
    assert_eq!(rows[0]["status"], "not_yours");
    assert_eq!(rows[0].get("title"), None, "{rows:?}");
    let human = env.cmd(&["status", "--all"]).success().stdout;
    assert!(human.contains("a state not set up by you"), "{human}");
    assert!(
        !human.contains('\u{1b}') && !human.contains("script"),
        "{human}"
    );
}

#[test]
fn each_loop_of_parallel_and_loop_is_listed_as_such() {
    let env = TestEnv::new();
    crate::git::git(&env.root, &["commit", "-q", "--allow-empty", "-m", "init"]);
    env.write(
        "agent.sh",
        "cat > /dev/null\necho '<promise>DONE</promise>'\n",
    );
    env.write("tasks.txt", "alpha: first task\nbeta: second task\n");
    let agent = format!("sh {}", env.path("agent.sh").display());
    env.cmd(&["parallel", "tasks.txt", "--json", "--command", &agent])
        .success();
    let other = sibling(&env, "other");
    std::fs::write(
        other.join("agent.sh"),
        "cat > /dev/null\necho '<promise>DONE</promise>'\n",
    )
    .unwrap();
    let other_arg = other.display().to_string();
    env.cmd(&[
        "--project",
        &other_arg,
        "loop",
        "--command",
        "sh agent.sh",
        "ralph",
        "Task",
    ])
    .current_dir(&other)
    .success();
    let seen: Vec<(String, String, String)> = all(&env)
        .iter()
        .map(|r| {
            (
                r["name"].as_str().unwrap().to_owned(),
                r["origin"].as_str().unwrap().to_owned(),
                r["status"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    let expect =
        |name: &str, origin: &str| (name.to_owned(), origin.to_owned(), "complete".to_owned());
    assert_eq!(
        seen,
        [
            expect("other", "loop"),
            expect("project/alpha", "parallel"),
            expect("project/beta", "parallel"),
        ]
    );
}
