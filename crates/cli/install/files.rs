//! File operations of `pagent install` and `pagent uninstall`, in the user's own folders.
//!
//! Every path here is one the user chose for pagent (Claude Code's config folder, the
//! XDG data folder, the plugin folder pagent was shipped in), never a project's: the
//! one-door rule (`pagent_door::files`) is about files a model or a stranger's repository
//! controls, so these functions use `std::fs` directly, with the same habits where they
//! matter: a file is replaced through a temporary file and a rename, a tree is copied
//! regular files and folders only (a symlink in the source is skipped, never followed),
//! and a tree is removed only where the caller named it.

#![allow(clippy::disallowed_methods)] // the user's own folders, see above

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use anyhow::Context;

use pagent_door::files::canonical;

/// Whether something (even a dangling symlink) is at `path`.
pub fn exists(path: &Path) -> bool {
    fs::symlink_metadata(path).is_ok()
}

/// Whether `path` is a regular file (no symlink followed).
pub fn is_file(path: &Path) -> bool {
    fs::symlink_metadata(path).is_ok_and(|m| m.is_file())
}

pub fn is_dir(path: &Path) -> bool {
    fs::symlink_metadata(path).is_ok_and(|m| m.is_dir())
}

/// Reads a text file of at most 1 MiB; `None` when it is missing.
pub fn read_text(path: &Path) -> anyhow::Result<Option<String>> {
    match fs::symlink_metadata(path) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e).with_context(|| format!("cannot read {}", path.display())),
        Ok(m) if !m.is_file() => anyhow::bail!("{} is not a regular file", path.display()),
        Ok(m) if m.len() > 1 << 20 => anyhow::bail!("{} is larger than 1 MiB", path.display()),
        Ok(_) => {}
    }
    fs::read_to_string(path)
        .map(Some)
        .with_context(|| format!("cannot read {}", path.display()))
}

/// Whether two files hold the same bytes (a missing one never matches).
pub fn same_bytes(a: &Path, b: &Path) -> bool {
    match (fs::read(a), fs::read(b)) {
        (Ok(a), Ok(b)) => a == b,
        _ => false,
    }
}

/// Writes `bytes` to `path` through a temporary file in the same folder and a rename, so
/// a process running the old file (a hook, right now) is not disturbed. Folders on the
/// way are created.
pub fn write_atomic(path: &Path, bytes: &[u8], mode: u32) -> anyhow::Result<()> {
    let parent = path
        .parent()
        .with_context(|| format!("{} has no parent folder", path.display()))?;
    fs::create_dir_all(parent).with_context(|| format!("cannot create {}", parent.display()))?;
    let name = path
        .file_name()
        .map_or_else(|| "pagent".into(), |n| n.to_string_lossy().into_owned());
    let tmp = parent.join(format!(".{name}.tmp.{}", std::process::id()));
    let result = (|| -> io::Result<()> {
        fs::write(&tmp, bytes)?;
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            fs::set_permissions(&tmp, fs::Permissions::from_mode(mode))?;
        }
        // Windows has no mode bits: a program is one by its name (`pagent.exe`).
        #[cfg(windows)]
        let _ = mode;
        fs::rename(&tmp, path)
    })();
    if result.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    result.with_context(|| format!("cannot write {}", path.display()))
}

/// The first `len` bytes of a file (fewer when it is shorter).
pub fn read_head(path: &Path, len: usize) -> anyhow::Result<Vec<u8>> {
    use std::io::Read;
    let mut head = Vec::with_capacity(len);
    fs::File::open(path)
        .and_then(|file| file.take(len as u64).read_to_end(&mut head))
        .with_context(|| format!("cannot read {}", path.display()))?;
    Ok(head)
}

/// Copies the file `from` to `to` (as [`write_atomic`], executable).
pub fn copy_executable(from: &Path, to: &Path) -> anyhow::Result<()> {
    let bytes = fs::read(from).with_context(|| format!("cannot read {}", from.display()))?;
    write_atomic(to, &bytes, 0o755)
}

/// Every regular file under `root`, as sorted relative paths (symlinks skipped).
pub fn list_tree(root: &Path) -> io::Result<Vec<PathBuf>> {
    fn walk(root: &Path, rel: &Path, out: &mut Vec<PathBuf>) -> io::Result<()> {
        for entry in fs::read_dir(root.join(rel))? {
            let entry = entry?;
            let kind = entry.file_type()?;
            let rel = rel.join(entry.file_name());
            if kind.is_dir() {
                walk(root, &rel, out)?;
            } else if kind.is_file() {
                out.push(rel);
            }
        }
        Ok(())
    }
    let mut out = Vec::new();
    walk(root, Path::new(""), &mut out)?;
    out.sort();
    Ok(out)
}

/// Whether `path` is a folder with nothing in it.
pub fn is_empty_dir(path: &Path) -> bool {
    is_dir(path) && fs::read_dir(path).is_ok_and(|mut d| d.next().is_none())
}

/// The entries of the folder `dir`, sorted.
pub fn entries(dir: &Path) -> anyhow::Result<Vec<PathBuf>> {
    let mut out = fs::read_dir(dir)
        .and_then(|entries| {
            entries
                .map(|e| e.map(|e| e.path()))
                .collect::<io::Result<Vec<_>>>()
        })
        .with_context(|| format!("cannot read {}", dir.display()))?;
    out.sort();
    Ok(out)
}

/// Whether everything under `root` is a regular file or a folder (no symlink, FIFO, ...).
pub fn only_files_and_folders(root: &Path) -> bool {
    fn walk(dir: &Path) -> io::Result<bool> {
        for entry in fs::read_dir(dir)? {
            let entry = entry?;
            let kind = entry.file_type()?;
            if kind.is_dir() {
                if !walk(&entry.path())? {
                    return Ok(false);
                }
            } else if !kind.is_file() {
                return Ok(false);
            }
        }
        Ok(true)
    }
    walk(root).unwrap_or(false)
}

/// Whether the two trees hold the same regular files with the same bytes.
pub fn same_tree(a: &Path, b: &Path) -> bool {
    match (list_tree(a), list_tree(b)) {
        (Ok(files_a), Ok(files_b)) => {
            files_a == files_b
                && files_a
                    .iter()
                    .all(|rel| same_bytes(&a.join(rel), &b.join(rel)))
        }
        _ => false,
    }
}

/// Copies `items` (files or folders, relative to `from`; missing ones skipped) into a new
/// folder `to`, which must not exist yet. Modes are kept; symlinks are skipped.
pub fn copy_items(from: &Path, items: &[&str], to: &Path) -> anyhow::Result<()> {
    fs::create_dir_all(to).with_context(|| format!("cannot create {}", to.display()))?;
    for item in items {
        let source = from.join(item);
        let Ok(meta) = fs::symlink_metadata(&source) else {
            continue;
        };
        if meta.is_file() {
            copy_file(&source, &to.join(item))?;
        } else if meta.is_dir() {
            for rel in
                list_tree(&source).with_context(|| format!("cannot read {}", source.display()))?
            {
                copy_file(&source.join(&rel), &to.join(item).join(rel))?;
            }
        }
    }
    Ok(())
}

fn copy_file(from: &Path, to: &Path) -> anyhow::Result<()> {
    if let Some(parent) = to.parent() {
        fs::create_dir_all(parent)
            .with_context(|| format!("cannot create {}", parent.display()))?;
    }
    fs::copy(from, to)
        .with_context(|| format!("cannot copy {} to {}", from.display(), to.display()))?;
    Ok(())
}

/// Puts the folder `new` where `dest` is, replacing what was there.
pub fn replace_dir(new: &Path, dest: &Path) -> anyhow::Result<()> {
    if exists(dest) {
        remove_tree(dest)?;
    }
    fs::rename(new, dest)
        .with_context(|| format!("cannot move {} to {}", new.display(), dest.display()))
}

/// Removes the file or tree at `path`; `false` when nothing was there.
pub fn remove_tree(path: &Path) -> anyhow::Result<bool> {
    let Ok(meta) = fs::symlink_metadata(path) else {
        return Ok(false);
    };
    let result = if meta.is_dir() {
        fs::remove_dir_all(path)
    } else {
        fs::remove_file(path)
    };
    result.with_context(|| format!("cannot remove {}", path.display()))?;
    Ok(true)
}

/// Removes `path` if it is an empty folder; `true` when it did.
pub fn remove_empty_dir(path: &Path) -> bool {
    is_dir(path) && fs::remove_dir(path).is_ok()
}

/// A new, empty folder beside `dest`, for building its replacement.
pub fn fresh_sibling(dest: &Path) -> anyhow::Result<PathBuf> {
    let parent = dest
        .parent()
        .with_context(|| format!("{} has no parent folder", dest.display()))?;
    fs::create_dir_all(parent).with_context(|| format!("cannot create {}", parent.display()))?;
    let name = dest
        .file_name()
        .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
    let tmp = parent.join(format!(".{name}.new.{}", std::process::id()));
    remove_tree(&tmp)?;
    Ok(tmp)
}

/// The physical path of a folder, symlinks resolved (on Windows a plain drive path, as
/// the user reads it, never `\\?\C:\...`).
pub fn real_dir(path: &Path) -> anyhow::Result<PathBuf> {
    let real = canonical(path).with_context(|| format!("cannot find {}", path.display()))?;
    anyhow::ensure!(is_dir(&real), "{} is not a folder", path.display());
    Ok(real)
}

/// The physical path of a regular file, symlinks resolved (plain, as [`real_dir`]).
pub fn real_file(path: &Path) -> anyhow::Result<PathBuf> {
    let real = canonical(path).with_context(|| format!("cannot find {}", path.display()))?;
    anyhow::ensure!(is_file(&real), "{} is not a regular file", path.display());
    Ok(real)
}

/// The real path of the pagent binary being run ([`Env::pagent_exe`]).
pub fn real_exe(env: &crate::cli::env::Env) -> anyhow::Result<PathBuf> {
    let exe = env
        .pagent_exe()
        .context("cannot tell where this pagent binary is")?;
    Ok(canonical(&exe).unwrap_or(exe))
}
