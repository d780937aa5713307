//! What trusting a project's program covers: the files whose content decides what runs,
//! written as a manifest (one `sha256  path` line per file, `-  path` for one that is not
//! there) whose hash is what `trust.json` keeps. A change to any of them, a file that
//! appears (a new `build.rs`) or one that goes, makes the program untrusted again.
//!
//! - **TypeScript** (`node_modules/typescript`): pagent runs `node` on the package's own
//!   `bin/tsc`, never the `node_modules/.bin/tsc` stub, and trust covers the package:
//!   its `package.json` and every file `node` could load from it (`.js`, `.cjs`, `.mjs`,
//!   `.json`, `.node`, and everything under `bin/`), nested `node_modules` included.
//!   Hashing the stub covered two lines while `lib/tsc.js` could change freely.
//! - **cargo check** (`Cargo.toml`): cargo builds the crate, which runs its build scripts
//!   and proc macros, and picks the toolchain and the build settings from files beside
//!   and above it. Trust covers the crate's `Cargo.toml`, its build script (`build.rs`,
//!   or the one `package.build` names), and in every folder from the crate up to the
//!   project root: `Cargo.toml` (a workspace root), `build.rs`, `.cargo/config`,
//!   `.cargo/config.toml`, `rust-toolchain`, `rust-toolchain.toml`. It does not cover
//!   the crate's Rust sources, which the model edits all the time (that is what the
//!   check checks): **trusting a crate trusts the whole crate**, proc macros and path
//!   dependencies included, as they change.

use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use crate::store::project::Project;

/// The TypeScript package, relative to a `node_modules` folder's parent.
pub const TYPESCRIPT: &str = "node_modules/typescript";
/// The stub npm links to it, which users know by name.
const TSC_STUB: &str = "node_modules/.bin/tsc";

/// Bytes of one covered file read for its hash.
const FILE_CAP: u64 = 64 * 1024 * 1024;
/// A package with more files, or more bytes, than this cannot be trusted.
const PACKAGE_FILES_CAP: usize = 20_000;
const PACKAGE_BYTES_CAP: u64 = 512 * 1024 * 1024;

/// Files a `node` could load from a package.
const LOADABLE: &[&str] = &["js", "cjs", "mjs", "json", "node"];

/// The TypeScript package that `rel` names: the package folder itself, or the stub in
/// `node_modules/.bin` that people trust by name.
pub fn typescript_package(rel: &Path) -> Option<PathBuf> {
    if rel.ends_with(TYPESCRIPT) {
        return Some(rel.to_path_buf());
    }
    let base = rel.to_str()?.strip_suffix(TSC_STUB)?;
    Some(Path::new(base).join(TYPESCRIPT))
}

/// The manifest of the package at `package` (relative to the root): an error when it is
/// not an installed package (no `package.json`) or is too large to hash.
pub fn package_manifest(project: &Project, package: &Path) -> Result<Vec<u8>, String> {
    let dir = project.dir();
    dir.read(&package.join("package.json"), FILE_CAP)
        .map_err(|e| e.to_string())?;
    let real = dir.real_dir(package).map_err(|e| e.to_string())?;
    let mut files: Vec<PathBuf> = Vec::new();
    let walk = dir.walk(package).map_err(|e| e.to_string())?;
    for entry in walk.sort_by_file_name() {
        let Ok(entry) = entry else { continue };
        if entry.file_type().is_dir() {
            continue;
        }
        let Ok(inner) = entry.path().strip_prefix(&real) else {
            continue;
        };
        let loadable = inner.starts_with("bin")
            || inner
                .extension()
                .and_then(|e| e.to_str())
                .is_some_and(|e| LOADABLE.contains(&e));
        if loadable {
            files.push(package.join(inner));
        }
        if files.len() > PACKAGE_FILES_CAP {
            return Err(format!(
                "{} has more than {PACKAGE_FILES_CAP} files pagent would have to hash",
                package.display()
            ));
        }
    }
    manifest(project, &files, Some(PACKAGE_BYTES_CAP))
        .ok_or_else(|| format!("{} is too large to hash", package.display()))
}

/// The manifest of what `cargo check` in the crate of `cargo_toml` (relative to the
/// root) depends on beyond the Rust sources; see the module's text.
pub fn cargo_manifest(project: &Project, cargo_toml: &Path) -> Result<Vec<u8>, String> {
    let text = project
        .dir()
        .read(cargo_toml, FILE_CAP)
        .map_err(|e| e.to_string())?;
    let crate_dir = cargo_toml.parent().unwrap_or(Path::new(""));
    let mut files = vec![cargo_toml.to_path_buf()];
    if let Some(build) = build_script(&text) {
        files.push(crate_dir.join(build));
    }
    let mut dir = Some(crate_dir);
    while let Some(here) = dir {
        for name in [
            "Cargo.toml",
            "build.rs",
            ".cargo/config",
            ".cargo/config.toml",
            "rust-toolchain",
            "rust-toolchain.toml",
        ] {
            files.push(here.join(name));
        }
        dir = here.parent();
    }
    files.sort();
    files.dedup();
    manifest(project, &files, None).ok_or_else(|| "too large to hash".to_owned())
}

/// `package.build` when it names a file (`build = false` turns the script off).
fn build_script(cargo_toml: &[u8]) -> Option<String> {
    let text = std::str::from_utf8(cargo_toml).ok()?;
    let value: toml::Value = toml::from_str(text).ok()?;
    value
        .get("package")?
        .get("build")?
        .as_str()
        .map(str::to_owned)
}

/// `sha256  path` per file that can be read, `-  path` per file that is not there, and
/// `?  path (why)` per file that is there but cannot be read; `None` past `bytes_cap`.
fn manifest(project: &Project, files: &[PathBuf], bytes_cap: Option<u64>) -> Option<Vec<u8>> {
    let mut out = String::new();
    let mut total: u64 = 0;
    for rel in files {
        let shown = rel.display();
        match project.dir().read_if_exists(rel, FILE_CAP) {
            Ok(Some(bytes)) => {
                total += bytes.len() as u64;
                if bytes_cap.is_some_and(|cap| total > cap) {
                    return None;
                }
                let hash = pagent_engine::seal::hex(&Sha256::digest(&bytes));
                out.push_str(&format!("{hash}  {shown}\n"));
            }
            Ok(None) => out.push_str(&format!("-  {shown}\n")),
            Err(err) => out.push_str(&format!("?  {shown} ({err})\n")),
        }
    }
    Some(out.into_bytes())
}

#[cfg(test)]
#[allow(clippy::disallowed_methods, clippy::disallowed_types)]
mod tests {
    use std::fs;

    use super::*;

    fn project(files: &[(&str, &str)]) -> (tempfile::TempDir, Project) {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        for (rel, text) in files {
            let path = root.join(rel);
            fs::create_dir_all(path.parent().unwrap()).unwrap();
            fs::write(path, text).unwrap();
        }
        let project = Project::at(&root).unwrap();
        (dir, project)
    }

    #[test]
    fn the_stub_and_the_package_name_the_same_package() {
        assert_eq!(
            typescript_package(Path::new("web/node_modules/.bin/tsc")),
            Some(PathBuf::from("web/node_modules/typescript"))
        );
        assert_eq!(
            typescript_package(Path::new("node_modules/.bin/tsc")),
            Some(PathBuf::from("node_modules/typescript"))
        );
        assert_eq!(
            typescript_package(Path::new("node_modules/typescript")),
            Some(PathBuf::from("node_modules/typescript"))
        );
        assert_eq!(typescript_package(Path::new("tsc")), None);
    }

    #[test]
    fn a_package_manifest_covers_what_node_can_load_and_nothing_else() {
        let (_dir, project) = project(&[
            ("node_modules/typescript/package.json", "{}"),
            (
                "node_modules/typescript/bin/tsc",
                "require('../lib/tsc.js')",
            ),
            ("node_modules/typescript/lib/tsc.js", "require('./_tsc.js')"),
            ("node_modules/typescript/lib/_tsc.js", "1"),
            ("node_modules/typescript/lib/lib.d.ts", "types"),
            ("node_modules/typescript/README.md", "docs"),
        ]);
        let text = String::from_utf8(
            package_manifest(&project, Path::new("node_modules/typescript")).unwrap(),
        )
        .unwrap();
        let names: Vec<&str> = text
            .lines()
            .map(|l| l.split("  ").nth(1).unwrap())
            .collect();
        assert_eq!(
            names,
            [
                "node_modules/typescript/bin/tsc",
                "node_modules/typescript/lib/_tsc.js",
                "node_modules/typescript/lib/tsc.js",
                "node_modules/typescript/package.json",
            ]
        );
        assert!(package_manifest(&project, Path::new("node_modules/none")).is_err());
    }

    #[test]
    fn a_crate_manifest_covers_its_build_settings_up_to_the_root() {
        let (_dir, project) = project(&[
            ("Cargo.toml", "[workspace]\n"),
            ("rust-toolchain.toml", "[toolchain]\n"),
            (
                "a/Cargo.toml",
                "[package]\nname = \"a\"\nbuild = \"gen.rs\"\n",
            ),
            ("a/gen.rs", "fn main() {}"),
            ("a/.cargo/config.toml", "[build]\n"),
        ]);
        let first = cargo_manifest(&project, Path::new("a/Cargo.toml")).unwrap();
        let text = String::from_utf8(first.clone()).unwrap();
        for covered in [
            "a/Cargo.toml",
            "a/gen.rs",
            "a/.cargo/config.toml",
            "Cargo.toml",
            "rust-toolchain.toml",
        ] {
            assert!(
                text.lines()
                    .any(|l| !l.starts_with('-') && l.ends_with(covered)),
                "{covered}:\n{text}"
            );
        }
        assert!(text.contains("-  a/build.rs"), "{text}");
        // A build script that appears changes what is trusted.
        fs::write(project.root.join("build.rs"), "fn main() {}").unwrap();
        assert_ne!(
            cargo_manifest(&project, Path::new("a/Cargo.toml")).unwrap(),
            first
        );
    }
}
