//! The real [`World`]: the engine's questions answered from the project on disk, every
//! file through the project's door.

pub mod backpressure;
pub mod check;
pub mod driven;
pub mod fingerprint;
pub mod merge;
pub mod overview;
pub mod probe;
pub mod report;
pub mod transcript;
pub mod usage;
pub mod zone;

use std::ffi::OsString;
use std::path::PathBuf;

use pagent_engine::{
    Check, CheckOutcome, Probe, RelPath, ReviewOutcome, ReviewRequest, State, World,
};

use crate::agent::review::ReviewSetup;
use crate::store::project::Project;

/// Larger files are not read as text (a PRD's stories are small).
const MAX_TEXT_BYTES: u64 = 16 * 1024 * 1024;

#[derive(Debug)]
pub struct FsWorld<'a> {
    project: &'a Project,
    stage: String,
    loop_id: String,
    /// `last_assistant_message` from the hook input, the first source to trust.
    hook_message: Option<String>,
    transcript: Option<PathBuf>,
    /// Status and other read-only callers must not run commands, nor tick a plan.
    run_commands: bool,
    cached_message: Option<Option<String>>,
    /// How to start a reviewer; `None` where no reviewer may run.
    review: Option<ReviewSetup>,
    /// `PATH` as pagent got it: the process door cleans it before a check runs.
    path_env: Option<OsString>,
    /// The walls a contained loop's checks run inside (`--sandbox`), or none.
    walls: Option<pagent_door::process::Containment>,
    /// What the user should hear once about this decision's world (a repository too
    /// large for a content fingerprint).
    notice: Option<String>,
    /// What reviewers started by this world reported using.
    review_usage: Vec<pagent_protocol::stream::UsageRecord>,
}

impl<'a> FsWorld<'a> {
    /// A world for deciding an iteration of `state`'s loop.
    pub fn for_hook(
        project: &'a Project,
        state: &State,
        hook_message: Option<String>,
        transcript: Option<PathBuf>,
    ) -> FsWorld<'a> {
        FsWorld {
            project,
            stage: state.current().name.clone(),
            loop_id: state.loop_id.clone(),
            hook_message,
            transcript,
            run_commands: true,
            cached_message: None,
            review: None,
            path_env: None,
            walls: None,
            notice: None,
            review_usage: Vec::new(),
        }
    }

    /// Lets this world's checks find their programs on `path_env` (cleaned first).
    pub fn with_path(mut self, path_env: Option<OsString>) -> FsWorld<'a> {
        self.path_env = path_env;
        self
    }

    /// Runs this world's checks inside `walls` (a contained loop's), if any.
    pub fn with_walls(mut self, walls: Option<pagent_door::process::Containment>) -> FsWorld<'a> {
        self.walls = walls;
        self
    }

    /// The notice for the user this world gathered while deciding, if any: the key it is
    /// remembered by (said once per project) and its text.
    pub fn take_notice(&mut self) -> Option<(String, String)> {
        self.notice
            .take()
            .map(|text| ("repository too large for a fingerprint".to_owned(), text))
    }

    /// What the reviewers this world started reported using (for the loop's budgets).
    pub fn take_review_usage(&mut self) -> Vec<pagent_protocol::stream::UsageRecord> {
        std::mem::take(&mut self.review_usage)
    }

    /// Lets this world start a reviewer (a `review` condition) as `setup` says.
    pub fn with_review(mut self, setup: ReviewSetup) -> FsWorld<'a> {
        self.review = Some(setup);
        self
    }

    /// A world that only looks: no commands, no transcript.
    pub fn read_only(project: &'a Project) -> FsWorld<'a> {
        FsWorld {
            project,
            stage: String::new(),
            loop_id: String::new(),
            hook_message: None,
            transcript: None,
            run_commands: false,
            cached_message: None,
            review: None,
            path_env: None,
            walls: None,
            notice: None,
            review_usage: Vec::new(),
        }
    }
}

/// The progress mark of `state`'s loop as its project is now: the engine's one answer
/// ([`pagent_engine::progress::mark`]), which set-up keeps and every decision compares.
pub fn progress_mark(project: &Project, state: &State) -> Option<String> {
    pagent_engine::progress::mark(state, &mut FsWorld::read_only(project))
}

impl World for FsWorld<'_> {
    fn plans(&self) -> &dyn pagent_engine::stories::PlanReader {
        &pagent_stories::Reader
    }

    fn count_lines(&mut self, path: &RelPath, enough: u64) -> Probe {
        probe::count_lines(self.project.dir(), path, enough)
    }

    fn count_files(&mut self, path: &RelPath, enough: u64) -> Probe {
        probe::count_files(self.project.dir(), path, enough)
    }

    fn read_text(&mut self, path: &RelPath) -> Result<String, Probe> {
        let bytes = self
            .project
            .dir()
            .read(std::path::Path::new(path.as_str()), MAX_TEXT_BYTES)
            .map_err(probe::probe_of)?;
        String::from_utf8(bytes).map_err(|_| Probe::Error("not UTF-8 text".into()))
    }

    fn replace_text(&mut self, path: &RelPath, old: &str, new: &str) -> Result<(), String> {
        if !self.run_commands {
            return Err("this caller only looks".into());
        }
        let rel = std::path::Path::new(path.as_str());
        let now = self
            .project
            .dir()
            .read(rel, MAX_TEXT_BYTES)
            .map_err(|e| e.to_string())?;
        if now != old.as_bytes() {
            return Err("the file changed meanwhile".into());
        }
        self.project
            .dir()
            .write_atomic(rel, new.as_bytes())
            .map_err(|e| e.to_string())
    }

    fn last_assistant_message(&mut self) -> Option<String> {
        if let Some(cached) = &self.cached_message {
            return cached.clone();
        }
        let message = match (&self.hook_message, &self.transcript) {
            (Some(message), _) => Some(message.clone()),
            (None, Some(path)) => transcript::read_last_assistant_text(path).unwrap_or(None),
            (None, None) => None,
        };
        self.cached_message = Some(message.clone());
        message
    }

    fn run_check(&mut self, check: &Check) -> CheckOutcome {
        if !self.run_commands {
            return CheckOutcome::NotRun;
        }
        let project = self.project;
        let loop_id = self.loop_id.clone();
        // A loop cancelled (or replaced) while its check runs stops the check at once.
        let mut keep_going = || match crate::store::read_state(project) {
            Ok(Some(state)) => state.is_active() && state.loop_id == loop_id,
            Ok(None) => false,
            Err(_) => true,
        };
        check::run_check(
            &project.root,
            check,
            &self.stage,
            (self.path_env.as_deref(), self.walls.as_ref()),
            &mut keep_going,
        )
    }

    fn run_review(&mut self, request: &ReviewRequest) -> ReviewOutcome {
        if !self.run_commands {
            return ReviewOutcome::NotRun;
        }
        let Some(setup) = &self.review else {
            return ReviewOutcome::Failed("this caller cannot start a reviewer".into());
        };
        let project = self.project;
        let loop_id = self.loop_id.clone();
        let mut keep_going = || match crate::store::read_state(project) {
            Ok(Some(state)) => state.is_active() && state.loop_id == loop_id,
            Ok(None) => false,
            Err(_) => true,
        };
        let label = format!("{}-{}", self.stage, crate::io::now().0);
        crate::agent::review::run_review(
            project,
            request,
            setup,
            &label,
            &mut keep_going,
            &mut self.review_usage,
        )
    }

    fn fingerprint(&mut self) -> Option<String> {
        let (digest, notice) = fingerprint::fingerprint_noting(self.project);
        self.notice = self.notice.take().or(notice);
        digest
    }

    fn merge_probe(
        &mut self,
        spec: &pagent_engine::merge::MergeSpec,
    ) -> pagent_engine::merge::MergeProbe {
        merge::probe(&self.project.root, spec)
    }
}

// Unix-only fixtures (symlinks, FIFOs, modes, sh); the Windows door has its own.
#[cfg(test)]
#[cfg(unix)]
#[allow(clippy::disallowed_methods)]
mod tests {
    use super::*;

    #[test]
    fn a_tick_is_written_only_by_a_deciding_world_over_the_text_it_read() {
        let dir = tempfile::tempdir().unwrap();
        let project = Project::at(dir.path()).unwrap();
        let plan = project.root.join("tasks.md");
        std::fs::write(&plan, "- [ ] T001 a\n").unwrap();
        let rel = RelPath::new("tasks.md").unwrap();
        let ticked = "- [X] T001 a\n";

        let mut looking = FsWorld::read_only(&project);
        assert!(
            looking
                .replace_text(&rel, "- [ ] T001 a\n", ticked)
                .is_err()
        );
        let state = pagent_engine::State::new_ralph(
            "task".into(),
            "DONE".into(),
            pagent_engine::SetupOptions::default(),
            None,
            pagent_engine::Timestamp(0),
        );
        let mut deciding = FsWorld::for_hook(&project, &state, None, None);
        // The file changed since it was read: nothing is written.
        assert_eq!(
            deciding.replace_text(&rel, "- [ ] T001 old\n", ticked),
            Err("the file changed meanwhile".to_owned())
        );
        assert_eq!(std::fs::read_to_string(&plan).unwrap(), "- [ ] T001 a\n");
        deciding
            .replace_text(&rel, "- [ ] T001 a\n", ticked)
            .unwrap();
        assert_eq!(std::fs::read_to_string(&plan).unwrap(), ticked);
        // Never through a symlink.
        std::fs::remove_file(&plan).unwrap();
        std::os::unix::fs::symlink(dir.path().join("elsewhere"), &plan).unwrap();
        assert!(deciding.replace_text(&rel, "", ticked).is_err());
    }
}
