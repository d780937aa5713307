//! The findings of an exit condition in words: a sentence for the model (what is still
//! missing, in its re-prompt) and a few words for status and logs, for each leaf the
//! evaluation walks (`condition/evaluate.rs` decides; this only words). Kept beside the
//! rest of what the model reads, with one snapshot of every sentence.

use crate::world::{CheckOutcome, Probe};

/// (sentence, short) for a `promise_in_output` leaf: `read` says whether the last
/// message could be read at all.
pub fn promise(text: &str, read: bool, met: bool) -> (String, String) {
    match (read, met) {
        (_, true) => (
            format!("the promise <promise>{text}</promise> was made"),
            format!("promise {text} made"),
        ),
        (false, false) => (
            format!(
                "your last message could not be read, so the promise <promise>{text}</promise> was not seen"
            ),
            format!("waiting for <promise>{text}</promise>"),
        ),
        (true, false) => (
            format!("your last message has no line <promise>{text}</promise> of its own"),
            format!("waiting for <promise>{text}</promise>"),
        ),
    }
}

/// (met, sentence, short) for a check command `shown` that ended as `outcome`.
pub fn check(shown: &str, outcome: &CheckOutcome) -> (bool, String, String) {
    match outcome {
        CheckOutcome::Passed => (
            true,
            format!("`{shown}` passed"),
            format!("`{shown}` passed"),
        ),
        CheckOutcome::Failed { code, .. } => {
            let how = code.map_or_else(
                || "was killed by a signal".to_owned(),
                |c| format!("exited with code {c}"),
            );
            (
                false,
                format!("`{shown}` {how}"),
                format!("`{shown}` failed"),
            )
        }
        CheckOutcome::TimedOut { after_secs, .. } => (
            false,
            format!("`{shown}` did not finish within {after_secs} s and was stopped"),
            format!("`{shown}` timed out"),
        ),
        CheckOutcome::Error(why) => (
            false,
            format!("`{shown}` could not run: {why}"),
            format!("`{shown}` could not run"),
        ),
        CheckOutcome::NotRun => (
            false,
            format!("`{shown}` runs when the model stops"),
            format!("`{shown}` (checked at stop)"),
        ),
    }
}

/// (sentence, short) for an `any` none of whose `alternatives` (sentence, short) held.
pub fn none_of(alternatives: &[(&str, &str)]) -> (String, String) {
    let detail = format!(
        "none of the alternatives holds: {}",
        alternatives
            .iter()
            .map(|(d, _)| *d)
            .collect::<Vec<_>>()
            .join("; or ")
    );
    let short = alternatives
        .iter()
        .map(|(_, s)| *s)
        .collect::<Vec<_>>()
        .join(" | ");
    (detail, short)
}

/// How far a probe counted: a file's lines are counted to its end, a folder's files only
/// up to the minimum (each file costs an ignore lookup), so a met folder count is "at
/// least".
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Counted {
    ToTheEnd,
    UpToTheMinimum,
}

/// (met, sentence for the model, short form for status) for a counted probe: the real
/// count against the minimum ("architecture.md 60/50 lines"), never the minimum twice.
pub fn counted(
    probe: &Probe,
    name: &str,
    min: u64,
    unit: &str,
    how: Counted,
) -> (bool, String, String) {
    let plural = |n: u64| {
        if n == 1 {
            unit.to_owned()
        } else {
            format!("{unit}s")
        }
    };
    let short_unit = unit.rsplit(' ').next().unwrap_or(unit);
    match probe {
        Probe::Count(_) if min == 0 => (true, format!("{name} exists"), format!("{name} exists")),
        Probe::Count(n) if *n >= min && how == Counted::UpToTheMinimum => (
            true,
            format!("{name} has at least the {min} {} it needs", plural(min)),
            format!("{name} {min}+/{min} {short_unit}s"),
        ),
        Probe::Count(n) if *n >= min => (
            true,
            format!("{name} has {n} {} (it needs {min})", plural(*n)),
            format!("{name} {n}/{min} {short_unit}s"),
        ),
        Probe::Count(n) => (
            false,
            format!("{name} has {n} of the {min} {} it needs", plural(min)),
            format!("{name} {n}/{min} {short_unit}s"),
        ),
        Probe::Missing => (
            false,
            format!("{name} does not exist yet (it needs {min} {})", plural(min)),
            format!("{name} missing"),
        ),
        Probe::WrongKind => {
            let what = if name.ends_with('/') {
                "is a file, not a folder"
            } else {
                "is a folder, not a file"
            };
            (
                false,
                format!("{} {what}", name.trim_end_matches('/')),
                format!("{name} wrong kind"),
            )
        }
        Probe::Outside => (
            false,
            format!("{name} leads outside the project (symlink) and is not counted"),
            format!("{name} outside project"),
        ),
        Probe::Error(why) => (
            false,
            format!("{name} could not be read: {why}"),
            format!("{name} unreadable"),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn issue_22_every_sentence_of_a_finding_reads_whole() {
        let mut out = String::new();
        let mut line = |(a, b): (String, String)| out.push_str(&format!("{a}\n    {b}\n"));
        for (read, met) in [(true, true), (false, false), (true, false)] {
            line(promise("DONE", read, met));
        }
        for outcome in [
            CheckOutcome::Passed,
            CheckOutcome::Failed {
                code: Some(1),
                tail: String::new(),
            },
            CheckOutcome::Failed {
                code: None,
                tail: String::new(),
            },
            CheckOutcome::TimedOut {
                after_secs: 60,
                tail: String::new(),
            },
            CheckOutcome::Error("no such program".into()),
            CheckOutcome::NotRun,
        ] {
            let (_, a, b) = check("cargo test", &outcome);
            line((a, b));
        }
        line(none_of(&[
            (
                "a.md does not exist yet (it needs 1 non-blank line)",
                "a.md missing",
            ),
            ("`make` exited with code 2", "`make` failed"),
        ]));
        for (probe, name) in [
            (Probe::Count(50), "architecture.md"),
            (Probe::Count(60), "architecture.md"),
            (Probe::Count(12), "architecture.md"),
            (Probe::Count(0), "src/"),
            (Probe::Count(1), "src/"),
            (Probe::Missing, "architecture.md"),
            (Probe::WrongKind, "architecture.md"),
            (Probe::WrongKind, "src/"),
            (Probe::Outside, "architecture.md"),
            (Probe::Error("permission denied".into()), "architecture.md"),
        ] {
            let unit = if name.ends_with('/') {
                "file"
            } else {
                "non-blank line"
            };
            let (min, how) = if unit == "file" {
                (1, Counted::UpToTheMinimum)
            } else {
                (50, Counted::ToTheEnd)
            };
            let (_, a, b) = counted(&probe, name, min, unit, how);
            line((a, b));
        }
        let (_, a, b) = counted(
            &Probe::Count(7),
            "a.md",
            0,
            "non-blank line",
            Counted::ToTheEnd,
        );
        line((a, b));
        insta::assert_snapshot!(out);
    }
}
