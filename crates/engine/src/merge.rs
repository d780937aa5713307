//! The `merge_committed` exit condition: a merge of another branch is committed in the
//! project's repository, keeping the branch's own work, with no conflict left.
//!
//! `pagent parallel --merge` sets it on the resolution loop it starts in a task's worktree
//! when merging the task into its target branch conflicts: the agent merges the target in,
//! resolves, and commits; this condition says when that is done, and in what way it is not
//! yet, in words the agent can act on. It is checked on the repository, never on the
//! agent's word:
//!
//! - no merge is under way any more and the index has no conflict (`git commit` ran);
//! - `HEAD` holds the merged commit *and* the branch's own tip (a resolution that threw
//!   the task's work away, or aborted the merge and committed something else, is not one);
//! - no file of `HEAD` that differs from both sides holds a conflict-marker line that
//!   neither side had (a marker committed by mistake; a file that holds such lines on
//!   purpose, a test fixture of a merge tool, is left alone).
//!
//! The JSON form is `{"merge_committed": SHA, "keeping": SHA, "name": "main"}`; `name` is
//! only for the words. The world answers with a [`MergeProbe`].

use serde_json::{Map, Value, json};

use crate::condition::ConditionError;

/// What a `merge_committed` condition waits for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MergeSpec {
    /// The commit merged in (the target branch's tip when the merge began), full hex.
    pub merged: String,
    /// The branch's own tip before the merge, full hex: the work that must be kept.
    pub keeping: String,
    /// The merged branch's name, for the words ("main").
    pub name: String,
}

/// What the repository says about a merge (`World::merge_probe`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MergeProbe {
    /// Committed: `HEAD` holds both commits, no conflict and no new marker left.
    Committed,
    /// A merge is under way (or the index still has conflicts): the paths still in
    /// conflict, none when every conflict is resolved but the merge is not committed.
    Unfinished { conflicted: Vec<String> },
    /// `HEAD` does not hold the merged commit.
    NotMerged,
    /// `HEAD` does not hold the branch's own tip: its work was thrown away.
    WorkLost,
    /// Files of `HEAD` with conflict-marker lines neither side had.
    Markers(Vec<String>),
    /// The repository could not be read, or is in another operation (a rebase).
    Error(String),
}

/// The longest branch name accepted in `name`.
const MAX_NAME: usize = 250;

impl MergeSpec {
    pub(crate) fn parse(
        map: &Map<String, Value>,
        field: &str,
    ) -> Result<MergeSpec, ConditionError> {
        let sub = |key: &str| format!("{field}.{key}");
        let commit = |key: &str| -> Result<String, ConditionError> {
            let text = map.get(key).and_then(Value::as_str).unwrap_or_default();
            if is_object_id(text) {
                Ok(text.to_ascii_lowercase())
            } else {
                Err(ConditionError {
                    field: sub(key),
                    reason: "expected a full commit id (40 or 64 hex digits)".into(),
                })
            }
        };
        let name = map.get("name").and_then(Value::as_str).unwrap_or_default();
        if name.trim().is_empty() || name.len() > MAX_NAME || name.chars().any(char::is_control) {
            return Err(ConditionError {
                field: sub("name"),
                reason: format!(
                    "expected the merged branch's name (1 to {MAX_NAME} characters, one line)"
                ),
            });
        }
        Ok(MergeSpec {
            merged: commit("merge_committed")?,
            keeping: commit("keeping")?,
            name: name.to_owned(),
        })
    }

    pub fn to_json(&self) -> Value {
        json!({"merge_committed": self.merged, "keeping": self.keeping, "name": self.name})
    }

    /// (met, sentence for the model, short form for status) for what the world found.
    pub(crate) fn phrases(&self, probe: &MergeProbe) -> (bool, String, String) {
        let name = &self.name;
        let short_id = &self.merged[..self.merged.len().min(10)];
        match probe {
            MergeProbe::Committed => (
                true,
                format!("the merge of {name} is committed with no conflict left"),
                format!("{name} merged"),
            ),
            MergeProbe::Unfinished { conflicted } if conflicted.is_empty() => (
                false,
                format!(
                    "the merge of {name} is not committed yet: every conflict is resolved, so finish it with `git commit --no-edit`"
                ),
                "merge not committed".into(),
            ),
            MergeProbe::Unfinished { conflicted } => (
                false,
                format!(
                    "the merge of {name} is not committed yet: {} still {} conflicts: {}; resolve {}, `git add` {} and `git commit --no-edit`",
                    count(conflicted.len(), "file"),
                    if conflicted.len() == 1 { "has" } else { "have" },
                    list(conflicted),
                    if conflicted.len() == 1 { "it" } else { "them" },
                    if conflicted.len() == 1 { "it" } else { "them" },
                ),
                format!("{} in conflict", count(conflicted.len(), "file")),
            ),
            MergeProbe::NotMerged => (
                false,
                format!(
                    "this branch does not contain {name} (commit {short_id}) yet: merge it with `git merge {short_id}`, resolve the conflicts and commit"
                ),
                format!("{name} not merged"),
            ),
            MergeProbe::WorkLost => (
                false,
                format!(
                    "this branch no longer contains its own work (commit {keeping}): a resolution must keep both sides; bring it back with `git merge {keeping}` and resolve again",
                    keeping = &self.keeping[..self.keeping.len().min(10)],
                ),
                "the branch's work is missing".into(),
            ),
            MergeProbe::Markers(files) => (
                false,
                format!(
                    "conflict markers (<<<<<<< or >>>>>>> lines) are still in {}: {}; resolve them and commit",
                    count(files.len(), "file"),
                    list(files)
                ),
                format!("markers in {}", count(files.len(), "file")),
            ),
            MergeProbe::Error(why) => (
                false,
                format!("the merge of {name} could not be checked: {why}"),
                "merge unreadable".into(),
            ),
        }
    }
}

/// 40 (SHA-1) or 64 (SHA-256) hex digits.
fn is_object_id(text: &str) -> bool {
    matches!(text.len(), 40 | 64) && text.bytes().all(|b| b.is_ascii_hexdigit())
}

fn count(n: usize, unit: &str) -> String {
    if n == 1 {
        format!("1 {unit}")
    } else {
        format!("{n} {unit}s")
    }
}

/// The first few paths, and how many more.
fn list(paths: &[String]) -> String {
    const SHOWN: usize = 8;
    let mut text = paths
        .iter()
        .take(SHOWN)
        .map(String::as_str)
        .collect::<Vec<_>>()
        .join(", ");
    if paths.len() > SHOWN {
        text.push_str(&format!(" and {} more", paths.len() - SHOWN));
    }
    text
}

/// True for a line git writes around a conflict: `<<<<<<< ours` or `>>>>>>> theirs` (the
/// `=======` between them is a common underline, so it is not counted on its own).
pub fn is_marker_line(line: &[u8]) -> bool {
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    [b"<<<<<<<", b">>>>>>>"].iter().any(|marker| {
        line.strip_prefix(&marker[..])
            .is_some_and(|rest| rest.is_empty() || rest[0] == b' ')
    })
}

/// The marker lines of `text` that `sides` do not have: markers the merge added.
pub fn new_marker_lines<'a>(text: &'a [u8], sides: &[&[u8]]) -> Vec<&'a [u8]> {
    let known: std::collections::HashSet<&[u8]> = sides
        .iter()
        .flat_map(|side| side.split(|b| *b == b'\n'))
        .filter(|line| is_marker_line(line))
        .collect();
    text.split(|b| *b == b'\n')
        .filter(|line| is_marker_line(line) && !known.contains(line))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Condition;

    const A: &str = "0123456789abcdef0123456789abcdef01234567";
    const B: &str = "89abcdef0123456789abcdef0123456789abcdef";

    #[test]
    fn the_form_round_trips_and_refuses_what_is_not_a_commit() {
        let value = json!({"merge_committed": A, "keeping": B, "name": "main"});
        let condition = Condition::from_json(&value, "exit_when").unwrap();
        assert_eq!(condition.to_json(), value);
        assert!(!condition.runs_commands());
        for (bad, field) in [
            (
                json!({"merge_committed": "abc", "keeping": B, "name": "main"}),
                "exit_when.merge_committed",
            ),
            (
                json!({"merge_committed": A, "name": "main"}),
                "exit_when.keeping",
            ),
            (
                json!({"merge_committed": A, "keeping": B}),
                "exit_when.name",
            ),
            (
                json!({"merge_committed": A, "keeping": B, "name": "a\nb"}),
                "exit_when.name",
            ),
            (
                json!({"merge_committed": A, "keeping": B, "name": "m", "extra": 1}),
                "exit_when.extra",
            ),
        ] {
            let err = Condition::from_json(&bad, "exit_when").unwrap_err();
            assert_eq!(err.field, field, "{bad}: {err}");
        }
    }

    #[test]
    fn markers_count_only_when_neither_side_had_them() {
        assert!(is_marker_line(b"<<<<<<< HEAD"));
        assert!(is_marker_line(b">>>>>>> main\r"));
        assert!(is_marker_line(b"<<<<<<<"));
        assert!(!is_marker_line(b"======="));
        assert!(!is_marker_line(b"<<<<<<<<< not one"));
        assert!(!is_marker_line(b"x <<<<<<< HEAD"));
        let fixture = b"a\n<<<<<<< HEAD\nb\n";
        assert!(new_marker_lines(fixture, &[fixture, b""]).is_empty());
        let added = b"a\n<<<<<<< HEAD\nours\n=======\ntheirs\n>>>>>>> main\n";
        assert_eq!(
            new_marker_lines(added, &[b"a\nours\n", b"a\ntheirs\n"]),
            [&b"<<<<<<< HEAD"[..], &b">>>>>>> main"[..]]
        );
    }

    #[test]
    fn each_probe_answer_reads_as_what_to_do_next() {
        let spec = MergeSpec {
            merged: A.into(),
            keeping: B.into(),
            name: "main".into(),
        };
        let texts: Vec<String> = [
            MergeProbe::Committed,
            MergeProbe::Unfinished { conflicted: vec![] },
            MergeProbe::Unfinished {
                conflicted: vec!["a.txt".into(), "b.txt".into()],
            },
            MergeProbe::NotMerged,
            MergeProbe::WorkLost,
            MergeProbe::Markers(vec!["a.txt".into()]),
            MergeProbe::Error("no repository".into()),
        ]
        .iter()
        .map(|probe| {
            let (met, detail, short) = spec.phrases(probe);
            format!("{met} | {short} | {detail}")
        })
        .collect();
        insta::assert_snapshot!(texts.join("\n"));
    }

    /// The resolution loop's exit condition as `pagent parallel` writes it: the merge
    /// and the check, each reported.
    #[test]
    fn a_resolution_is_met_only_when_committed_and_the_check_passes() {
        use crate::testing::MemoryWorld;
        use crate::world::CheckOutcome;
        let condition = Condition::from_json(
            &json!({"all": [
                {"merge_committed": A, "keeping": B, "name": "main"},
                {"custom": "make test", "timeout": 60}
            ]}),
            "exit_when",
        )
        .unwrap();
        let failing = CheckOutcome::Failed {
            code: Some(1),
            tail: "1 failed".into(),
        };
        for (probe, check, met) in [
            (MergeProbe::Committed, CheckOutcome::Passed, true),
            (MergeProbe::Committed, failing.clone(), false),
            (
                MergeProbe::Unfinished {
                    conflicted: vec!["a".into()],
                },
                CheckOutcome::Passed,
                false,
            ),
            (
                MergeProbe::Markers(vec!["a".into()]),
                CheckOutcome::Passed,
                false,
            ),
        ] {
            let mut world = MemoryWorld::default()
                .merge(probe.clone())
                .check("make test", check);
            let evaluation = condition.evaluate(&mut world);
            assert_eq!(evaluation.met, met, "{probe:?}: {evaluation:?}");
            assert_eq!(evaluation.findings.len(), 2);
        }
    }
}
