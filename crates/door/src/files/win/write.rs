//! Writing under a root on Windows: atomic replace through a `FILE_CREATE` temp file
//! renamed over the target by handle (stale temps of killed writers removed), append,
//! create, locks, renames, removal and folders, never through a link in any component.

use std::os::windows::io::{AsHandle, AsRawHandle, BorrowedHandle};

use windows_sys::Wdk::Storage::FileSystem as nt;
use windows_sys::Win32::Foundation as wf;
use windows_sys::Win32::Storage::FileSystem as fs;

use super::read::{for_each_entry, stat_at};
use super::*;

/// A temp file left by a writer that is still alive is removed after this long anyway.
const STALE_TEMP: Duration = Duration::from_secs(3600);
/// How long a rename blocked by another program's open handle (a scanner, an indexer,
/// an editor without `FILE_SHARE_DELETE`, or, without POSIX semantics, a reader of the
/// target) is retried: well under the lock's wait, so a stuck holder still shows.
const SHARING_RETRY: Duration = Duration::from_secs(5);

impl Dir {
    /// Replaces `rel` with `bytes` atomically: a crash at any instant leaves the old file or
    /// the new one. Creates missing folders; never follows a link; replaces only a
    /// regular file.
    pub fn write_atomic(&self, rel: &Path, bytes: &[u8]) -> Result<(), DoorError> {
        self.replace(rel, bytes, true)
    }

    /// [`Dir::write_atomic`] without the flush: still all or nothing if the process dies,
    /// but a power loss may keep the old file. For bookkeeping that can be lost.
    pub fn write_atomic_unsynced(&self, rel: &Path, bytes: &[u8]) -> Result<(), DoorError> {
        self.replace(rel, bytes, false)
    }

    /// [`Dir::write_atomic`]: the Unix door's swap with the previous content (Linux's
    /// `RENAME_EXCHANGE`) has no counterpart here, so `shadow` is not used.
    pub fn write_atomic_swapping(
        &self,
        rel: &Path,
        _shadow: &str,
        bytes: &[u8],
    ) -> Result<(), DoorError> {
        self.write_atomic(rel, bytes)
    }

    fn replace(&self, rel: &Path, bytes: &[u8], durable: bool) -> Result<(), DoorError> {
        let shown = show(rel);
        let (dir, name) = self.parent_for_write(rel, &shown)?;
        match stat_at(self, dir.as_handle(), &name, &shown).map_err(|e| match e {
            DoorError::Outside(p) => DoorError::Symlink(p),
            other => other,
        })? {
            None
            | Some(Stat {
                kind: Kind::File, ..
            }) => {}
            Some(Stat {
                kind: Kind::Symlink,
                ..
            }) => return Err(DoorError::Symlink(shown)),
            Some(stat) => return Err(DoorError::NotRegular(shown, stat.kind)),
        }
        remove_stale_temps(self, dir.as_handle(), &name);
        let temp = wide(&temp_name(&name));
        let how = How {
            access: fs::FILE_GENERIC_WRITE | fs::DELETE,
            share: fs::FILE_SHARE_READ,
            disposition: nt::FILE_CREATE,
            kind: nt::FILE_NON_DIRECTORY_FILE,
        };
        let handle =
            nt_open(dir.as_handle(), &temp, how).map_err(|e| DoorError::Io(shown.clone(), e))?;
        let mut file = File::from(handle);
        let result = (|| -> io::Result<()> {
            file.write_all(bytes)?;
            if durable {
                file.sync_all()?;
            }
            rename_by_handle(file.as_handle(), dir.as_handle(), &wide(&name), true)
        })();
        if let Err(err) = result {
            let _ = delete_by_handle(file.as_handle());
            return Err(DoorError::Io(shown, err));
        }
        Ok(())
    }

    /// Appends `bytes` in one write (`FILE_APPEND_DATA` without `FILE_WRITE_DATA`: every
    /// write lands at the end, as with `O_APPEND`). Creates the file and missing folders;
    /// refuses links and non-files.
    pub fn append(&self, rel: &Path, bytes: &[u8]) -> Result<(), DoorError> {
        let access = fs::FILE_APPEND_DATA | fs::FILE_READ_ATTRIBUTES;
        let mut file = self.open_for_write(rel, access)?;
        file.write_all(bytes)
            .map_err(|e| DoorError::Io(show(rel), e))
    }

    /// Creates (or truncates) a regular file for streaming writes (agent output logs).
    pub fn create(&self, rel: &Path) -> Result<File, DoorError> {
        let file = self.open_for_write(rel, fs::FILE_GENERIC_WRITE | fs::FILE_GENERIC_READ)?;
        file.set_len(0).map_err(|e| DoorError::Io(show(rel), e))?;
        Ok(file)
    }

    fn open_for_write(&self, rel: &Path, access: u32) -> Result<File, DoorError> {
        let shown = show(rel);
        let (dir, name) = self.parent_for_write(rel, &shown)?;
        let how = How {
            access,
            share: SHARE_ALL,
            disposition: nt::FILE_OPEN_IF,
            kind: 0,
        };
        let handle =
            nt_open(dir.as_handle(), &wide(&name), how).map_err(|e| write_error(e, &shown))?;
        check_regular(self, handle.as_handle(), &shown)?;
        Ok(File::from(handle))
    }

    /// Takes an exclusive lock on the file `rel` (created if missing), waiting at most
    /// `wait`: nobody holds pagent's locks across anything unbounded, so a lock that stays
    /// taken means a stuck process, and the caller should give up rather than hang.
    pub fn lock(&self, rel: &Path, wait: Duration) -> Result<Lock, DoorError> {
        let shown = show(rel);
        let file = self.open_for_write(rel, fs::FILE_GENERIC_READ | fs::FILE_GENERIC_WRITE)?;
        Lock::wait_for(file, shown, wait)
    }

    /// Renames `rel` to `new_name` in the same folder (setting a file aside).
    pub fn rename_in_place(&self, rel: &Path, new_name: &str) -> Result<(), DoorError> {
        let shown = show(rel);
        let (dir, name) = self.parent_for_write(rel, &shown)?;
        if names::windows_name_problem(&wide(OsStr::new(new_name))).is_some() {
            return Err(DoorError::BadPath(shown));
        }
        let handle = open_existing_for_delete(self, dir.as_handle(), &name, &shown)?;
        rename_by_handle(
            handle.as_handle(),
            dir.as_handle(),
            &wide(OsStr::new(new_name)),
            true,
        )
        .map_err(|e| write_error(e, &shown))
    }

    /// Removes the regular file `rel` (a link is refused, never followed or removed);
    /// `Ok(false)` when nothing was there.
    pub fn remove_file(&self, rel: &Path) -> Result<bool, DoorError> {
        let shown = show(rel);
        let mut parts = normal_components(rel, &shown)?;
        let Some(last) = parts.pop() else {
            return Err(DoorError::BadPath(shown));
        };
        let dir = match self.folder(&parts, &shown, false) {
            Ok(dir) => dir,
            Err(DoorError::Missing(_)) => return Ok(false),
            Err(DoorError::Reparse(p)) => return Err(DoorError::Symlink(p)),
            Err(err) => return Err(err),
        };
        let handle = match open_existing_for_delete(self, dir.as_handle(), &last, &shown) {
            Ok(handle) => handle,
            Err(DoorError::Missing(_)) => return Ok(false),
            Err(err) => return Err(err),
        };
        delete_by_handle(handle.as_handle()).map_err(|e| DoorError::Io(shown, e))?;
        Ok(true)
    }

    /// Creates the folder `rel` and its parents, never through a link.
    pub fn create_dir_all(&self, rel: &Path) -> Result<PathBuf, DoorError> {
        let shown = show(rel);
        let parts = normal_components(rel, &shown)?;
        self.folder(&parts, &shown, true)?;
        Ok(parts.iter().fold(self.root.clone(), |p, c| p.join(c)))
    }

    /// The folder holding `rel` (created as needed, no links anywhere) and the last name.
    pub(super) fn parent_for_write(
        &self,
        rel: &Path,
        shown: &str,
    ) -> Result<(OwnedHandle, OsString), DoorError> {
        let mut parts = normal_components(rel, shown)?;
        let Some(last) = parts.pop() else {
            return Err(DoorError::BadPath(shown.to_owned()));
        };
        Ok((self.folder(&parts, shown, true)?, last))
    }
}

/// A regular file (never a link or folder) opened with `DELETE` access, to rename or
/// remove it by handle.
fn open_existing_for_delete(
    root: &Dir,
    dir: BorrowedHandle<'_>,
    name: &OsStr,
    shown: &str,
) -> Result<OwnedHandle, DoorError> {
    let how = How {
        access: fs::DELETE | fs::FILE_READ_ATTRIBUTES,
        share: SHARE_ALL,
        disposition: nt::FILE_OPEN,
        kind: 0,
    };
    let handle = nt_open(dir, &wide(name), how).map_err(|e| read_error(e, shown))?;
    check_regular(root, handle.as_handle(), shown)?;
    Ok(handle)
}

/// A link, a file whose final path is not under the root, or a non-file where pagent
/// writes is refused.
fn check_regular(root: &Dir, handle: BorrowedHandle<'_>, shown: &str) -> Result<(), DoorError> {
    let tag = tag_of(handle).map_err(|e| DoorError::Io(shown.to_owned(), e))?;
    if !root.holds(handle) {
        return Err(DoorError::Symlink(shown.to_owned()));
    }
    match tag.kind() {
        Kind::File if is_disk(handle) => Ok(()),
        Kind::File => Err(DoorError::NotRegular(shown.to_owned(), Kind::Device)),
        Kind::Symlink => Err(DoorError::Symlink(shown.to_owned())),
        kind => Err(DoorError::NotRegular(shown.to_owned(), kind)),
    }
}

fn write_error(err: io::Error, shown: &str) -> DoorError {
    match err.raw_os_error().map(|c| c as u32) {
        Some(wf::ERROR_DIRECTORY) => DoorError::NotADir(shown.to_owned(), Kind::File),
        Some(wf::ERROR_INVALID_NAME) => DoorError::BadPath(shown.to_owned()),
        _ => DoorError::Io(shown.to_owned(), err),
    }
}

/// Renames the file open as `file` to `name` in the folder `dir`: `NtSetInformationFile`
/// with `FileRenameInformation`, the call `MoveFileExW` makes, by handle (Win32's
/// `SetFileInformationByHandle` would do on Windows, but Wine's rewrites a relative name
/// against the working folder); retried for a moment on a sharing violation.
fn rename_by_handle(
    file: BorrowedHandle<'_>,
    dir: BorrowedHandle<'_>,
    name: &[u16],
    replace: bool,
) -> io::Result<()> {
    let header = std::mem::offset_of!(nt::FILE_RENAME_INFORMATION, FileName);
    let size = header + (name.len() + 1) * 2;
    // u64s: the struct holds a handle, 8-byte aligned.
    let mut buf = vec![0u64; size.div_ceil(8)];
    let info = buf.as_mut_ptr().cast::<nt::FILE_RENAME_INFORMATION>();
    // SAFETY: `buf` is zeroed, aligned and large enough for the header and the name.
    unsafe {
        (*info).Anonymous.ReplaceIfExists = replace;
        (*info).RootDirectory = dir.as_raw_handle();
        (*info).FileNameLength = (name.len() * 2) as u32;
        std::ptr::copy_nonoverlapping(
            name.as_ptr(),
            (&raw mut (*info).FileName).cast::<u16>(),
            name.len(),
        );
    }
    // POSIX semantics first (Windows 10 1709 and later, NTFS): the target is replaced
    // even while a reader holds it open, as a rename over it is on Unix. Where the class
    // or the flag is not known (older systems, other file systems, Wine), the classic
    // rename, which a reader of the target makes fail for a moment: retried.
    let mut class = FILE_RENAME_INFORMATION_EX;
    // SAFETY: `buf` holds the header written above.
    unsafe {
        (*info).Anonymous.Flags = if replace {
            RENAME_REPLACE_IF_EXISTS | RENAME_POSIX_SEMANTICS
        } else {
            RENAME_POSIX_SEMANTICS
        };
    }
    let started = Instant::now();
    loop {
        // SAFETY: all-zero is a valid IO_STATUS_BLOCK.
        let mut status_block: windows_sys::Win32::System::IO::IO_STATUS_BLOCK =
            unsafe { std::mem::zeroed() };
        // SAFETY: `buf` holds a FILE_RENAME_INFORMATION(_EX) of `size` bytes.
        let status = unsafe {
            nt::NtSetInformationFile(
                file.as_raw_handle(),
                &raw mut status_block,
                buf.as_ptr().cast(),
                size as u32,
                class,
            )
        };
        if status >= 0 {
            return Ok(());
        }
        if class == FILE_RENAME_INFORMATION_EX && UNKNOWN_CLASS.contains(&status) {
            class = nt::FileRenameInformation;
            // SAFETY: as above; the classic structure has a BOOLEAN where the flags were.
            unsafe {
                (*info).Anonymous.Flags = 0;
                (*info).Anonymous.ReplaceIfExists = replace;
            }
            continue;
        }
        // SAFETY: a pure conversion of a status code.
        let err = io::Error::from_raw_os_error(unsafe { wf::RtlNtStatusToDosError(status) } as i32);
        let busy = matches!(
            err.raw_os_error().map(|c| c as u32),
            Some(wf::ERROR_SHARING_VIOLATION | wf::ERROR_ACCESS_DENIED)
        );
        if !busy || started.elapsed() >= SHARING_RETRY {
            return Err(err);
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// `FileRenameInformationEx` and its flags (ntifs.h), which windows-sys does not name.
const FILE_RENAME_INFORMATION_EX: i32 = 65;
const RENAME_REPLACE_IF_EXISTS: u32 = 0x1;
const RENAME_POSIX_SEMANTICS: u32 = 0x2;
/// What a system answers for a class or flag it does not know: STATUS_INVALID_INFO_CLASS,
/// STATUS_INVALID_PARAMETER, STATUS_NOT_SUPPORTED, STATUS_NOT_IMPLEMENTED.
const UNKNOWN_CLASS: [i32; 4] = [
    0xC000_0003_u32 as i32,
    0xC000_000D_u32 as i32,
    0xC000_00BB_u32 as i32,
    0xC000_0002_u32 as i32,
];

/// Marks the file open as `file` for deletion (gone when its last handle closes).
pub(super) fn delete_by_handle(file: BorrowedHandle<'_>) -> io::Result<()> {
    let info = fs::FILE_DISPOSITION_INFO { DeleteFile: true };
    // SAFETY: one FILE_DISPOSITION_INFO, as the class asks.
    let ok = unsafe {
        fs::SetFileInformationByHandle(
            file.as_raw_handle(),
            fs::FileDispositionInfo,
            (&raw const info).cast(),
            std::mem::size_of::<fs::FILE_DISPOSITION_INFO>() as u32,
        )
    };
    if ok == 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// `.NAME.PID.NANOS.tmp`: unique per writer, recognisable as NAME's temp file.
fn temp_name(name: &OsStr) -> OsString {
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or(0);
    let mut temp = OsString::from(".");
    temp.push(name);
    temp.push(format!(".{}.{nanos}.tmp", std::process::id()));
    temp
}

/// Removes `.NAME.PID.*.tmp` files whose writer is dead (or that are over an hour old).
fn remove_stale_temps(root: &Dir, dir: BorrowedHandle<'_>, name: &OsStr) {
    use std::os::windows::ffi::OsStringExt;
    let mut prefix = wide(OsStr::new("."));
    prefix.extend(wide(name));
    prefix.push(u16::from(b'.'));
    let suffix = wide(OsStr::new(".tmp"));
    let mut candidates: Vec<Vec<u16>> = Vec::new();
    for_each_entry(dir, |entry, kind| {
        if kind == Kind::File && entry.starts_with(&prefix) && entry.ends_with(&suffix) {
            candidates.push(entry.to_vec());
        }
    });
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    for entry in candidates {
        let rest = &entry[prefix.len()..entry.len() - suffix.len()];
        let pid = String::from_utf16(rest.split(|u| *u == u16::from(b'.')).next().unwrap_or(&[]))
            .ok()
            .and_then(|p| p.parse::<u32>().ok());
        let owner_dead = pid.is_some_and(|pid| pid != std::process::id() && !process_alive(pid));
        let entry = OsString::from_wide(&entry);
        let old = stat_at(root, dir, &entry, "")
            .ok()
            .flatten()
            .and_then(|st| u64::try_from(st.mtime.0).ok())
            .is_some_and(|mtime| now.saturating_sub(mtime) > STALE_TEMP.as_secs());
        if (owner_dead || old)
            && let Ok(handle) = open_existing_for_delete(root, dir, &entry, "")
        {
            let _ = delete_by_handle(handle.as_handle());
        }
    }
}

/// Whether a process with this id is running.
pub(super) fn process_alive(pid: u32) -> bool {
    use windows_sys::Win32::System::Threading as th;
    // SAFETY: OpenProcess returns a handle we own, or null.
    let handle = unsafe { th::OpenProcess(th::PROCESS_QUERY_LIMITED_INFORMATION, 0, pid) };
    if handle.is_null() {
        // No such process, or one we may not look at (another user's: alive).
        return io::Error::last_os_error().raw_os_error()
            != Some(wf::ERROR_INVALID_PARAMETER as i32);
    }
    // SAFETY: `handle` is a fresh handle nobody else owns.
    let handle = unsafe { OwnedHandle::from_raw_handle(handle) };
    let mut code = 0u32;
    // SAFETY: GetExitCodeProcess on an open process handle.
    let ok = unsafe { th::GetExitCodeProcess(handle.as_raw_handle(), &raw mut code) };
    ok == 0 || code == wf::STILL_ACTIVE as u32
}
