//! Reading under a root on Windows: components opened by handle from the root, no link
//! followed; only disk files whose final path is under the root; listing and walking a
//! folder through its own handle.

use std::os::windows::io::{AsHandle, AsRawHandle, BorrowedHandle};

use windows_sys::Wdk::Storage::FileSystem as nt;
use windows_sys::Win32::Foundation as wf;
use windows_sys::Win32::Storage::FileSystem as fs;

use super::*;

/// Folders deeper than this are not walked (a pathological tree).
const MAX_DEPTH: usize = 256;

impl Dir {
    /// Opens a regular file for reading (streaming readers: line counts, hashes).
    pub fn open_read(&self, rel: &Path) -> Result<File, DoorError> {
        let shown = show(rel);
        let mut parts = normal_components(rel, &shown)?;
        let Some(last) = parts.pop() else {
            return Err(DoorError::NotRegular(shown, Kind::Dir));
        };
        let parent = self.folder(&parts, &shown, false)?;
        self.open_regular(parent.as_handle(), &last, &shown)
    }

    /// [`Dir::open_read`], with the file's size as the open file says it.
    pub(in crate::files) fn open_read_sized(&self, rel: &Path) -> Result<(File, u64), DoorError> {
        let file = self.open_read(rel)?;
        let len = file.metadata().map_or(0, |m| m.len());
        Ok((file, len))
    }

    /// Whether a [`Dir::lock`] on `rel` is held now, by anyone: asked by taking a shared
    /// lock for an instant (`LockFileEx` conflicts between handles as `flock` does between
    /// open files, so two askers never see each other), without creating the file;
    /// `false` when there is no file.
    pub fn lock_is_held(&self, rel: &Path) -> Result<bool, DoorError> {
        let file = match self.open_read(rel) {
            Ok(file) => file,
            Err(DoorError::Missing(_)) => return Ok(false),
            Err(err) => return Err(err),
        };
        match file.try_lock_shared() {
            Ok(()) => Ok(false),
            Err(std::fs::TryLockError::WouldBlock) => Ok(true),
            Err(std::fs::TryLockError::Error(err)) => Err(DoorError::Io(show(rel), err)),
        }
    }

    pub(super) fn open_regular(
        &self,
        parent: BorrowedHandle<'_>,
        name: &OsStr,
        shown: &str,
    ) -> Result<File, DoorError> {
        let name = wide(name);
        let how = How {
            access: fs::FILE_GENERIC_READ,
            share: SHARE_ALL,
            disposition: nt::FILE_OPEN,
            kind: 0,
        };
        let mut handle = nt_open(parent, &name, how).map_err(|e| read_error(e, shown))?;
        let tag = tag_of(handle.as_handle()).map_err(|e| DoorError::Io(shown.to_owned(), e))?;
        match tag.kind() {
            Kind::File => {}
            Kind::Symlink => return Err(DoorError::Reparse(shown.to_owned())),
            kind => return Err(DoorError::NotRegular(shown.to_owned(), kind)),
        }
        if tag.is_reparse() {
            // A placeholder or deduplicated file: the reparse point is the file's own
            // (it names no other), so open it through its filter to read the content.
            handle = nt_open_following(parent, &name, how).map_err(|e| read_error(e, shown))?;
        }
        if !is_disk(handle.as_handle()) {
            return Err(DoorError::NotRegular(shown.to_owned(), Kind::Device));
        }
        if !self.holds(handle.as_handle()) {
            return Err(DoorError::Outside(shown.to_owned()));
        }
        Ok(File::from(handle))
    }

    /// What is at `rel`, or `None` when nothing is. A link anywhere on the way is refused.
    pub fn kind(&self, rel: &Path) -> Result<Option<(Kind, u64)>, DoorError> {
        let shown = show(rel);
        let mut parts = normal_components(rel, &shown)?;
        let Some(last) = parts.pop() else {
            return Ok(Some((Kind::Dir, 0)));
        };
        let parent = match self.folder(&parts, &shown, false) {
            Ok(parent) => parent,
            Err(DoorError::Missing(_)) => return Ok(None),
            Err(err) => return Err(err),
        };
        match stat_at(self, parent.as_handle(), &last, &shown)? {
            None => Ok(None),
            Some(stat) if stat.kind == Kind::Symlink => Err(DoorError::Reparse(shown)),
            Some(stat) => Ok(Some((stat.kind, stat.size))),
        }
    }

    /// What is at `rel` itself, no link followed anywhere (the folders on the way are
    /// created if missing, as for a write), or `None` when nothing is.
    pub fn kind_no_follow(&self, rel: &Path) -> Result<Option<Kind>, DoorError> {
        let shown = show(rel);
        let (dir, name) = self.parent_for_write(rel, &shown)?;
        Ok(stat_at(self, dir.as_handle(), &name, &shown)?.map(|s| s.kind))
    }

    /// The real path of a folder inside the root, for walkers and child processes.
    pub fn real_dir(&self, rel: &Path) -> Result<PathBuf, DoorError> {
        let shown = show(rel);
        let parts = normal_components(rel, &shown)?;
        match self.kind(rel)? {
            Some((Kind::Dir, _)) => Ok(parts.iter().fold(self.root.clone(), |p, c| p.join(c))),
            Some((kind, _)) => Err(DoorError::NotADir(shown, kind)),
            None => Err(DoorError::Missing(shown)),
        }
    }

    /// `lstat` of `rel` (bytes, relative, `/`-separated), for comparing with what git's
    /// index recorded; `None` when it fails or passes through a link.
    pub fn stat_rel(&self, rel: &[u8]) -> Option<Stat> {
        let rel = path_from_bytes(rel);
        let shown = show(&rel);
        let mut parts = normal_components(&rel, &shown).ok()?;
        let last = parts.pop()?;
        let parent = self.folder(&parts, &shown, false).ok()?;
        stat_at(self, parent.as_handle(), &last, &shown).ok()?
    }

    /// Walks the whole tree under the root by handle, never following a link: calls
    /// `visit` with each entry's path (relative, `/`-separated WTF-8) and kind, in git's
    /// order ([`git_order`] of the names' WTF-8), and descends into a folder only when
    /// `visit` returns true for it.
    pub fn walk_tree(&self, visit: &mut dyn FnMut(&[u8], Kind) -> bool) {
        if let Ok(root) = self.dup() {
            walk_handle(root.as_handle(), &mut Vec::new(), visit, 0);
        }
    }

    /// The names in the folder `rel` (inside the root), unsorted, without `.` and `..`.
    pub fn list(&self, rel: &Path) -> Result<Vec<OsString>, DoorError> {
        use std::os::windows::ffi::OsStringExt;
        let shown = show(rel);
        let parts = normal_components(rel, &shown)?;
        let dir = self.folder(&parts, &shown, false)?;
        let mut names = Vec::new();
        for_each_entry(dir.as_handle(), |name, _| {
            names.push(OsString::from_wide(name))
        });
        Ok(names)
    }

    /// A walk of the folder `rel` (inside the root), never following links.
    pub fn walk(&self, rel: &Path) -> Result<WalkDir, DoorError> {
        let real = self.real_dir(rel)?;
        Ok(walkdir::WalkDir::new(real).follow_links(false))
    }
}

/// `NtCreateFile` as [`nt_open`], but letting the file's own filter serve it (for
/// reparse points that name no other file).
fn nt_open_following(dir: BorrowedHandle<'_>, name: &[u16], how: How) -> io::Result<OwnedHandle> {
    super::nt_open_with(dir, name, how, 0)
}

/// The [`Stat`] of `name` in `parent` itself, `None` when nothing is there. A link is
/// [`Kind::Symlink`]; anything whose final path is not under the root is
/// [`DoorError::Outside`] (Wine shows a Unix symlink as the file it leads to).
pub(super) fn stat_at(
    dir: &Dir,
    parent: BorrowedHandle<'_>,
    name: &OsStr,
    shown: &str,
) -> Result<Option<Stat>, DoorError> {
    let how = How {
        access: fs::FILE_READ_ATTRIBUTES,
        share: SHARE_ALL,
        disposition: nt::FILE_OPEN,
        kind: 0,
    };
    let handle = match nt_open(parent, &wide(name), how) {
        Ok(handle) => handle,
        Err(err) => {
            return match read_error(err, shown) {
                DoorError::Missing(_) => Ok(None),
                other => Err(other),
            };
        }
    };
    let tag = tag_of(handle.as_handle()).map_err(|e| DoorError::Io(shown.to_owned(), e))?;
    let kind = if tag.kind() == Kind::File && !is_disk(handle.as_handle()) {
        Kind::Device
    } else if !tag.redirects() && !dir.holds(handle.as_handle()) {
        return Err(DoorError::Outside(shown.to_owned()));
    } else {
        tag.kind()
    };
    stat_handle(handle.as_handle(), kind)
        .map(Some)
        .map_err(|e| DoorError::Io(shown.to_owned(), e))
}

fn walk_handle(
    dir: BorrowedHandle<'_>,
    prefix: &mut Vec<u8>,
    visit: &mut dyn FnMut(&[u8], Kind) -> bool,
    depth: usize,
) {
    use std::os::windows::ffi::OsStringExt;
    let mut entries: Vec<(Vec<u16>, Vec<u8>, Kind)> = Vec::new();
    for_each_entry(dir, |name, kind| {
        let bytes = OsString::from_wide(name).into_encoded_bytes();
        entries.push((name.to_vec(), bytes, kind));
    });
    entries.sort_unstable_by(|a, b| git_order((&a.1, a.2 == Kind::Dir), (&b.1, b.2 == Kind::Dir)));
    for (name, bytes, kind) in entries {
        let len = prefix.len();
        if !prefix.is_empty() {
            prefix.push(b'/');
        }
        prefix.extend_from_slice(&bytes);
        if visit(prefix, kind) && kind == Kind::Dir && depth < MAX_DEPTH {
            let opened = nt_open(dir, &name, How::folder(nt::FILE_OPEN))
                .ok()
                .filter(|h| tag_of(h.as_handle()).is_ok_and(|t| !t.redirects()));
            if let Some(child) = opened {
                walk_handle(child.as_handle(), prefix, visit, depth + 1);
            }
        }
        prefix.truncate(len);
    }
}

/// Calls `f` with each name in the folder `dir` (without `.` and `..`) and its kind, as
/// the folder's own listing says (`FileIdBothDirectoryInfo`: a link is
/// [`Kind::Symlink`], its tag read from the entry).
pub(super) fn for_each_entry(dir: BorrowedHandle<'_>, mut f: impl FnMut(&[u16], Kind)) {
    // u64s: the entries are 8-byte aligned.
    let mut buf = vec![0u64; 8 * 1024];
    let mut class = fs::FileIdBothDirectoryRestartInfo;
    loop {
        // SAFETY: the buffer is writable for its whole length in bytes.
        let ok = unsafe {
            fs::GetFileInformationByHandleEx(
                dir.as_raw_handle(),
                class,
                buf.as_mut_ptr().cast(),
                (buf.len() * 8) as u32,
            )
        };
        if ok == 0 {
            // ERROR_NO_MORE_FILES at the end; any other error ends the listing too.
            let _ = wf::ERROR_NO_MORE_FILES;
            return;
        }
        class = fs::FileIdBothDirectoryInfo;
        let base = buf.as_ptr().cast::<u8>();
        let mut offset = 0usize;
        loop {
            // SAFETY: the system wrote a chain of entries into `buf`; `offset` is the
            // start of one (0, then each NextEntryOffset), and each name lies within it.
            let (next, name, kind) = unsafe {
                let entry = base.add(offset).cast::<fs::FILE_ID_BOTH_DIR_INFO>();
                let name_len = (*entry).FileNameLength as usize / 2;
                let name_ptr = (&raw const (*entry).FileName).cast::<u16>();
                let name = std::slice::from_raw_parts(name_ptr, name_len);
                let tag = Tag {
                    attributes: (*entry).FileAttributes,
                    // For a reparse point the entry's EaSize holds its tag.
                    reparse: (*entry).EaSize,
                };
                ((*entry).NextEntryOffset as usize, name, tag.kind())
            };
            if name != [u16::from(b'.')] && name != [u16::from(b'.'), u16::from(b'.')] {
                f(name, kind);
            }
            if next == 0 {
                break;
            }
            offset += next;
        }
    }
}
