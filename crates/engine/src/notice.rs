//! What a loop's Claude Code session is told about the user's doings elsewhere.
//!
//! A loop runs in one session, but the user may end it from a terminal (`pagent cancel`)
//! or the dashboard, or, once its own session was quit, from another session. Nothing in
//! Claude Code tells the session: its next Stop is simply allowed, and the person watching
//! it never learns why the loop went quiet. So a cancel from outside the session leaves
//! one line in the state ([`State::session_notice`]), saying truly where it came from; the
//! session's next hook call (a Stop, or the next prompt) shows it as a `systemMessage` and
//! clears it: said once, only in the session that owns the loop. A prompt that starts a
//! new loop clears it unsaid: the user ended the old loop themselves, and the new loop's
//! start line is what matters then.

use crate::render::{MESSAGE_CAP, cap_head};
use crate::{Kind, State, Timestamp, Whose, whose_loop};

/// Where the user pulled a lever on a loop (cancel, pause, resume).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum By<'a> {
    /// `pagent cancel` (or pause, resume) in a terminal, outside any Claude Code session.
    Terminal,
    /// The dashboard's buttons.
    Dashboard,
    /// A Claude Code session: its slash command, its `!` line, or a command its model ran.
    Session(&'a str),
}

impl<'a> By<'a> {
    /// The session asking, if any.
    pub fn session(self) -> Option<&'a str> {
        match self {
            By::Session(session) => Some(session),
            By::Terminal | By::Dashboard => None,
        }
    }
}

/// The notice a cancel `by` someone outside the loop's session leaves for that session;
/// `None` when there is no session to tell (a loop nobody claimed yet, one `pagent loop`
/// drives) or the cancel came from the owning session itself, which already printed its
/// own answer.
pub fn cancelled_elsewhere(state: &State, by: By<'_>) -> Option<String> {
    let from = match by {
        By::Terminal => "from a terminal (`pagent cancel`)".to_owned(),
        By::Dashboard => "from the dashboard".to_owned(),
        By::Session(session) => format!("from another Claude Code session ({session})"),
    };
    match whose_loop(state, by.session()) {
        Whose::Other(_) => Some(cap_head(
            &format!("pagent: {} was cancelled {from}.", what(state)),
            MESSAGE_CAP,
            "cut",
        )),
        Whose::This | Whose::Unclaimed | Whose::Runner => None,
    }
}

/// The notice as a Stop says it: the turn it ends is Claude's to stop.
pub fn at_stop(notice: &str) -> String {
    format!("{notice} Claude may stop.")
}

/// The notice for the session `session` and the state with it cleared, when that session
/// owns the loop and a notice waits; `None` otherwise.
pub fn take(state: &State, session: Option<&str>, now: Timestamp) -> Option<(String, State)> {
    let notice = state.session_notice.as_ref()?;
    if crate::belongs(state, session) != crate::Belongs::Owner {
        return None;
    }
    let mut next = state.clone();
    next.session_notice = None;
    next.updated_at = now;
    Some((notice.clone(), next))
}

/// "the Ralph loop", "the prd-to-code pipeline (stage qa, 3 iterations)".
fn what(state: &State) -> String {
    match state.kind {
        Kind::Ralph => format!(
            "the Ralph loop (iteration {} of {})",
            state.total_iterations(),
            state.stage_limit(0)
        ),
        Kind::Pipeline => format!(
            "the {} pipeline (stage {}, {} iterations)",
            state.workflow,
            state.current().name,
            state.total_iterations()
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::ralph;

    #[test]
    fn item_10_a_cancel_from_outside_the_session_is_told_to_that_session_once() {
        let state = ralph(Some("s1"));
        let notice = cancelled_elsewhere(&state, By::Terminal).unwrap();
        assert_eq!(
            notice,
            "pagent: the Ralph loop (iteration 1 of 25) was cancelled from a terminal \
             (`pagent cancel`)."
        );
        assert_eq!(
            at_stop(&notice),
            "pagent: the Ralph loop (iteration 1 of 25) was cancelled from a terminal \
             (`pagent cancel`). Claude may stop."
        );
        assert_eq!(
            cancelled_elsewhere(&state, By::Dashboard).unwrap(),
            "pagent: the Ralph loop (iteration 1 of 25) was cancelled from the dashboard."
        );
        assert_eq!(
            cancelled_elsewhere(&state, By::Session("s2")).unwrap(),
            "pagent: the Ralph loop (iteration 1 of 25) was cancelled from another Claude Code \
             session (s2)."
        );
        // The session itself, a loop nobody claimed and a runner's loop: nobody to tell.
        assert_eq!(cancelled_elsewhere(&state, By::Session("s1")), None);
        assert_eq!(cancelled_elsewhere(&ralph(None), By::Terminal), None);
        let mut driven = ralph(Some("s1"));
        driven.driver = crate::Driver::Loop;
        assert_eq!(cancelled_elsewhere(&driven, By::Dashboard), None);

        let mut told = state.clone();
        told.session_notice = Some(notice.clone());
        assert_eq!(take(&told, Some("s2"), Timestamp(9)), None);
        assert_eq!(take(&told, None, Timestamp(9)), None);
        let (said, next) = take(&told, Some("s1"), Timestamp(9)).unwrap();
        assert_eq!(said, notice);
        assert_eq!(next.session_notice, None);
        assert_eq!(next.updated_at, Timestamp(9));
        assert_eq!(take(&next, Some("s1"), Timestamp(10)), None);
    }
}
