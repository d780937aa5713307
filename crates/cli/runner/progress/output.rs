//! The three outputs of live progress, one trait: [`Terminal`] (a status line redrawn in
//! place, permanent lines above it), [`Plain`] (the same permanent lines, for a pipe or
//! a log; quiet: only the end and what must not be missed) and [`Json`] (one
//! [`LoopEvent`] per line, for scripts and `pagent parallel`). [`Progress`] keeps what
//! they share (the streams, the label, the clocks) and asks its output to show each
//! moment of the loop.

use std::time::Duration;

use pagent_engine::failure::FailureClass;
use pagent_engine::{Action, State, Timestamp, Usage, format_duration};

use super::Progress;
use crate::cli::terminal::Control;
use crate::runner::loop_event::{Ending, LoopEvent, UsageFigures};

/// A finished iteration, as its line tells it.
pub(super) struct Finished<'a> {
    pub stage: &'a str,
    pub iteration: u32,
    pub outcome: Action,
    pub detail: &'a str,
    pub elapsed: Duration,
    pub usage: &'a Usage,
}

/// A failed run that runs again: `text` says it all, as the engine put it.
pub(super) struct Retry<'a> {
    pub class: FailureClass,
    pub text: &'a str,
    pub delay: Duration,
    pub attempt: u32,
    pub max: u32,
}

/// A usage limit's wait beginning: why, until when, how long, and whether the reset
/// time is the agent's or a guess.
pub(super) struct LimitWait<'a> {
    pub why: &'a str,
    pub until: Timestamp,
    pub wait_secs: u64,
    pub reset_known: bool,
    /// The line a person reads.
    pub text: &'a str,
}

/// One way of showing a loop's progress.
pub(super) trait Output {
    fn started(&self, p: &mut Progress, state: &State, agent: &str, root: &str, resumed: bool);
    /// An iteration starts (its label is already set).
    fn iteration_started(&self, p: &mut Progress, state: &State, attempt: u32);
    /// The agent uses a tool.
    fn tool(&self, p: &mut Progress, name: &str, summary: Option<&str>);
    /// The agent's stream warned.
    fn warning(&self, _p: &mut Progress, _text: &str) {}
    /// About ten times a second.
    fn tick(&self, _p: &mut Progress) {}
    fn iteration_finished(&self, p: &mut Progress, it: &Finished);
    fn retrying(&self, p: &mut Progress, retry: &Retry);
    fn note(&self, p: &mut Progress, text: &str);
    /// The loop ended in an error, which follows on stderr.
    fn failed(&self, p: &mut Progress, reason: &str, failure: Option<FailureClass>);
    fn finished(
        &self,
        p: &mut Progress,
        state: &State,
        outcome: Ending,
        reason: &str,
        failure: Option<FailureClass>,
    );
    fn limit_wait(&self, p: &mut Progress, wait: &LimitWait);
    /// The wait's countdown, `text` (call often).
    fn limit_countdown(&self, _p: &mut Progress, _text: &str) {}
    /// The wait is over: `waited_secs` since the limit was hit, `here` of it in this run.
    fn limit_resumed(&self, p: &mut Progress, waited_secs: u64, here: u64);
}

/// A terminal: [`Plain`]'s lines, and a status line redrawn in place below them.
pub(super) struct Terminal;

/// Plain lines for a pipe or a log; `quiet`: only the end, and retries and waits on
/// stderr.
pub(super) struct Plain {
    pub quiet: bool,
}

/// One JSON object per line.
pub(super) struct Json;

const LINES: Plain = Plain { quiet: false };

impl Output for Terminal {
    fn started(&self, p: &mut Progress, state: &State, agent: &str, root: &str, resumed: bool) {
        LINES.started(p, state, agent, root, resumed);
    }

    fn iteration_started(&self, p: &mut Progress, _state: &State, _attempt: u32) {
        p.draw();
    }

    fn tool(&self, p: &mut Progress, name: &str, summary: Option<&str>) {
        p.tool = Some(match summary {
            Some(summary) => format!("{name} {summary}"),
            None => name.to_owned(),
        });
        p.draw();
    }

    fn tick(&self, p: &mut Progress) {
        p.draw();
    }

    fn iteration_finished(&self, p: &mut Progress, it: &Finished) {
        LINES.iteration_finished(p, it);
    }

    fn retrying(&self, p: &mut Progress, retry: &Retry) {
        LINES.retrying(p, retry);
    }

    fn note(&self, p: &mut Progress, text: &str) {
        LINES.note(p, text);
    }

    fn failed(&self, p: &mut Progress, reason: &str, failure: Option<FailureClass>) {
        LINES.failed(p, reason, failure);
    }

    fn finished(
        &self,
        p: &mut Progress,
        state: &State,
        outcome: Ending,
        reason: &str,
        failure: Option<FailureClass>,
    ) {
        LINES.finished(p, state, outcome, reason, failure);
    }

    fn limit_wait(&self, p: &mut Progress, wait: &LimitWait) {
        LINES.limit_wait(p, wait);
    }

    fn limit_countdown(&self, p: &mut Progress, text: &str) {
        let _ = write!(p.out, "{}{}", Control::ClearLine, p.style.dim(text));
        let _ = p.out.flush();
        p.drawn = true;
    }

    fn limit_resumed(&self, p: &mut Progress, waited_secs: u64, here: u64) {
        LINES.limit_resumed(p, waited_secs, here);
    }
}

impl Output for Plain {
    fn started(&self, p: &mut Progress, state: &State, agent: &str, root: &str, resumed: bool) {
        if self.quiet {
            return;
        }
        let what = if resumed { "resuming" } else { "starting" };
        let stages = state.stages[..state.max_stages]
            .iter()
            .map(|s| s.name.as_str())
            .collect::<Vec<_>>()
            .join(" → ");
        let what_loop = match state.kind {
            pagent_engine::Kind::Ralph => "a Ralph loop".to_owned(),
            pagent_engine::Kind::Pipeline if state.stages.len() == 1 => {
                format!("the {} loop", state.workflow)
            }
            pagent_engine::Kind::Pipeline => {
                format!("the {} pipeline ({stages})", state.workflow)
            }
        };
        let text = format!("pagent loop: {what} {what_loop} with {agent} in {root}");
        p.line(&p.style.bold(&text));
    }

    fn iteration_started(&self, p: &mut Progress, _state: &State, _attempt: u32) {
        if !self.quiet {
            p.line(&format!("▶ {}", p.label));
        }
    }

    fn tool(&self, _p: &mut Progress, _name: &str, _summary: Option<&str>) {}

    fn iteration_finished(&self, p: &mut Progress, it: &Finished) {
        if self.quiet {
            return;
        }
        let (mark, word) = match it.outcome {
            Action::Advance => (p.style.green("✓"), "stage done"),
            Action::Complete => (p.style.green("✓"), "complete"),
            Action::GaveUp => (p.style.red("✗"), "gave up"),
            _ => (p.style.yellow("↻"), "not done"),
        };
        let text = format!(
            "{mark} {} · iteration {} · {} · {word}: {}",
            it.stage,
            it.iteration,
            format_duration(it.elapsed.as_secs()),
            it.detail
        );
        p.line(&text);
    }

    fn retrying(&self, p: &mut Progress, retry: &Retry) {
        if self.quiet {
            let _ = writeln!(p.err, "pagent loop: {}", retry.text);
        } else {
            let text = format!("{} {}", p.style.yellow("!"), retry.text);
            p.line(&text);
        }
    }

    fn note(&self, p: &mut Progress, text: &str) {
        if !self.quiet {
            p.line(text);
        }
    }

    fn failed(&self, p: &mut Progress, _reason: &str, _failure: Option<FailureClass>) {
        p.clear();
    }

    fn finished(
        &self,
        p: &mut Progress,
        state: &State,
        outcome: Ending,
        reason: &str,
        _failure: Option<FailureClass>,
    ) {
        let total = state.total_iterations();
        let elapsed = p.started.elapsed().as_secs();
        // This run's own waits (a wait resumed after Ctrl-C began before it).
        let waited = match p.waited_here.as_secs().min(elapsed) {
            0 => String::new(),
            secs => format!(", {} of it waiting for usage limits", format_duration(secs)),
        };
        let text = format!(
            "pagent loop: {} after {total} iteration{} in {}{waited} ({}): {reason}",
            outcome.as_str(),
            if total == 1 { "" } else { "s" },
            format_duration(elapsed),
            state.usage.summary()
        );
        let text = match outcome {
            Ending::Complete => p.style.green(&text),
            Ending::Interrupted => p.style.yellow(&text),
            _ => p.style.red(&text),
        };
        p.line(&text);
    }

    fn limit_wait(&self, p: &mut Progress, wait: &LimitWait) {
        if self.quiet {
            let _ = writeln!(p.err, "pagent loop: {}", wait.text);
        } else {
            let line = format!("{} {}", p.style.yellow("⏸"), wait.text);
            p.line(&line);
        }
    }

    fn limit_resumed(&self, p: &mut Progress, waited_secs: u64, here: u64) {
        if self.quiet {
            return;
        }
        // A wait resumed after Ctrl-C: all of it, and this run's part.
        let waited = if here + 1 < waited_secs {
            format!(
                "{} since the limit was hit, {} of it in this run",
                format_duration(waited_secs),
                format_duration(here)
            )
        } else {
            format_duration(waited_secs)
        };
        let text = format!(
            "{} usage limit waited out ({waited}): {} runs again",
            p.style.green("▶"),
            p.label
        );
        p.line(&text);
    }
}

impl Output for Json {
    fn started(&self, p: &mut Progress, state: &State, agent: &str, root: &str, resumed: bool) {
        p.emit(LoopEvent::Started {
            resumed,
            workflow: state.workflow.clone(),
            kind: state.kind,
            agent: agent.to_owned(),
            root: root.to_owned(),
        });
    }

    fn iteration_started(&self, p: &mut Progress, state: &State, attempt: u32) {
        p.emit(LoopEvent::IterationStarted {
            stage: state.current().name.clone(),
            iteration: state.iterations[state.stage],
            max_iterations: state.stage_limit(state.stage),
            attempt,
        });
    }

    fn tool(&self, p: &mut Progress, name: &str, summary: Option<&str>) {
        p.emit(LoopEvent::Tool {
            name: name.to_owned(),
            summary: summary.map(str::to_owned),
        });
    }

    fn warning(&self, p: &mut Progress, text: &str) {
        p.emit(LoopEvent::Warning {
            text: text.to_owned(),
        });
    }

    fn iteration_finished(&self, p: &mut Progress, it: &Finished) {
        p.emit(LoopEvent::IterationFinished {
            stage: it.stage.to_owned(),
            iteration: it.iteration,
            outcome: it.outcome,
            detail: it.detail.to_owned(),
            elapsed_secs: it.elapsed.as_secs(),
            usage: Some(UsageFigures::of(it.usage)),
        });
    }

    fn retrying(&self, p: &mut Progress, retry: &Retry) {
        p.emit(LoopEvent::Retry {
            reason: retry.text.to_owned(),
            attempt: retry.attempt,
            max: retry.max,
            delay_secs: retry.delay.as_secs(),
            failure: Some(retry.class),
        });
    }

    fn note(&self, p: &mut Progress, text: &str) {
        p.emit(LoopEvent::Note {
            text: text.to_owned(),
        });
    }

    fn failed(&self, p: &mut Progress, reason: &str, failure: Option<FailureClass>) {
        let elapsed = p.started.elapsed().as_secs();
        p.emit(LoopEvent::Finished {
            outcome: Ending::Error,
            status: None,
            iterations: None,
            reason: reason.to_owned(),
            elapsed_secs: elapsed,
            usage: None,
            failure,
        });
    }

    fn finished(
        &self,
        p: &mut Progress,
        state: &State,
        outcome: Ending,
        reason: &str,
        failure: Option<FailureClass>,
    ) {
        let elapsed = p.started.elapsed().as_secs();
        p.emit(LoopEvent::Finished {
            outcome,
            status: Some(state.status),
            iterations: Some(state.total_iterations()),
            reason: reason.to_owned(),
            elapsed_secs: elapsed,
            usage: Some(UsageFigures::of(&state.usage)),
            failure,
        });
    }

    fn limit_wait(&self, p: &mut Progress, wait: &LimitWait) {
        p.emit(LoopEvent::LimitWait {
            reason: wait.why.to_owned(),
            until: wait.until,
            wait_secs: wait.wait_secs,
            reset_known: wait.reset_known,
        });
    }

    fn limit_resumed(&self, p: &mut Progress, waited_secs: u64, _here: u64) {
        p.emit(LoopEvent::LimitResumed { waited_secs });
    }
}
