//! Running the backpressure checks of one edited file (the policy is in
//! `pagent_engine::backpressure`).
//!
//! A default check applies only where it makes sense: its program must be installed, and
//! project-level tools need the project to use them (a `Cargo.toml` above the file for
//! `cargo check`, a `tsconfig.json` and a local TypeScript for `tsc`, a `go.mod` for
//! `go vet`). Anything that does not apply is skipped silently: the model is only told
//! about real problems. Python's byte code goes to a cache outside the project, so a
//! check never adds files the no-progress detector would count.

use std::ffi::OsStr;
use std::fs;
use std::path::{Path, PathBuf};
use std::time::Instant;

use pagent_engine::backpressure::{CheckResult, CheckSpec, Requirement};
use pagent_engine::{Check, CheckShape, check_syntax};

use crate::check::{Ran, run_command};

/// Files larger than this are not parsed by the built-in checks.
const MAX_PARSE_BYTES: u64 = 64 * 1024 * 1024;

/// One check's outcome and how long it took.
#[derive(Debug)]
pub struct Checked {
    pub label: String,
    pub result: CheckResult,
    pub millis: u64,
}

/// Runs `specs` on `file` (canonical, inside `root`), in order.
pub fn run_checks(
    root: &Path,
    file: &Path,
    specs: &[CheckSpec],
    path_env: Option<&OsStr>,
) -> Vec<Checked> {
    specs
        .iter()
        .map(|spec| {
            let started = Instant::now();
            let result = run_one(root, file, spec, path_env);
            Checked {
                label: spec.label(),
                result,
                millis: u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX),
            }
        })
        .collect()
}

fn run_one(root: &Path, file: &Path, spec: &CheckSpec, path_env: Option<&OsStr>) -> CheckResult {
    if let Some(syntax) = spec.builtin {
        return match read_text(file) {
            Ok(text) => match check_syntax(syntax, &text) {
                Ok(()) => CheckResult::Passed,
                Err(err) => CheckResult::Failed(format!("{}: {err}", display(root, file))),
            },
            Err(why) => CheckResult::Failed(why),
        };
    }
    let Some(argv) = spec.command.as_ref().filter(|a| !a.is_empty()) else {
        return CheckResult::Skipped("no command".into());
    };
    let dir = file.parent().unwrap_or(root);
    let (program, cwd) = match spec.requires {
        None => (None, root.to_path_buf()),
        Some(Requirement::CargoProject) => match find_up(dir, root, "Cargo.toml") {
            Some(found) => (None, found),
            None => return CheckResult::Skipped("no Cargo.toml above the file".into()),
        },
        Some(Requirement::GoModule) => match find_up(dir, root, "go.mod") {
            Some(_) => (None, dir.to_path_buf()),
            None => return CheckResult::Skipped("no go.mod above the file".into()),
        },
        Some(Requirement::TypescriptProject) => {
            let Some(config_dir) = find_up(dir, root, "tsconfig.json") else {
                return CheckResult::Skipped("no tsconfig.json above the file".into());
            };
            match find_up(&config_dir, root, "node_modules/.bin/tsc") {
                Some(bin_dir) => (Some(bin_dir.join("node_modules/.bin/tsc")), config_dir),
                None => {
                    return CheckResult::Skipped(
                        "TypeScript is not installed in the project".into(),
                    );
                }
            }
        }
    };
    let program = match program {
        Some(program) => program,
        None if argv[0].contains('/') => root.join(&argv[0]),
        None => match find_program(&argv[0], path_env) {
            Some(program) => program,
            None => return CheckResult::Skipped(format!("{} is not installed", argv[0])),
        },
    };
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
    let pycache = std::env::temp_dir().join("pagent-pycache");
    let env = [
        (
            "PYTHONPYCACHEPREFIX",
            pycache.to_string_lossy().into_owned(),
        ),
        ("PAGENT_FILE", file.to_string_lossy().into_owned()),
    ];
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
    match run_command(&cwd, &check, &env) {
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
    }
}

fn read_text(file: &Path) -> Result<String, String> {
    let meta = fs::metadata(file).map_err(|e| format!("cannot read the file: {e}"))?;
    if meta.len() > MAX_PARSE_BYTES {
        return Err(format!(
            "the file is larger than {} MiB; not parsed",
            MAX_PARSE_BYTES >> 20
        ));
    }
    let bytes = fs::read(file).map_err(|e| format!("cannot read the file: {e}"))?;
    String::from_utf8(bytes).map_err(|e| {
        format!(
            "the file is not UTF-8 text (invalid byte at offset {})",
            e.utf8_error().valid_up_to()
        )
    })
}

/// The folder, from `start` up to `root`, that contains `name`.
fn find_up(start: &Path, root: &Path, name: &str) -> Option<PathBuf> {
    let mut dir = start;
    loop {
        if dir.join(name).exists() {
            return Some(dir.to_path_buf());
        }
        if dir == root {
            return None;
        }
        dir = dir.parent().filter(|p| p.starts_with(root))?;
    }
}

/// `name` on `PATH`, if it is an executable file there.
pub fn find_program(name: &str, path_env: Option<&OsStr>) -> Option<PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    std::env::split_paths(path_env?)
        .filter(|dir| dir.is_absolute())
        .map(|dir| dir.join(name))
        .find(|candidate| {
            fs::metadata(candidate)
                .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        })
}

pub fn display(root: &Path, file: &Path) -> String {
    file.strip_prefix(root)
        .unwrap_or(file)
        .to_string_lossy()
        .into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn find_up_stops_at_the_root() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        fs::create_dir_all(root.join("a/b")).unwrap();
        fs::write(root.join("a/Cargo.toml"), "").unwrap();
        assert_eq!(
            find_up(&root.join("a/b"), &root, "Cargo.toml"),
            Some(root.join("a"))
        );
        assert_eq!(find_up(&root.join("a/b"), &root, "go.mod"), None);
        // Above the root does not count.
        assert_eq!(
            find_up(&root.join("a/b"), &root.join("a/b"), "Cargo.toml"),
            None
        );
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
