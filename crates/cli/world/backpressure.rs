//! Running the backpressure checks of one edited file (the policy is in
//! `pagent_engine::backpressure`).
//!
//! A default check applies only where it makes sense: its program must be installed, and
//! project-level tools need the project to use them (a `Cargo.toml` above the file for
//! `cargo check`, a `tsconfig.json` and a local TypeScript package for `tsc`, a `go.mod`
//! for `go vet`). Anything that does not apply is skipped silently: the model is only
//! told about real problems. Python's byte code goes to a cache outside the project, so a
//! check never adds files the no-progress detector would count.
//!
//! Every check starts through the process door (`pagent_door::process`). pagent's own default
//! checks run isolated: from a folder the project cannot write, with the interpreter
//! flags that keep the project's files out of their imports (so a planted `py_compile.py`
//! is never imported). A check someone configured (in their own config, or in a project
//! file they trusted) runs as written, in the project root. A check that would run the
//! project's own code (its TypeScript package, or `cargo check` with the crate's build
//! scripts) runs only when the user trusted what it covers (`store::covers`); otherwise
//! it is skipped and the hook says so once. Files are read through the project's door.

use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use pagent_engine::backpressure::{CheckResult, CheckRun, CheckSpec, Requirement};
use pagent_engine::{Syntax, check_syntax};

use crate::cli::env;
use crate::store::covers;
use crate::store::project::Project;
use crate::store::trust::Verdict;
use pagent_door::files as door;
use pagent_door::process::{Launch, Program, Ran, RunLimits, SearchPath, node_guard};

/// Files larger than this are not parsed by the built-in checks.
const MAX_PARSE_BYTES: u64 = 64 * 1024 * 1024;
/// Bytes of a check's output kept.
const KEEP: usize = 64 * 1024;

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
    trusted: TrustFn<'_>,
) -> Vec<Checked> {
    // Only a command needs programs found (the built-in parsers run in-process), and
    // cleaning PATH costs a few system calls per entry: not for a JSON edit.
    let runs_commands = specs.iter().any(|s| matches!(s.run, CheckRun::Command(_)));
    let search = if runs_commands {
        SearchPath::new(path_env, &[&project.root])
    } else {
        SearchPath::default()
    };
    let ext = file
        .extension()
        .map(|e| e.to_string_lossy().into_owned())
        .unwrap_or_default();
    // `py_compile` writes the checked file's byte code wherever Python's cache prefix
    // says: a private folder of this run's, removed when the checks end. It once was
    // pagent's config folder, where 1.3 MB of byte code stayed (issue 30).
    let scratch = runs_commands
        .then(|| door::private_temp_dir("pagent-check-"))
        .transpose();
    let scratch = match scratch {
        Ok(scratch) => scratch,
        Err(err) => {
            let why = format!("no private temporary folder for its byte code: {err}");
            return skipped_all(specs, &why);
        }
    };
    let cache = scratch.as_ref().map(|d| d.path().join("pycache"));
    specs
        .iter()
        .map(|spec| {
            let started = Instant::now();
            let builtin = spec.is_builtin_default(&ext);
            let (result, untrusted) = run_one(
                project,
                file,
                spec,
                builtin,
                &search,
                cache.as_deref(),
                trusted,
            );
            Checked {
                label: spec.label(),
                result,
                millis: u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX),
                untrusted,
            }
        })
        .collect()
}

/// Every check skipped for `why`.
fn skipped_all(specs: &[CheckSpec], why: &str) -> Vec<Checked> {
    specs
        .iter()
        .map(|spec| Checked {
            label: spec.label(),
            result: CheckResult::Skipped(why.to_owned()),
            millis: 0,
            untrusted: None,
        })
        .collect()
}

/// Where a check runs and with which program, once its requirement holds.
enum Plan {
    /// Run: the program (if the requirement chose it), the folder, and whether the
    /// folder is the project's because the tool needs it (else the neutral one).
    Run {
        program: Option<Program>,
        /// Arguments before the check's own (node's guard and `tsc`'s script).
        lead: Vec<OsString>,
        cwd: PathBuf,
        needs_root: bool,
    },
    Skip(CheckResult, Option<PathBuf>),
}

fn run_one(
    project: &Project,
    file: &Path,
    spec: &CheckSpec,
    builtin: bool,
    search: &SearchPath,
    pycache: Option<&Path>,
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
    let (program, lead, cwd, needs_root) = match plan(project, spec, rel_dir, search, trusted) {
        Plan::Run {
            program,
            lead,
            cwd,
            needs_root,
        } => (program, lead, cwd, needs_root),
        Plan::Skip(result, untrusted) => return (result, untrusted),
    };
    let program = match program {
        Some(program) => program,
        None if argv[0].contains('/') => Program::trusted_in_project(root, &argv[0]),
        None => match Program::named(&argv[0], search) {
            Ok(program) => program,
            Err(_) => return skipped(&format!("{} is not installed", argv[0])),
        },
    };
    let file = root.join(file);
    let substitute = |arg: &String| {
        arg.replace("{file}", &file.to_string_lossy())
            .replace("{dir}", &dir.to_string_lossy())
            .replace("{root}", &root.to_string_lossy())
    };
    let Some(pycache) = pycache else {
        return skipped("no private temporary folder for its byte code");
    };
    // Byte code only in the run's own folder, and none for Python's own modules at all:
    // a configured `python3 ...` reads these variables; a built-in check, isolated, gets
    // them as `-X pycache_prefix=` and `-B` (process/isolate.rs).
    let mut launch = Launch::new(program, &cwd, search)
        .args(lead)
        .args(argv[1..].iter().map(substitute))
        .env("PYTHONPYCACHEPREFIX", pycache)
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .env(env::PAGENT_FILE, &file);
    if builtin {
        launch = if needs_root {
            launch.isolated_in(&cwd)
        } else {
            launch.isolated()
        };
    }
    let limits = RunLimits {
        timeout: Duration::from_secs(spec.timeout_secs()),
        keep: KEEP,
    };
    let result = match launch.run(limits, &mut || true) {
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

fn skipped(why: &str) -> (CheckResult, Option<PathBuf>) {
    (CheckResult::Skipped(why.to_owned()), None)
}

/// Whether `spec`'s requirement holds, and if so with which program and where: the
/// project's own programs only once trusted.
fn plan(
    project: &Project,
    spec: &CheckSpec,
    rel_dir: &Path,
    search: &SearchPath,
    trusted: TrustFn<'_>,
) -> Plan {
    let root = project.root.as_path();
    match spec.requires {
        None => Plan::Run {
            program: None,
            lead: Vec::new(),
            cwd: root.to_path_buf(),
            needs_root: false,
        },
        Some(Requirement::CargoProject) => match find_up(project, rel_dir, "Cargo.toml") {
            Some(found) => {
                if let Some(refused) = untrusted(found.join("Cargo.toml"), trusted) {
                    return refused;
                }
                Plan::Run {
                    program: None,
                    lead: Vec::new(),
                    cwd: root.join(found),
                    needs_root: true,
                }
            }
            None => skip_plan("no Cargo.toml above the file"),
        },
        Some(Requirement::GoModule) => match find_up(project, rel_dir, "go.mod") {
            // go reads the module (data); GOTOOLCHAIN=local keeps go.mod from choosing
            // the Go that runs.
            Some(_) => Plan::Run {
                program: None,
                lead: Vec::new(),
                cwd: root.join(rel_dir),
                needs_root: true,
            },
            None => skip_plan("no go.mod above the file"),
        },
        Some(Requirement::TypescriptProject) => plan_tsc(project, rel_dir, search, trusted),
    }
}

fn skip_plan(why: &str) -> Plan {
    Plan::Skip(CheckResult::Skipped(why.to_owned()), None)
}

/// The skip for a project file not (or no longer) trusted, naming the command that trusts
/// it; `None` when it is trusted.
fn untrusted(rel: PathBuf, trusted: TrustFn<'_>) -> Option<Plan> {
    let why = match trusted(&rel) {
        Verdict::Trusted => return None,
        Verdict::Changed => "changed since you trusted it",
        Verdict::Untrusted => "not trusted",
    };
    Some(Plan::Skip(
        CheckResult::Skipped(format!(
            "{} is {why}; run `pagent trust {}` to allow it",
            rel.display(),
            crate::store::consent::shell_word(&rel.display().to_string())
        )),
        Some(rel),
    ))
}

/// The project's own TypeScript compiler, run by node from the folder of the nearest
/// `tsconfig.json`, once the TypeScript package is trusted.
fn plan_tsc(project: &Project, rel_dir: &Path, search: &SearchPath, trusted: TrustFn<'_>) -> Plan {
    let Some(config_dir) = find_up(project, rel_dir, "tsconfig.json") else {
        return skip_plan("no tsconfig.json above the file");
    };
    let manifest = format!("{}/package.json", covers::TYPESCRIPT);
    let Some(base) = find_up(project, &config_dir, &manifest) else {
        return skip_plan("TypeScript is not installed in the project");
    };
    let package = base.join(covers::TYPESCRIPT);
    if let Some(refused) = untrusted(package.clone(), trusted) {
        return refused;
    }
    let Ok(node) = Program::named("node", search) else {
        return skip_plan("node is not installed");
    };
    let (Some(script), Ok(real)) = (
        tsc_script(project, &package),
        project.dir().real_dir(&package),
    ) else {
        return skip_plan("the TypeScript package names no tsc script");
    };
    Plan::Run {
        program: Some(node),
        lead: node_guard(&real, &real.join(script)),
        cwd: project.root.join(config_dir),
        needs_root: true,
    }
}

/// The package's `tsc` script (its `package.json`'s `bin.tsc`, else `bin/tsc`), relative
/// to the package and inside it, as trust covers only the package.
fn tsc_script(project: &Project, package: &Path) -> Option<PathBuf> {
    let bytes = project
        .dir()
        .read(&package.join("package.json"), MAX_PARSE_BYTES)
        .ok()?;
    let manifest: serde_json::Value = serde_json::from_slice(&bytes).ok()?;
    let named = manifest["bin"]["tsc"].as_str().unwrap_or("bin/tsc");
    let mut script = PathBuf::new();
    for part in Path::new(named).components() {
        match part {
            std::path::Component::Normal(part) => script.push(part),
            std::path::Component::CurDir => {}
            _ => return None,
        }
    }
    matches!(
        project.dir().kind(&package.join(&script)),
        Ok(Some((pagent_door::files::Kind::File, _)))
    )
    .then_some(script)
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

// Unix-only fixtures (symlinks, FIFOs, modes, sh); the Windows door has its own.
#[cfg(test)]
#[cfg(unix)]
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
}
