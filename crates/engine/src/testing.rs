//! An in-memory [`World`] for the engine's table tests, and (the `testing` feature) for
//! the stories crate's tests of the stories stage, which give it their plan reader.

use std::collections::HashMap;

use std::collections::VecDeque;

use crate::review::{ReviewOutcome, ReviewRequest};
use crate::stories::{NoPlans, PlanReader};
use crate::{Check, CheckOutcome, Probe, RelPath, SetupOptions, State, Timestamp, World};

/// A Ralph loop on "Fix it" with the promise DONE, started at time 0 in `session`.
pub fn ralph(session: Option<&str>) -> State {
    State::new_ralph(
        "Fix it".into(),
        "DONE".into(),
        SetupOptions {
            session_id: session.map(str::to_owned),
            ..SetupOptions::default()
        },
        None,
        Timestamp(0),
    )
}

#[derive(Debug, Default, Clone)]
pub struct MemoryWorld {
    files: HashMap<String, u64>,
    dirs: HashMap<String, u64>,
    message: Option<String>,
    texts: HashMap<String, String>,
    /// A probe answer other than a count (outside the project, unreadable) per path.
    probes: HashMap<String, Probe>,
    checks: HashMap<String, CheckOutcome>,
    pub fingerprint: Option<String>,
    pub checks_run: Vec<String>,
    /// What the next reviewers answer, in order; none left is a failed start.
    reviews: VecDeque<ReviewOutcome>,
    pub reviews_run: Vec<ReviewRequest>,
    /// What the repository says of a merge (`merge_committed`).
    merge: Option<crate::merge::MergeProbe>,
    plans: Plans,
}

/// The world's plan reader: none unless a test gives one.
#[derive(Debug, Clone, Copy)]
struct Plans(&'static dyn PlanReader);

impl Default for Plans {
    fn default() -> Self {
        Plans(&NoPlans)
    }
}

impl MemoryWorld {
    pub fn file(mut self, path: &str, lines: u64) -> Self {
        self.files.insert(path.to_owned(), lines);
        self
    }

    pub fn dir(mut self, path: &str, files: u64) -> Self {
        self.dirs.insert(path.to_owned(), files);
        self
    }

    /// A text file's content as it is now (after a tick).
    pub fn text_of(&self, path: &str) -> Option<&str> {
        self.texts.get(path).map(String::as_str)
    }

    pub fn text(mut self, path: &str, content: &str) -> Self {
        self.texts.insert(path.to_owned(), content.to_owned());
        self
    }

    /// `path` answers every probe with `probe` (a symlink out, a read error).
    pub fn probe(mut self, path: &str, probe: Probe) -> Self {
        self.probes.insert(path.to_owned(), probe);
        self
    }

    pub fn message(mut self, text: &str) -> Self {
        self.message = Some(text.to_owned());
        self
    }

    pub fn check(mut self, shown: &str, outcome: CheckOutcome) -> Self {
        self.checks.insert(shown.to_owned(), outcome);
        self
    }

    /// A reviewer that ends with this final message.
    pub fn review_says(mut self, text: &str) -> Self {
        self.reviews
            .push_back(ReviewOutcome::Answered(text.to_owned()));
        self
    }

    pub fn review_ends(mut self, outcome: ReviewOutcome) -> Self {
        self.reviews.push_back(outcome);
        self
    }

    pub fn merge(mut self, probe: crate::merge::MergeProbe) -> Self {
        self.merge = Some(probe);
        self
    }

    /// Plans of stories read by `reader` (the stories crate's).
    pub fn plans(mut self, reader: &'static dyn PlanReader) -> Self {
        self.plans = Plans(reader);
        self
    }

    pub fn tree(mut self, fingerprint: &str) -> Self {
        self.fingerprint = Some(fingerprint.to_owned());
        self
    }
}

impl World for MemoryWorld {
    fn count_lines(&mut self, path: &RelPath, enough: u64) -> Probe {
        if let Some(probe) = self.probes.get(path.as_str()) {
            return probe.clone();
        }
        match self.files.get(path.as_str()) {
            Some(n) => Probe::Count((*n).min(enough)),
            None if self.dirs.contains_key(path.as_str()) => Probe::WrongKind,
            None => Probe::Missing,
        }
    }

    fn count_files(&mut self, path: &RelPath, _enough: u64) -> Probe {
        if let Some(probe) = self.probes.get(path.as_str()) {
            return probe.clone();
        }
        match self.dirs.get(path.as_str()) {
            Some(n) => Probe::Count(*n),
            None if self.files.contains_key(path.as_str()) => Probe::WrongKind,
            None => Probe::Missing,
        }
    }

    fn plans(&self) -> &dyn PlanReader {
        self.plans.0
    }

    fn read_text(&mut self, path: &RelPath) -> Result<String, Probe> {
        if let Some(probe) = self.probes.get(path.as_str()) {
            return Err(probe.clone());
        }
        self.texts.get(path.as_str()).cloned().ok_or(Probe::Missing)
    }

    fn replace_text(&mut self, path: &RelPath, old: &str, new: &str) -> Result<(), String> {
        match self.texts.get_mut(path.as_str()) {
            Some(text) if text == old => {
                *text = new.to_owned();
                Ok(())
            }
            Some(_) => Err("the file changed meanwhile".into()),
            None => Err("no such file in the test world".into()),
        }
    }

    fn last_assistant_message(&mut self) -> Option<String> {
        self.message.clone()
    }

    fn run_check(&mut self, check: &Check) -> CheckOutcome {
        let shown = check.display();
        self.checks_run.push(shown.clone());
        self.checks
            .get(&shown)
            .cloned()
            .unwrap_or(CheckOutcome::Error(
                "no such command in the test world".into(),
            ))
    }

    fn run_review(&mut self, request: &ReviewRequest) -> ReviewOutcome {
        self.reviews_run.push(request.clone());
        self.reviews.pop_front().unwrap_or(ReviewOutcome::Failed(
            "no reviewer in the test world".into(),
        ))
    }

    fn fingerprint(&mut self) -> Option<String> {
        self.fingerprint.clone()
    }

    fn merge_probe(&mut self, _spec: &crate::merge::MergeSpec) -> crate::merge::MergeProbe {
        self.merge
            .clone()
            .unwrap_or(crate::merge::MergeProbe::Error(
                "no repository in the test world".into(),
            ))
    }
}
