//! What `pagent loop` shows while it runs.
//!
//! On a terminal: one status line redrawn in place (stage, iteration, elapsed time, the
//! tool the agent is using now; drawn by [`status_line::render`] to the terminal's width,
//! asked at every redraw) and one permanent line per finished iteration. Piped:
//! the same permanent lines, plain. `--json`: one JSON object per line for scripts and
//! for `pagent parallel`, which reads them to draw its table. `--quiet`: only the end.
//! A usage-limit wait's lines and countdown are in `progress/limit.rs`.

mod limit;

use std::io::Write;
use std::time::{Duration, Instant};

use pagent_engine::failure::FailureClass;
use pagent_engine::{Action, State, Usage, format_duration};
use pagent_protocol::stream::StreamEvent;

use crate::cli::screen::Size;
use crate::cli::terminal::Control;
use crate::cli::ui::Style;
use crate::runner::loop_event::{Ending, LoopEvent, UsageFigures};
use crate::runner::status_line;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    Terminal,
    Plain,
    Quiet,
    Json,
}

impl Mode {
    pub fn choose(quiet: bool, json: bool, stdout_is_terminal: bool) -> Mode {
        match (json, quiet) {
            (true, _) => Mode::Json,
            (false, true) => Mode::Quiet,
            _ if stdout_is_terminal => Mode::Terminal,
            _ => Mode::Plain,
        }
    }
}

const SPINNER: &[&str] = &["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];

/// Writes to `out` and `err` are best effort: a closed pipe must not stop the loop, whose
/// state and event log say everything these lines do.
pub struct Progress<'a> {
    out: &'a mut dyn Write,
    err: &'a mut dyn Write,
    mode: Mode,
    style: Style,
    started: Instant,
    iteration_started: Instant,
    label: String,
    tool: Option<String>,
    frame: usize,
    drawn: bool,
    /// When this process began waiting for the usage limit under way, and how long it
    /// waited for usage limits in all: a wait resumed after Ctrl-C began before it.
    limit_began: Option<Instant>,
    waited_here: Duration,
    /// The terminal's size when it does not answer (`COLUMNS`, `LINES`), and how it is
    /// asked (a test fixes it).
    fallback: Size,
    ask: fn(Size) -> Size,
}

impl<'a> Progress<'a> {
    pub fn new(
        mode: Mode,
        style: Style,
        out: &'a mut dyn Write,
        err: &'a mut dyn Write,
    ) -> Progress<'a> {
        Progress {
            out,
            err,
            mode,
            style,
            started: Instant::now(),
            iteration_started: Instant::now(),
            label: String::new(),
            tool: None,
            frame: 0,
            drawn: false,
            limit_began: None,
            waited_here: Duration::ZERO,
            fallback: Size::FALLBACK,
            ask: Size::ask,
        }
    }

    /// The size to assume when the terminal does not say (from `COLUMNS` and `LINES`).
    pub fn with_fallback_size(mut self, size: Size) -> Self {
        self.fallback = size;
        self
    }

    fn emit(&mut self, event: LoopEvent) {
        let _ = writeln!(
            self.out,
            "{}",
            serde_json::to_string(&event).unwrap_or_default()
        );
        let _ = self.out.flush();
    }

    /// A permanent line (clearing the status line first on a terminal).
    fn line(&mut self, text: &str) {
        self.clear();
        let _ = writeln!(self.out, "{text}");
    }

    fn clear(&mut self) {
        if self.drawn {
            let _ = write!(self.out, "{}", Control::ClearLine);
            self.drawn = false;
        }
    }

    /// A warning on stderr (clearing the status line first on a terminal).
    pub fn warn(&mut self, message: &str) {
        self.clear();
        let _ = self.out.flush();
        crate::cli::ui::warn(self.err, message);
    }

    /// Where warnings of the runner's callees go.
    pub fn stderr(&mut self) -> &mut dyn Write {
        self.err
    }

    pub fn started(&mut self, state: &State, agent: &str, root: &str, resumed: bool) {
        let what = if resumed { "resuming" } else { "starting" };
        match self.mode {
            Mode::Json => self.emit(LoopEvent::Started {
                resumed,
                workflow: state.workflow.clone(),
                kind: state.kind,
                agent: agent.to_owned(),
                root: root.to_owned(),
            }),
            Mode::Quiet => {}
            _ => {
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
                self.line(&self.style.bold(&text));
            }
        }
    }

    /// The label of `state`'s iteration (`ralph · iteration 3/25`), shown by the status
    /// line and a usage-limit wait's lines, without announcing a run: for a wait that
    /// goes on after Ctrl-C, before any run of this process.
    pub fn label_for(&mut self, state: &State) {
        let iteration = state.iterations[state.stage];
        let limit = state.stage_limit(state.stage);
        self.label = format!("{} · iteration {iteration}/{limit}", state.current().name);
        if state.stages.len() > 1 {
            self.label = format!(
                "stage {}/{} {}",
                state.stage + 1,
                state.max_stages,
                self.label
            );
        }
    }

    pub fn iteration_started(&mut self, state: &State, attempt: u32) {
        self.iteration_started = Instant::now();
        self.tool = None;
        let iteration = state.iterations[state.stage];
        let limit = state.stage_limit(state.stage);
        self.label_for(state);
        if attempt > 0 {
            self.label.push_str(&format!(" (retry {attempt})"));
        }
        match self.mode {
            Mode::Json => self.emit(LoopEvent::IterationStarted {
                stage: state.current().name.clone(),
                iteration,
                max_iterations: limit,
                attempt,
            }),
            Mode::Plain => self.line(&format!("▶ {}", self.label)),
            Mode::Terminal => self.draw(),
            Mode::Quiet => {}
        }
    }

    pub fn agent_event(&mut self, event: &StreamEvent) {
        if let (StreamEvent::Warning(text), Mode::Json) = (event, self.mode) {
            self.emit(LoopEvent::Warning { text: text.clone() });
        }
        let StreamEvent::Tool { name, summary, .. } = event else {
            return;
        };
        let text = match summary {
            Some(summary) => format!("{name} {summary}"),
            None => name.clone(),
        };
        match self.mode {
            Mode::Json => self.emit(LoopEvent::Tool {
                name: name.clone(),
                summary: summary.clone(),
            }),
            Mode::Terminal => {
                self.tool = Some(text);
                self.draw();
            }
            _ => {}
        }
    }

    /// Redraws the status line (call often; it limits itself).
    pub fn tick(&mut self) {
        if self.mode == Mode::Terminal {
            self.draw();
        }
    }

    fn draw(&mut self) {
        self.frame = (self.frame + 1) % SPINNER.len();
        let elapsed = format_duration(self.iteration_started.elapsed().as_secs());
        let head = format!("{} {}", SPINNER[self.frame], self.label);
        let tool = self.tool.as_deref().unwrap_or("");
        let cols = (self.ask)(self.fallback).cols;
        let text = status_line::render(&[&head, &elapsed, tool], cols);
        let _ = write!(self.out, "{}{}", Control::ClearLine, self.style.dim(&text));
        let _ = self.out.flush();
        self.drawn = true;
    }

    /// One line per finished iteration: `outcome` is block, advance, complete or gave_up.
    pub fn iteration_finished(
        &mut self,
        stage: &str,
        iteration: u32,
        outcome: Action,
        detail: &str,
        elapsed: Duration,
        usage: &Usage,
    ) {
        let secs = elapsed.as_secs();
        match self.mode {
            Mode::Json => self.emit(LoopEvent::IterationFinished {
                stage: stage.to_owned(),
                iteration,
                outcome,
                detail: detail.to_owned(),
                elapsed_secs: secs,
                usage: Some(UsageFigures::of(usage)),
            }),
            Mode::Quiet => {}
            _ => {
                let (mark, word) = match outcome {
                    Action::Advance => (self.style.green("✓"), "stage done"),
                    Action::Complete => (self.style.green("✓"), "complete"),
                    Action::GaveUp => (self.style.red("✗"), "gave up"),
                    _ => (self.style.yellow("↻"), "not done"),
                };
                let text = format!(
                    "{mark} {stage} · iteration {iteration} · {} · {word}: {detail}",
                    format_duration(secs)
                );
                self.line(&text);
            }
        }
    }

    /// A failed run of `class`, run again after `delay`: `text` says it all (the class,
    /// the agent's words, which retry, when), as the engine put it.
    pub fn retrying(
        &mut self,
        class: FailureClass,
        text: &str,
        delay: Duration,
        attempt: u32,
        max: u32,
    ) {
        match self.mode {
            Mode::Json => self.emit(LoopEvent::Retry {
                reason: text.to_owned(),
                attempt,
                max,
                delay_secs: delay.as_secs(),
                failure: Some(class),
            }),
            Mode::Quiet => {
                let _ = writeln!(self.err, "pagent loop: {text}");
            }
            _ => {
                let text = format!("{} {text}", self.style.yellow("!"));
                self.line(&text);
            }
        }
    }

    pub fn note(&mut self, text: &str) {
        match self.mode {
            Mode::Json => self.emit(LoopEvent::Note {
                text: text.to_owned(),
            }),
            Mode::Quiet => {}
            _ => self.line(text),
        }
    }

    /// The last word of a loop that ended in an error (`failure`: the class of the agent's
    /// failed runs, when they stopped it). In JSON only: the other modes print nothing
    /// more, the error itself follows on stderr.
    pub fn failed(&mut self, reason: &str, failure: Option<FailureClass>) {
        if self.mode == Mode::Json {
            let elapsed = self.started.elapsed().as_secs();
            self.emit(LoopEvent::Finished {
                outcome: Ending::Error,
                status: None,
                iterations: None,
                reason: reason.to_owned(),
                elapsed_secs: elapsed,
                usage: None,
                failure,
            });
        } else {
            self.clear();
        }
    }

    /// The last word: how the loop ended.
    pub fn finished(&mut self, state: &State, outcome: Ending, reason: &str) {
        self.finished_by(state, outcome, reason, None);
    }

    /// The last word of a loop that a failed run of `failure` ended (a stop no wait ends).
    pub fn finished_by(
        &mut self,
        state: &State,
        outcome: Ending,
        reason: &str,
        failure: Option<FailureClass>,
    ) {
        let total = state.total_iterations();
        let elapsed = self.started.elapsed().as_secs();
        match self.mode {
            Mode::Json => self.emit(LoopEvent::Finished {
                outcome,
                status: Some(state.status),
                iterations: Some(total),
                reason: reason.to_owned(),
                elapsed_secs: elapsed,
                usage: Some(UsageFigures::of(&state.usage)),
                failure,
            }),
            _ => {
                // This run's own waits (a wait resumed after Ctrl-C began before it).
                let waited = match self.waited_here.as_secs().min(elapsed) {
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
                    Ending::Complete => self.style.green(&text),
                    Ending::Interrupted => self.style.yellow(&text),
                    _ => self.style.red(&text),
                };
                self.line(&text);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::terminal::Edge;

    /// Finding 9, the status line: a tool's file path (or command) from the agent reaches
    /// the redrawn line with its escapes neutralised, while pagent's own redraw and
    /// colour controls still work.
    #[test]
    fn finding_9_the_status_line_shows_an_agents_escapes_inert() {
        let (mut out, mut err) = (Vec::new(), Vec::new());
        {
            let (mut out, mut err) = (Edge::new(&mut out), Edge::new(&mut err));
            let mut progress = Progress::new(
                Mode::Terminal,
                Style::for_stdout(false, true),
                &mut out,
                &mut err,
            );
            progress.ask = |fallback| fallback;
            progress.label = "ralph · iteration 1/25".into();
            progress.agent_event(&StreamEvent::Tool {
                id: None,
                name: "Write".into(),
                summary: Some("src/\u{1b}]0;pwned\u{7}\u{1b}[8mx.rs".into()),
            });
        }
        let shown = String::from_utf8(out).unwrap();
        assert!(
            shown.starts_with("\r\u{1b}[2K\u{1b}[2m⠙ ralph · iteration 1/25 · 0s · Write src/\\x1b]0;pwned\\x07\\x1b[8mx.rs"),
            "{shown:?}"
        );
        assert!(shown.ends_with("\u{1b}[0m"), "{shown:?}");
        assert_eq!(shown.matches('\u{1b}').count(), 3, "{shown:?}");
    }
}
