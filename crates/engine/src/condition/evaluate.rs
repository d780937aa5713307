//! Evaluating a condition against the [`World`]: whether it holds, and one [`Finding`] per
//! leaf, worded twice (a sentence for the model, a few words for status and logs). The
//! words themselves are the prompt's (`prompt/findings.rs`), with every text the model reads.
//!
//! The walk is one recursive function that appends findings as it goes. `any` is the
//! exception: it keeps the findings of the alternative that held, or folds every failed
//! alternative into one finding, so the model reads a single "none of the alternatives
//! holds" sentence rather than a list of things it need not all do.

use super::{Check, Condition};
use crate::prompt::findings as words;
use crate::world::{CheckOutcome, World};
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
                let (met, detail, short) = words::counted(
                    &probe,
                    &format!("{path}/"),
                    *min_files,
                    "file",
                    words::Counted::UpToTheMinimum,
                );
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
                let (detail, short) = words::promise(text, message.is_some(), met);
                record(out, met, detail, short)
            }
            Condition::Command(check) => command_finding(world, check, out),
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
            Condition::Any(items) => any_finding(items, world, out),
        }
    }
}

fn file_finding(
    world: &mut dyn World,
    path: &RelPath,
    min_lines: u64,
    out: &mut Vec<Finding>,
) -> bool {
    // Counted to the end (a read the probe caps), so status shows "60/50 lines", not the
    // minimum twice; with no minimum, only whether the file is there matters.
    let enough = if min_lines == 0 { 0 } else { u64::MAX };
    let probe = world.count_lines(path, enough);
    let (met, detail, short) = words::counted(
        &probe,
        path.as_str(),
        min_lines,
        "non-blank line",
        words::Counted::ToTheEnd,
    );
    record(out, met, detail, short)
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
    /// A few words for status: "architecture.md 12/50 lines", "architecture.md 60/50 lines".
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

/// A check command's finding, with the tail of its output when it failed.
fn command_finding(world: &mut dyn World, check: &Check, out: &mut Vec<Finding>) -> bool {
    let shown = check.display();
    let outcome = world.run_check(check);
    let (met, detail, short) = words::check(&shown, &outcome);
    let tail = match outcome {
        CheckOutcome::Failed { tail, .. } | CheckOutcome::TimedOut { tail, .. } => Some(tail),
        _ => None,
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

/// `any`: the first alternative that holds, or one finding naming every alternative.
fn any_finding(items: &[Condition], world: &mut dyn World, out: &mut Vec<Finding>) -> bool {
    let mut alternatives = Vec::new();
    for item in items {
        let mut sub = Vec::new();
        if item.evaluate_into(world, &mut sub) {
            out.extend(sub);
            return true;
        }
        alternatives.extend(sub);
    }
    let (detail, short) = words::none_of(
        &alternatives
            .iter()
            .map(|f| (f.detail.as_str(), f.short.as_str()))
            .collect::<Vec<_>>(),
    );
    let output_tail = alternatives.into_iter().find_map(|f| f.output_tail);
    out.push(Finding {
        met: false,
        detail,
        short,
        output_tail,
    });
    false
}
