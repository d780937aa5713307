//! What `pagent loop` shows while it waits for the agent's usage limit to reset: one line
//! when the wait begins (why, until when, what happens then, how to stop it), a
//! countdown on the status line while it lasts (a terminal), and one line when it ends.
//! `--json` gets the same as `limit_wait` and `limit_resumed` events. A wait resumed
//! after Ctrl-C says so, and its end says how much of it this run waited.

use std::time::Instant;

use pagent_engine::{Timestamp, format_duration};

use super::Progress;
use super::output::LimitWait;

impl Progress<'_> {
    /// The wait begins (or, `resumed`, goes on after Ctrl-C): until `until` (`clock`, as
    /// the machine's clock shows it), `wait_secs` from now.
    pub fn limit_wait(
        &mut self,
        why: &str,
        (until, clock): (Timestamp, &str),
        wait_secs: u64,
        reset_known: bool,
        resumed: bool,
    ) {
        self.limit_began = Some(Instant::now());
        let then = if reset_known {
            "just past the reset"
        } else {
            "no reset time given: loop.limit_wait"
        };
        let (waiting, more) = if resumed {
            ("still waiting", " more")
        } else {
            ("waiting", "")
        };
        let text = format!(
            "usage limit: {}; {waiting} until {clock} ({}{more}, {then}), then {} runs again, \
             not counted. Ctrl-C or `pagent cancel` ends the wait.",
            why.trim().trim_end_matches('.'),
            format_duration(wait_secs),
            self.label
        );
        let wait = LimitWait {
            why,
            until,
            wait_secs,
            reset_known,
            text: &text,
        };
        let output = self.output;
        output.limit_wait(self, &wait);
    }

    /// The countdown on the status line (a terminal only; call often, it redraws at once).
    pub fn limit_countdown(&mut self, left_secs: u64, clock: &str) {
        let text = format!(
            "⏸ usage limit · {} · runs again in {} ({clock})",
            self.label,
            countdown(left_secs)
        );
        let output = self.output;
        output.limit_countdown(self, &text);
    }

    /// The wait is over, `waited_secs` after the limit was hit: the same iteration runs
    /// again.
    pub fn limit_resumed(&mut self, waited_secs: u64) {
        let here = self
            .limit_began
            .take()
            .map_or(0, |began| began.elapsed().as_secs());
        self.waited_here += std::time::Duration::from_secs(here.min(waited_secs));
        let output = self.output;
        output.limit_resumed(self, waited_secs, here);
    }
}

/// `4h11m52s`, `11m05s`, `42s`: a countdown that visibly ticks.
pub fn countdown(secs: u64) -> String {
    match secs {
        0..=59 => format!("{secs}s"),
        60..=3599 => format!("{}m{:02}s", secs / 60, secs % 60),
        _ => format!("{}h{:02}m{:02}s", secs / 3600, secs / 60 % 60, secs % 60),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::terminal::Edge;
    use crate::cli::ui::Style;
    use crate::runner::progress::Mode;

    #[test]
    fn countdowns_tick_every_second() {
        assert_eq!(countdown(42), "42s");
        assert_eq!(countdown(665), "11m05s");
        assert_eq!(countdown(15_112), "4h11m52s");
    }

    /// Issue 21: the countdown redraws the status line in place, the agent's words inert.
    #[test]
    fn issue_21_the_countdown_is_on_the_status_line() {
        let (mut out, mut err) = (Vec::new(), Vec::new());
        {
            let (mut out, mut err) = (Edge::new(&mut out), Edge::new(&mut err));
            let mut progress = Progress::new(
                Mode::Terminal,
                Style::for_stdout(false, true),
                &mut out,
                &mut err,
            );
            progress.label = "ralph · iteration 3/10".into();
            progress.limit_countdown(15_112, "03:01");
            progress.limit_countdown(15_111, "03:01");
        }
        let shown = String::from_utf8(out).unwrap();
        assert_eq!(
            shown,
            "\r\u{1b}[2K\u{1b}[2m⏸ usage limit · ralph · iteration 3/10 · runs again in 4h11m52s (03:01)\u{1b}[0m\
             \r\u{1b}[2K\u{1b}[2m⏸ usage limit · ralph · iteration 3/10 · runs again in 4h11m51s (03:01)\u{1b}[0m"
        );
    }
}
