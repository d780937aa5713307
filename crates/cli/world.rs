//! The real [`World`]: the engine's questions answered from the project on disk.

use std::path::{Path, PathBuf};

use pagent_engine::{Check, CheckOutcome, Probe, RelPath, World};

use crate::{check, fingerprint, probe, transcript};

/// Larger files are not read as text (a PRD's stories are small).
const MAX_TEXT_BYTES: u64 = 16 * 1024 * 1024;

#[derive(Debug)]
pub struct FsWorld<'a> {
    root: &'a Path,
    stage: String,
    /// `last_assistant_message` from the hook input, the first source to trust.
    hook_message: Option<String>,
    transcript: Option<PathBuf>,
    /// Status and other read-only callers must not run commands.
    run_commands: bool,
    cached_message: Option<Option<String>>,
}

impl<'a> FsWorld<'a> {
    /// A world for deciding a Stop.
    pub fn for_hook(
        root: &'a Path,
        stage: &str,
        hook_message: Option<String>,
        transcript: Option<PathBuf>,
    ) -> FsWorld<'a> {
        FsWorld {
            root,
            stage: stage.to_owned(),
            hook_message,
            transcript,
            run_commands: true,
            cached_message: None,
        }
    }

    /// A world that only looks: no commands, no transcript.
    pub fn read_only(root: &'a Path) -> FsWorld<'a> {
        FsWorld {
            root,
            stage: String::new(),
            hook_message: None,
            transcript: None,
            run_commands: false,
            cached_message: None,
        }
    }
}

impl World for FsWorld<'_> {
    fn count_lines(&mut self, path: &RelPath) -> Probe {
        probe::count_lines(self.root, path)
    }

    fn count_files(&mut self, path: &RelPath, enough: u64) -> Probe {
        probe::count_files(self.root, path, enough)
    }

    fn read_text(&mut self, path: &RelPath) -> Result<String, Probe> {
        let real = probe::resolve_inside(self.root, path)?;
        let meta = std::fs::metadata(&real).map_err(|e| Probe::Error(e.to_string()))?;
        if !meta.is_file() {
            return Err(Probe::WrongKind);
        }
        if meta.len() > MAX_TEXT_BYTES {
            return Err(Probe::Error(format!(
                "larger than {} MiB",
                MAX_TEXT_BYTES >> 20
            )));
        }
        std::fs::read_to_string(&real).map_err(|e| Probe::Error(e.to_string()))
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
        check::run_check(self.root, check, &self.stage)
    }

    fn fingerprint(&mut self) -> Option<String> {
        fingerprint::fingerprint(self.root)
    }
}
