//! What a checker of pagent's own choosing needs so that a project's files cannot take
//! part in running it, asked once per program here rather than at every call site.
//!
//! Every isolated checker runs from [`super::NEUTRAL_DIR`] with the cleaned `PATH`; the
//! edited file is reached by its absolute path. Then, program by program:
//!
//! - **Python** (`python`, `python3`, `python3.12`, ...): `-I`, isolated mode: neither the
//!   script's folder nor the working folder is put on `sys.path` (so a project's
//!   `py_compile.py` or `typing.py` is never imported), the user's site-packages are
//!   left out, and `PYTHON*` variables are ignored. Since `-I` ignores
//!   `PYTHONPYCACHEPREFIX` and `PYTHONDONTWRITEBYTECODE`, a cache folder asked for that
//!   way becomes `-X pycache_prefix=`, so byte code never lands in the project, and `-B`:
//!   with a cache folder, Python looks for its own modules' byte code there too, and
//!   would write all of them (1.3 MB) beside the checked file's.
//! - **Go** (`go`): `GOTOOLCHAIN=local`: a `toolchain` line in the project's `go.mod`
//!   would otherwise make `go` download and run the Go it names. (`gofmt` reads only the
//!   file; `go vet` reads the module, and cgo flags are allow-listed by Go itself.)
//! - **node** runs only a script of a package the user trusted (`tsc`), through
//!   [`node_guard`]: a few lines given with `-e` that make `require` refuse any module
//!   outside that package (node builtins excepted) before the script is loaded. Node
//!   resolves a bare `require` by walking up through every `node_modules` above the
//!   script, so without it a trusted `tsc` would load the project's other packages:
//!   TypeScript 5 requires `source-map-support` when `NODE_ENV=development`.
//! - **bash** (`bash -n`) and **shellcheck** parse and execute nothing; ShellCheck's
//!   `.shellcheckrc` can only choose warnings. **cargo** is never isolated: it builds the
//!   crate, which is the crate's code, so it runs only after `pagent trust`.

use std::ffi::OsString;
use std::path::Path;

/// Adds `name`'s isolation to its arguments and environment.
pub(super) fn isolation(name: &str, args: &mut Vec<OsString>, set: &mut Vec<(OsString, OsString)>) {
    if is_python(name) {
        let mut flags: Vec<OsString> = vec!["-I".into()];
        if let Some(at) = set.iter().position(|(k, _)| k == "PYTHONPYCACHEPREFIX") {
            let (_, prefix) = set.remove(at);
            let mut flag = OsString::from("pycache_prefix=");
            flag.push(prefix);
            flags.push("-X".into());
            flags.push(flag);
        }
        if let Some(at) = set.iter().position(|(k, _)| k == "PYTHONDONTWRITEBYTECODE") {
            set.remove(at);
            flags.push("-B".into());
        }
        args.splice(0..0, flags);
        // Ignored under -I; kept for a Python that was told to ignore -I's meaning.
        set.push(("PYTHONSAFEPATH".into(), "1".into()));
    } else if name == "go" {
        set.push(("GOTOOLCHAIN".into(), "local".into()));
    }
}

/// The arguments that make `node` run `script` (a file inside `package`, both real
/// paths) with `require` confined to `package`: `-e GUARD -- SCRIPT`, after which come
/// the script's own arguments (it sees them where it expects them, from `argv[2]`).
pub fn node_guard(package: &Path, script: &Path) -> Vec<OsString> {
    let package = serde_json::to_string(&package.to_string_lossy()).unwrap_or_default();
    let guard = format!(
        "const M = require('module'), p = require('path'); const pkg = {package}; \
         const resolve = M._resolveFilename; \
         M._resolveFilename = function (request, parent, isMain, options) {{ \
         const found = resolve.call(this, request, parent, isMain, options); \
         if (M.isBuiltin(found) || found === pkg || found.startsWith(pkg + p.sep)) return found; \
         throw new Error('pagent: ' + found + ' is outside the trusted package ' + pkg + '; not loaded'); }}; \
         require(process.argv[1]);"
    );
    vec![
        "-e".into(),
        guard.into(),
        "--".into(),
        script.as_os_str().to_os_string(),
    ]
}

/// `python`, `python3`, `python3.12`, `pypy3`: a Python interpreter by its file name.
fn is_python(name: &str) -> bool {
    let rest = name
        .strip_prefix("python")
        .or_else(|| name.strip_prefix("pypy"));
    rest.is_some_and(|r| r.chars().all(|c| c.is_ascii_digit() || c == '.'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn python_is_isolated_and_keeps_its_cache_outside_the_project() {
        let mut args: Vec<OsString> = vec!["-m".into(), "py_compile".into(), "/p/a.py".into()];
        let mut set = vec![
            ("PYTHONPYCACHEPREFIX".into(), "/c/pycache".into()),
            ("PYTHONDONTWRITEBYTECODE".into(), "1".into()),
        ];
        isolation("python3.12", &mut args, &mut set);
        assert_eq!(
            args,
            [
                "-I",
                "-X",
                "pycache_prefix=/c/pycache",
                "-B",
                "-m",
                "py_compile",
                "/p/a.py"
            ]
        );
        assert_eq!(set, [("PYTHONSAFEPATH".into(), "1".into())]);
        for name in ["python", "python3", "pypy3", "python3.9"] {
            assert!(is_python(name), "{name}");
        }
        for name in ["pythonw-evil", "mypy", "ipython3", "py"] {
            assert!(!is_python(name), "{name}");
        }
    }

    #[test]
    fn go_runs_its_own_toolchain_and_others_are_left_as_they_are() {
        let (mut args, mut set) = (vec![OsString::from("vet")], Vec::new());
        isolation("go", &mut args, &mut set);
        assert_eq!(set, [("GOTOOLCHAIN".into(), "local".into())]);
        let (mut args, mut set) = (vec![OsString::from("-n")], Vec::new());
        isolation("bash", &mut args, &mut set);
        assert_eq!((args, set), (vec![OsString::from("-n")], Vec::new()));
    }
}
