//! File and folder probes behind the `file_exists` and `directory_exists` conditions.
//!
//! Lines are counted only if they hold something other than whitespace, so a model cannot
//! pad a document to its minimum with blank lines, and as far as the caller asks: to the
//! end for a condition (status shows "60/50 lines"), yet never past [`LINES_READ_CAP`]
//! bytes, so a 2 GB file or one with no line breaks costs no more than that read (lines
//! past it are not counted). Folders are counted recursively,
//! without `.git`, and without what the repository ignores (build output such as
//! `target/` or `node_modules/`): twenty object files are not an implementation. Every
//! path goes through the project's door: a symlink out of the project, a FIFO or a device
//! is reported, never read.

use std::io::{self, Read};
use std::path::Path;

use pagent_engine::{Probe, RelPath};

use pagent_door::files::{Dir, DoorError, Kind};

/// What a refused or failed door call means for a condition.
pub fn probe_of(err: DoorError) -> Probe {
    match err {
        DoorError::Missing(_) => Probe::Missing,
        DoorError::Outside(_) | DoorError::BadPath(_) => Probe::Outside,
        DoorError::NotRegular(_, Kind::Dir) | DoorError::NotADir(_, Kind::File) => Probe::WrongKind,
        other => Probe::Error(other.to_string()),
    }
}

/// Bytes of a file read while counting its lines.
pub const LINES_READ_CAP: u64 = 16 * 1024 * 1024;

pub fn count_lines(dir: &Dir, rel: &RelPath, enough: u64) -> Probe {
    let file = match dir.open_read(Path::new(rel.as_str())) {
        Ok(file) => file,
        Err(err) => return probe_of(err),
    };
    match count_nonblank_lines(file.take(LINES_READ_CAP), enough) {
        Ok(n) => Probe::Count(n),
        Err(err) => Probe::Error(err.to_string()),
    }
}

fn count_nonblank_lines(mut file: impl Read, enough: u64) -> io::Result<u64> {
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
                    if count >= enough {
                        return Ok(count);
                    }
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
pub fn count_files(dir: &Dir, rel: &RelPath, enough: u64) -> Probe {
    let walk = match dir.walk(Path::new(rel.as_str())) {
        Ok(walk) => walk,
        Err(err) => return probe_of(err),
    };
    let repo = crate::store::git::discover(dir.root());
    let workdir = repo.as_ref().and_then(|r| {
        r.workdir()
            .and_then(|w| pagent_door::files::canonical_dir(w).ok())
    });
    let ignored = |p: &Path| -> bool {
        match (&repo, &workdir) {
            (Some(repo), Some(workdir)) => p
                .strip_prefix(workdir)
                .is_ok_and(|rel| repo.is_path_ignored(rel).unwrap_or(false)),
            _ => false,
        }
    };
    let walker = walk.into_iter().filter_entry(|e| {
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
#[allow(clippy::disallowed_methods, clippy::disallowed_types)]
mod tests {
    use std::fs;

    use super::*;

    fn rel(text: &str) -> RelPath {
        RelPath::new(text).unwrap()
    }

    fn open(root: &Path) -> Dir {
        Dir::open(root).unwrap()
    }

    #[test]
    fn counts_non_blank_lines() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let door = open(&root);
        for (content, want) in [
            ("", 0),
            ("a", 1),
            ("a\n", 1),
            ("a\n\n  \n\tb\r\nc", 3),
            ("\n\n\n", 0),
        ] {
            fs::write(root.join("f.md"), content).unwrap();
            assert_eq!(
                count_lines(&door, &rel("f.md"), u64::MAX),
                Probe::Count(want),
                "{content:?}"
            );
        }
        assert_eq!(count_lines(&door, &rel("missing.md"), 9), Probe::Missing);
        fs::create_dir(root.join("d")).unwrap();
        assert_eq!(count_lines(&door, &rel("d"), 9), Probe::WrongKind);
    }

    #[test]
    fn counting_lines_stops_at_enough() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        fs::write(root.join("f.md"), "a\nb\nc\nd\n").unwrap();
        assert_eq!(count_lines(&open(&root), &rel("f.md"), 2), Probe::Count(2));
        assert_eq!(count_lines(&open(&root), &rel("f.md"), 9), Probe::Count(4));
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
        let door = open(&root);
        assert_eq!(count_files(&door, &rel("src"), u64::MAX), Probe::Count(2));
        assert_eq!(count_files(&door, &rel("."), u64::MAX), Probe::Count(3));
        assert_eq!(
            count_files(&door, &rel("src/a.rs"), u64::MAX),
            Probe::WrongKind
        );
        assert_eq!(count_files(&door, &rel("nope"), u64::MAX), Probe::Missing);
        // The count stops once it is enough.
        assert_eq!(count_files(&door, &rel("."), 2), Probe::Count(2));
    }

    #[cfg(unix)] // Unix-only fixtures (symlinks, FIFOs, modes, sh); Windows: door/win/tests.rs
    #[test]
    fn refuses_symlinks_out_of_the_project() {
        let outside = tempfile::tempdir().unwrap();
        fs::write(outside.path().join("secret.md"), "a\nb\n").unwrap();
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        std::os::unix::fs::symlink(outside.path().join("secret.md"), root.join("link.md")).unwrap();
        std::os::unix::fs::symlink(outside.path(), root.join("linkdir")).unwrap();
        std::os::unix::fs::symlink("../../..", root.join("up")).unwrap();
        let door = open(&root);
        assert_eq!(count_lines(&door, &rel("link.md"), 9), Probe::Outside);
        assert_eq!(
            count_files(&door, &rel("linkdir"), u64::MAX),
            Probe::Outside
        );
        assert_eq!(count_files(&door, &rel("up"), u64::MAX), Probe::Outside);
    }

    #[cfg(unix)] // Unix-only fixtures (symlinks, FIFOs, modes, sh); Windows: door/win/tests.rs
    #[test]
    fn follows_symlinks_that_stay_inside() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        fs::create_dir(root.join("docs")).unwrap();
        fs::write(root.join("docs/real.md"), "a\nb\n").unwrap();
        std::os::unix::fs::symlink("docs/real.md", root.join("rel.md")).unwrap();
        std::os::unix::fs::symlink(root.join("docs"), root.join("abs")).unwrap();
        std::os::unix::fs::symlink("../docs/real.md", root.join("docs/up.md")).unwrap();
        let door = open(&root);
        assert_eq!(count_lines(&door, &rel("rel.md"), 9), Probe::Count(2));
        assert_eq!(count_lines(&door, &rel("abs/real.md"), 9), Probe::Count(2));
        assert_eq!(count_lines(&door, &rel("docs/up.md"), 9), Probe::Count(2));
        // The symlink inside docs/ is not a file of its own.
        assert_eq!(count_files(&door, &rel("abs"), 9), Probe::Count(1));
    }
}
