//! What every plan reader's fuzz target checks (each `plan_*.rs` includes this file):
//! any text, read as its format and by content, never panics; every tick the reader
//! offers either reads back done with the plan's other stories in place, or is refused.

use pagent_stories::{Format, Plan, mark_done};

/// Ticks tried per input: enough to reach past the first stories, bounded so that a
/// plan of thousands of stories stays a fast input.
const TICKS: usize = 16;

pub fn check(data: &[u8], format: Format) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let _ = Plan::read(text, None);
    let Ok(plan) = Plan::read(text, Some(format)) else {
        return;
    };
    let _ = plan.next_story();
    let _ = plan.progress("plan.md");
    for story in plan.stories.iter().take(TICKS) {
        let _ = story.render_in(Some(&plan));
        match mark_done(text, Some(format), &story.id) {
            Ok(Some(new)) => {
                let after = Plan::read(&new, Some(format)).expect("a tick reads back");
                assert_eq!(after.stories.len(), plan.stories.len());
                assert!(after.story(&story.id).is_some_and(|s| s.done));
            }
            Ok(None) => assert!(story.done),
            Err(_) => {}
        }
    }
}
