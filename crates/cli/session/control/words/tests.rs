//! Every answer of the levers, for every driver and asker, in one reviewed snapshot.

use std::path::PathBuf;

use pagent_engine::{Driver, Pause, SetupOptions, State, Status, Timestamp};

use super::super::{Cancelled, Paused, Resumed};
use super::*;

fn ralph() -> State {
    let mut state = State::new_ralph(
        "Fix it".into(),
        "DONE".into(),
        SetupOptions {
            session_id: Some("35f6".into()),
            ..SetupOptions::default()
        },
        None,
        Timestamp(0),
    );
    state.iterations = vec![3];
    state
}

fn runner() -> State {
    let mut state = ralph();
    state.driver = Driver::Loop;
    state.session_id = None;
    state
}

/// A loop ended reads as a sentence whatever the state file holds: with its end time or
/// without one (a state written before pagent kept it), never "is gave_up".
#[test]
fn cancel_after_a_loop_ended_says_how_it_ended() {
    let mut state = ralph();
    state.status = Status::GaveUp;
    let said =
        |state: &State| Cancelled::NotActive(Box::new(state.clone())).message(Path::new("/p"));
    assert_eq!(
        said(&state),
        "pagent: no active loop to cancel (the last one, ralph, gave up)."
    );
    state.status = Status::Cancelled;
    assert_eq!(
        said(&state),
        "pagent: no active loop to cancel (the last one, ralph, was cancelled)."
    );
}

/// Issue 30, §4: a `pagent loop` or `parallel` loop is answered without session words
/// (no "Esc, then /pagent:cancel", no "Claude can stop now"), a session's loop asked from
/// a terminal is not told it goes on by itself, and a loop whose session was quit says
/// how to go on.
#[test]
fn item_a_every_answer_fits_the_loops_driver_and_who_asked() {
    let root = Path::new("/home/user/project");
    let mut said = Vec::new();
    let mut say = |label: &str, text: String| said.push(format!("{label}:\n  {text}"));
    cancel_answers(root, &mut say);
    pause_answers(root, &mut say);
    resume_answers(root, &mut say);
    let text = said.join("\n");
    for session_words in ["Esc", "Claude can stop", "/pagent:cancel"] {
        for line in text
            .lines()
            .filter(|l| l.contains("pagent loop") || l.contains("parallel"))
        {
            assert!(!line.contains(session_words), "{line}");
        }
    }
    insta::assert_snapshot!(text);
}

/// What `/pagent:cancel` answers, for each driver and who asked.
fn cancel_answers(root: &Path, say: &mut dyn FnMut(&str, String)) {
    for (label, state, driven, running) in [
        ("cancel, session", ralph(), Driven::Session, None),
        (
            "cancel, pagent loop running",
            runner(),
            Driven::Loop,
            Some(true),
        ),
        (
            "cancel, pagent loop interrupted",
            runner(),
            Driven::Loop,
            Some(false),
        ),
        (
            "cancel, parallel running",
            runner(),
            Driven::Parallel,
            Some(true),
        ),
        (
            "cancel, parallel interrupted",
            runner(),
            Driven::Parallel,
            Some(false),
        ),
    ] {
        let done = Cancelled::Done {
            was: Box::new(state),
            driven,
            running,
            owner_quit: None,
        };
        say(label, done.message(root));
    }
    let taken = Cancelled::Done {
        was: Box::new(ralph()),
        driven: Driven::Session,
        running: None,
        owner_quit: Some("35f6".into()),
    };
    say(
        "cancel from a second session, the first quit",
        taken.message(root),
    );
    let other = Cancelled::OtherSession {
        owner: "35f6".into(),
        was: Box::new(ralph()),
    };
    say("cancel from a second session", other.message(root));
}

/// What `/pagent:pause` answers, the first time and again.
fn pause_answers(root: &Path, say: &mut dyn FnMut(&str, String)) {
    let mut paused = ralph();
    paused.paused = Some(Pause::new(Timestamp(1), "you paused it"));
    let mut paused_runner = runner();
    paused_runner.paused = paused.paused.clone();
    for (label, state, driven) in [
        ("pause, session", &paused, Driven::Session),
        ("pause, pagent loop", &paused_runner, Driven::Loop),
        ("pause, parallel", &paused_runner, Driven::Parallel),
    ] {
        let done = Paused::Done {
            state: Box::new(state.clone()),
            driven,
        };
        say(label, done.message(root));
        let again = Paused::Already {
            state: Box::new(state.clone()),
            driven,
        };
        say(&format!("{label}, again"), again.message(root));
    }
}

/// What `/pagent:resume` answers, in the session, from a terminal, and once it was quit.
fn resume_answers(root: &Path, say: &mut dyn FnMut(&str, String)) {
    let resumed = |state: &State, was_paused, driven, in_session, took_over, running| {
        Resumed::Done {
            state: Box::new(state.clone()),
            was_paused,
            driven,
            in_session,
            took_over,
            running,
            root: PathBuf::from(root),
        }
        .message()
    };
    let s = Driven::Session;
    say(
        "resume, session, in it",
        resumed(&ralph(), true, s, true, false, None),
    );
    say(
        "resume, session, not paused",
        resumed(&ralph(), false, s, true, false, None),
    );
    say(
        "resume, session, from a terminal",
        resumed(&ralph(), true, s, false, false, None),
    );
    say(
        "resume, session, not paused, terminal",
        resumed(&ralph(), false, s, false, false, None),
    );
    say(
        "resume, a quit session's loop taken over",
        resumed(&ralph(), true, s, true, true, None),
    );
    for (label, driven, running) in [
        ("resume, pagent loop running", Driven::Loop, Some(true)),
        ("resume, pagent loop interrupted", Driven::Loop, Some(false)),
        ("resume, parallel running", Driven::Parallel, Some(true)),
    ] {
        say(
            label,
            resumed(&runner(), true, driven, false, false, running),
        );
        say(
            &format!("{label}, not paused"),
            resumed(&runner(), false, driven, false, false, running),
        );
    }
    let mut gone = ralph();
    gone.paused = Some(Pause {
        session_gone: true,
        ..Pause::new(Timestamp(1), "its Claude Code session was quit")
    });
    let refused = Resumed::SessionGone {
        state: Box::new(gone),
        root: PathBuf::from(root),
    };
    say(
        "resume from a terminal, the session was quit",
        refused.message(),
    );
}
