//! File and folder probes behind the `file_exists` and `directory_exists` conditions.
//!
//! Lines are counted only if they hold something other than whitespace, so a model cannot
//! pad a document to its minimum with blank lines. Folders are counted recursively, without
//! `.git`, and without what the repository ignores (build output such as `target/` or
//! `node_modules/`): twenty object files are not an implementation. Paths were checked
//! lexically at set-up; here a symlink that leads out of the project is refused.

use std::fs::File;
use std::io::{self, ErrorKind, Read};
use std::path::{Path, PathBuf};

use pagent_engine::{Probe, RelPath};

/// Resolves `rel` under `root` (canonical), refusing anything that resolves outside.
pub fn resolve_inside(root: &Path, rel: &RelPath) -> Result<PathBuf, Probe> {
    let joined = root.join(rel.as_str());
    match joined.canonicalize() {
        Ok(real) if real.starts_with(root) => Ok(real),
        Ok(_) => Err(Probe::Outside),
        Err(err) if err.kind() == ErrorKind::NotFound => Err(Probe::Missing),
        Err(err) => Err(Probe::Error(err.to_string())),
    }
}

pub fn count_lines(root: &Path, rel: &RelPath) -> Probe {
    let path = match resolve_inside(root, rel) {
        Ok(path) => path,
        Err(probe) => return probe,
    };
    if path.is_dir() {
        return Probe::WrongKind;
    }
    match count_nonblank_lines(&path) {
        Ok(n) => Probe::Count(n),
        Err(err) => Probe::Error(err.to_string()),
    }
}

fn count_nonblank_lines(path: &Path) -> io::Result<u64> {
    let mut file = File::open(path)?;
    let mut buf = vec![0u8; 64 * 1024];
    let (mut count, mut line_has_content) = (0u64, false);
    loop {
        let n = file.read(&mut buf)?;
        if n == 0 {
            break;
        }
        for &b in &buf[..n] {
            match b {
                b'\n' => {
                    count += u64::from(line_has_content);
                    line_has_content = false;
                }
                b' ' | b'\t' | b'\r' | 0x0b | 0x0c => {}
                _ => line_has_content = true,
            }
        }
    }
    Ok(count + u64::from(line_has_content))
}

/// Counts files under `rel`, stopping at `enough` (each file costs an ignore lookup, and
/// a 20,000-file `src/` is common; BENCHMARKS.md).
pub fn count_files(root: &Path, rel: &RelPath, enough: u64) -> Probe {
    let path = match resolve_inside(root, rel) {
        Ok(path) => path,
        Err(probe) => return probe,
    };
    if !path.is_dir() {
        return Probe::WrongKind;
    }
    let repo = git2::Repository::discover(&path).ok();
    let workdir = repo
        .as_ref()
        .and_then(|r| r.workdir().and_then(|w| w.canonicalize().ok()));
    let ignored = |p: &Path| -> bool {
        match (&repo, &workdir) {
            (Some(repo), Some(workdir)) => p
                .strip_prefix(workdir)
                .is_ok_and(|rel| repo.is_path_ignored(rel).unwrap_or(false)),
            _ => false,
        }
    };
    let walker = walkdir::WalkDir::new(&path)
        .follow_links(false)
        .into_iter()
        .filter_entry(|e| {
            !(e.file_type().is_dir() && e.file_name() == ".git")
                && (e.depth() == 0 || !ignored(e.path()))
        });
    let mut count = 0;
    for entry in walker {
        if count >= enough {
            break;
        }
        match entry {
            Ok(entry) if entry.file_type().is_file() => count += 1,
            Ok(_) => {}
            Err(err) => return Probe::Error(err.to_string()),
        }
    }
    Probe::Count(count)
}

#[cfg(test)]
mod tests {
    use std::fs;

    use super::*;

    fn rel(text: &str) -> RelPath {
        RelPath::new(text).unwrap()
    }

    #[test]
    fn counts_non_blank_lines() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        for (content, want) in [
            ("", 0),
            ("a", 1),
            ("a\n", 1),
            ("a\n\n  \n\tb\r\nc", 3),
            ("\n\n\n", 0),
        ] {
            fs::write(root.join("f.md"), content).unwrap();
            assert_eq!(
                count_lines(&root, &rel("f.md")),
                Probe::Count(want),
                "{content:?}"
            );
        }
        assert_eq!(count_lines(&root, &rel("missing.md")), Probe::Missing);
        fs::create_dir(root.join("d")).unwrap();
        assert_eq!(count_lines(&root, &rel("d")), Probe::WrongKind);
    }

    #[test]
    fn counts_files_without_git_and_ignored_output() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        git2::Repository::init(&root).unwrap();
        fs::write(root.join(".gitignore"), "target/\n*.log\n").unwrap();
        for file in ["src/a.rs", "src/b/c.rs", "src/target/x.o", "src/debug.log"] {
            let path = root.join(file);
            fs::create_dir_all(path.parent().unwrap()).unwrap();
            fs::write(path, "x").unwrap();
        }
        assert_eq!(count_files(&root, &rel("src"), u64::MAX), Probe::Count(2));
        assert_eq!(count_files(&root, &rel("."), u64::MAX), Probe::Count(3));
        assert_eq!(
            count_files(&root, &rel("src/a.rs"), u64::MAX),
            Probe::WrongKind
        );
        assert_eq!(count_files(&root, &rel("nope"), u64::MAX), Probe::Missing);
        // The count stops once it is enough.
        assert_eq!(count_files(&root, &rel("."), 2), Probe::Count(2));
    }

    #[test]
    fn refuses_symlinks_out_of_the_project() {
        let outside = tempfile::tempdir().unwrap();
        fs::write(outside.path().join("secret.md"), "a\nb\n").unwrap();
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        std::os::unix::fs::symlink(outside.path().join("secret.md"), root.join("link.md")).unwrap();
        std::os::unix::fs::symlink(outside.path(), root.join("linkdir")).unwrap();
        assert_eq!(count_lines(&root, &rel("link.md")), Probe::Outside);
        assert_eq!(
            count_files(&root, &rel("linkdir"), u64::MAX),
            Probe::Outside
        );
    }
}
