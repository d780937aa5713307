//! Evaluating a condition against the [`World`]: whether it holds, and one [`Finding`] per
//! leaf, worded twice (a sentence for the model, a few words for status and logs).
//!
//! The walk is one recursive function that appends findings as it goes. `any` is the
//! exception: it keeps the findings of the alternative that held, or folds every failed
//! alternative into one finding, so the model reads a single "none of the alternatives
//! holds" sentence rather than a list of things it need not all do.

use super::Condition;
use crate::world::{CheckOutcome, Probe, World};
use crate::{RelPath, render::cap_tail};

impl Condition {
    /// Evaluates the condition against the world. A review is never run here: it adds a
    /// finding that does not hold, and `review_at` points at it for the engine's decision
    /// (`review::conclude`), which runs the reviewer only when every other finding holds.
    pub fn evaluate(&self, world: &mut dyn World) -> Evaluation {
        let mut findings = Vec::new();
        let cheaper: Vec<&Condition> = match self {
            Condition::Review(_) => Vec::new(),
            Condition::All(items) if self.review().is_some() => items
                .iter()
                .filter(|c| !matches!(c, Condition::Review(_)))
                .collect(),
            _ => {
                let met = self.evaluate_into(world, &mut findings);
                return Evaluation {
                    met,
                    findings,
                    review_at: None,
                };
            }
        };
        let mut ready = true;
        for item in cheaper {
            ready &= item.evaluate_into(world, &mut findings);
        }
        findings.push(crate::review::waiting_finding(ready));
        Evaluation {
            met: false,
            review_at: Some(findings.len() - 1),
            findings,
        }
    }

    fn evaluate_into(&self, world: &mut dyn World, out: &mut Vec<Finding>) -> bool {
        match self {
            Condition::FileExists { path, min_lines } => file_finding(world, path, *min_lines, out),
            Condition::AllFilesExist { paths, min_lines } => {
                let mut met = true;
                for path in paths {
                    met &= file_finding(world, path, *min_lines, out);
                }
                met
            }
            Condition::DirectoryExists { path, min_files } => {
                let probe = world.count_files(path, *min_files);
                let (met, detail, short) =
                    count_phrases(&probe, &format!("{path}/"), *min_files, "file");
                record(out, met, detail, short)
            }
            Condition::StoriesPass { path, format } => {
                let (met, detail, short) = crate::stories::stories_finding(path, *format, world);
                record(out, met, detail, short)
            }
            Condition::MergeCommitted(spec) => {
                let (met, detail, short) = spec.phrases(&world.merge_probe(spec));
                record(out, met, detail, short)
            }
            Condition::Promise(text) => {
                let message = world.last_assistant_message();
                let met = message
                    .as_deref()
                    .is_some_and(|m| crate::contains_promise(m, text));
                let (detail, short) = match (&message, met) {
                    (_, true) => (
                        format!("the promise <promise>{text}</promise> was made"),
                        format!("promise {text} made"),
                    ),
                    (None, false) => (
                        format!(
                            "your last message could not be read, so the promise <promise>{text}</promise> was not seen"
                        ),
                        format!("waiting for <promise>{text}</promise>"),
                    ),
                    (Some(_), false) => (
                        format!(
                            "your last message has no line <promise>{text}</promise> of its own"
                        ),
                        format!("waiting for <promise>{text}</promise>"),
                    ),
                };
                record(out, met, detail, short)
            }
            Condition::Command(check) => {
                let shown = check.display();
                let (met, detail, short, tail) = match world.run_check(check) {
                    CheckOutcome::Passed => (
                        true,
                        format!("`{shown}` passed"),
                        format!("`{shown}` passed"),
                        None,
                    ),
                    CheckOutcome::Failed { code, tail } => {
                        let how = code.map_or_else(
                            || "was killed by a signal".to_owned(),
                            |c| format!("exited with code {c}"),
                        );
                        (
                            false,
                            format!("`{shown}` {how}"),
                            format!("`{shown}` failed"),
                            Some(tail),
                        )
                    }
                    CheckOutcome::TimedOut { after_secs, tail } => (
                        false,
                        format!("`{shown}` did not finish within {after_secs} s and was stopped"),
                        format!("`{shown}` timed out"),
                        Some(tail),
                    ),
                    CheckOutcome::Error(why) => (
                        false,
                        format!("`{shown}` could not run: {why}"),
                        format!("`{shown}` could not run"),
                        None,
                    ),
                    CheckOutcome::NotRun => (
                        false,
                        format!("`{shown}` runs when the model stops"),
                        format!("`{shown}` (checked at stop)"),
                        None,
                    ),
                };
                let output_tail = tail
                    .map(|t| cap_tail(&t, crate::TAIL_CAP))
                    .filter(|t| !t.trim().is_empty());
                out.push(Finding {
                    met,
                    detail,
                    short,
                    output_tail,
                });
                met
            }
            // Only reachable for a condition built by hand with a nested review (parsing
            // refuses one): it waits, never holds.
            Condition::Review(_) => {
                out.push(crate::review::waiting_finding(false));
                false
            }
            Condition::All(items) => {
                let mut met = true;
                for item in items {
                    met &= item.evaluate_into(world, out);
                }
                met
            }
            Condition::Any(items) => {
                let mut alternatives = Vec::new();
                for item in items {
                    let mut sub = Vec::new();
                    if item.evaluate_into(world, &mut sub) {
                        out.extend(sub);
                        return true;
                    }
                    alternatives.extend(sub);
                }
                let detail = format!(
                    "none of the alternatives holds: {}",
                    alternatives
                        .iter()
                        .map(|f| f.detail.as_str())
                        .collect::<Vec<_>>()
                        .join("; or ")
                );
                let short = alternatives
                    .iter()
                    .map(|f| f.short.as_str())
                    .collect::<Vec<_>>()
                    .join(" | ");
                let output_tail = alternatives.into_iter().find_map(|f| f.output_tail);
                out.push(Finding {
                    met: false,
                    detail,
                    short,
                    output_tail,
                });
                false
            }
        }
    }
}

fn file_finding(
    world: &mut dyn World,
    path: &RelPath,
    min_lines: u64,
    out: &mut Vec<Finding>,
) -> bool {
    let probe = world.count_lines(path, min_lines);
    let (met, detail, short) = count_phrases(&probe, path.as_str(), min_lines, "non-blank line");
    record(out, met, detail, short)
}

/// (met, sentence for the model, short form for status) for a counted probe.
fn count_phrases(probe: &Probe, name: &str, min: u64, unit: &str) -> (bool, String, String) {
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

/// The result of evaluating a condition: whether it holds, and one finding per leaf.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Evaluation {
    pub met: bool,
    pub findings: Vec<Finding>,
    /// The finding that stands for the stage's review, when it has one.
    pub review_at: Option<usize>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    pub met: bool,
    /// A sentence for the model: "architecture.md has 12 of the 50 non-blank lines it needs".
    pub detail: String,
    /// A few words for status: "architecture.md 12/50 lines".
    pub short: String,
    /// The tail of a failed command's output.
    pub output_tail: Option<String>,
}

impl Evaluation {
    /// What is still missing, one sentence per unmet leaf.
    pub fn missing(&self) -> Vec<&Finding> {
        self.findings.iter().filter(|f| !f.met).collect()
    }

    /// One line for status and logs: the short forms joined.
    pub fn summary(&self) -> String {
        self.findings
            .iter()
            .map(|f| f.short.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// Adds a finding without command output and returns whether it holds.
fn record(out: &mut Vec<Finding>, met: bool, detail: String, short: String) -> bool {
    out.push(Finding {
        met,
        detail,
        short,
        output_tail: None,
    });
    met
}
