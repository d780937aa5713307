//! What counts as progress: the one answer both drivers give to "did this turn change
//! anything?", so the no-progress limit means the same in a session and in `pagent loop`.
//!
//! A turn made progress when its [`mark`] differs from the one the state kept. The mark
//! has two parts:
//!
//! - the tree: the [`World::fingerprint`] of the working tree, which covers new, changed
//!   and deleted files (tracked or not, in new folders too, never ignored build output nor
//!   pagent's own files) and the `HEAD` commit (so a commit that leaves a clean tree is
//!   progress);
//! - the plan: when the current stage works through a plan (`stories_pass`), which of its
//!   stories are done. A plan pagent keeps in its own folder (`pagent loop --issues`) or
//!   one the project's git ignores is not in the tree's digest; a story that changed state
//!   there is still progress.
//!
//! No tree fingerprint (a repository too large to read one of, or one nothing can be read
//! of) means no mark at all: the no-progress limit stands aside rather than give up on
//! work it cannot see. The mark of a loop without a plan is the tree's fingerprint alone,
//! as state files written before the plan part kept it.

use sha2::{Digest, Sha256};

use crate::{State, World};

/// The current progress mark of `state`'s project; `None` when the tree has no
/// fingerprint.
pub fn mark(state: &State, world: &mut dyn World) -> Option<String> {
    let tree = world.fingerprint()?;
    match crate::stories::story_states(state, world) {
        Some(stories) => {
            let digest = Sha256::digest(stories.as_bytes());
            Some(format!("{tree}+stories:{}", crate::seal::hex(&digest)))
        }
        None => Some(tree),
    }
}

/// Whether the turn that led to `now` (the current mark) changed anything since `kept`
/// (the state's mark): an unknown mark is always progress, so that a loop whose tree
/// cannot be seen never gives up for it.
pub fn changed(kept: Option<&str>, now: Option<&str>) -> bool {
    now.is_none() || kept != now
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::testing::MemoryWorld;
    use crate::{SetupOptions, Timestamp, Workflow};

    const PLAN_PATH: &str = ".claude/pagent/issues.md";

    fn state(exit_when: serde_json::Value) -> State {
        let workflow = Workflow::from_json(
            &json!({"stages": [{"name": "s", "prompt": "p", "exit_when": exit_when}]}),
            "x",
        )
        .unwrap();
        State::new_pipeline(
            &workflow,
            vec!["p".into()],
            SetupOptions::default(),
            None,
            Timestamp(0),
        )
    }

    fn stories() -> State {
        state(json!({"stories_pass": PLAN_PATH, "format": "ralphex"}))
    }

    #[test]
    fn without_a_plan_the_mark_is_the_tree() {
        let state = state(json!({"promise_in_output": "DONE"}));
        let mut world = MemoryWorld::default().tree("T1");
        assert_eq!(mark(&state, &mut world).as_deref(), Some("T1"));
        assert_eq!(mark(&state, &mut MemoryWorld::default()), None);
    }

    #[test]
    fn a_plan_that_cannot_be_read_leaves_the_tree_alone() {
        let state = stories();
        let mut world = MemoryWorld::default().tree("T1");
        assert_eq!(mark(&state, &mut world).as_deref(), Some("T1"));
    }

    #[test]
    fn an_unknown_mark_is_always_progress() {
        assert!(changed(Some("a"), None));
        assert!(changed(None, None));
        assert!(changed(None, Some("a")));
        assert!(!changed(Some("a"), Some("a")));
    }
}
