//! What a loop's Claude Code session is told about the user's doings elsewhere.
//!
//! A loop runs in one session, but the user may end it from a terminal (`pagent cancel`)
//! or the dashboard. Nothing in Claude Code tells the session: its next Stop is simply
//! allowed, and the person watching it never learns why the loop went quiet. So a cancel
//! from outside the session leaves one line in the state ([`State::session_notice`]); the
//! session's next hook call (a Stop, or the next prompt) shows it as a `systemMessage` and
//! clears it: said once, only in the session that owns the loop.

use crate::render::{MESSAGE_CAP, cap_head};
use crate::{Kind, State, Timestamp, Whose, whose_loop};

/// The notice a cancel from outside the loop's session leaves for that session; `None`
/// when there is no session to tell (a loop nobody claimed yet, one `pagent loop`
/// drives) or the cancel came from the owning session itself (`here`), which already
/// printed its own answer.
pub fn cancelled_elsewhere(state: &State, here: Option<&str>) -> Option<String> {
    match whose_loop(state, here) {
        Whose::Other(_) => Some(cap_head(
            &format!(
                "pagent: {} was cancelled from outside this session (`pagent cancel` or the \
                 dashboard); Claude may stop.",
                what(state)
            ),
            MESSAGE_CAP,
            "cut",
        )),
        Whose::This | Whose::Unclaimed | Whose::Runner => None,
    }
}

/// The notice for the session `session` and the state with it cleared, when that session
/// owns the loop and a notice waits; `None` otherwise.
pub fn take(state: &State, session: Option<&str>, now: Timestamp) -> Option<(String, State)> {
    let notice = state.session_notice.as_ref()?;
    if session.is_none() || whose_loop(state, session) != Whose::This {
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
        let notice = cancelled_elsewhere(&state, None).unwrap();
        assert_eq!(
            notice,
            "pagent: the Ralph loop (iteration 1 of 25) was cancelled from outside this \
             session (`pagent cancel` or the dashboard); Claude may stop."
        );
        assert!(cancelled_elsewhere(&state, Some("s2")).is_some());
        // The session itself, a loop nobody claimed and a runner's loop: nobody to tell.
        assert_eq!(cancelled_elsewhere(&state, Some("s1")), None);
        assert_eq!(cancelled_elsewhere(&ralph(None), None), None);
        let mut driven = ralph(Some("s1"));
        driven.driver = crate::Driver::Loop;
        assert_eq!(cancelled_elsewhere(&driven, None), None);

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
