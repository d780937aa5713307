//! `prd.json` as pagent read it before the other formats came, kept: the story's text,
//! priority order, counts and the messages of a file that is not a PRD.

use super::super::*;

const PRD: &str = r#"{"project": "todo", "userStories": [
    {"id": "US-002", "title": "List tasks", "priority": 2, "passes": false, "acceptanceCriteria": ["shows all"]},
    {"id": "US-001", "title": "Add a task", "description": "From the CLI.", "priority": 1, "passes": true},
    {"id": "US-003", "title": "Done", "priority": 2, "passes": false, "future": 1}
]}"#;

fn read(text: &str) -> Plan {
    Plan::read(text, Some(Format::PrdJson)).unwrap()
}

#[test]
fn the_next_story_is_the_first_highest_priority_one_not_passing() {
    let prd = read(PRD);
    assert_eq!(prd.next_story().unwrap().id, "US-002");
    assert_eq!((prd.done_count(), prd.remaining()), (1, 2));
    assert_eq!(
        prd.next_story().unwrap().render(),
        "US-002: List tasks (priority 2)\nAcceptance criteria:\n- shows all"
    );
}

#[test]
fn a_story_renders_every_part_it_has() {
    let prd = read(
        r#"{"userStories": [{"id": "US-7", "title": "Export", "priority": 3, "description": "  As CSV. ",
            "acceptanceCriteria": ["a header row", "one line per task"], "notes": " UTF-8 "},
            {"id": "US-8", "title": "Bare", "description": " ", "notes": " "}]}"#,
    );
    assert_eq!(
        prd.stories[0].render(),
        "US-7: Export (priority 3)\nAs CSV.\nAcceptance criteria:\n- a header row\n- one line per task\nNotes: UTF-8"
    );
    assert_eq!(prd.stories[1].render(), "US-8: Bare");
}

#[test]
fn passing_and_remaining_count_the_stories() {
    let prd = |passes: &[bool]| {
        let stories: Vec<_> = passes
            .iter()
            .enumerate()
            .map(|(i, p)| serde_json::json!({"id": format!("x{i}"), "passes": p}))
            .collect();
        read(&serde_json::json!({ "userStories": stories }).to_string())
    };
    for (passes, passing) in [
        (&[false, false, false][..], 0),
        (&[true, false, true][..], 2),
        (&[true, true, true][..], 3),
    ] {
        let prd = prd(passes);
        assert_eq!(prd.done_count(), passing, "{passes:?}");
        assert_eq!(prd.remaining(), 3 - passing, "{passes:?}");
        assert_eq!(prd.is_complete(), passing == 3, "{passes:?}");
    }
}

#[test]
fn a_story_without_priority_comes_last() {
    let prd = read(
        r#"{"userStories": [{"id": "A", "passes": false}, {"id": "B", "priority": 9, "passes": false}]}"#,
    );
    assert_eq!(prd.next_story().unwrap().id, "B");
}

#[test]
fn invalid_prds_say_why() {
    let why = |text: &str| {
        Plan::read(text, Some(Format::PrdJson))
            .unwrap_err()
            .to_string()
    };
    assert!(why("{}").contains("no \"userStories\""));
    assert!(why("{\"userStories\": 3}").starts_with("it is not a prd.json"));
    assert!(why("not json").starts_with("it is not a prd.json"));
    assert!(why("{\"userStories\": [{\"id\": 1}]}").starts_with("it is not a prd.json"));
}
