//! Every example of pagent's output in the README and `docs/` is pagent's real output
//! (issue 20, item 14): a block fenced as `LANG output=NAME` is compared with what the
//! generator NAME below makes pagent print, in a temp project as a user would get it.
//!
//! The comparison is loose only where a run cannot be repeated: clock times, elapsed
//! times, hook milliseconds, ids, seals and fingerprints are masked on both sides, so a
//! page may show `4m12s` where the test ran in `0s`. Temp paths become `/home/me/app`.
//! `PAGENT_BLESS_DOCS=1 cargo test --test integration docs::` rewrites the blocks that
//! differ with the fresh output (review the diff like a snapshot's).

use std::collections::BTreeMap;
use std::fmt::Write as _;

use serde_json::json;

use super::{documents, fences, read, repo};
use crate::util::*;

type Generator = fn() -> String;

/// Every named example: what a page may show as output.
const EXAMPLES: &[(&str, Generator)] = &[
    ("ralph-start", ralph_start),
    ("run-start", run_start),
    ("reprompt", reprompt),
    ("pipeline-complete", pipeline_complete),
    ("status-pipeline", status_pipeline),
    ("log", log),
    ("trust", trust),
    ("budget-gave-up", budget_gave_up),
    ("state-file", state_file),
    ("workflow-error", workflow_error),
    ("loop-piped", loop_piped),
    ("parallel-summary", parallel_summary),
    ("merge-summary", merge_summary),
    ("claude-pool", claude_pool),
    ("limit-wait", limit_wait),
    ("failure-classes", failure_classes),
    ("slash-start", super::voice::slash_start),
    ("slash-error", super::voice::slash_error),
    ("slash-refused", super::voice::slash_refused),
    ("queued-status", super::voice::queued_status),
    ("cancelled-elsewhere", super::voice::cancelled_elsewhere),
];

/// The parts of a run that differ from one run to the next, masked before comparing.
fn mask(text: &str) -> String {
    let rules = [
        (r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", "[TIME]"),
        (r"\b\d+h\d\dm\b|\b\d+m\d\ds\b|\b\d+s\b", "[ELAPSED]"),
        (r"\(\d+ ms\)", "([MS])"),
        (r"\b[0-9a-f]{64}\b", "[HASH]"),
        (r"\b[0-9a-f]{16}\b", "[ID]"),
        (r"\b[0-9a-f]{10}\b", "[COMMIT]"),
        (r"until \d\d:\d\d\b", "until [CLOCK]"),
        (r"\b\d{8}T\d{6}Z?\b", "[STAMP]"),
    ];
    rules.iter().fold(text.to_owned(), |acc, (pattern, with)| {
        regex::Regex::new(pattern)
            .unwrap()
            .replace_all(&acc, *with)
            .into_owned()
    })
}

/// Output as a page shows it: the temp folders named as a user's would be.
pub(super) fn shown(env: &TestEnv, text: &str) -> String {
    text.replace(&env.config.display().to_string(), "/home/me/.config/pagent")
        .replace(&env.root.display().to_string(), "/home/me/app")
        .replace(&env.home.display().to_string(), "/home/me")
}

#[test]
fn item_14_every_output_example_is_real_output() {
    let generators: BTreeMap<&str, Generator> = EXAMPLES.iter().copied().collect();
    let mut made: BTreeMap<&str, String> = BTreeMap::new();
    let mut problems = Vec::new();
    let mut blessed: BTreeMap<std::path::PathBuf, String> = BTreeMap::new();
    let bless = std::env::var_os("PAGENT_BLESS_DOCS").is_some();
    for file in documents() {
        let text = read(&file);
        for fence in fences(&file, &text).into_iter().rev() {
            let Some(name) = fence.attr("output") else {
                continue;
            };
            let Some(generate) = generators.get(name) else {
                problems.push(format!("{}: no example named {name}", fence.place()));
                continue;
            };
            let key = *generators.get_key_value(name).unwrap().0;
            let fresh = made.entry(key).or_insert_with(*generate);
            if mask(&fence.body) == mask(fresh) {
                continue;
            }
            if bless {
                let page = blessed.entry(file.clone()).or_insert_with(|| text.clone());
                let pad = " ".repeat(fence.indent);
                let body: String = fresh
                    .lines()
                    .map(|l| {
                        if l.is_empty() {
                            "\n".to_owned()
                        } else {
                            format!("{pad}{l}\n")
                        }
                    })
                    .collect();
                page.replace_range(fence.span.clone(), &body);
            } else {
                let mut diff = String::new();
                for (old, new) in fence.body.lines().zip(fresh.lines()) {
                    if mask(old) != mask(new) {
                        let _ = writeln!(diff, "  page:   {old}\n  pagent: {new}");
                    }
                }
                problems.push(format!(
                    "{}: example `{name}` is not what pagent prints; first differences:\n{diff}--- pagent prints ---\n{fresh}",
                    fence.place()
                ));
            }
        }
    }
    for (file, text) in &blessed {
        std::fs::write(repo().join(file), text).unwrap();
    }
    for (name, _) in EXAMPLES {
        if !made.contains_key(name) {
            problems.push(format!("example `{name}` is shown on no page"));
        }
    }
    assert!(
        problems.is_empty(),
        "{}\n(PAGENT_BLESS_DOCS=1 cargo test --test integration docs:: rewrites the blocks)",
        problems.join("\n\n")
    );
}

fn first_line(text: &str) -> String {
    format!("{}\n", text.lines().next().unwrap_or(""))
}

/// `/ralph Make every test in tests/ pass --max-iterations 10`: the line the user reads.
fn ralph_start() -> String {
    let env = TestEnv::new();
    let out = env
        .cmd(&["ralph", "--stdin-args"])
        .env("CLAUDE_CODE_SESSION_ID", SESSION)
        .stdin("Make every test in tests/ pass --max-iterations 10\n")
        .success();
    first_line(&out.stdout)
}

/// A pipeline's set-up, with the PRD in docs/.
fn run_start() -> String {
    let env = TestEnv::new();
    env.write("docs/prd.md", "# PRD\n");
    let out = env
        .cmd(&["run", "--stdin-args"])
        .env("CLAUDE_CODE_SESSION_ID", SESSION)
        .stdin("docs/prd.md\n")
        .success();
    first_line(&out.stdout)
}

/// A pipeline started in the session, with usage in its transcript.
fn pipeline(env: &TestEnv) {
    env.write("prd.md", "# PRD\n");
    env.cmd(&["run", "prd.md"])
        .env("CLAUDE_CODE_SESSION_ID", SESSION)
        .success();
}

fn transcript_usage(env: &TestEnv, id: &str, input: u64, output: u64, cached: u64) {
    use std::io::Write;
    let line = json!({"type": "assistant", "timestamp": "2099-01-01T00:00:00.000Z",
        "message": {"id": id, "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
            "content": [{"type": "text", "text": "working"}],
            "usage": {"input_tokens": input, "output_tokens": output,
                "cache_read_input_tokens": cached, "cache_creation_input_tokens": cached / 18}}});
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(env.home.join("transcript.jsonl"))
        .unwrap();
    writeln!(file, "{line}").unwrap();
}

/// The model stopped with 12 lines of the 50 the architect stage needs.
fn reprompt() -> String {
    let env = TestEnv::new();
    pipeline(&env);
    env.write_lines("architecture.md", 12);
    env.stop(&env.stop_input("A first draft.")).blocked() + "\n"
}

/// Every stage of prd-to-code met, one stop each, and the verifier's promise.
fn pipeline_complete() -> String {
    let env = TestEnv::new();
    pipeline(&env);
    env.write_lines("architecture.md", 50);
    env.stop(&env.stop_input("Designed.")).blocked();
    env.write_lines("test-plan.md", 30);
    env.stop(&env.stop_input("Planned.")).blocked();
    env.write_lines("security-assessment.md", 20);
    env.stop(&env.stop_input("Assessed.")).blocked();
    for n in 1..=3 {
        env.write_lines(&format!("src/part{n}.py"), 5);
    }
    env.stop(&env.stop_input("Built.")).blocked();
    let message = env
        .stop(&env.stop_input("All verified.\n<promise>DONE</promise>"))
        .allowed()
        .expect("the pipeline's end is told");
    message + "\n"
}

/// Half way through a pipeline, with the tokens Claude Code reported.
fn half_way() -> TestEnv {
    let env = TestEnv::new();
    pipeline(&env);
    transcript_usage(&env, "m1", 600, 4_100, 170_000);
    env.write_lines("architecture.md", 64);
    env.stop(&env.stop_input("Designed.")).blocked();
    transcript_usage(&env, "m2", 600, 5_700, 210_100);
    env.write_lines("test-plan.md", 12);
    env.stop(&env.stop_input("Half the plan.")).blocked();
    env
}

fn status_pipeline() -> String {
    let env = half_way();
    shown(&env, &env.cmd(&["status"]).success().stdout)
}

fn log() -> String {
    let env = half_way();
    shown(&env, &env.cmd(&["log"]).success().stdout)
}

/// A project workflow that runs a command, listed and then trusted.
fn trust() -> String {
    let env = TestEnv::new();
    env.write(
        ".claude/pagent/workflows/ship-it.json",
        &json!({"name": "ship-it", "stages": [
            {"name": "build", "prompt": "Make the tests pass.",
             "exit_when": {"command": ["cargo", "test"]}}]})
        .to_string(),
    );
    let list = env.cmd(&["trust", "--list"]).success();
    let trusted = env.cmd(&["trust"]).success();
    format!(
        "$ pagent trust --list\n{}$ pagent trust\n{}",
        shown(&env, &(list.stdout + &list.stderr)),
        shown(&env, &(trusted.stdout + &trusted.stderr))
    )
}

/// A ralph loop with a token budget that its second turn crosses.
fn budget_gave_up() -> String {
    let env = TestEnv::new();
    env.cmd(&["ralph", "--max-tokens", "1k", "Fix it"])
        .env("CLAUDE_CODE_SESSION_ID", SESSION)
        .success();
    transcript_usage(&env, "m1", 400, 100, 0);
    env.stop(&env.stop_input("First pass.")).blocked();
    transcript_usage(&env, "m2", 450, 100, 0);
    env.stop(&env.stop_input("Second pass."))
        .allowed()
        .expect("the budget's end is told")
        + "\n"
}

/// The state file of a ralph loop started in a session.
fn state_file() -> String {
    let env = TestEnv::new();
    env.cmd(&["ralph", "--max-iterations", "10", "Fix the parser"])
        .env("CLAUDE_CODE_SESSION_ID", SESSION)
        .success();
    env.read(".claude/pagent-pipeline.json") + "\n"
}

/// A workflow with a wrong value, refused with the field and the reason.
fn workflow_error() -> String {
    let env = TestEnv::new();
    env.write("prd.md", "# PRD\n");
    env.write(
        "flow.json",
        &json!({"stages": [
            {"name": "design", "prompt": "Write design.md.",
             "exit_when": {"file_exists": "design.md", "min_lines": 40}},
            {"name": "build", "prompt": "Build it.",
             "exit_when": {"file_exists": "src/main.rs", "min_lines": -1}}]})
        .to_string(),
    );
    let out = env
        .cmd(&["run", "prd.md", "--workflow", "flow.json"])
        .failure();
    format!(
        "$ pagent run prd.md --workflow flow.json\n{}",
        shown(&env, &out.stderr)
    )
}

/// `pagent loop` with its output piped: plain lines, one per iteration.
fn loop_piped() -> String {
    let env = TestEnv::new();
    env.write(
        "agent.sh",
        "n=$(cat .runs 2>/dev/null || echo 0); n=$((n+1)); echo $n > .runs\n\
         cat >/dev/null\n\
         if [ $n -ge 2 ]; then printf 'All green.\\n<promise>DONE</promise>\\n'; else echo 'Fixed one test.'; fi\n",
    );
    let out = env
        .cmd(&[
            "loop",
            "--command",
            "sh agent.sh",
            "ralph",
            "Make every test pass",
        ])
        .success();
    format!(
        "$ pagent loop --command \"sh agent.sh\" ralph \"Make every test pass\" 2>&1 | cat\n{}{}",
        shown(&env, &out.stderr),
        shown(&env, &out.stdout)
    )
}

/// The end of a `pagent parallel` run: what each task's branch holds, and where.
fn parallel_summary() -> String {
    let p = crate::parallel::Parallel::new("alpha: do alpha\nnever: never done\n");
    let out = p.run(&["-j", "1", "--max-iterations", "2"]);
    let at = out.stdout.find("\ntask ").expect("a summary") + 1;
    shown(&p.env, &out.stdout[at..])
}

/// The merge queue's summary after `pagent parallel --merge`, one task resolved by its
/// agent (the fake agents of the parallel tests: gamma's branch conflicts with alpha's).
fn merge_summary() -> String {
    let p = crate::parallel::Parallel::new("alpha: do alpha\nbeta: do beta\ngamma: do gamma\n");
    let out = p.run(&["-j", "3", "--merge"]);
    let at = out.stdout.find("\nmerge\n").expect("a merge summary") + 1;
    shown(&p.env, &out.stdout[at..])
}

/// `pagent loop --agent claude` meeting a usage limit on its first run (the fake Claude
/// stream of the usage-limit tests, its reset two seconds ahead): the loop's output.
fn limited_claude_loop() -> &'static str {
    static OUT: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    OUT.get_or_init(|| {
        use crate::usage_limits::{CLAUDE_DONE, CLAUDE_LIMIT, limited_agent};
        let env = TestEnv::new();
        let agent = limited_agent(&env, 2, CLAUDE_LIMIT, CLAUDE_DONE);
        let args = ["loop", "--agent", "claude", "--agent-bin", &agent];
        let rest = ["--limit-margin", "1s", "ralph", "Do it"];
        let out = env.cmd(&[&args[..], &rest[..]].concat()).success();
        shown(&env, &out.stdout)
    })
}

/// What `pagent loop --agent claude` says at start about which pool pays.
fn claude_pool() -> String {
    let line = limited_claude_loop()
        .lines()
        .find(|l| l.contains("runs `claude -p`"))
        .expect("the pool line");
    format!("{line}\n")
}

/// The line a usage-limit wait starts with.
fn limit_wait() -> String {
    let line = limited_claude_loop()
        .lines()
        .find(|l| l.starts_with("⏸ usage limit"))
        .expect("the wait line");
    format!("{line}\n")
}

/// Issue 30, §2: a line of each class of failed run, as `pagent loop` prints them: an
/// outage and a crash retried, then a seat stop that ends the loop.
fn failure_classes() -> String {
    use crate::usage_limits::{CLAUDE_DONE, limited_agent};
    let outage = r#"echo '{"type":"result","subtype":"success","is_error":true,"api_error_status":529,"result":"API Error: 529 Overloaded."}'"#;
    let env = TestEnv::new();
    // Run 1 is the outage, run 2 a crash (no output, exit 1 once the runs counter is 2).
    let crash_then_done = format!("if [ $n -eq 2 ]; then exit 1; fi\n{CLAUDE_DONE}");
    let agent = limited_agent(&env, 0, outage, &crash_then_done);
    let args = ["loop", "--agent", "claude", "--agent-bin", &agent];
    let out = env
        .cmd(&[&args[..], &["--retry-delay", "1s", "ralph", "Do it"][..]].concat())
        .success();
    let mut lines: Vec<String> = shown(&env, &out.stdout)
        .lines()
        .filter(|l| l.starts_with("! "))
        .map(str::to_owned)
        .collect();
    let env = TestEnv::new();
    let seat = r#"echo '{"type":"result","subtype":"success","is_error":true,"api_error_status":429,"result":"Your seat type doesn'"'"'t include usage credits"}'"#;
    let agent = limited_agent(&env, 0, seat, CLAUDE_DONE);
    let out = env
        .cmd(
            &[
                &args[..2],
                &["claude", "--agent-bin", &agent, "ralph", "Do it"][..],
            ]
            .concat(),
        )
        .run();
    lines.extend(shown(&env, &out.stdout).lines().last().map(str::to_owned));
    lines.iter().map(|l| format!("{l}\n")).collect()
}
