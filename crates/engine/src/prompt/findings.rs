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

/// (met, sentence for the model, short form for status) for a counted probe.
pub fn counted(probe: &Probe, name: &str, min: u64, unit: &str) -> (bool, String, String) {
    let plural = |n: u64| {
        if n == 1 {
            unit.to_owned()
        } else {
            format!("{unit}s")
        }
    };
    let short_unit = unit.rsplit(' ').next().unwrap_or(unit);
    match probe {
        // Counting stops at the minimum, so a met count is "at least".
        Probe::Count(n) if *n >= min => (
            true,
            format!("{name} has the {min} {} it needs", plural(min)),
            format!("{name} {min}/{min} {short_unit}s"),
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
            (Probe::Count(12), "architecture.md"),
            (Probe::Count(0), "src/"),
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
            let (_, a, b) = counted(&probe, name, if unit == "file" { 1 } else { 50 }, unit);
            line((a, b));
        }
        insta::assert_snapshot!(out);
    }
}
