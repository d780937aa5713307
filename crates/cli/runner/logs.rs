//! A night's disk: before each agent run, the runs folder is brought back under the
//! user's cap (`store/runs.rs`), the oldest logs first. What was dropped is said once per
//! `pagent loop`: one line on screen and one `trimmed` event, with what the first trim
//! dropped and how to see the rest (`pagent status`).

use pagent_engine::{Action, State};

use crate::cli::ui;
use crate::io::now;
use crate::runner::progress::Progress;
use crate::session;
use crate::store::eventlog::Event;
use crate::store::project::{Project, RUNS_DIR};
use crate::store::runs::{FILES_CAP, Trimmed, keep_under};

/// The cap, and whether the loop has said it trims.
pub(super) struct LogCap {
    cap: u64,
    told: bool,
}

impl LogCap {
    pub(super) fn new(cap: u64) -> LogCap {
        LogCap { cap, told: false }
    }

    /// Keeps the runs folder under the cap; says so the first time it drops anything.
    pub(super) fn keep(&mut self, project: &Project, state: &State, progress: &mut Progress) {
        let Some(trimmed) = keep_under(project, self.cap) else {
            return;
        };
        if std::mem::replace(&mut self.told, true) {
            return;
        }
        let text = trimmed_words(self.cap, trimmed);
        progress.note(&format!("pagent loop: {text}"));
        let event = Event::at(state, Action::Trimmed, text, now(), None);
        session::log(project, &event, &mut |m: &str| {
            ui::warn(progress.stderr(), m)
        });
    }
}

/// What a trim says: the cap, what went, and where to see what the logs take.
pub(super) fn trimmed_words(cap: u64, trimmed: Trimmed) -> String {
    format!(
        "the logs in {RUNS_DIR} reached their cap ({} MiB or {FILES_CAP} files), so the oldest \
         are dropped as new ones come (this time {} files, {:.1} MiB); `pagent status` shows \
         what they take, and `logs.max_mb` in your pagent config sets the cap (said once)",
        cap >> 20,
        trimmed.files,
        trimmed.bytes as f64 / f64::from(1 << 20)
    )
}
