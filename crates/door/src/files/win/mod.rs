//! The door on Windows: the same rules as on Unix, made of handles. Windows has no
//! `openat` and no `O_NOFOLLOW` in Win32, but its NT layer has both: `NtCreateFile` opens
//! a name *relative to a folder handle* (`OBJECT_ATTRIBUTES.RootDirectory`, what Rust's
//! own `remove_dir_all` uses since CVE-2022-21658), and `FILE_OPEN_REPARSE_POINT` opens
//! a symbolic link, junction or mount point itself instead of where it leads. So the
//! door walks a path one component at a time from the root's handle, as it walks
//! `openat` on Unix, and no path is ever re-resolved by the system.
//!
//! What each guarantee rests on here:
//!
//! - *No link followed, anywhere*: every component is opened with
//!   `FILE_OPEN_REPARSE_POINT`, then its attribute tag is read from the handle
//!   (`FileAttributeTagInfo`); a name-surrogate reparse point (symbolic link, junction,
//!   mount point: the kinds that redirect to another name) is refused, for reads and
//!   writes alike, inside the root or out of it. That is stricter than Unix, where a read
//!   follows a symlink that stays inside: following one on Windows means letting the
//!   system open its target, and a target can be a UNC path (`\\host\share`: opening it
//!   sends the user's credentials to that host) or a device. Git for Windows checks
//!   symlinks out as plain files unless told otherwise, so a project rarely has one.
//!   Reparse points that do not redirect (OneDrive placeholders, deduplicated files) are
//!   the file itself: reopened normally, so the filter behind them serves their content.
//! - *The handle's final path*: every file opened for reading is checked once more with
//!   `GetFinalPathNameByHandleW` against the root's own: whatever happened on the way, a
//!   handle whose file is not under the root is closed unread.
//! - *Regular files only, never a device or a pipe*: a handle must be a disk file
//!   (`GetFileType` is `FILE_TYPE_DISK`) and not a folder. Windows file systems hold no
//!   FIFOs or device nodes; pipes and devices live in the object namespace (`\\.\pipe\`,
//!   `\\.\NUL`), reachable from a project only through a link (refused above) or a Win32
//!   path that names a device (`NUL`, `con.txt`, `COM1`), which [`super::names`] refuses
//!   before any call, with stream names (`file.txt:stream`) and trailing dots. The same
//!   size caps apply, read from the handle.
//! - *Paths as the system gives them*: names are UTF-16 from `OsStr::encode_wide` to the
//!   call and back through `OsString::from_wide`, never through a UTF-8 string; keys and
//!   digests use `OsStr`'s WTF-8 bytes ([`super::os`]), which keep every name apart.
//! - *Atomic replace*: the temp file is created beside the target with `FILE_CREATE`
//!   (Windows' `O_EXCL`), written, flushed (`FlushFileBuffers`, which NTFS passes to the
//!   drive), then renamed over the target by handle (`FileRenameInfo` with
//!   `ReplaceIfExists` and the folder's handle as `RootDirectory`): the call
//!   `MoveFileExW(MOVEFILE_REPLACE_EXISTING)` makes, without re-reading a path. NTFS
//!   journals the rename, so no folder sync follows it. A reader or virus scanner that
//!   holds the target without `FILE_SHARE_DELETE` makes the rename fail with a sharing
//!   violation; it is retried for up to a second, then reported.
//! - *Locks*: `LockFileEx` (std's `File::try_lock`), released by the system when its
//!   holder dies, as `flock` is.
//! - *The index's stat data*: Git for Windows and libgit2 record the last write time as
//!   mtime, the creation time as ctime and 0 as the inode; [`super::Stat`] gives the same.
//!
//! The rooms: this file (the system calls, each behind a small safe wrapper, and the
//! root), [`read`] (opening, reading, listing and walking), [`write`] (replace, append,
//! create, locks, renames, removal, folders), [`remove`] (a whole folder, links removed
//! as links) and [`system`] (outside any root: plain paths, the user's profile).

mod read;
mod remove;
mod system;
mod write;

pub(in crate::files) use system::plain_path;
pub(in crate::files) use system::{KnownFolder, known_folder};

use std::os::windows::io::{AsHandle, AsRawHandle, BorrowedHandle, FromRawHandle};

use windows_sys::Wdk::Foundation::OBJECT_ATTRIBUTES;
use windows_sys::Wdk::Storage::FileSystem as nt;
use windows_sys::Win32::Foundation as wf;
use windows_sys::Win32::Storage::FileSystem as fs;
use windows_sys::Win32::System::IO::IO_STATUS_BLOCK;

use super::*;

/// Share mode for files: others may read, write, rename and delete while pagent reads.
pub(super) const SHARE_ALL: u32 =
    fs::FILE_SHARE_READ | fs::FILE_SHARE_WRITE | fs::FILE_SHARE_DELETE;
/// Share mode for folders on the way: no `FILE_SHARE_DELETE`, so while pagent holds one
/// nobody can rename or remove it (a second guard; the walk is by handle anyway).
pub(super) const SHARE_FOLDER: u32 = fs::FILE_SHARE_READ | fs::FILE_SHARE_WRITE;

/// What [`nt_open`] opens and how.
#[derive(Debug, Clone, Copy)]
pub(super) struct How {
    pub access: u32,
    pub share: u32,
    /// `FILE_OPEN`, `FILE_CREATE`, `FILE_OPEN_IF`.
    pub disposition: u32,
    /// `FILE_DIRECTORY_FILE`, `FILE_NON_DIRECTORY_FILE` or 0.
    pub kind: u32,
}

impl How {
    pub(super) fn folder(disposition: u32) -> How {
        How {
            access: fs::FILE_LIST_DIRECTORY | fs::FILE_TRAVERSE | fs::FILE_READ_ATTRIBUTES,
            share: SHARE_FOLDER,
            disposition,
            kind: nt::FILE_DIRECTORY_FILE,
        }
    }
}

/// Opens `name` (one component, UTF-16) relative to the folder `dir`, never following a
/// reparse point: `NtCreateFile` with `RootDirectory`, the Windows `openat`.
pub(super) fn nt_open(dir: BorrowedHandle<'_>, name: &[u16], how: How) -> io::Result<OwnedHandle> {
    nt_open_with(dir, name, how, nt::FILE_OPEN_REPARSE_POINT)
}

/// [`nt_open`] with `options` added to the call's (`FILE_OPEN_REPARSE_POINT` or not).
pub(super) fn nt_open_with(
    dir: BorrowedHandle<'_>,
    name: &[u16],
    how: How,
    options: u32,
) -> io::Result<OwnedHandle> {
    let bytes = u16::try_from(name.len() * 2)
        .map_err(|_| io::Error::from_raw_os_error(wf::ERROR_FILENAME_EXCED_RANGE as i32))?;
    let unicode = wf::UNICODE_STRING {
        Length: bytes,
        MaximumLength: bytes,
        Buffer: name.as_ptr().cast_mut(),
    };
    let attributes = OBJECT_ATTRIBUTES {
        Length: std::mem::size_of::<OBJECT_ATTRIBUTES>() as u32,
        RootDirectory: dir.as_raw_handle(),
        ObjectName: &raw const unicode,
        // As Win32 opens names: case-insensitively (the folder's own setting decides).
        Attributes: wf::OBJ_CASE_INSENSITIVE,
        SecurityDescriptor: std::ptr::null(),
        SecurityQualityOfService: std::ptr::null(),
    };
    // SAFETY: all-zero is a valid IO_STATUS_BLOCK.
    let mut status_block: IO_STATUS_BLOCK = unsafe { std::mem::zeroed() };
    let mut handle: wf::HANDLE = std::ptr::null_mut();
    // SAFETY: every pointer is valid for the call; `unicode` and `name` outlive it.
    let status = unsafe {
        nt::NtCreateFile(
            &raw mut handle,
            how.access | fs::SYNCHRONIZE,
            &raw const attributes,
            &raw mut status_block,
            std::ptr::null(),
            fs::FILE_ATTRIBUTE_NORMAL,
            how.share,
            how.disposition,
            how.kind | options | nt::FILE_SYNCHRONOUS_IO_NONALERT,
            std::ptr::null(),
            0,
        )
    };
    if status < 0 {
        // SAFETY: a pure conversion of a status code.
        let code = unsafe { wf::RtlNtStatusToDosError(status) };
        return Err(io::Error::from_raw_os_error(code as i32));
    }
    // SAFETY: a fresh handle nobody else owns.
    Ok(unsafe { OwnedHandle::from_raw_handle(handle) })
}

/// A handle's attributes and reparse tag.
#[derive(Debug, Clone, Copy)]
pub(super) struct Tag {
    pub attributes: u32,
    pub reparse: u32,
}

impl Tag {
    /// A symbolic link, junction or mount point: a reparse point that names another file.
    pub(super) fn redirects(self) -> bool {
        self.attributes & fs::FILE_ATTRIBUTE_REPARSE_POINT != 0 && self.reparse & 0x2000_0000 != 0
    }

    pub(super) fn is_reparse(self) -> bool {
        self.attributes & fs::FILE_ATTRIBUTE_REPARSE_POINT != 0
    }

    pub(super) fn kind(self) -> Kind {
        if self.redirects() {
            Kind::Symlink
        } else if self.attributes & fs::FILE_ATTRIBUTE_DIRECTORY != 0 {
            Kind::Dir
        } else {
            Kind::File
        }
    }
}

pub(super) fn tag_of(handle: BorrowedHandle<'_>) -> io::Result<Tag> {
    let mut info = fs::FILE_ATTRIBUTE_TAG_INFO::default();
    // SAFETY: the buffer is one FILE_ATTRIBUTE_TAG_INFO, as the class asks.
    let ok = unsafe {
        fs::GetFileInformationByHandleEx(
            handle.as_raw_handle(),
            fs::FileAttributeTagInfo,
            (&raw mut info).cast(),
            std::mem::size_of::<fs::FILE_ATTRIBUTE_TAG_INFO>() as u32,
        )
    };
    if ok == 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(Tag {
        attributes: info.FileAttributes,
        reparse: info.ReparseTag,
    })
}

/// Whether the handle is a file on a disk (not a pipe, console or other device).
pub(super) fn is_disk(handle: BorrowedHandle<'_>) -> bool {
    // SAFETY: GetFileType on an open handle.
    unsafe { fs::GetFileType(handle.as_raw_handle()) == fs::FILE_TYPE_DISK }
}

/// The handle's final path (`\\?\C:\...`), as the system names the file it holds.
pub(super) fn final_path(handle: BorrowedHandle<'_>) -> io::Result<Vec<u16>> {
    let mut buf = vec![0u16; 512];
    loop {
        // SAFETY: the buffer holds `buf.len()` units.
        let n = unsafe {
            fs::GetFinalPathNameByHandleW(
                handle.as_raw_handle(),
                buf.as_mut_ptr(),
                buf.len() as u32,
                fs::FILE_NAME_NORMALIZED | fs::VOLUME_NAME_DOS,
            )
        } as usize;
        if n == 0 {
            return Err(io::Error::last_os_error());
        }
        if n < buf.len() {
            buf.truncate(n);
            return Ok(buf);
        }
        buf.resize(n + 1, 0);
    }
}

/// Whether `path` is `root` or under it (UTF-16, compared as the system wrote both).
pub(super) fn is_under(path: &[u16], root: &[u16]) -> bool {
    let sep = u16::from(b'\\');
    let root = root.strip_suffix(&[sep]).unwrap_or(root);
    path == root || (path.starts_with(root) && path.get(root.len()) == Some(&sep))
}

/// [`Stat`] of an open handle, as Git for Windows fills its index.
pub(super) fn stat_handle(handle: BorrowedHandle<'_>, kind: Kind) -> io::Result<Stat> {
    let mut basic = fs::FILE_BASIC_INFO::default();
    let mut standard = fs::FILE_STANDARD_INFO::default();
    // SAFETY: each buffer is the struct its class asks for.
    let ok = unsafe {
        fs::GetFileInformationByHandleEx(
            handle.as_raw_handle(),
            fs::FileBasicInfo,
            (&raw mut basic).cast(),
            std::mem::size_of::<fs::FILE_BASIC_INFO>() as u32,
        ) != 0
            && fs::GetFileInformationByHandleEx(
                handle.as_raw_handle(),
                fs::FileStandardInfo,
                (&raw mut standard).cast(),
                std::mem::size_of::<fs::FILE_STANDARD_INFO>() as u32,
            ) != 0
    };
    if !ok {
        return Err(io::Error::last_os_error());
    }
    Ok(Stat {
        kind,
        size: u64::try_from(standard.EndOfFile).unwrap_or(0),
        ino: 0,
        mtime: unix_time(basic.LastWriteTime),
        ctime: unix_time(basic.CreationTime),
    })
}

/// A FILETIME (100 ns since 1601) as Unix seconds and nanoseconds.
pub(super) fn unix_time(filetime: i64) -> (i64, i64) {
    const EPOCH_DIFF: i64 = 11_644_473_600;
    let secs = filetime.div_euclid(10_000_000) - EPOCH_DIFF;
    let nanos = filetime.rem_euclid(10_000_000) * 100;
    (secs, nanos)
}

/// `name` as the UTF-16 of one component.
pub(super) fn wide(name: &OsStr) -> Vec<u16> {
    use std::os::windows::ffi::OsStrExt;
    name.encode_wide().collect()
}

/// Maps an error of opening a component for reading.
pub(super) fn read_error(err: io::Error, shown: &str) -> DoorError {
    match err.raw_os_error().map(|c| c as u32) {
        Some(wf::ERROR_FILE_NOT_FOUND | wf::ERROR_PATH_NOT_FOUND | wf::ERROR_DIRECTORY) => {
            DoorError::Missing(shown.to_owned())
        }
        Some(wf::ERROR_INVALID_NAME) => DoorError::BadPath(shown.to_owned()),
        _ => DoorError::Io(shown.to_owned(), err),
    }
}

impl Dir {
    /// Opens `root` (a canonical folder path) as the root of every later call. The root
    /// itself is opened by path, links followed: the user chose it.
    pub fn open(root: &Path) -> Result<Dir, DoorError> {
        use std::os::windows::fs::OpenOptionsExt;
        let shown = root.display().to_string();
        let file = std::fs::OpenOptions::new()
            .read(true)
            .share_mode(SHARE_FOLDER)
            .custom_flags(fs::FILE_FLAG_BACKUP_SEMANTICS)
            .open(root)
            .map_err(|e| read_error(e, &shown))?;
        let handle = OwnedHandle::from(file);
        match tag_of(handle.as_handle()) {
            Ok(tag) if tag.attributes & fs::FILE_ATTRIBUTE_DIRECTORY != 0 => {}
            Ok(tag) => return Err(DoorError::NotADir(shown, tag.kind())),
            Err(err) => return Err(DoorError::Io(shown, err)),
        }
        let final_root = final_path(handle.as_handle()).map_err(|e| DoorError::Io(shown, e))?;
        Ok(Dir {
            root: root.to_path_buf(),
            handle,
            final_root,
        })
    }

    /// Opens `root`, creating it when it does not exist: the user's folder. Under the
    /// user's profile (`%APPDATA%`), whose permissions it inherits: only the user (and
    /// administrators and the system) can read it, as 0700 means on Unix.
    pub fn open_or_create_private(root: &Path) -> Result<Dir, DoorError> {
        std::fs::create_dir_all(root).map_err(|e| DoorError::Io(root.display().to_string(), e))?;
        Dir::open(root)
    }

    /// Whether the file `handle` holds is under the root, by its final path (a path the
    /// system cannot name is not).
    pub(super) fn holds(&self, handle: BorrowedHandle<'_>) -> bool {
        final_path(handle).is_ok_and(|real| is_under(&real, &self.final_root))
    }

    /// The root opened afresh (an empty name relative to its handle): a handle of its
    /// own, so a listing starts at the first entry (a duplicated handle shares its
    /// position in the listing, and Wine ignores a restart).
    pub(super) fn dup(&self) -> Result<OwnedHandle, DoorError> {
        nt_open(self.handle.as_handle(), &[], How::folder(nt::FILE_OPEN))
            .map_err(|e| DoorError::Io(self.root.display().to_string(), e))
    }

    /// The folders of `parts` under the root, each opened by handle from the one before,
    /// no link followed; `create` makes the missing ones. Returns the last (the root when
    /// `parts` is empty).
    pub(super) fn folder(
        &self,
        parts: &[OsString],
        shown: &str,
        create: bool,
    ) -> Result<OwnedHandle, DoorError> {
        let mut dir = self.dup()?;
        for part in parts {
            let disposition = if create {
                nt::FILE_OPEN_IF
            } else {
                nt::FILE_OPEN
            };
            let next = nt_open(dir.as_handle(), &wide(part), How::folder(disposition))
                .map_err(|e| folder_error(e, shown, create))?;
            let tag = tag_of(next.as_handle()).map_err(|e| DoorError::Io(shown.to_owned(), e))?;
            // A link, or a folder the system placed elsewhere all the same (Wine shows a
            // Unix symlink as the folder it leads to; a filter driver may redirect): its
            // final path must still be under the root's.
            let escaped = !tag.redirects() && !self.holds(next.as_handle());
            if create && (tag.redirects() || escaped) {
                return Err(DoorError::Symlink(shown.to_owned()));
            }
            if tag.redirects() {
                return Err(DoorError::Reparse(shown.to_owned()));
            }
            if escaped {
                return Err(DoorError::Outside(shown.to_owned()));
            }
            dir = next;
        }
        Ok(dir)
    }
}

/// A folder on the way could not be opened: missing, a file, or another failure.
fn folder_error(err: io::Error, shown: &str, create: bool) -> DoorError {
    match err.raw_os_error().map(|c| c as u32) {
        Some(wf::ERROR_DIRECTORY) if create => DoorError::NotADir(shown.to_owned(), Kind::File),
        _ => read_error(err, shown),
    }
}

#[cfg(test)]
mod tests;
