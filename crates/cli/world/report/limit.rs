//! `pagent status` on a loop that waits for the agent's usage limit to reset: how long is
//! left and until when, why, what happens then (and what the user must do for it, which
//! depends on who drives the loop: a running `pagent loop`, one that was interrupted, or
//! a Claude Code session of a version that goes on by itself or not), and the time
//! waited kept apart from the time worked (which is what `--max-duration` counts). The
//! last failed run of a `pagent loop` (an outage or a crash being retried) is said here
//! too.

use std::io::Write;

use pagent_engine::{Driver, State, Timestamp, format_duration};
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
    /// What happens once it has reset, and what the user must do for it.
    then: String,
}

/// The wait under way in `state` at `now`, if any; `runner_running` as the report has it.
pub(super) fn limit_report(
    state: &State,
    now: Timestamp,
    runner_running: Option<bool>,
) -> Option<LimitReport> {
    let wait = state.limit_wait.as_ref()?;
    Some(LimitReport {
        since: wait.since,
        until: wait.until,
        left_secs: wait.until.map(|until| until.since(now)),
        until_clock: None,
        reset_known: wait.reset_known,
        why: wait.why.clone(),
        then: after_the_wait(state, runner_running),
    })
}

/// What happens after `state`'s wait, for whoever drives it: `runner_running` is whether
/// a `pagent loop` drives it now (`None`: cannot tell).
pub fn after_the_wait(state: &State, runner_running: Option<bool>) -> String {
    let client = state.limit_wait.as_ref().and_then(|w| w.client.as_deref());
    match state.driver {
        Driver::Loop if runner_running == Some(false) => {
            "the same iteration runs again when you start `pagent loop` again (none runs now)"
                .to_owned()
        }
        Driver::Loop => "`pagent loop` runs the same iteration again".to_owned(),
        Driver::Hook => pagent_engine::limit::session_goes_on(client),
    }
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

/// The lines of a wait under way: how long, why, and what then.
pub(super) fn print_limit(
    wait: &LimitReport,
    style: Style,
    out: &mut dyn Write,
) -> std::io::Result<()> {
    let when = match (wait.left_secs, &wait.until_clock) {
        (Some(left), Some(clock)) => format!("{} left (until {clock})", format_duration(left)),
        (Some(left), None) => format!("{} left", format_duration(left)),
        (None, _) => "no reset time was named".to_owned(),
    };
    writeln!(
        out,
        "{} {when}: {}",
        style.yellow("waiting for a usage limit to reset:"),
        printable(&wait.why, false)
    )?;
    writeln!(out, "then: {}", wait.then)
}

/// The line of the last failed run (`pagent loop`).
pub(super) fn print_failure(text: &str, style: Style, out: &mut dyn Write) -> std::io::Result<()> {
    writeln!(
        out,
        "{} {}",
        style.red("last failed run:"),
        printable(text, false)
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
            then: pagent_engine::limit::session_goes_on(None),
        };
        let style = Style::for_stdout(true, false);
        let runner = LimitReport {
            since: Timestamp(0),
            until: Some(Timestamp(15_112)),
            left_secs: Some(15_052),
            until_clock: Some("03:01".into()),
            reset_known: true,
            why: "You've hit your 5-hour limit · resets 3am (Europe/Paris)".into(),
            then: "`pagent loop` runs the same iteration again".into(),
        };
        print_limit(&runner, style, &mut out).unwrap();
        print_limit(&session, style, &mut out).unwrap();
        insta::assert_snapshot!(String::from_utf8(out).unwrap());
    }

    /// Issue 30, §4: what happens after the wait, and what the user must do, for each
    /// driver: a running `pagent loop`, an interrupted one, a session on 2.1.197 (which
    /// does not go on by itself), on 2.1.332 (which does), and on a client it cannot tell.
    #[test]
    fn issue_30_status_says_what_the_user_must_do_after_a_limit() {
        let mut state = State::new_ralph(
            "t".into(),
            "DONE".into(),
            pagent_engine::SetupOptions::default(),
            None,
            Timestamp(0),
        );
        state.limit_wait = Some(pagent_engine::limit::LimitWait {
            since: Timestamp(0),
            until: Some(Timestamp(3_660)),
            reset_known: true,
            why: "You've hit your session limit".into(),
            client: None,
        });
        let mut said = Vec::new();
        for client in [Some("2.1.197"), Some("2.1.332"), None] {
            if let Some(wait) = &mut state.limit_wait {
                wait.client = client.map(str::to_owned);
            }
            said.push(after_the_wait(&state, None));
        }
        state.driver = Driver::Loop;
        said.push(after_the_wait(&state, Some(true)));
        said.push(after_the_wait(&state, Some(false)));
        insta::assert_snapshot!(said.join("\n"));
    }
}
