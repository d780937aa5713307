//! Every text of the hooks' own, whole, in reviewed snapshots.

use std::path::Path;

use super::*;

#[test]
fn hook_failures() {
    let lines: Vec<String> = HookEvent::ALL
        .iter()
        .map(|event| format!("{}: {}", event.name(), failed(*event)))
        .collect();
    insta::assert_snapshot!(lines.join("\n"));
}

#[test]
fn stop_stale_state() {
    insta::assert_snapshot!(stale_state());
}

#[test]
fn stop_cancelled_while_working() {
    insta::assert_snapshot!(cancelled_while_working(
        "pagent: cancelled the ralph loop (Fix it) after 3 iterations.",
        "/pagent-cancel"
    ));
}

#[test]
fn cannot_remember_a_notice() {
    let err = anyhow::anyhow!("permission denied").context("cannot open the notices file");
    insta::assert_snapshot!(cannot_remember_notice(&err));
}

#[test]
fn post_tool_use_default_checks() {
    let err = anyhow::anyhow!("expected `,` or `}}` at line 3 column 5")
        .context("/home/me/.config/pagent/config.json is not valid JSON");
    insta::assert_snapshot!(default_checks(&err));
}

#[test]
fn post_tool_use_untrusted_check() {
    insta::assert_snapshot!(untrusted_check(
        "src/main.rs",
        Path::new("/home/me/my project/node_modules/.bin/eslint")
    ));
}

#[test]
fn session_end_log_lines() {
    insta::assert_snapshot!(format!(
        "{}\n{}",
        session_ended(Some("prompt_input_exit")),
        session_ended(None)
    ));
}

#[test]
fn user_prompt_log_line() {
    insta::assert_snapshot!(paused_by_prompt());
}
