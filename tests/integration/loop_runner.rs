//! `pagent loop` and `pagent parallel` with fake agents: small scripts in the temp dir.

use std::io::{BufRead, BufReader};
use std::process::Stdio;

use serde_json::{Value, json};

use crate::util::*;
use pagent_door::testing;

/// A fake agent: counts its runs in `.runs`, and on run `promise_at` makes the promise.
fn counting_agent(env: &TestEnv, promise_at: u32) -> String {
    env.write(
        "agent.sh",
        &format!(
            "n=$(cat .runs 2>/dev/null || echo 0); n=$((n+1)); echo $n > .runs\n\
             prompt=$(cat)\n\
             echo \"run $n stage=$PAGENT_STAGE iteration=$PAGENT_ITERATION driver=$PAGENT_DRIVER\"\n\
             if [ $n -ge {promise_at} ]; then printf 'Finished.\\n<promise>DONE</promise>\\n'; fi\n"
        ),
    );
    "sh agent.sh".to_owned()
}

/// `pagent loop`'s plain output, whole, with elapsed times and the temp folder masked.
fn snapshot_output(name: &str, text: &str) {
    insta::with_settings!({filters => vec![
        (r"/tmp/\.tmp[A-Za-z0-9]+", "[TMP]"),
        (r"· \d+(h\d\dm|m\d\ds|s) ·", "· [T] ·"),
        (r" in \d+(h\d\dm|m\d\ds|s) \(", " in [T] ("),
    ]}, {
        insta::assert_snapshot!(name, text);
    });
}

#[test]
fn a_promise_on_iteration_three_ends_the_loop_with_three_iterations() {
    let env = TestEnv::new();
    let agent = counting_agent(&env, 3);
    let out = env
        .cmd(&["loop", "--command", &agent, "ralph", "Count to three"])
        .success();
    snapshot_output("complete_on_iteration_three", &out.stdout);
    assert_eq!(env.state()["status"], "complete");
    assert_eq!(env.state()["iterations"], json!([3]));
    assert_eq!(env.state()["driver"], "loop");
    assert_eq!(env.actions(), ["ralph", "block", "block", "complete"]);
    // One log and one prompt file per iteration; the second prompt is the re-prompt.
    let runs = env.path(".claude/pagent/runs");
    let mut names: Vec<String> = std::fs::read_dir(&runs)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names.len(), 6, "{names:?}");
    let log = std::fs::read_to_string(
        runs.join(
            names
                .iter()
                .find(|n| n.ends_with("-ralph-001.log"))
                .unwrap(),
        ),
    )
    .unwrap();
    assert_eq!(log, "run 1 stage=ralph iteration=1 driver=loop\n");
    let second = std::fs::read_to_string(
        runs.join(
            names
                .iter()
                .find(|n| n.ends_with("-ralph-002.prompt.md"))
                .unwrap(),
        ),
    )
    .unwrap();
    assert!(
        second.starts_with("pagent · ralph loop · iteration 2 of 25\n"),
        "{second}"
    );
    assert!(second.ends_with("\n\nCount to three"), "{second}");
}

#[test]
fn a_pipeline_advances_stage_by_stage() {
    let env = TestEnv::new();
    env.write("prd.md", "# PRD\n");
    env.write(
        "flow.json",
        &json!({"stages": [
            {"name": "draft", "prompt": "Write draft.md", "exit_when": {"file_exists": "draft.md", "min_lines": 2}},
            {"name": "ship", "prompt": "Ship it", "exit_when": {"promise_in_output": "SHIPPED"}}
        ]})
        .to_string(),
    );
    env.write(
        "agent.sh",
        "cat > /dev/null\ncase \"$PAGENT_STAGE\" in\n  draft) printf 'one\\ntwo\\n' > draft.md; echo drafted ;;\n  ship) echo '<promise>SHIPPED</promise>' ;;\nesac\n",
    );
    let out = env
        .cmd(&[
            "loop",
            "--command",
            "sh agent.sh",
            "run",
            "prd.md",
            "--workflow",
            "flow.json",
        ])
        .success();
    assert!(out.stdout.contains("✓ draft · iteration 1"), "{out}");
    assert_eq!(env.state()["iterations"], json!([1, 1]));
    assert_eq!(env.actions(), ["run", "advance", "complete"]);
}

#[test]
fn giving_up_exits_3_and_keeps_the_state() {
    let env = TestEnv::new();
    let agent = counting_agent(&env, 99);
    let out = env
        .cmd(&[
            "loop",
            "--command",
            &agent,
            "ralph",
            "--max-iterations",
            "2",
            "--no-progress-limit",
            "0",
            "Never done",
        ])
        .run();
    assert_eq!(out.code, Some(3), "{out}");
    snapshot_output("gave_up_after_two", &out.stdout);
    assert_eq!(env.state()["status"], "gave_up");
    assert_eq!(env.actions(), ["ralph", "block", "gave_up"]);
}

#[test]
fn the_iteration_timeout_and_the_watchdog_count_as_iterations_and_say_so() {
    let env = TestEnv::new();
    env.write("agent.sh", "n=$(cat .runs 2>/dev/null || echo 0); n=$((n+1)); echo $n > .runs\ncat > /dev/null\ncase $n in\n  1) while true; do echo busy; sleep 0.1; done ;;\n  2) echo started; sleep 30 ;;\n  *) echo '<promise>DONE</promise>' ;;\nesac\n");
    let baseline = env.baseline();
    let started = std::time::Instant::now();
    let out = env
        .cmd(&[
            "loop",
            "--command",
            "sh agent.sh",
            "--iteration-timeout",
            "2s",
            "--idle-timeout",
            "1s",
            "ralph",
            "--no-progress-limit",
            "0",
            "Task",
        ])
        .success();
    // The two clocks (2 s and 1 s), then three iterations' work: far from the 30 s the
    // second agent sleeps if the watchdog misses it.
    baseline.assert_within(
        started
            .elapsed()
            .saturating_sub(std::time::Duration::from_secs(3)),
        150,
        std::time::Duration::from_secs(17),
        "a loop of a timed-out and a stalled iteration",
    );
    assert_eq!(env.state()["iterations"], json!([3]));
    let details: Vec<String> = env
        .events()
        .iter()
        .map(|e| e["detail"].as_str().unwrap().to_owned())
        .collect();
    let mut said = Said::new();
    said.say("the second event's detail", &details[1]);
    said.say("the third event's detail", &details[2]);
    let runs = env.path(".claude/pagent/runs");
    let third = std::fs::read_dir(&runs)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.to_string_lossy().ends_with("-003.prompt.md"))
        .unwrap();
    let third = std::fs::read_to_string(third).unwrap();
    said.say("the third prompt", &third);
    said.say("pagent loop's output", &out.stdout);
    assert_text!(said.text());
}

#[test]
fn crashes_are_retried_without_counting_and_bounded() {
    let env = TestEnv::new();
    env.write("agent.sh", "n=$(cat .runs 2>/dev/null || echo 0); n=$((n+1)); echo $n > .runs\ncat > /dev/null\nif [ $n -le 2 ]; then echo 'API error: overloaded' >&2; exit 1; fi\necho '<promise>DONE</promise>'\n");
    let out = env
        .cmd(&[
            "loop",
            "--command",
            "sh agent.sh",
            "--retry-delay",
            "1s",
            "ralph",
            "Task",
        ])
        .success();
    let mut said = Said::new();
    said.say("an agent that crashes twice", &out.stdout);
    assert_eq!(env.state()["iterations"], json!([1]));
    assert_eq!(env.actions(), ["ralph", "retry", "retry", "complete"]);

    // Always crashing: bounded, the state kept for a later resume.
    let env = TestEnv::new();
    env.write("agent.sh", "exit 7\n");
    let out = env
        .cmd(&[
            "loop",
            "--command",
            "sh agent.sh",
            "--retries",
            "1",
            "--retry-delay",
            "1s",
            "ralph",
            "Task",
        ])
        .failure();
    said.say("an agent that always crashes: stdout", &out.stdout);
    said.say("stderr", &out.stderr);
    assert_text!(said.text());
    assert_eq!(env.state()["status"], "active");
}

#[test]
fn ctrl_c_stops_the_agent_saves_the_state_and_a_second_run_resumes() {
    let env = TestEnv::new();
    env.write("agent.sh", "cat > /dev/null\nif [ -f fast ]; then echo '<promise>DONE</promise>'; exit 0; fi\necho working; sleep 30\n");
    let baseline = env.baseline();
    let mut child = env
        .bin(&[
            "loop",
            "--json",
            "--command",
            "sh agent.sh",
            "ralph",
            "Task",
        ])
        .command()
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    // Wait (event-driven) until the iteration has started, then interrupt.
    for line in lines.by_ref() {
        let event: Value = serde_json::from_str(&line.unwrap()).unwrap();
        if event["event"] == "iteration_started" {
            break;
        }
    }
    let started = std::time::Instant::now();
    testing::signal(child.id() as i32, testing::SIGINT);
    let rest: Vec<String> = lines.map(|l| l.unwrap()).collect();
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(130), "{rest:?}");
    // Left alone, the agent sleeps 30 s.
    baseline.assert_within(
        started.elapsed(),
        100,
        std::time::Duration::from_secs(10),
        "the loop after Ctrl-C",
    );
    let finished: Value = serde_json::from_str(rest.last().unwrap()).unwrap();
    assert_eq!(finished["outcome"], "interrupted");
    let state = env.state();
    assert_eq!(state["status"], "active");
    assert_eq!(state["iterations"], json!([1]));
    assert!(
        state["pending_prompt"]
            .as_str()
            .unwrap()
            .ends_with("\n\nTask")
    );

    env.write("fast", "");
    let out = env.cmd(&["loop", "--command", "sh agent.sh"]).success();
    assert_text!(out.stdout);
    assert_eq!(env.state()["status"], "complete");
    assert_eq!(env.state()["iterations"], json!([1]));
    assert_eq!(env.actions(), ["ralph", "interrupted", "complete"]);
}

#[test]
fn stories_pass_one_per_iteration_and_the_loop_ends() {
    let env = TestEnv::new();
    env.write(
        "prd.json",
        &json!({"project": "todo", "userStories": [
            {"id": "US-2", "title": "List", "priority": 2, "passes": false, "acceptanceCriteria": ["lists"]},
            {"id": "US-1", "title": "Add", "priority": 1, "passes": false},
            {"id": "US-3", "title": "Done", "priority": 3, "passes": false}
        ]})
        .to_string(),
    );
    env.write(
        "agent.py",
        "import json, re, sys\nprompt = sys.stdin.read()\nstory = re.search(r'^(US-\\d+): ', prompt, re.M).group(1)\n\
         prd = json.load(open('prd.json'))\nfor s in prd['userStories']:\n    if s['id'] == story: s['passes'] = True\n\
         json.dump(prd, open('prd.json', 'w'))\nopen(story + '.txt', 'w').write('done')\nprint('implemented', story)\n",
    );
    let out = env
        .cmd(&["loop", "--command", "python3 agent.py", "--prd", "prd.json"])
        .success();
    snapshot_output("stories_complete", &out.stdout);
    let state = env.state();
    assert_eq!(state["max_iterations"], 6, "3 stories plus a margin of 3");
    let progress = env.read("progress.md");
    let lines: Vec<&str> = progress.lines().filter(|l| l.starts_with("- ")).collect();
    assert_eq!(lines.len(), 3, "{progress}");
    assert!(
        lines[0].ends_with("iteration 1: 1 of 3 stories pass; next: US-2: List"),
        "{progress}"
    );
    assert!(
        lines[2].ends_with("iteration 3: 3 of 3 stories pass; next: none left"),
        "{progress}"
    );
    // The prompts named the stories in priority order.
    let runs = env.path(".claude/pagent/runs");
    let mut prompts: Vec<_> = std::fs::read_dir(&runs)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.to_string_lossy().ends_with(".prompt.md"))
        .collect();
    prompts.sort();
    let named: Vec<String> = prompts
        .iter()
        .map(|p| {
            std::fs::read_to_string(p)
                .unwrap()
                .lines()
                .find(|l| l.starts_with("US-"))
                .unwrap()
                .to_owned()
        })
        .collect();
    assert_eq!(
        named,
        [
            "US-1: Add (priority 1)",
            "US-2: List (priority 2)",
            "US-3: Done (priority 3)"
        ]
    );
}

#[test]
fn cancel_while_the_agent_runs_ends_the_loop_and_is_not_overwritten() {
    let env = TestEnv::new();
    // The agent cancels the loop half way through its run, as a user in another terminal would.
    env.write(
        "agent.sh",
        "cat > /dev/null\n\"$PAGENT_EXE\" cancel\necho 'still working'\n",
    );
    let out = env
        .cmd(&[
            "loop",
            "--command",
            "sh agent.sh",
            "ralph",
            "--no-progress-limit",
            "0",
            "Task",
        ])
        .env("PAGENT_EXE", crate::util::pagent_bin())
        .run();
    assert_eq!(out.code, Some(130), "{out}");
    snapshot_output("cancelled_while_the_agent_runs", &out.stdout);
    let state = env.state();
    assert_eq!(state["status"], "cancelled");
    assert_eq!(state["iterations"], json!([1]));
}
