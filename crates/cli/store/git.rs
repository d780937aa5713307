//! The only way pagent opens a git repository. libgit2 reads files pagent does not open
//! itself, whole: a `.git` *file* (its `gitdir:` line), and a git folder's `HEAD` and
//! `config`. `git clone` never writes those from a repository's content, but an unpacked
//! archive can hold anything, and a 2 GB `.git` file made libgit2 allocate 2 GB. So the
//! `.git` that discovery would find is looked at first (without opening anything that is
//! not a small regular file), and a repository that fails the look is treated as no
//! repository at all: pagent falls back to what it does outside git.

#![allow(clippy::disallowed_methods)]

use std::fs;
use std::path::{Path, PathBuf};

use git2::Repository;

/// The largest `.git` file (a `gitdir:` line) accepted.
const GIT_FILE_CAP: u64 = 64 * 1024;
/// The largest `HEAD` and `config` accepted in a git folder.
const GIT_META_CAP: u64 = 1024 * 1024;
/// The largest index accepted (about ten million files' worth).
const GIT_INDEX_CAP: u64 = 1024 * 1024 * 1024;

/// The repository `start` is in, as `git2::Repository::discover` finds it, or `None` when
/// there is none or its `.git` is not what git itself would write.
pub fn discover(start: &Path) -> Option<Repository> {
    let git = start
        .ancestors()
        .map(|d| d.join(".git"))
        .find(|p| fs::symlink_metadata(p).is_ok())?;
    sane_git_entry(&git).ok()?;
    Repository::discover(start).ok()
}

/// The repository's work tree as a path to show and compare (libgit2 ends it with `/`).
pub fn work_tree(repo: &Repository) -> Option<PathBuf> {
    repo.workdir().map(|dir| dir.components().collect())
}

/// Opens the repository whose git folder (or work tree) is exactly `path`.
pub fn open(path: &Path) -> Option<Repository> {
    let meta = fs::metadata(path).ok()?;
    if !meta.is_dir() {
        return None;
    }
    if path.join(".git").exists() {
        sane_git_entry(&path.join(".git")).ok()?;
    } else {
        sane_git_dir(path).ok()?;
    }
    Repository::open(path).ok()
}

/// Why a `.git` entry is refused, or `Ok` for a folder or a small `gitdir:` file.
fn sane_git_entry(git: &Path) -> Result<(), String> {
    let meta = fs::metadata(git).map_err(|e| e.to_string())?;
    if meta.is_dir() {
        return sane_git_dir(git);
    }
    if !meta.is_file() {
        return Err(format!("{} is not a file or a folder", git.display()));
    }
    if meta.len() > GIT_FILE_CAP {
        return Err(format!("{} is too large for a gitdir file", git.display()));
    }
    let text = fs::read_to_string(git).map_err(|e| e.to_string())?;
    let target = text
        .lines()
        .find_map(|l| l.strip_prefix("gitdir:"))
        .map(|t| PathBuf::from(t.trim()))
        .ok_or_else(|| format!("{} has no gitdir line", git.display()))?;
    let target = if target.is_absolute() {
        target
    } else {
        git.parent().unwrap_or(Path::new("/")).join(target)
    };
    sane_git_dir(&target)
}

/// A git folder's `HEAD` and `config` must be small regular files (or absent).
fn sane_git_dir(dir: &Path) -> Result<(), String> {
    if !fs::metadata(dir).map_err(|e| e.to_string())?.is_dir() {
        return Err(format!("{} is not a folder", dir.display()));
    }
    for (name, cap) in [
        ("HEAD", GIT_META_CAP),
        ("config", GIT_META_CAP),
        ("commondir", GIT_META_CAP),
        ("gitdir", GIT_META_CAP),
        ("index", GIT_INDEX_CAP),
    ] {
        let path = dir.join(name);
        let Ok(meta) = fs::metadata(&path) else {
            continue;
        };
        if !meta.is_file() || meta.len() > cap {
            return Err(format!(
                "{} is not a regular file of a sane size",
                path.display()
            ));
        }
    }
    Ok(())
}

// Unix-only fixtures (symlinks, FIFOs, modes, sh); the Windows door has its own.
#[cfg(test)]
#[cfg(unix)]
#[allow(clippy::disallowed_types)]
mod tests {
    use super::*;

    #[test]
    fn a_huge_or_special_dot_git_is_no_repository() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("p");
        fs::create_dir(&root).unwrap();
        let git = root.join(".git");
        fs::File::create(&git).unwrap().set_len(2 << 30).unwrap();
        assert!(discover(&root).is_none());
        fs::remove_file(&git).unwrap();
        std::os::unix::fs::symlink("/dev/zero", &git).unwrap();
        assert!(discover(&root).is_none());
        fs::remove_file(&git).unwrap();
        fs::write(&git, "gitdir: /dev/zero\n").unwrap();
        assert!(discover(&root).is_none());
        fs::remove_file(&git).unwrap();
        Repository::init(&root).unwrap();
        assert!(discover(&root).is_some());
        pagent_door::testing::make_fifo(&git.join("index"), 0o644).unwrap();
        assert!(
            discover(&root).is_none(),
            "a FIFO index would block libgit2"
        );
        fs::remove_file(git.join("index")).unwrap();
        fs::remove_file(git.join("HEAD")).unwrap();
        std::os::unix::fs::symlink("/dev/zero", git.join("HEAD")).unwrap();
        assert!(discover(&root).is_none());
    }
}
