//! `pagent status` and `pagent log`, human and JSON.

use serde_json::{Value, json};

use crate::util::*;

fn snapshot_filters() -> Vec<(&'static str, &'static str)> {
    vec![
        (r"\b\d+s\b", "[ELAPSED]"),
        (r"\b\d+m\d\ds\b", "[ELAPSED]"),
        (r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", "[TIME]"),
        (r"\(\d+ ms\)", "([MS])"),
        crate::util::snapshot::SIZES[0],
        crate::util::snapshot::SIZES[1],
        crate::util::snapshot::SIZES[2],
    ]
}

#[test]
fn status_shows_every_stage_with_its_progress() {
    let env = TestEnv::new();
    env.write("prd.md", "# PRD\n");
    env.cmd(&["run", "prd.md"])
        .env("CLAUDE_CODE_SESSION_ID", SESSION)
        .success();
    env.write_lines("architecture.md", 64);
    env.stop(&env.stop_input("done")).blocked();
    env.write_lines("test-plan.md", 12);
    env.stop(&env.stop_input("half")).blocked();

    let human = env.cmd(&["status"]).success().stdout;
    insta::with_settings!({filters => snapshot_filters()}, {
        insta::assert_snapshot!(human);
    });

    let status: Value = env.status();
    assert_eq!(status["status"], "active");
    assert_eq!(status["stage"], "qa");
    assert_eq!(status["iterations"], 3);
    assert_eq!(status["sealed"], true);
    let stages: Vec<(&str, &str, &str)> = status["stages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["name"].as_str().unwrap(),
                s["state"].as_str().unwrap(),
                s["progress"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        stages,
        [
            ("architect", "done", "architecture.md 64/50 lines"),
            ("qa", "current", "test-plan.md 12/30 lines"),
            ("security", "waiting", "security-assessment.md missing"),
            ("implementer", "waiting", "src/ missing"),
            ("verifier", "waiting", "waiting for <promise>DONE</promise>"),
        ]
    );
}

#[test]
fn status_and_log_without_a_loop() {
    let env = TestEnv::new();
    let mut said = Said::new();
    said.say("pagent status", &env.cmd(&["status"]).success().stdout);
    assert_eq!(
        env.cmd(&["status", "--json"]).success().stdout.trim(),
        "null"
    );
    said.say("pagent log", &env.cmd(&["log"]).success().stdout);
    assert_text!(said.text());
    assert_eq!(env.cmd(&["log", "--json"]).success().stdout, "");
}

#[test]
fn the_log_has_one_line_per_decision() {
    let env = TestEnv::new();
    env.cmd(&["ralph", "Fix it"])
        .env("CLAUDE_CODE_SESSION_ID", SESSION)
        .success();
    env.stop(&env.stop_input("one")).blocked();
    let mut other = env.stop_input("x");
    other["session_id"] = json!("someone-else");
    env.stop(&other).allowed();
    env.stop(&env.stop_input("<promise>DONE</promise>"))
        .allowed();
    env.cmd(&["cancel"]).success();

    let lines: Vec<Value> = env
        .cmd(&["log", "--json"])
        .success()
        .stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let actions: Vec<&str> = lines
        .iter()
        .map(|l| l["action"].as_str().unwrap())
        .collect();
    assert_eq!(actions, ["ralph", "block", "other_session", "complete"]);
    assert_eq!(lines[1]["iteration"], 2);
    assert!(lines[1]["ms"].is_u64());

    let human = env.cmd(&["log", "-n", "2"]).success().stdout;
    insta::with_settings!({filters => snapshot_filters()}, {
        insta::assert_snapshot!(human);
    });
}

// What a planted state or event log holds: a window title, a clipboard write, hidden
// text, a bidi override and cursor moves.
const TITLE: &str = "\x1b]0;pwned\x07";
const CLIPBOARD: &str = "\x1b]52;c;cm0gLXJmIH4=\x07";
const HIDDEN: &str = "\x1b[8mhidden\x1b[0m";
const BIDI: &str = "\u{202e}txt.exe\u{2066}";
const CURSOR: &str = "\x1b[1A\x1b[2K\u{9b}2J\x7f";

/// A cloned repository can plant the state and the event log. Their text reaches the
/// terminal escaped: no window title (OSC 0), clipboard write (OSC 52), hidden text,
/// cursor move or bidi override takes effect, in human output or in `--json`.
#[test]
fn status_and_log_print_planted_escape_sequences_escaped() {
    let env = TestEnv::new();
    env.cmd(&["ralph", "Fix it"]).success();
    let mut state = env.state();
    state["kind"] = json!("pipeline");
    state["workflow"] = json!(TITLE);
    state["prd_file"] = json!(CLIPBOARD);
    state["session_id"] = json!(BIDI);
    state["last_feedback"] = json!(CURSOR);
    state["stages"][0]["name"] = json!(HIDDEN);
    state["stages"][0]["exit_when"] = json!({"file_exists": format!("a{CURSOR}b"), "min_lines": 0});
    env.set_state(&state);
    plant_events(&env);

    let human = env.cmd(&["status"]).success().stdout;
    assert_no_raw_controls("status", &human);
    for shown in [
        r"\x1b]0;pwned\x07",
        r"\x1b]52;c;cm0gLXJmIH4=\x07",
        r"\x1b[8mhidden\x1b[0m",
        r"\u{202e}txt.exe\u{2066}",
        r"a\x1b[1A\x1b[2K\u{9b}2J\x7fb",
    ] {
        assert!(
            human.contains(shown),
            "status does not show {shown}:\n{human}"
        );
    }
    let log = env.cmd(&["log"]).success();
    assert!(
        log.stderr.contains("skipped 2 unreadable lines"),
        "{}",
        log.stderr
    );
    let log = log.stdout;
    assert_no_raw_controls("log", &log);
    assert!(
        !log.contains("planted") && !human.contains("planted"),
        "{log}"
    );
    assert!(
        log.contains(r"\x1b]52;c;cm0gLXJmIH4=\x07\n\x1b[1A"),
        "{log}"
    );

    let status_json = env.cmd(&["status", "--json"]).success().stdout;
    assert_no_raw_controls("status --json", &status_json);
    let status: Value = serde_json::from_str(&status_json).unwrap();
    assert_eq!(status["workflow"], TITLE);
    assert_eq!(status["session_id"], BIDI);
    assert_eq!(status["last_feedback"], CURSOR);
    let log_json = env.cmd(&["log", "--json"]).success().stdout;
    assert_no_raw_controls("log --json", &log_json);
    let last: Value = serde_json::from_str(log_json.lines().last().unwrap()).unwrap();
    assert_eq!(last["action"], "cancel");
    assert_eq!(last["session_id"], BIDI);

    state["status"] = json!("gave_up");
    state["end_reason"] = json!(format!("{TITLE}{BIDI}"));
    env.set_state(&state);
    let ended = env.cmd(&["status"]).success().stdout;
    assert_no_raw_controls("status of an ended loop", &ended);
    assert!(
        ended.contains(r"ended: \x1b]0;pwned\x07\u{202e}txt.exe\u{2066}"),
        "{ended}"
    );
}

/// Appends planted events to the project's event log: escapes in each text field, and
/// two lines whose time or action is text.
fn plant_events(env: &TestEnv) {
    let planted = |event: Value| {
        let mut log =
            std::fs::read_to_string(env.path(".claude/pagent/events.jsonl")).unwrap_or_default();
        log.push_str(&format!("{event}\n"));
        env.write(".claude/pagent/events.jsonl", &log);
    };
    planted(
        json!({"ts": "2999-01-01T00:00:00Z", "action": "check", "stage": HIDDEN,
                   "iteration": 1, "detail": format!("{BIDI}: failed {CLIPBOARD}"), "ms": 3}),
    );
    planted(
        json!({"ts": "2999-01-01T00:00:01Z", "action": "cancel", "session_id": BIDI, "stage": HIDDEN,
                   "detail": format!("{CLIPBOARD}\n{CURSOR}")}),
    );
    // Time and action are typed: a line that plants text there is skipped and counted,
    // never printed (a `ts` of "9..." used to sort after every real time, as a string).
    planted(json!({"ts": format!("9{TITLE}"), "action": "check", "detail": "planted"}));
    planted(json!({"ts": "2999-01-01T00:00:02Z", "action": TITLE, "detail": "planted"}));
}

fn assert_no_raw_controls(name: &str, out: &str) {
    let bytes = out.as_bytes();
    for bad in [
        &b"\x1b"[..],
        b"\x07",
        b"\x7f",
        "\u{9b}".as_bytes(),
        "\u{202e}".as_bytes(),
        "\u{2066}".as_bytes(),
    ] {
        assert!(
            !bytes.windows(bad.len()).any(|w| w == bad),
            "{name} printed {bad:?} raw:\n{out}"
        );
    }
}

/// Issue 33: `pagent status` shows what a loop's logs take, both folders, and the cap they
/// are kept under (the user's `logs.max_mb`), in figures a person reads.
#[test]
fn status_shows_what_a_loops_logs_take_and_their_cap() {
    let env = TestEnv::new();
    std::fs::create_dir_all(&env.config).unwrap();
    std::fs::write(
        env.config.join("config.json"),
        r#"{"logs": {"max_mb": 24}}"#,
    )
    .unwrap();
    env.cmd(&["ralph", "Fix it"]).success();
    // The runs folder: 1 MiB, 512 KiB and 100 bytes.
    env.write(".claude/pagent/runs/a.log", &"x".repeat(1 << 20));
    env.write(".claude/pagent/runs/b.log", &"x".repeat(512 << 10));
    env.write(".claude/pagent/runs/b.prompt", &"x".repeat(100));
    // The event log, padded to 4 KiB with blank lines (readers skip them), and an older
    // half of 2 MiB.
    let events = env.path(".claude/pagent/events.jsonl");
    let mut text = std::fs::read_to_string(&events).unwrap();
    assert!(text.len() < 4096, "{} bytes of events", text.len());
    text.push_str(&"\n".repeat(4096 - text.len()));
    std::fs::write(&events, text).unwrap();
    env.write(".claude/pagent/events.jsonl.1", &"\n".repeat(2 << 20));

    let human = env.cmd(&["status"]).success().stdout;
    insta::with_settings!({filters => vec![(r"\b\d+s\b", "[ELAPSED]")]}, {
        insta::assert_snapshot!(human);
    });
    let status: Value = env.status();
    assert_eq!(
        status["logs"],
        json!({
            "bytes": (1 << 20) + (512 << 10) + 100 + 4096 + (2 << 20),
            "runs_bytes": (1 << 20) + (512 << 10) + 100,
            "run_files": 3,
            "events_bytes": 4096 + (2 << 20),
            "cap_bytes": 24 << 20,
        })
    );
}
