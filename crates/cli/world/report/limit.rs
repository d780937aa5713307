//! `pagent status` on a loop that waits for the agent's usage limit to reset: how long is
//! left and until when, why, and the time waited kept apart from the time worked (which
//! is what `--max-duration` counts).

use std::io::Write;

use pagent_engine::{State, Timestamp, format_duration};
use serde::Serialize;

use super::Report;
use crate::cli::ui::{Style, printable};
use crate::world::zone::{self, Zones};

#[derive(Debug, Serialize)]
pub struct LimitReport {
    since: Timestamp,
    /// When the loop goes on; `None` in a session whose agent named no reset time.
    until: Option<Timestamp>,
    left_secs: Option<u64>,
    /// `until` as the machine's clock shows it (`03:01`, `Nov 27 10:20`).
    until_clock: Option<String>,
    /// Whether `until` is the reset the agent named (plus a margin).
    reset_known: bool,
    /// The agent's own words.
    why: String,
}

/// The wait under way in `state` at `now`, if any.
pub(super) fn limit_report(state: &State, now: Timestamp) -> Option<LimitReport> {
    let wait = state.limit_wait.as_ref()?;
    Some(LimitReport {
        since: wait.since,
        until: wait.until,
        left_secs: wait.until.map(|until| until.since(now)),
        until_clock: None,
        reset_known: wait.reset_known,
        why: wait.why.clone(),
    })
}

impl Report {
    /// Shows the wait's end on the machine's clock.
    pub fn localize(&mut self, zones: &Zones<'_>, now: Timestamp) {
        let now = i64::try_from(now.0).unwrap_or(i64::MAX);
        if let Some(wait) = &mut self.limit_wait {
            wait.until_clock = wait.until.map(|until| {
                zone::clock_text(zones, i64::try_from(until.0).unwrap_or(i64::MAX), now)
            });
        }
    }
}

/// `1h20m`, or `1h20m worked, 3h10m waited for usage limits`.
pub(super) fn time_text(worked: u64, waited: u64) -> String {
    if waited == 0 {
        format_duration(worked)
    } else {
        format!(
            "{} worked, {} waited for usage limits",
            format_duration(worked),
            format_duration(waited)
        )
    }
}

/// The line of a wait under way.
pub(super) fn print_limit(
    wait: &LimitReport,
    style: Style,
    out: &mut dyn Write,
) -> std::io::Result<()> {
    let when = match (wait.left_secs, &wait.until_clock) {
        (Some(left), Some(clock)) => format!("{} left (until {clock})", format_duration(left)),
        (Some(left), None) => format!("{} left", format_duration(left)),
        (None, _) => {
            "until the session goes on (Claude Code 2.1.234 and later, by themselves; else /pagent:resume)"
                .to_owned()
        }
    };
    let then = if wait.until.is_some() {
        ", then the same iteration runs again"
    } else {
        ""
    };
    writeln!(
        out,
        "{} {when}{then}: {}",
        style.yellow("waiting for a usage limit to reset:"),
        printable(&wait.why, false)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn issue_21_status_keeps_the_time_waited_apart_from_the_time_worked() {
        assert_eq!(time_text(4800, 0), "1h20m");
        assert_eq!(
            time_text(4800, 11_400),
            "1h20m worked, 3h10m waited for usage limits"
        );
    }

    /// Both shapes of the waiting line: a runner's wait, with its end on the machine's
    /// clock, and a session's wait for a reset nobody named.
    #[test]
    fn issue_21_the_waiting_lines_of_status() {
        let mut out = Vec::new();
        let session = LimitReport {
            since: Timestamp(0),
            until: None,
            left_secs: None,
            until_clock: None,
            reset_known: false,
            why: "You've hit your session limit".into(),
        };
        let style = Style::for_stdout(true, false);
        let runner = LimitReport {
            since: Timestamp(0),
            until: Some(Timestamp(15_112)),
            left_secs: Some(15_052),
            until_clock: Some("03:01".into()),
            reset_known: true,
            why: "You've hit your 5-hour limit · resets 3am (Europe/Paris)".into(),
        };
        print_limit(&runner, style, &mut out).unwrap();
        print_limit(&session, style, &mut out).unwrap();
        insta::assert_snapshot!(String::from_utf8(out).unwrap());
    }
}
