//! Each format read from a fixture written from its own documentation
//! (`tests/fixtures/plans/`), worked through story by story with [`mark_done`], every
//! byte but the markers compared; and the whole text each story gives the model,
//! snapshotted.

use super::*;

mod prd_json;

const CHIEF: &str = include_str!("../../../../tests/fixtures/plans/chief-prd.md");
const SPECKIT: &str = include_str!("../../../../tests/fixtures/plans/speckit-tasks.md");
const KIRO: &str = include_str!("../../../../tests/fixtures/plans/kiro-tasks.md");
const RALPHEX: &str = include_str!("../../../../tests/fixtures/plans/ralphex-plan.md");
const PRD_JSON: &str = include_str!("../../../../tests/fixtures/plans/prd.json");

fn fixtures() -> [(Format, &'static str, &'static [&'static str]); 5] {
    [
        (Format::Chief, CHIEF, &["US-001", "US-002", "US-003"]),
        (Format::SpecKit, SPECKIT, &["T001", "T002", "T003"]),
        (Format::Kiro, KIRO, &["1.1", "1.2", "2"]),
        (Format::Ralphex, RALPHEX, &["Task 1", "Task 2", "Task 3"]),
        (Format::PrdJson, PRD_JSON, &["US-001", "US-002", "US-003"]),
    ]
}

/// The lines that differ between `old` and `new`, where `new` may have lines inserted:
/// (line number in `new`, old line or "" when inserted, new line).
fn changed_lines<'a>(old: &'a str, new: &'a str) -> Vec<(usize, &'a str, &'a str)> {
    let old: Vec<&str> = old.split_inclusive('\n').collect();
    let new: Vec<&str> = new.split_inclusive('\n').collect();
    let mut out = Vec::new();
    let (mut i, mut j) = (0, 0);
    while j < new.len() {
        match old.get(i) {
            Some(line) if *line == new[j] => i += 1,
            // Not the same: either this line changed, or one was inserted here.
            Some(line) if old.len() - i == new.len() - j => {
                out.push((j + 1, *line, new[j]));
                i += 1;
            }
            _ => out.push((j + 1, "", new[j])),
        }
        j += 1;
    }
    assert_eq!(i, old.len(), "lines were removed:\n{old:?}\n{new:?}");
    out
}

#[test]
fn every_format_is_read_by_content_in_the_order_it_asks_for() {
    for (format, text, order) in fixtures() {
        let plan = Plan::read(text, None).unwrap();
        assert_eq!(plan.format, format);
        let mut plan_text = text.to_owned();
        for expected in order {
            let plan = Plan::read(&plan_text, None).unwrap();
            let next = plan.next_story().unwrap();
            assert_eq!(next.id, *expected, "{format:?}");
            plan_text = mark_done(&plan_text, None, &next.id).unwrap().unwrap();
        }
        let plan = Plan::read(&plan_text, None).unwrap();
        assert!(plan.is_complete(), "{format:?}: {plan:#?}");
        assert_eq!(plan.next_story(), None);
        assert_eq!(plan.done_count(), order.len(), "{format:?}");
    }
}

#[test]
fn a_tick_changes_the_marker_and_not_one_other_byte() {
    for (format, text, order) in fixtures() {
        let mut before = text.to_owned();
        for id in order {
            let after = mark_done(&before, Some(format), id).unwrap().unwrap();
            let changed = changed_lines(&before, &after);
            assert!(!changed.is_empty());
            for (line, old, new) in &changed {
                let allowed = match format {
                    Format::Chief => {
                        new.starts_with("**Status:** done")
                            && (old.is_empty() || old.starts_with("**Status:**"))
                    }
                    Format::PrdJson => {
                        *new == old.replacen("\"passes\": false", "\"passes\": true", 1)
                            || *new == old.replacen("\"passes\":false", "\"passes\":true", 1)
                    }
                    _ => {
                        old.len() == new.len()
                            && old.bytes().zip(new.bytes()).filter(|(a, b)| a != b).count() == 1
                            && (new.contains("[x]") || new.contains("[X]"))
                    }
                };
                assert!(allowed, "{format:?} {id} line {line}: {old:?} -> {new:?}");
            }
            // Marking again is a no-op: the story is done.
            assert_eq!(mark_done(&after, Some(format), id).unwrap(), None);
            before = after;
        }
    }
}

#[test]
fn the_fixtures_read_as_their_documentation_says() {
    let chief = Plan::read(CHIEF, None).unwrap();
    assert_eq!(chief.title.as_deref(), Some("Recipe Box"));
    let us2 = chief.story("US-002").unwrap();
    assert_eq!(
        (
            us2.priority,
            us2.body.as_str(),
            us2.criteria.len(),
            us2.done
        ),
        (
            Some(2),
            "As a cook, I want to see every recipe I saved.\nThe list is sorted by name.",
            1,
            false
        )
    );
    assert!(
        !chief.story("US-003").unwrap().done,
        "in-progress is not done"
    );

    let speckit = Plan::read(SPECKIT, None).unwrap();
    assert_eq!(speckit.story("T003").unwrap().depends_on, ["T002"]);
    assert!(
        speckit
            .story("T002")
            .unwrap()
            .body
            .contains("User story: US1")
    );

    let kiro = Plan::read(KIRO, None).unwrap();
    let ids: Vec<(&str, bool)> = kiro
        .stories
        .iter()
        .map(|s| (s.id.as_str(), s.optional))
        .collect();
    assert_eq!(
        ids,
        [("1.1", false), ("1.2", false), ("1.3", true), ("2", false)]
    );
    assert_eq!(kiro.story("2").unwrap().depends_on, ["1.1"]);
    assert_eq!(kiro.required_count(), 3);

    let ralphex = Plan::read(RALPHEX, None).unwrap();
    assert_eq!(ralphex.checks, ["sh checks.sh"]);
    assert_eq!(ralphex.story("Task 3").unwrap().criteria.len(), 2);

    let prd = Plan::read(PRD_JSON, None).unwrap();
    assert_eq!(prd.story("US-003").unwrap().line, 7);
}

#[test]
fn a_kiro_parent_is_ticked_with_its_last_required_sub_task() {
    let text = mark_done(KIRO, None, "1.1").unwrap().unwrap();
    assert!(
        text.starts_with("# Implementation Plan\n\n- [ ] 1. Store"),
        "{text}"
    );
    let text = mark_done(&text, None, "1.2").unwrap().unwrap();
    assert!(
        text.contains("- [x] 1. Store recipes\n  - [x] 1.1"),
        "{text}"
    );
    assert!(
        text.contains("- [ ]* 1.3"),
        "the optional task is left alone: {text}"
    );
    // A parent ticked by hand makes its sub-tasks done.
    let by_hand = KIRO.replacen("- [ ] 1. Store", "- [x] 1. Store", 1);
    let plan = Plan::read(&by_hand, None).unwrap();
    assert_eq!(plan.next_story().unwrap().id, "2");
}

#[test]
fn line_endings_and_a_missing_status_line_are_kept_as_the_file_has_them() {
    let crlf = "### US-1: A\r\n\r\n- [ ] x\r\n### US-2: B";
    let ticked = mark_done(crlf, None, "US-1").unwrap().unwrap();
    assert_eq!(
        ticked,
        "### US-1: A\r\n**Status:** done\r\n\r\n- [ ] x\r\n### US-2: B"
    );
    let last = mark_done(&ticked, None, "US-2").unwrap().unwrap();
    assert!(last.ends_with("### US-2: B\n**Status:** done"), "{last:?}");
    let json = "{\"userStories\": [{}, {\"id\": \"B\"}]}";
    assert_eq!(Plan::read(json, None).unwrap_err(), PlanError::NoId(1));
    let json = "{\"userStories\": [{\"id\": \"A\"}, {\"id\": \"B\",\"passes\":false}]}";
    let ticked = mark_done(json, None, "A").unwrap().unwrap();
    assert_eq!(
        ticked,
        "{\"userStories\": [{\"passes\": true, \"id\": \"A\"}, {\"id\": \"B\",\"passes\":false}]}"
    );
}

#[test]
fn plans_that_cannot_be_worked_say_why() {
    for (text, format, expected) in [
        (
            "{}",
            Some(Format::PrdJson),
            "it has no stories (no \"userStories\")",
        ),
        (
            "not json",
            Some(Format::PrdJson),
            "it is not a prd.json (userStories): expected",
        ),
        (
            "- [ ] buy milk",
            None,
            "pagent cannot tell which kind of plan",
        ),
        (
            "### US-1: A\n### US-1: B",
            None,
            "two stories have the id \"US-1\" (lines 1 and 2)",
        ),
        (
            "# Plan\n",
            Some(Format::Ralphex),
            "it has no stories (no `### Task 1: Title` sections)",
        ),
    ] {
        let why = Plan::read(text, format).unwrap_err().to_string();
        assert!(why.starts_with(expected), "{text:?}: {why}");
    }
    let big = "x".repeat(MAX_PLAN_BYTES + 1);
    assert_eq!(Plan::read(&big, None), Err(PlanError::TooLarge));
    let many: String = (0..=MAX_STORIES)
        .map(|i| format!("- [ ] T{i} x\n"))
        .collect();
    assert_eq!(Plan::read(&many, None), Err(PlanError::TooMany));
}

#[test]
fn dependencies_come_first_and_a_cycle_is_named() {
    let prd = |deps: &str| {
        format!(
            r#"{{"userStories": [{{"id": "A", "priority": 1, "dependsOn": [{deps}]}}, {{"id": "B", "priority": 2, "dependsOn": ["A"]}}]}}"#
        )
    };
    let plan = Plan::read(&prd(""), None).unwrap();
    assert_eq!(plan.next_story().unwrap().id, "A");
    let plan = Plan::read(&prd("\"B\""), None).unwrap();
    assert_eq!(plan.next_story(), None);
    let (met, detail, short) = plan.progress("prd.json");
    assert!(!met);
    assert_eq!(
        detail,
        "0 of 2 stories in prd.json pass; every story left waits for another (A waits for B, B waits for A); fix the dependencies in prd.json"
    );
    assert_eq!(short, "stories 0/2");
    let plan = Plan::read(&prd("\"Z\""), None).unwrap();
    assert_eq!(
        plan.waiting()[0],
        ("A", "Z, which the plan does not have".to_owned())
    );
}

#[test]
fn story_prompts_per_format() {
    for (format, text, _) in fixtures() {
        let plan = Plan::read(text, None).unwrap();
        let shown: Vec<String> = plan
            .stories
            .iter()
            .map(|s| s.render_in(Some(&plan)))
            .collect();
        insta::assert_snapshot!(format.name(), shown.join("\n\n--------\n\n"));
    }
}

/// `pagent parallel` on a plan runs one Ralph loop per story: each loop's task is the
/// story with the plan's checks and what working beside the others asks.
#[test]
fn issue_30_a_story_as_a_parallel_task() {
    let mut out = String::new();
    for (text, path, id) in [
        (RALPHEX, "docs/plan.md", "Task 3"),
        (PRD_JSON, "prd.json", "US-003"),
    ] {
        let plan = Plan::read(text, None).unwrap();
        let story = plan.story(id).unwrap();
        out.push_str(&format!(
            "=== {path}, {}\n{}\n",
            story.id,
            story.render_task(&plan, path)
        ));
    }
    insta::assert_snapshot!(out);
}
