//! The calls Linux and macOS make alike: POSIX's `*at` family on folder descriptors,
//! each behind a small safe wrapper, the owned folder descriptor ([`Fd`]) every walk
//! holds, and [`Stat`] read from `struct stat`.

use super::super::*;

/// An owned descriptor with the helpers below.
#[derive(Debug)]
pub(in crate::files) struct Fd(pub(in crate::files) OwnedFd);

impl Fd {
    pub(in crate::files) fn fd(&self) -> BorrowedFd<'_> {
        use std::os::fd::AsFd;
        self.0.as_fd()
    }
}

pub(in crate::files) fn open_path(
    path: &Path,
    flags: i32,
    shown: &str,
) -> Result<OwnedFd, DoorError> {
    let c = CString::new(path.as_os_str().as_bytes())
        .map_err(|_| DoorError::BadPath(shown.to_owned()))?;
    // SAFETY: open with a NUL-terminated path; the returned descriptor is owned below.
    let fd = unsafe { libc::open(c.as_ptr(), flags) };
    if fd < 0 {
        return Err(read_error(io::Error::last_os_error(), shown));
    }
    // SAFETY: `fd` is a fresh descriptor nobody else owns.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

pub(in crate::files) fn openat(
    dir: BorrowedFd<'_>,
    name: &CString,
    flags: i32,
    mode: libc::c_uint,
) -> io::Result<OwnedFd> {
    // SAFETY: openat with a valid descriptor and a NUL-terminated name.
    let fd = unsafe { libc::openat(dir.as_raw_fd(), name.as_ptr(), flags, mode) };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: `fd` is a fresh descriptor nobody else owns.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

pub(in crate::files) fn fstatat(
    dir: BorrowedFd<'_>,
    name: &CString,
    flags: i32,
) -> io::Result<libc::stat> {
    // SAFETY: all-zero is a valid `stat` (integers and timespecs).
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: a valid descriptor and a NUL-terminated name that outlive the call; it
    // writes only the buffer we own.
    if unsafe { libc::fstatat(dir.as_raw_fd(), name.as_ptr(), &raw mut st, flags) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(st)
}

/// `fstat(2)` of an open descriptor.
pub(in crate::files) fn fstat(fd: BorrowedFd<'_>) -> io::Result<libc::stat> {
    // SAFETY: all-zero is a valid `stat` (integers and timespecs).
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: fstat on a valid descriptor, writing only the buffer we own.
    if unsafe { libc::fstat(fd.as_raw_fd(), &raw mut st) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(st)
}

/// `fchmod(2)`: the mode of what `fd` has open.
pub(in crate::files) fn fchmod(fd: BorrowedFd<'_>, mode: libc::mode_t) -> io::Result<()> {
    // SAFETY: fchmod on a valid descriptor.
    if unsafe { libc::fchmod(fd.as_raw_fd(), mode) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

pub(in crate::files) fn readlinkat(dir: BorrowedFd<'_>, name: &CString) -> io::Result<OsString> {
    let mut buf = vec![0u8; 4096];
    // SAFETY: readlinkat writes at most `buf.len()` bytes into `buf`.
    let n = unsafe {
        libc::readlinkat(
            dir.as_raw_fd(),
            name.as_ptr(),
            buf.as_mut_ptr().cast(),
            buf.len(),
        )
    };
    let n = usize::try_from(n).map_err(|_| io::Error::last_os_error())?;
    buf.truncate(n);
    Ok(OsString::from_vec(buf))
}

/// `symlinkat(2)`: a symlink `name` in `dir` whose target is `target`.
pub(in crate::files) fn symlinkat(
    target: &CString,
    dir: BorrowedFd<'_>,
    name: &CString,
) -> io::Result<()> {
    // SAFETY: symlinkat with a valid descriptor and NUL-terminated strings.
    if unsafe { libc::symlinkat(target.as_ptr(), dir.as_raw_fd(), name.as_ptr()) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

pub(in crate::files) fn renameat(
    from_dir: BorrowedFd<'_>,
    from: &CString,
    to_dir: BorrowedFd<'_>,
    to: &CString,
) -> io::Result<()> {
    // SAFETY: renameat with valid descriptors and NUL-terminated names.
    let rc = unsafe {
        libc::renameat(
            from_dir.as_raw_fd(),
            from.as_ptr(),
            to_dir.as_raw_fd(),
            to.as_ptr(),
        )
    };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

pub(in crate::files) fn unlinkat(
    dir: BorrowedFd<'_>,
    name: &CString,
    flags: i32,
) -> io::Result<()> {
    // SAFETY: unlinkat with a valid descriptor and a NUL-terminated name.
    if unsafe { libc::unlinkat(dir.as_raw_fd(), name.as_ptr(), flags) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// `fsync(2)`: the file's data and metadata handed to the device.
pub(in crate::files) fn fsync(fd: BorrowedFd<'_>) -> io::Result<()> {
    // SAFETY: fsync on a valid descriptor.
    if unsafe { libc::fsync(fd.as_raw_fd()) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// What [`Dir::stat_rel`] reports of a `struct stat`. The libc crate names the nanosecond
/// fields `st_mtime_nsec` and `st_ctime_nsec` on both systems (Linux's `st_mtim`, macOS's
/// `st_mtimespec`), which are what git records in its index on each.
pub(in crate::files) fn stat_of(st: &libc::stat) -> Stat {
    Stat {
        kind: Kind::of(st.st_mode),
        size: u64::try_from(st.st_size).unwrap_or(0),
        ino: st.st_ino,
        mtime: (st.st_mtime, st.st_mtime_nsec),
        ctime: (st.st_ctime, st.st_ctime_nsec),
    }
}
