//! Running the backpressure checks of one edited file (the policy is in
//! `pagent_engine::backpressure`).
//!
//! A default check applies only where it makes sense: its program must be installed, and
//! project-level tools need the project to use them (a `Cargo.toml` above the file for
//! `cargo check`, a `tsconfig.json` and a local TypeScript for `tsc`, a `go.mod` for
//! `go vet`). Anything that does not apply is skipped silently: the model is only told
//! about real problems. Python's byte code goes to a cache outside the project, so a
//! check never adds files the no-progress detector would count.
//!
//! A check that would run the project's own code (its `node_modules/.bin/tsc`, or
//! `cargo check` with the crate's build scripts) runs only when the user trusted that
//! file's content (`pagent trust`); otherwise it is skipped and the hook says so once.
//! Files are read through the project's door.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::time::Instant;

use pagent_engine::backpressure::{CheckResult, CheckRun, CheckSpec, Requirement};
use pagent_engine::{Check, CheckShape, Syntax, check_syntax};

use crate::cli::env;
use crate::store::door;
use crate::store::project::Project;
use crate::store::trust::Verdict;
use crate::world::check::{Ran, run_command};

/// Files larger than this are not parsed by the built-in checks.
const MAX_PARSE_BYTES: u64 = 64 * 1024 * 1024;

/// One check's outcome and how long it took.
#[derive(Debug)]
pub struct Checked {
    pub label: String,
    pub result: CheckResult,
    pub millis: u64,
    /// The project file that would have to be trusted for this check to run.
    pub untrusted: Option<PathBuf>,
}

/// Whether the project file at a relative path may be run (its content is trusted).
pub type TrustFn<'a> = &'a dyn Fn(&Path) -> Verdict;

/// Runs `specs` on `file` (relative to the project root, a regular file), in order.
pub fn run_checks(
    project: &Project,
    file: &Path,
    specs: &[CheckSpec],
    path_env: Option<&OsStr>,
    cache_dir: Option<&Path>,
    trusted: TrustFn<'_>,
) -> Vec<Checked> {
    specs
        .iter()
        .map(|spec| {
            let started = Instant::now();
            let (result, untrusted) = run_one(project, file, spec, path_env, cache_dir, trusted);
            Checked {
                label: spec.label(),
                result,
                millis: u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX),
                untrusted,
            }
        })
        .collect()
}

fn run_one(
    project: &Project,
    file: &Path,
    spec: &CheckSpec,
    path_env: Option<&OsStr>,
    cache_dir: Option<&Path>,
    trusted: TrustFn<'_>,
) -> (CheckResult, Option<PathBuf>) {
    let root = project.root.as_path();
    let argv = match &spec.run {
        CheckRun::Builtin(syntax) => return (check_builtin(project, file, *syntax), None),
        CheckRun::Command(argv) if !argv.is_empty() => argv,
        CheckRun::Command(_) => return (CheckResult::Skipped("no command".into()), None),
    };
    let rel_dir = file.parent().unwrap_or(Path::new(""));
    let dir = root.join(rel_dir);
    let skipped = |why: &str| (CheckResult::Skipped(why.to_owned()), None);
    let needs_trust = |rel: PathBuf| -> Option<(CheckResult, Option<PathBuf>)> {
        match trusted(&rel) {
            Verdict::Trusted => None,
            verdict => {
                let why = if verdict == Verdict::Changed {
                    "changed since you trusted it"
                } else {
                    "not trusted"
                };
                Some((
                    CheckResult::Skipped(format!(
                        "{} is {why}; run `pagent trust {}` to allow it",
                        rel.display(),
                        crate::store::consent::shell_word(&rel.display().to_string())
                    )),
                    Some(rel),
                ))
            }
        }
    };
    let (program, cwd) = match spec.requires {
        None => (None, root.to_path_buf()),
        Some(Requirement::CargoProject) => match find_up(project, rel_dir, "Cargo.toml") {
            Some(found) => {
                if let Some(refused) = needs_trust(found.join("Cargo.toml")) {
                    return refused;
                }
                (None, root.join(found))
            }
            None => return skipped("no Cargo.toml above the file"),
        },
        Some(Requirement::GoModule) => match find_up(project, rel_dir, "go.mod") {
            Some(_) => (None, dir.clone()),
            None => return skipped("no go.mod above the file"),
        },
        Some(Requirement::TypescriptProject) => {
            let Some(config_dir) = find_up(project, rel_dir, "tsconfig.json") else {
                return skipped("no tsconfig.json above the file");
            };
            match find_up(project, &config_dir, "node_modules/.bin/tsc") {
                Some(bin_dir) => {
                    let tsc = bin_dir.join("node_modules/.bin/tsc");
                    if let Some(refused) = needs_trust(tsc.clone()) {
                        return refused;
                    }
                    (Some(root.join(tsc)), root.join(config_dir))
                }
                None => return skipped("TypeScript is not installed in the project"),
            }
        }
    };
    let program = match program {
        Some(program) => program,
        None if argv[0].contains('/') => root.join(&argv[0]),
        None => match find_program(&argv[0], path_env) {
            Some(program) => program,
            None => return skipped(&format!("{} is not installed", argv[0])),
        },
    };
    let file = root.join(file);
    let substitute = |arg: &String| {
        arg.replace("{file}", &file.to_string_lossy())
            .replace("{dir}", &dir.to_string_lossy())
            .replace("{root}", &root.to_string_lossy())
    };
    let mut full = vec![program.to_string_lossy().into_owned()];
    full.extend(argv[1..].iter().map(substitute));
    let check = Check {
        shape: CheckShape::Argv(full),
        timeout_secs: spec.timeout_secs(),
    };
    // In the user's own folder: a shared /tmp name could be a link another user planted.
    let pycache = cache_dir.map_or_else(
        || std::env::temp_dir().join(format!("pagent-pycache-{}", std::process::id())),
        |dir| dir.join("pycache"),
    );
    let env = [
        (
            "PYTHONPYCACHEPREFIX",
            pycache.to_string_lossy().into_owned(),
        ),
        (env::PAGENT_FILE, file.to_string_lossy().into_owned()),
    ];
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let result = match run_command(&cwd, &check, &env) {
        Ran::Exited {
            code: Some(0),
            output,
        } if spec.fail_on_output && !output.trim().is_empty() => {
            CheckResult::Failed(format!("{} reported:\n{output}", spec.label()))
        }
        Ran::Exited { code: Some(0), .. } => CheckResult::Passed,
        Ran::Exited { code, output } => {
            let how = code.map_or_else(
                || "was killed by a signal".to_owned(),
                |c| format!("exited with code {c}"),
            );
            CheckResult::Failed(if output.trim().is_empty() {
                format!("the check {how} and printed nothing")
            } else {
                output
            })
        }
        Ran::TimedOut { output } => CheckResult::TimedOut {
            after_secs: spec.timeout_secs(),
            output,
        },
        Ran::NotStarted(why) => CheckResult::Skipped(format!("{} could not start: {why}", argv[0])),
        Ran::Stopped => CheckResult::Skipped("stopped".into()),
    };
    (result, None)
}

fn read_text(project: &Project, file: &Path) -> Result<String, String> {
    let bytes = project
        .dir()
        .read(file, MAX_PARSE_BYTES)
        .map_err(|e| format!("cannot read the file: {e}"))?;
    String::from_utf8(bytes).map_err(|e| {
        format!(
            "the file is not UTF-8 text (invalid byte at offset {})",
            e.utf8_error().valid_up_to()
        )
    })
}

/// The folder (relative to the root), from `start` up to the root, that contains `name`
/// (inside the project: a symlink out does not count).
fn find_up(project: &Project, start: &Path, name: &str) -> Option<PathBuf> {
    let mut dir = start;
    loop {
        if project.dir().kind(&dir.join(name)).ok().flatten().is_some() {
            return Some(dir.to_path_buf());
        }
        dir = dir.parent()?;
    }
}

/// `name` on `PATH`, if it is an executable file there.
pub fn find_program(name: &str, path_env: Option<&OsStr>) -> Option<PathBuf> {
    std::env::split_paths(path_env?)
        .filter(|dir| dir.is_absolute())
        .map(|dir| dir.join(name))
        .find(|candidate| door::is_executable_file(candidate))
}

/// A built-in parser's verdict on `file`: no subprocess.
fn check_builtin(project: &Project, file: &Path, syntax: Syntax) -> CheckResult {
    let shown = file.display().to_string();
    match read_text(project, file) {
        Ok(text) => match check_syntax(syntax, &text) {
            Ok(()) => CheckResult::Passed,
            Err(err) => CheckResult::Failed(format!("{shown}: {err}")),
        },
        Err(why) => CheckResult::Failed(why),
    }
}

#[cfg(test)]
#[allow(clippy::disallowed_methods, clippy::disallowed_types)]
mod tests {
    use std::fs;

    use super::*;

    #[test]
    fn find_up_stops_at_the_root() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        fs::create_dir_all(root.join("a/b")).unwrap();
        fs::write(root.join("a/Cargo.toml"), "").unwrap();
        let project = Project::at(&root).unwrap();
        assert_eq!(
            find_up(&project, Path::new("a/b"), "Cargo.toml"),
            Some(PathBuf::from("a"))
        );
        assert_eq!(find_up(&project, Path::new("a/b"), "go.mod"), None);
        // Above the root does not count, nor does a symlink out.
        std::os::unix::fs::symlink("/etc/hostname", root.join("a/b/go.mod")).unwrap();
        assert_eq!(find_up(&project, Path::new("a/b"), "go.mod"), None);
    }

    #[test]
    fn finds_programs_on_path_only_when_executable() {
        let dir = tempfile::tempdir().unwrap();
        let bin = dir.path().join("bin");
        fs::create_dir(&bin).unwrap();
        fs::write(bin.join("tool"), "#!/bin/sh\n").unwrap();
        fs::write(bin.join("data"), "").unwrap();
        use std::os::unix::fs::PermissionsExt;
        fs::set_permissions(bin.join("tool"), fs::Permissions::from_mode(0o755)).unwrap();
        let path = std::env::join_paths([Path::new("relative"), &bin]).unwrap();
        assert_eq!(find_program("tool", Some(&path)), Some(bin.join("tool")));
        assert_eq!(find_program("data", Some(&path)), None);
        assert_eq!(find_program("tool", None), None);
    }
}
