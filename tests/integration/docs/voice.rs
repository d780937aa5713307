//! The examples of `docs/commands.md`: what pagent's own hooks answer in Claude Code
//! (issue 20, item 1), made by the hooks themselves in a temp project. The pages show
//! pagent's text only; the words Claude Code puts around it ("UserPromptExpansion says:",
//! "Stop says:") are said in prose, since pagent does not print them.

use serde_json::json;

use super::examples::shown;
use crate::own_voice::{answer, expand_with};
use crate::util::*;

/// `/ralph Fix the parser --max-iterations 10`: the line the UserPromptExpansion hook
/// shows under the command.
pub fn slash_start() -> String {
    let env = TestEnv::new();
    let run = expand_with(&env, "ralph", "Fix the parser --max-iterations 10", None);
    let line = answer(&run).unwrap().expect("a start line");
    format!("{}\n", shown(&env, &line))
}

/// `/pagent-run missing.md`: an error, shown by a block; nothing starts.
pub fn slash_error() -> String {
    let env = TestEnv::new();
    let text = answer(&expand_with(&env, "pagent-run", "missing.md", None)).unwrap_err();
    format!("{}\n", shown(&env, &text))
}

/// A second `/ralph` in the session whose loop is at work, without `--force`.
pub fn slash_refused() -> String {
    let env = TestEnv::new();
    answer(&expand_with(&env, "ralph", "Fix the parser", None)).unwrap();
    env.stop(&env.stop_input("A first pass.")).blocked();
    let text = answer(&expand_with(&env, "ralph", "Tidy the docs", None)).unwrap_err();
    format!("{}\n", shown(&env, &text))
}

/// `/pagent-status` typed while Claude worked: the Stop hook's line at the next stop.
pub fn queued_status() -> String {
    let env = TestEnv::new();
    answer(&expand_with(&env, "ralph", "Fix the parser", None)).unwrap();
    let transcript = format!(
        "{}\n",
        json!({"type": "queue-operation", "operation": "enqueue",
            "timestamp": "2100-01-01T00:00:00.000Z", "content": "/pagent-status"})
    );
    std::fs::write(env.home.join("transcript.jsonl"), transcript).unwrap();
    let run = env.stop(&env.stop_input("A first pass."));
    run.blocked();
    let message = run.decision().unwrap()["systemMessage"]
        .as_str()
        .unwrap()
        .to_owned();
    format!("{}\n", shown(&env, &message))
}

/// Claude Code's cap on continuations: what the session reads at the stop it would have
/// overridden (the 9th in a row of a model that calls no tool).
pub fn cap_paused() -> String {
    let env = TestEnv::new();
    let task = "Fix the parser --no-progress-limit 0";
    answer(&expand_with(&env, "ralph", task, None)).unwrap();
    let path = env.home.join("transcript.jsonl");
    let mut lines = String::new();
    for stop in 0..9 {
        lines.push_str(&transcript_line_text(&format!("m{stop}"), "Thinking."));
        lines.push('\n');
        std::fs::write(&path, &lines).unwrap();
        let mut input = env.stop_input("Thinking.");
        input["stop_hook_active"] = json!(stop > 0);
        let run = env.stop(&input);
        if stop < 8 {
            run.blocked();
        } else {
            let message = run.allowed().expect("the pause is said");
            return format!("Stop says: {}\n", shown(&env, &message));
        }
    }
    unreachable!()
}

/// `pagent cancel` in a terminal: what the loop's session reads at its next stop.
pub fn cancelled_elsewhere() -> String {
    let env = TestEnv::new();
    answer(&expand_with(&env, "ralph", "Fix the parser", None)).unwrap();
    for message in ["A first pass.", "A second pass."] {
        env.stop(&env.stop_input(message)).blocked();
    }
    env.cmd(&["cancel"]).success();
    let message = env
        .stop(&env.stop_input("A third pass."))
        .allowed()
        .expect("the session is told");
    format!("{}\n", shown(&env, &message))
}
