//! Which format a plan is, from its content alone (a file name says little: Chief,
//! spec-kit and Kiro all write a `prd.md` or a `tasks.md`). Each format has a shape no
//! other has, tried from the most specific to the least:
//!
//! 1. JSON with `"userStories"`: prd.json.
//! 2. pagent's own marker line: the issues list `pagent loop --issues` wrote.
//! 3. A `### Task N:` or `### Iteration N:` heading: ralphex.
//! 4. A `### US-001: Title` heading (letters, a dash, digits, a colon): Chief.
//! 5. A checkbox task whose text starts with `T` and digits (`T001`): spec-kit.
//! 6. A checkbox task whose text starts with a number (`1.`, `2.1`): Kiro.
//!
//! Fenced code is ignored throughout, so a plan that shows another format in an example
//! is still read as what it is.

use super::text::{checkbox, heading, lines};
use super::{Format, chief, issues, kiro, ralphex, speckit};

pub(super) fn detect(text: &str) -> Option<Format> {
    let trimmed = text.trim_start_matches('\u{feff}').trim_start();
    if trimmed.starts_with('{') {
        return text.contains("\"userStories\"").then_some(Format::PrdJson);
    }
    if trimmed.starts_with(issues::MARKER) {
        return Some(Format::Issues);
    }
    let lines = lines(text);
    let prose = || lines.iter().filter(|l| !l.fenced);
    let headings = || prose().filter_map(|l| heading(l.text));
    if headings().any(|(level, h)| level == 3 && ralphex::task_heading(h).is_some()) {
        return Some(Format::Ralphex);
    }
    if headings().any(|(level, h)| (level == 3 || level == 4) && chief::story_heading(h).is_some())
    {
        return Some(Format::Chief);
    }
    let boxes = || prose().filter_map(|l| checkbox(l.text));
    if boxes().any(|b| speckit::task_id(b.text).is_some()) {
        return Some(Format::SpecKit);
    }
    if boxes().any(|b| kiro::task_number(b.text).is_some()) {
        return Some(Format::Kiro);
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_format_is_told_by_its_own_shape() {
        for (text, expected) in [
            ("{\"userStories\": []}", Some(Format::PrdJson)),
            (
                "\u{feff}\n  {\"project\": 1, \"userStories\": 2}",
                Some(Format::PrdJson),
            ),
            ("{\"stories\": []}", None),
            (
                "<!-- pagent: GitHub issues -->\n- [ ] #1 A\n",
                Some(Format::Issues),
            ),
            ("# Plan\n### Task 1: Do\n- [ ] a\n", Some(Format::Ralphex)),
            ("### Iteration 2a: Do\n", Some(Format::Ralphex)),
            (
                "# PRD\n### US-001: Add\n**Status:** todo\n",
                Some(Format::Chief),
            ),
            ("#### AUTH-12: Log in\n", Some(Format::Chief)),
            ("## Phase 1\n- [ ] T001 [P] Set up\n", Some(Format::SpecKit)),
            ("- [ ] 1. Set up\n  - [ ] 1.1 Models\n", Some(Format::Kiro)),
            ("- [ ]* 2 Tests\n", Some(Format::Kiro)),
            ("- [ ] buy milk\n", None),
            (
                "```\n### Task 1: shown\n```\n- [ ] T001 real\n",
                Some(Format::SpecKit),
            ),
            ("", None),
        ] {
            assert_eq!(detect(text), expected, "{text:?}");
        }
    }
}
