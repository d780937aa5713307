//! The dashboard in a real browser (headless Chromium through WebDriver): both loops of
//! two projects on one page, a cancel clicked on one while the other goes on, pause and
//! resume, an iteration appearing without a reload, and a task full of markup shown as
//! text. Screenshots go to `target/dashboard/`.

use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::sync::Mutex;
use std::time::Duration;

use serde_json::json;

use super::webdriver::Browser;
use super::*;
use crate::all_loops::sibling;

/// One browser at a time: each test starts a Chromium, and CI machines are small.
pub static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

const WIDE: (u32, u32) = (1280, 900);
const NARROW: (u32, u32) = (420, 900);

pub fn shots() -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .parent()
        .unwrap()
        .join("dashboard");
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

pub fn save(browser: &Browser, name: &str) -> PathBuf {
    let path = shots().join(name);
    let png = browser.screenshot();
    assert_eq!(&png[1..4], b"PNG", "not a PNG");
    std::fs::write(&path, png).unwrap();
    path
}

fn field(id: &str, name: &str) -> String {
    format!("[data-loop=\"{id}\"] [data-field=\"{name}\"]")
}

fn id_of(env: &TestEnv, name: &str) -> String {
    loop_ids(env)
        .into_iter()
        .find(|(n, _)| n == name)
        .unwrap_or_else(|| panic!("no loop in {name}"))
        .1
}

/// A fake `claude -p` speaking Claude Code's stream-json: each run reads, runs the
/// parser's tests, reports 20.4k tokens and $0.42, and makes no promise; the third run
/// works until it is stopped.
const FAKE_CLAUDE: &str = r#"#!/bin/sh
cat > /dev/null
n=$(cat .runs 2>/dev/null || echo 0); n=$((n+1)); echo $n > .runs
echo '{"type":"system","subtype":"init","session_id":"s","model":"claude-sonnet-4-5"}'
echo '{"type":"assistant","message":{"id":"m'$n'a","content":[{"type":"tool_use","id":"r'$n'","name":"Read","input":{"file_path":"src/parser.rs"}}]}}'
echo '{"type":"assistant","message":{"id":"m'$n'b","content":[{"type":"tool_use","id":"t'$n'","name":"Bash","input":{"command":"cargo test -p parser"}}]}}'
echo '{"type":"assistant","message":{"id":"m'$n'c","content":[{"type":"text","text":"Run '$n': the nested-quote case still fails; trying a smaller tokenizer."}]}}'
if [ "$n" -ge 3 ]; then while :; do sleep 0.2; done; fi
echo '{"type":"result","subtype":"success","is_error":false,"num_turns":3,"result":"Not done yet.","session_id":"s","total_cost_usd":0.42,"usage":{"input_tokens":18000,"output_tokens":2400}}'
"#;

/// `pagent loop` in `root` with [`FAKE_CLAUDE`], once its third run is under way.
fn start_runner(env: &TestEnv, root: &Path) -> Child {
    use std::os::unix::fs::PermissionsExt;
    let claude = root.join("fake-claude");
    std::fs::write(&claude, FAKE_CLAUDE).unwrap();
    std::fs::set_permissions(&claude, std::fs::Permissions::from_mode(0o755)).unwrap();
    let (root_arg, claude_arg) = (root.display().to_string(), claude.display().to_string());
    let child = env
        .cmd(&[
            "--project",
            &root_arg,
            "loop",
            "--agent-bin",
            &claude_arg,
            "--max-cost",
            "5",
            "ralph",
            "--max-iterations",
            "8",
            "--no-progress-limit",
            "0",
            "Make the parser accept nested quotes",
        ])
        .current_dir(root)
        .command()
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let runs = root.join(".claude/pagent/runs");
    wait_for(
        Duration::from_secs(30),
        "the runner's third run starts",
        || {
            std::fs::read_dir(&runs).is_ok_and(|dir| {
                dir.flatten()
                    .any(|e| std::fs::read_to_string(e.path()).is_ok_and(|t| t.contains("Run 3:")))
            })
        },
    );
    child
}

#[test]
fn two_projects_on_one_page_and_a_cancel_ends_one_while_the_other_goes_on() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let env = TestEnv::new();
    start_a_reviewed_session_loop(&env);
    // A `pagent loop` in another project, its agent at work.
    let other = sibling(&env, "parser");
    let mut runner = start_runner(&env, &other);
    let (session_loop, runner_loop) = (id_of(&env, "project"), id_of(&env, "parser"));
    let dash = Dashboard::start(&env, &[]);
    let browser = Browser::start(WIDE.0, WIDE.1);
    browser.goto(&dash.url);
    both_are_listed(&browser, &session_loop, &runner_loop);
    save(&browser, "dashboard-list.png");
    the_runners_own_page(&browser, &dash.url, &runner_loop);
    cancel_the_runners_loop(&browser, &session_loop, &runner_loop);
    the_state_files_agree(&env, &other, &mut runner);
    the_other_loop_goes_on(&env, &browser, &dash.url, &session_loop);
}

fn start_a_reviewed_session_loop(env: &TestEnv) {
    // A loop in a Claude Code session, whose reviewer found two gaps.
    env.write(
        "review.sh",
        "cat > /dev/null
echo '{\"met\": false, \"missing\": [\"the login test still sleeps 2 s\", \"no test for an expired token\"]}'\n",
    );
    env.cmd(&[
        "ralph",
        "--max-duration",
        "2h",
        "--no-progress-limit",
        "0",
        "--review",
        "the login tests are fast and cover expiry",
        "--reviewer-command",
        "sh review.sh",
        "Fix the flaky login test",
    ])
    .env("CLAUDE_CODE_SESSION_ID", SESSION)
    .success();
    env.stop(&env.stop_input("Not yet.")).blocked();
    env.stop(&env.stop_input("Done.\n<promise>DONE</promise>"))
        .blocked();
}

/// The list shows both loops, each with its name, kind, iteration and figures.
fn both_are_listed(browser: &Browser, session_loop: &str, runner_loop: &str) {
    browser.wait_text(
        &field(session_loop, "status"),
        Duration::from_secs(10),
        |t| t == "active",
    );
    browser.wait_text(
        &field(runner_loop, "status"),
        Duration::from_secs(10),
        |t| t == "active",
    );
    assert_eq!(
        browser.eval(
            "return document.querySelectorAll('[data-loop]').length",
            &[]
        ),
        2
    );
    assert_eq!(
        browser.text(&field(session_loop, "name")).unwrap(),
        "project"
    );
    assert_eq!(browser.text(&field(runner_loop, "name")).unwrap(), "parser");
    assert_eq!(
        browser.text(&field(session_loop, "kind")).unwrap(),
        "ralph loop · Claude Code session"
    );
    assert_eq!(
        browser.text(&field(runner_loop, "kind")).unwrap(),
        "ralph loop · pagent loop"
    );
    assert_eq!(
        browser.text(&field(session_loop, "iteration")).unwrap(),
        "3 of 25"
    );
    let review = browser.text(&field(session_loop, "review")).unwrap();
    assert!(
        review.contains("the login test still sleeps 2 s"),
        "{review}"
    );
    assert_eq!(
        browser.text(&field(runner_loop, "iteration")).unwrap(),
        "3 of 8"
    );
    assert_eq!(
        browser.text(&field(runner_loop, "tokens")).unwrap(),
        "40.8k"
    );
    assert_eq!(browser.text(&field(runner_loop, "cost")).unwrap(), "$0.84");
    assert_eq!(
        browser.text(&field(runner_loop, "budget")).unwrap(),
        "$4.16"
    );
}

fn the_runners_own_page(browser: &Browser, url: &str, runner_loop: &str) {
    // The runner's loop on its own page: the agent's output, live, and its charts.
    browser.goto(&format!("{}#/loop/{runner_loop}", url));
    browser.wait_text("[data-field=\"output\"]", Duration::from_secs(10), |t| {
        t.contains("▸ Bash cargo test -p parser") && t.contains("Run 3: the nested-quote case")
    });
    browser.wait_text("[data-field=\"timeline\"]", Duration::from_secs(5), |t| {
        t.contains("ralph started")
    });
    assert_eq!(
        browser.eval(
            "return document.querySelectorAll('.chart svg path.line').length",
            &[]
        ),
        3
    );
    save(browser, "dashboard-loop.png");
    browser.goto(url);
    browser.wait_text(
        &field(runner_loop, "status"),
        Duration::from_secs(10),
        |t| t == "active",
    );
}

fn cancel_the_runners_loop(browser: &Browser, session_loop: &str, runner_loop: &str) {
    // Cancel takes a second click.
    let cancel = format!("[data-loop=\"{runner_loop}\"] [data-action=\"cancel\"]");
    browser.click(&cancel);
    assert_eq!(browser.text(&cancel).unwrap(), "Confirm cancel");
    browser.click(&cancel);
    browser.wait_text(&field(runner_loop, "status"), Duration::from_secs(5), |t| {
        t == "cancelled"
    });
    let result = browser.text(&field(runner_loop, "result")).unwrap();
    assert!(
        result.starts_with("pagent: cancelled the Ralph loop after "),
        "{result}"
    );
    assert_eq!(
        browser.text(&field(session_loop, "status")).unwrap(),
        "active"
    );
}

fn the_state_files_agree(env: &TestEnv, other: &Path, runner: &mut Child) {
    // The state files agree, and the runner stopped its agent and itself.
    let state = |root: &Path| -> Value {
        serde_json::from_str(
            &std::fs::read_to_string(root.join(".claude/pagent-pipeline.json")).unwrap(),
        )
        .unwrap()
    };
    assert_eq!(state(other)["status"], "cancelled");
    assert_eq!(
        state(other)["end_reason"],
        "cancelled by the user (from the dashboard)"
    );
    assert_eq!(state(&env.root)["status"], "active");
    wait_for(Duration::from_secs(15), "the runner exits", || {
        runner.try_wait().unwrap().is_some()
    });
    assert_eq!(runner.wait().unwrap().code(), Some(130));
}

fn the_other_loop_goes_on(env: &TestEnv, browser: &Browser, url: &str, session_loop: &str) {
    // The other loop goes on: its next iteration shows up.
    env.stop(&env.stop_input("Still not.")).blocked();
    browser.wait_text(
        &field(session_loop, "iteration"),
        Duration::from_secs(2),
        |t| t == "4 of 25",
    );
    save(browser, "dashboard-after-cancel.png");
    browser.resize(NARROW.0, NARROW.1);
    browser.wait_text(
        &field(session_loop, "status"),
        Duration::from_secs(5),
        |t| t == "active",
    );
    save(browser, "dashboard-narrow.png");
    let sideways =
        "return document.documentElement.scrollWidth > document.documentElement.clientWidth";
    assert_eq!(
        browser.eval(sideways, &[]),
        false,
        "the narrow list scrolls sideways"
    );
    browser.goto(&format!("{}#/loop/{session_loop}", url));
    browser.wait_text("[data-field=\"timeline\"]", Duration::from_secs(5), |t| {
        t.contains("review")
    });
    save(browser, "dashboard-loop-narrow.png");
    assert_eq!(
        browser.eval(sideways, &[]),
        false,
        "the narrow loop page scrolls sideways"
    );
}

#[test]
fn an_iteration_that_ends_appears_within_two_seconds_without_a_reload() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let env = TestEnv::new();
    env.cmd(&["ralph", "Fix it"])
        .env("CLAUDE_CODE_SESSION_ID", SESSION)
        .success();
    let id = id_of(&env, "project");
    let dash = Dashboard::start(&env, &[]);
    let browser = Browser::start(WIDE.0, WIDE.1);
    browser.goto(&dash.url);
    browser.wait_text(&field(&id, "iteration"), Duration::from_secs(10), |t| {
        t == "1 of 25"
    });
    // Survives anything but a reload.
    browser.eval("window.__sameDocument = 'yes';", &[]);
    // The page asks every second; the answer and the redraw are so many short commands'
    // time here (a second on a quiet machine).
    let within = Duration::from_secs(1) + env.baseline().limit(20, Duration::from_secs(1));
    env.stop(&env.stop_input("Not yet.")).blocked();
    let took = browser.wait_text(&field(&id, "iteration"), within, |t| t == "2 of 25");
    browser.wait_text(&field(&id, "feedback"), within, |t| {
        t == "waiting for <promise>DONE</promise>"
    });
    assert_eq!(browser.eval("return window.__sameDocument", &[]), "yes");
    eprintln!("the iteration appeared {took:?} after the hook returned");
}

#[test]
fn a_task_full_of_markup_is_shown_as_text() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let env = TestEnv::new();
    let task = "Fix <script>window.pwned = 1</script> and <img src=x onerror=\"window.pwned = 2\"> <b>now</b>";
    env.cmd(&["ralph", task]).success();
    env.stop(&env.stop_input("<img src=y onerror=\"window.pwned = 3\">"))
        .blocked();
    let id = id_of(&env, "project");
    let dash = Dashboard::start(&env, &[]);
    let browser = Browser::start(WIDE.0, WIDE.1);
    for page in [dash.url.clone(), format!("{}#/loop/{id}", dash.url)] {
        browser.goto(&page);
        browser.wait_text(&field(&id, "title"), Duration::from_secs(10), |t| t == task);
        let found = browser.eval(
            "return [document.querySelectorAll('img').length, \
             [...document.querySelectorAll('b')].filter((b) => b.textContent === 'now').length, \
             typeof window.pwned, document.scripts.length]",
            &[],
        );
        assert_eq!(found, json!([0, 0, "undefined", 1]), "{page}");
    }
    browser.wait_text("[data-field=\"timeline\"]", Duration::from_secs(5), |t| {
        t.contains("ralph started")
    });
}

#[test]
fn pause_and_resume_from_the_page_are_the_commands() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let env = TestEnv::new();
    env.cmd(&["ralph", "Fix it"])
        .env("CLAUDE_CODE_SESSION_ID", SESSION)
        .success();
    let id = id_of(&env, "project");
    let dash = Dashboard::start(&env, &[]);
    let browser = Browser::start(WIDE.0, WIDE.1);
    browser.goto(&dash.url);
    browser.wait_text(&field(&id, "status"), Duration::from_secs(10), |t| {
        t == "active"
    });
    browser.click(&format!("[data-loop=\"{id}\"] [data-action=\"pause\"]"));
    browser.wait_text(&field(&id, "status"), Duration::from_secs(5), |t| {
        t == "paused"
    });
    let said = browser.text(&field(&id, "result")).unwrap();
    assert!(said.starts_with("pagent: paused the Ralph loop"), "{said}");
    assert_eq!(
        env.state()["paused"]["why"],
        "you paused it from the dashboard"
    );
    // The session's stop is let through, as after `pagent pause`.
    assert!(env.stop(&env.stop_input("Hm.")).allowed().is_some());
    browser.click(&format!("[data-loop=\"{id}\"] [data-action=\"resume\"]"));
    browser.wait_text(&field(&id, "status"), Duration::from_secs(5), |t| {
        t == "active"
    });
    assert_eq!(env.state()["paused"], Value::Null);
    env.stop(&env.stop_input("Not yet.")).blocked();
}

/// The loop's page showed engine words: `block` and `gave_up` in its timeline, each
/// stage's exit condition as raw JSON, and a 60-line file as "50/50 lines". In Chromium:
/// words, the condition said, and the real count against the minimum.
#[test]
fn issue_30_the_loop_page_speaks_words_not_engine_identifiers() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let env = TestEnv::new();
    env.write("prd.md", "# PRD\n");
    env.cmd(&["run", "prd.md", "--max-iterations", "2"])
        .env("CLAUDE_CODE_SESSION_ID", SESSION)
        .success();
    env.write_lines("architecture.md", 60);
    env.stop(&env.stop_input("Designed.")).blocked();
    env.stop(&env.stop_input("Not yet.")).blocked();
    assert!(env.stop(&env.stop_input("Still not.")).allowed().is_some());
    assert_eq!(env.state()["status"], "gave_up");
    let id = id_of(&env, "project");
    let dash = Dashboard::start(&env, &[]);
    let browser = Browser::start(WIDE.0, WIDE.1);
    browser.goto(&format!("{}#/loop/{id}", dash.url));
    let timeline = "[data-field=\"timeline\"]";
    browser.wait_text(timeline, Duration::from_secs(10), |t| t.contains("gave up"));
    let timeline = browser.text(timeline).unwrap();
    let stages = browser.text("table.stages").unwrap();
    save(&browser, "issue-30-loop-page.png");
    for said in ["started", "stage done", "not done", "gave up"] {
        assert!(timeline.contains(said), "{said:?} not in:\n{timeline}");
    }
    for name in ["block", "gave_up", "advance"] {
        assert!(!timeline.contains(name), "{name:?} in:\n{timeline}");
    }
    assert!(
        stages.contains("architecture.md with at least 50 non-blank lines"),
        "{stages}"
    );
    assert!(stages.contains("architecture.md 60/50 lines"), "{stages}");
    assert!(
        stages.contains("the agent's last message says <promise>DONE</promise>"),
        "{stages}"
    );
    assert!(
        !stages.contains('{') && !stages.contains("min_lines"),
        "{stages}"
    );
}

/// A `pagent loop` in `root` whose agent prints `script` on every run (a limit, an
/// outage), with `flags`; returns once the state holds what `ready` looks for.
fn start_failing_runner(
    env: &TestEnv,
    root: &Path,
    script: &str,
    flags: &[&str],
    ready: impl Fn(&Value) -> bool,
) -> Child {
    use std::os::unix::fs::PermissionsExt;
    let agent = root.join("fake-claude");
    std::fs::write(
        &agent,
        format!("#!/bin/sh\ncat > /dev/null\nreset=$(( $(date +%s) + 3600 ))\n{script}\nexit 1\n"),
    )
    .unwrap();
    std::fs::set_permissions(&agent, std::fs::Permissions::from_mode(0o755)).unwrap();
    let (root_arg, agent_arg) = (root.display().to_string(), agent.display().to_string());
    let mut args = vec!["--project", &root_arg, "loop", "--agent-bin", &agent_arg];
    args.extend(flags);
    args.extend(["ralph", "Make the parser accept nested quotes"]);
    let child = env
        .cmd(&args)
        .current_dir(root)
        .command()
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let state = root.join(".claude/pagent-pipeline.json");
    wait_for(Duration::from_secs(30), "the runner's failed run", || {
        std::fs::read_to_string(&state)
            .ok()
            .and_then(|text| serde_json::from_str::<Value>(&text).ok())
            .is_some_and(|state| ready(&state))
    });
    child
}

/// Issue 30, §4 and §2 on the page: a loop waiting for a usage limit shows as waiting on
/// a usage limit (it showed ACTIVE, the wait unsaid), with how long, why and what then:
/// for a session on Claude Code 2.1.197, what the user must type; for `pagent loop`, that
/// it runs the same iteration again. A runner retrying an outage says the failed run's
/// class. The list's count still counts them as running.
#[test]
fn issue_30_a_loop_waiting_for_a_usage_limit_shows_the_wait_on_the_dashboard() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let env = TestEnv::new();
    a_session_waits_for_its_limit(&env);
    // A `pagent loop` whose agent hit its five-hour limit, resetting in an hour.
    let parser = sibling(&env, "parser");
    let limit = r#"echo '{"type":"rate_limit_event","rate_limit_info":{"status":"rejected","resetsAt":'$reset',"rateLimitType":"five_hour"}}'
echo '{"type":"result","subtype":"success","is_error":true,"api_error_status":429,"result":"You'"'"'ve hit your 5-hour limit · resets 3am (Europe/Paris)"}'"#;
    let mut waiting =
        start_failing_runner(&env, &parser, limit, &[], |s| s["limit_wait"].is_object());
    // A `pagent loop` whose agent's service is down: an outage, retried.
    let api = sibling(&env, "api");
    let outage = r#"echo '{"type":"assistant","message":{"model":"<synthetic>","content":[{"type":"text","text":"API Error: 529 Overloaded."}]},"error":"overloaded"}'
echo '{"type":"result","subtype":"success","is_error":true,"api_error_status":529,"result":"API Error: 529 Overloaded."}'"#;
    let mut retrying = start_failing_runner(&env, &api, outage, &["--retry-delay", "10m"], |s| {
        s["last_failure"].is_object()
    });
    let (session_loop, runner_loop, outage_loop) = (
        id_of(&env, "project"),
        id_of(&env, "parser"),
        id_of(&env, "api"),
    );
    let dash = Dashboard::start(&env, &[]);
    let browser = Browser::start(WIDE.0, WIDE.1);
    browser.goto(&dash.url);
    for id in [&session_loop, &runner_loop] {
        browser.wait_text(&field(id, "status"), Duration::from_secs(10), |t| {
            t == "usage limit"
        });
    }
    let session_now = browser.text(&field(&session_loop, "feedback")).unwrap();
    assert_eq!(
        session_now,
        "Waiting for a usage limit to reset: no reset time was named: You've hit your session limit. \
         Then: Claude Code 2.1.197 does not go on by itself: once the limit has reset, type \
         /pagent:resume in the session (nothing runs until then)."
    );
    let runner_now = browser.text(&field(&runner_loop, "feedback")).unwrap();
    assert!(
        runner_now.starts_with("Waiting for a usage limit to reset: 1h0")
            && runner_now.ends_with(
                " left: You've hit your 5-hour limit · resets 3am (Europe/Paris). Then: `pagent loop` runs the same iteration again."
            ),
        "{runner_now}"
    );
    browser.wait_text(
        &field(&outage_loop, "status"),
        Duration::from_secs(10),
        |t| t == "active",
    );
    let failure = browser.text(&field(&outage_loop, "failure")).unwrap();
    assert!(
        failure.contains(" ago: service outage: API Error: 529 Overloaded; retry 1 in 5m00s"),
        "{failure}"
    );
    assert_eq!(
        browser.text("#summary").unwrap(),
        "3 loops · 3 active",
        "a wait is not an end"
    );
    save(&browser, "dashboard-usage-limit.png");
    // The loop's own page says the same.
    browser.goto(&format!("{}#/loop/{session_loop}", dash.url));
    browser.wait_text(
        &field(&session_loop, "feedback"),
        Duration::from_secs(10),
        |t| t == session_now,
    );
    cancel_and_wait(&env, [(&parser, &mut waiting), (&api, &mut retrying)]);
}

/// A session on Claude Code 2.1.197 hits its limit: StopFailure marks the loop waiting.
fn a_session_waits_for_its_limit(env: &TestEnv) {
    env.cmd(&["ralph", "Fix the flaky login test"])
        .env("CLAUDE_CODE_SESSION_ID", SESSION)
        .success();
    env.stop(&env.stop_input("Not yet.")).blocked();
    env.cmd(&["hook", "stop-failure"])
        .env("CLAUDE_PROJECT_DIR", &env.root)
        .env("AI_AGENT", "claude-code_2-1-197_harness")
        .stdin(
            json!({"session_id": SESSION, "cwd": env.root, "hook_event_name": "StopFailure",
                "transcript_path": env.home.join("t.jsonl"), "error": "rate_limit",
                "last_assistant_message": "You've hit your session limit"})
            .to_string(),
        )
        .success();
    assert!(env.state()["limit_wait"].is_object());
}

/// Cancels each runner's loop and waits for the runner to exit.
fn cancel_and_wait<const N: usize>(env: &TestEnv, runners: [(&PathBuf, &mut Child); N]) {
    for (root, child) in runners {
        env.cmd(&["--project", &root.display().to_string(), "cancel"])
            .success();
        wait_for(Duration::from_secs(20), "the runner exits", || {
            child.try_wait().unwrap().is_some()
        });
    }
}

/// Issue 30, §3 and §4 (d), on the page: a loop Claude Code's cap paused, and then one
/// whose session was quit, each say why and what to type to go on.
#[test]
fn item_3_the_page_says_why_a_loop_paused_and_what_to_type() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let env = TestEnv::new();
    env.cmd(&["ralph", "--no-progress-limit", "0", "Fix it"])
        .env("CLAUDE_CODE_SESSION_ID", SESSION)
        .success();
    // Two answers without a tool under a cap of 1: the second continuation is paused.
    let path = env.home.join("transcript.jsonl");
    let mut lines = String::new();
    for stop in 0..2 {
        lines.push_str(&transcript_line_text(&format!("m{stop}"), "Thinking."));
        lines.push('\n');
        std::fs::write(&path, &lines).unwrap();
        let mut input = env.stop_input("Thinking.");
        input["stop_hook_active"] = json!(stop > 0);
        env.cmd(&["hook", "stop"])
            .env("CLAUDE_PROJECT_DIR", &env.root)
            .env("CLAUDE_CODE_STOP_HOOK_BLOCK_CAP", "1")
            .stdin(input.to_string())
            .run();
    }
    let id = id_of(&env, "project");
    let dash = Dashboard::start(&env, &[]);
    let browser = Browser::start(WIDE.0, WIDE.1);
    browser.goto(&dash.url);
    let feedback = field(&id, "feedback");
    browser.wait_text(&feedback, Duration::from_secs(10), |t| {
        t == "Paused because Claude called no tool in its last turn, and Claude Code ends a \
              turn that a hook continued once in a row without one \
              (CLAUDE_CODE_STOP_HOOK_BLOCK_CAP). /pagent:resume in its Claude Code session \
              continues it, /pagent:cancel (or `pagent cancel`) ends it"
    });
    env.cmd(&["hook", "session-end"])
        .env("CLAUDE_PROJECT_DIR", &env.root)
        .stdin(json!({"session_id": SESSION, "cwd": env.root, "reason": "other"}).to_string())
        .run();
    browser.wait_text(&feedback, Duration::from_secs(10), |t| {
        t.contains(", and then its Claude Code session was quit. `claude --resume ")
            && t.contains("then /pagent:resume, goes on with it (nothing drives it until then)")
    });
}

/// Issue 35: a loop whose agent ran contained (`--sandbox`) says so on its card.
#[test]
#[cfg(target_os = "linux")]
fn issue_35_the_dashboard_row_says_a_loop_is_contained() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let env = TestEnv::new();
    env.write(
        "agent.sh",
        "cat > /dev/null\necho '<promise>DONE</promise>'\n",
    );
    env.bin(&[
        "loop",
        "--sandbox",
        "--command",
        "sh agent.sh",
        "ralph",
        "Work",
    ])
    .success();
    let id = id_of(&env, "project");
    let dash = Dashboard::start(&env, &[]);
    let browser = Browser::start(WIDE.0, WIDE.1);
    browser.goto(&dash.url);
    browser.wait_text(&field(&id, "kind"), Duration::from_secs(10), |t| {
        t == "ralph loop · pagent loop, contained"
    });
}
