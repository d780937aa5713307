//! A registered project turned hostile after its loop was registered (a pull, a model
//! with a shell): what it plants where the dashboard reads must neither leak a file from
//! outside it, nor hang or break the list.

use std::time::{Duration, Instant};

use super::*;
use pagent_door::testing;

/// A `pagent loop` run to its end in `env`'s project (its state says `driver: loop`, so
/// its page shows the agent's output).
fn finished_runner_loop(env: &TestEnv) -> String {
    env.write(
        "agent.sh",
        "cat > /dev/null\necho 'the real output'\necho '<promise>DONE</promise>'\n",
    );
    env.cmd(&["loop", "--command", "sh agent.sh", "ralph", "Task"])
        .success();
    loop_ids(env)[0].1.clone()
}

#[test]
fn a_planted_runs_link_shows_no_file_from_outside() {
    let env = TestEnv::new();
    let id = finished_runner_loop(&env);
    let dash = Dashboard::start(&env, &[]);
    let (status, page) = dash.api(&format!("/api/loops/{id}"));
    assert_eq!(status, 200);
    let lines = page["output"]["lines"].to_string();
    assert!(lines.contains("the real output"), "{page}");
    // The runs folder becomes a link to a folder outside holding a newer "log".
    let runs = env.path(".claude/pagent/runs");
    let names: Vec<String> = std::fs::read_dir(&runs)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    let log = names.iter().find(|n| n.ends_with(".log")).unwrap();
    let outside = env.home.join("outside");
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::write(
        outside.join(log.replace("-001", "-009")),
        "SECRET from outside\n",
    )
    .unwrap();
    std::fs::remove_dir_all(&runs).unwrap();
    std::os::unix::fs::symlink(&outside, &runs).unwrap();
    let (status, page) = dash.api(&format!("/api/loops/{id}"));
    assert_eq!(status, 200);
    assert!(!page.to_string().contains("SECRET"), "{page}");
    assert_eq!(page["output"], Value::Null);
}

#[test]
fn an_oversized_state_is_listed_as_unreadable_and_the_rest_still_shows() {
    let env = TestEnv::new();
    env.cmd(&["ralph", "Task"]).success();
    let other = crate::all_loops::sibling(&env, "other");
    env.cmd(&["--project", other.to_str().unwrap(), "ralph", "Other task"])
        .success();
    std::fs::write(
        other.join(".claude/pagent-pipeline.json"),
        vec![b' '; 2 * 1024 * 1024],
    )
    .unwrap();
    let dash = Dashboard::start(&env, &[]);
    let (status, rows) = dash.api("/api/loops");
    assert_eq!(status, 200);
    let rows = rows["loops"].as_array().unwrap();
    let by_name = |name: &str| rows.iter().find(|r| r["name"] == name).unwrap().clone();
    assert_eq!(by_name("project")["status"], "active");
    assert_eq!(by_name("other")["status"], "unreadable");
    let problem = by_name("other")["problem"].as_str().unwrap().to_owned();
    assert!(problem.contains("larger than 1 MiB"), "{problem}");
}

#[test]
fn a_state_file_swapped_for_a_fifo_does_not_hang_the_list() {
    let env = TestEnv::new();
    env.cmd(&["ralph", "Task"]).success();
    let baseline = env.baseline();
    let state = env.path(".claude/pagent-pipeline.json");
    std::fs::remove_file(&state).unwrap();
    testing::make_fifo(&state, 0o644).unwrap();
    let dash = Dashboard::start(&env, &[]);
    let started = Instant::now();
    let (status, rows) = dash.api("/api/loops");
    // Opening the FIFO for reading would wait for a writer that never comes.
    baseline.assert_within(
        started.elapsed(),
        50,
        Duration::from_secs(5),
        "the list over a FIFO",
    );
    assert_eq!(status, 200);
    assert_eq!(rows["loops"][0]["status"], "unreadable", "{rows}");
}
