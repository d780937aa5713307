//! The only way pagent opens a git repository. libgit2 reads files pagent does not open
//! itself, whole: a `.git` *file* (its `gitdir:` line), and a git folder's `HEAD` and
//! `config`. `git clone` never writes those from a repository's content, but an unpacked
//! archive can hold anything, and a 2 GB `.git` file made libgit2 allocate 2 GB. So the
//! `.git` that discovery would find is looked at first (without opening anything that is
//! not a small regular file), and a repository that fails the look is treated as no
//! repository at all: pagent falls back to what it does outside git.
//!
//! The configuration can name more files: `include.path` and `includeIf.*.path`, which
//! libgit2 opens and reads whole as it opens the repository. An agent can write those
//! lines, and a FIFO there would hang every Stop hook, a 2 GB file fill its memory. So
//! each file the configuration includes (and what those include, as deep as libgit2
//! goes) must be absent, a folder (both of which libgit2 skips) or a small regular file.
//! The scan is deliberately wider than libgit2's reading: every value in any section
//! whose name begins with `include` counts as a path.

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

/// The repository of the nearest folder from `start` up that holds a `.git`, or `None`
/// when that `.git` is not a repository or not what git itself would write.
pub fn discover(start: &Path) -> Option<Repository> {
    let git = start
        .ancestors()
        .map(|d| d.join(".git"))
        .find(|p| fs::symlink_metadata(p).is_ok())?;
    let work_tree = git.parent()?;
    // A folder that is not there is in no repository (as libgit2's discovery has it).
    if work_tree != start && !fs::metadata(start).is_ok_and(|m| m.is_dir()) {
        return None;
    }
    sane_git_entry(&git).ok()?;
    // The `.git` looked at is the one opened: libgit2 searches no further (a `.git` it
    // would not open is no repository, not a reason to open one further up, unlooked at),
    // and it does not walk the folders above again.
    Repository::open_ext(work_tree, git2::RepositoryOpenFlags::NO_SEARCH, NO_CEILINGS).ok()
}

const NO_CEILINGS: &[&std::ffi::OsStr] = &[];

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

/// A git folder's `HEAD` and `config` must be small regular files (or absent), and so
/// must what its configuration includes.
fn sane_git_dir(dir: &Path) -> Result<(), String> {
    sane_git_files(dir)?;
    let mut configs = vec![dir.join("config"), dir.join("config.worktree")];
    // A worktree's git folder names the repository's own, whose config libgit2 reads.
    if let Ok(text) = fs::read_to_string(dir.join("commondir")) {
        let common = dir.join(text.trim());
        sane_git_files(&common)?;
        configs.push(common.join("config"));
    }
    for config in configs {
        sane_includes(&config, 0)?;
    }
    Ok(())
}

/// As deep as libgit2 follows includes (its `MAX_INCLUDE_DEPTH`).
const INCLUDE_DEPTH: usize = 10;

/// `config` and every file it includes, recursively: absent, a folder, or a small
/// regular file.
fn sane_includes(config: &Path, depth: usize) -> Result<(), String> {
    let Ok(meta) = fs::metadata(config) else {
        return Ok(());
    };
    if meta.is_dir() {
        return Ok(());
    }
    if !meta.is_file() || meta.len() > GIT_META_CAP {
        return Err(format!(
            "{} (included by the git configuration) is not a regular file of a sane size",
            config.display()
        ));
    }
    let text = fs::read(config).map_err(|e| e.to_string())?;
    let included = included_paths(&String::from_utf8_lossy(&text));
    if depth >= INCLUDE_DEPTH && !included.is_empty() {
        return Err(format!("{} includes files too deeply", config.display()));
    }
    let dir = config.parent().unwrap_or(Path::new("/"));
    for path in included {
        let path = match path.strip_prefix("~/") {
            Some(rest) => pagent_door::files::passwd_home()
                .ok_or_else(|| format!("{path} names a home folder that is not known"))?
                .join(rest),
            None => dir.join(&path),
        };
        sane_includes(&path, depth + 1)?;
    }
    Ok(())
}

/// Every value set in a section whose name begins with `include` (`[include]`,
/// `[includeIf "gitdir:..."]`), unquoted as git reads it.
fn included_paths(config: &str) -> Vec<String> {
    let joined = config.replace("\\\r\n", "").replace("\\\n", "");
    let mut in_include = false;
    let mut found = Vec::new();
    for line in joined.lines() {
        let mut line = line.trim_start();
        if line.starts_with('[') {
            let name: String = line[1..]
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '-' || *c == '.')
                .collect();
            in_include = name.to_ascii_lowercase().starts_with("include");
            // libgit2 ends the header at the line's last `]`; what follows is a setting.
            line = line.rfind(']').map_or("", |end| &line[end + 1..]);
        }
        if in_include && let Some((_, value)) = line.split_once('=') {
            let value = config_value(value);
            if !value.is_empty() {
                found.push(value);
            }
        }
    }
    found
}

/// A configuration value as git reads it: quotes removed, escapes applied, a comment
/// outside quotes dropped, the ends trimmed.
fn config_value(raw: &str) -> String {
    let mut value = String::new();
    let (mut quoted, mut chars) = (false, raw.trim().chars());
    while let Some(c) = chars.next() {
        match c {
            '"' => quoted = !quoted,
            '\\' => match chars.next() {
                Some('n') => value.push('\n'),
                Some('t') => value.push('\t'),
                Some('b') => value.push('\u{8}'),
                Some(other) => value.push(other),
                None => {}
            },
            ';' | '#' if !quoted => break,
            c => value.push(c),
        }
    }
    value.trim().to_owned()
}

/// A git folder's `HEAD`, `config` and the other files libgit2 reads whole must be small
/// regular files (or absent).
fn sane_git_files(dir: &Path) -> Result<(), String> {
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

    /// Issue 33: the `.git` looked at is the one opened. A folder whose `.git` is no
    /// repository (an empty folder, a stray file) is in none, even inside another
    /// repository, whose `.git` nobody looked at.
    #[test]
    fn issue_33_the_nearest_git_is_the_one_opened_never_one_further_up() {
        let dir = tempfile::tempdir().unwrap();
        Repository::init(dir.path()).unwrap();
        let inner = dir.path().join("inner");
        fs::create_dir_all(inner.join(".git")).unwrap();
        assert!(discover(&inner).is_none());
        assert!(discover(&inner.join("deeper")).is_none());
        fs::remove_dir(inner.join(".git")).unwrap();
        let repo = discover(&inner).expect("the outer repository, its .git the nearest");
        assert_eq!(
            work_tree(&repo).unwrap(),
            dir.path().canonicalize().unwrap()
        );
        assert!(discover(&inner.join("missing")).is_none());
    }

    /// Issue 30: an agent can write `include.path` into `.git/config`, and libgit2 opens
    /// and reads every included file whole when it opens the repository.
    #[test]
    fn a_config_that_includes_a_fifo_or_a_huge_file_is_no_repository() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("p");
        fs::create_dir(&root).unwrap();
        Repository::init(&root).unwrap();
        let config = root.join(".git/config");
        let clean = fs::read_to_string(&config).unwrap();
        let fifo = dir.path().join("fifo");
        pagent_door::testing::make_fifo(&fifo, 0o644).unwrap();
        let huge = dir.path().join("huge");
        fs::File::create(&huge).unwrap().set_len(2 << 30).unwrap();
        fs::write(dir.path().join("fine.cfg"), "[user]\n\tname = x\n").unwrap();
        fs::write(dir.path().join("nested.cfg"), "[include]\n\tpath = fifo\n").unwrap();
        for (lines, sane) in [
            ("[include]\n\tpath = ../../fine.cfg\n", true),
            ("[include]\n\tpath = ../../missing.cfg\n", true),
            ("[include]\n\tpath = ../../fifo\n", false),
            ("[include]\n\tpath = ../../huge\n", false),
            ("[include]\n\tpath = ../../nested.cfg\n", false),
            (
                "[includeIf \"gitdir:/nowhere/\"]\n\tpath = \"../../fifo\" ; x\n",
                false,
            ),
            ("[Include] path = ../../fifo\n", false),
            ("[include]\n\tpath = ../../f\\\nifo\n", false),
            ("[core]\n\tpath = ../../fifo\n", true),
        ] {
            fs::write(&config, format!("{clean}{lines}")).unwrap();
            assert_eq!(discover(&root).is_some(), sane, "{lines:?}");
        }
    }
}
