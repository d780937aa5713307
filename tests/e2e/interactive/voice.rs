//! pagent's own voice on screen (items 1, 2, 3, 7), in an 80x24 terminal: the start line,
//! set-up errors, `--help`, misspelt and refused flags, status and cancel, all shown by
//! pagent's UserPromptExpansion hook while the model is told nothing.

use super::*;
use crate::tmux::count;

/// Both names start a loop and the user sees the start line with its limits, from pagent,
/// though the model copies nothing; a set-up error is pagent's sentence on screen, with no
/// model turn and none of Claude Code's "Shell command failed".
#[test]
#[ignore = "needs the Claude Code CLI and tmux"]
fn item_1_the_start_line_and_errors_are_on_screen_with_a_model_that_copies_nothing() {
    let e2e = E2e::start(vec![
        Reply::text("Working on it."),
        done(),
        Reply::text("Tidied.\n<promise>DONE</promise>"),
        pong(),
    ]);
    let ui = Tmux::start_sized(&e2e, 80, 24);
    ui.type_line("/ralph Fix the parser --max-iterations 4");
    ui.wait_for(
        "UserPromptExpansion says: pagent: started a Ralph loop: up to 4 iterations, giving up \
         after 3 turns in a row that change no file. To stop it: Esc, then \
         /pagent:cancel.",
    );
    ui.wait_for("Stop says: pagent: ralph complete");
    ui.type_line("/pagent:ralph Tidy the docs --no-progress-limit 0");
    ui.wait_for(
        "UserPromptExpansion says: pagent: started a Ralph loop: up to 25 iterations. To stop \
         it: Esc, then /pagent:cancel.",
    );
    ui.wait_until("two loops complete", |s| {
        count(s, "Stop says: pagent: ralph complete") == 2
    });
    assert_eq!(e2e.mock.requests().len(), 3);
    never_told_the_start_line(&e2e);

    ui.type_line("/pagent-run missing.md");
    let screen = ui.wait_for(
        "UserPromptExpansion operation blocked by hook: pagent: error: the PRD missing.md does \
         not exist",
    );
    ui.wait_for("Nothing was started.");
    assert!(!screen.contains("Shell command failed"), "{screen}");
    assert!(!screen.contains("PAGENT_ARGS_7f3c9d"), "{screen}");
    ping(&ui, &e2e, 3);
}

/// `/ralph --help` prints the command's help and starts nothing; `/pagent-run --help` is
/// help too, not an error headed by a comment from the source.
#[test]
#[ignore = "needs the Claude Code CLI and tmux"]
fn item_2_ralph_help_starts_nothing() {
    let e2e = E2e::start(vec![pong()]);
    let ui = Tmux::start_sized(&e2e, 80, 24);
    ui.type_line("/ralph --help");
    let screen = ui.wait_for("Usage: /ralph TASK [OPTIONS]");
    assert!(flat(&screen).contains("Start a Ralph loop:"), "{screen}");
    assert!(
        flat(&screen).contains("--max-iterations N end it after N iterations (default 25)"),
        "{screen}"
    );
    assert!(!screen.contains("--stdin-args"), "{screen}");
    ui.type_line("/pagent-run --help");
    let screen = ui.wait_for("Usage: /pagent-run PRD_FILE [OPTIONS] | --stories FILE [OPTIONS]");
    assert!(!screen.contains("pagent: error"), "{screen}");
    assert!(!screen.contains("A review exit condition"), "{screen}");
    ui.type_line("/pagent-status --help");
    ui.wait_for("Usage: /pagent-status");
    assert!(!e2e.path(".claude/pagent-pipeline.json").exists());
    ping(&ui, &e2e, 0);
}

/// A misspelt flag is an error with "did you mean", a refused value says why, each with
/// `error` once and no advice about a `--help` the user cannot add; nothing starts.
#[test]
#[ignore = "needs the Claude Code CLI and tmux"]
fn item_3_a_misspelt_or_refused_flag_is_an_error_on_screen() {
    let e2e = E2e::start(vec![pong()]);
    let ui = Tmux::start_sized(&e2e, 80, 24);
    for (typed, said) in [
        (
            "/ralph Fix the parser --max-iteration 2",
            "pagent: error: unknown option --max-iteration (did you mean --max-iterations?)",
        ),
        (
            "/ralph Fix the parser --max-cost 1e3",
            "pagent: error: invalid value '1e3' for --max-cost: \"1e3\" is not an amount of US \
             dollars like 5, 0.50 or $12",
        ),
        (
            "/ralph Fix the parser --max-iterations 0",
            "pagent: error: invalid value '0' for --max-iterations: 0 is not in 1..=1000",
        ),
    ] {
        ui.type_line(typed);
        ui.wait_for(said);
    }
    let screen = ui.screen();
    assert_eq!(count(&screen, "Nothing was started."), 3, "{screen}");
    assert!(!screen.contains("error: error"), "{screen}");
    assert!(!screen.contains("For more information"), "{screen}");
    assert!(!e2e.path(".claude/pagent-pipeline.json").exists());
    ping(&ui, &e2e, 0);
}

/// A second `/ralph` in the session of an active loop is refused without `--force`, as
/// from a shell; with it, the replacement is announced on screen and logged.
#[test]
#[ignore = "needs the Claude Code CLI and tmux"]
fn item_7_replacing_a_loop_needs_force_and_is_announced() {
    let e2e = E2e::start(vec![Reply::bash("sleep 20"), done()]);
    let ui = Tmux::start_sized(&e2e, 80, 24);
    ui.type_line("/ralph Refactor the parser");
    super::pause::interrupt_the_tool(&ui, &e2e);
    ui.type_line("/ralph Write the docs");
    ui.wait_for("pagent: error: a ralph loop is already active in this project (this session's");
    ui.wait_for("or add --force to replace it");
    assert_eq!(e2e.state()["stages"][0]["prompt"], "Refactor the parser");
    ui.type_line("/ralph Write the docs --force");
    ui.wait_for("UserPromptExpansion says: pagent: replaced the active ralph loop (iteration 1 of 25, started");
    ui.wait_for("Stop says: pagent: ralph complete");
    assert_eq!(e2e.state()["stages"][0]["prompt"], "Write the docs");
    let log = std::fs::read_to_string(e2e.path(".claude/pagent/events.jsonl")).unwrap();
    assert!(log.contains("replaced by a new loop (--force)"), "{log}");
}

fn flat(text: &str) -> String {
    crate::tmux::flat(text)
}
