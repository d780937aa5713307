//! Listing and walking a tree under a root without leaving it: no symlink is followed,
//! the depth is bounded, and entries are read through the folder's own descriptor.

use super::*;

impl Dir {
    /// `lstat` of `rel` (bytes, relative), for comparing with what git's index recorded.
    /// Metadata only: the kernel follows links in the folders on the way, which can leak
    /// a size or a time into a digest but never opens anything; `None` when it fails.
    pub fn stat_rel(&self, rel: &[u8]) -> Option<Stat> {
        let name = CString::new(rel).ok()?;
        let st = fstatat(
            std::os::fd::AsFd::as_fd(&self.fd),
            &name,
            libc::AT_SYMLINK_NOFOLLOW,
        )
        .ok()?;
        Some(stat_of(&st))
    }

    /// Walks the whole tree under the root by descriptor, never following a link: calls
    /// `visit` with each entry's path (relative, `/`-separated bytes) and kind, in git's
    /// order ([`git_order`]: the order of git's index), and descends into a folder only
    /// when `visit` returns true for it.
    pub fn walk_tree(&self, visit: &mut dyn FnMut(&[u8], Kind) -> bool) {
        if let Ok(root) = open_own(self.fd.as_fd()) {
            walk_fd(&root, &mut Vec::new(), visit, 0);
        }
    }

    /// The names in the folder `rel` (inside the root), unsorted, without `.` and `..`.
    pub fn list(&self, rel: &Path) -> Result<Vec<OsString>, DoorError> {
        let shown = show(rel);
        let walked = self.walk_components(rel, &shown)?;
        let dir = self.open_from(&walked.parts, walked.opened, &shown)?;
        let mut names = Vec::new();
        for_each_entry(&dir, |name| {
            if name != b"." && name != b".." {
                names.push(OsString::from_vec(name.to_vec()));
            }
        });
        Ok(names)
    }

    /// A walk of the folder `rel` (inside the root), never following links.
    pub fn walk(&self, rel: &Path) -> Result<WalkDir, DoorError> {
        let real = self.real_dir(rel)?;
        Ok(walkdir::WalkDir::new(real).follow_links(false))
    }
}

/// Folders deeper than this are not walked (a loop of bind mounts, a pathological tree).
pub(super) const MAX_DEPTH: usize = 256;

/// Walks the folder `dir`, a descriptor of the walk's own (see [`list_own`]).
pub(super) fn walk_fd(
    dir: &Fd,
    prefix: &mut Vec<u8>,
    visit: &mut dyn FnMut(&[u8], Kind) -> bool,
    depth: usize,
) {
    let mut entries: Vec<(Vec<u8>, Kind)> = Vec::new();
    list_own(dir, |name, d_type| {
        if name != b"." && name != b".." {
            entries.push((name.to_vec(), kind_of(dir, name, d_type)));
        }
    });
    entries.sort_unstable_by(|a, b| git_order((&a.0, a.1 == Kind::Dir), (&b.0, b.1 == Kind::Dir)));
    for (name, kind) in entries {
        let len = prefix.len();
        if !prefix.is_empty() {
            prefix.push(b'/');
        }
        prefix.extend_from_slice(&name);
        if visit(prefix, kind) && kind == Kind::Dir && depth < MAX_DEPTH {
            let opened = CString::new(name).ok().and_then(|c| {
                openat(
                    dir.fd(),
                    &c,
                    libc::O_RDONLY | libc::O_DIRECTORY | libc::O_NOFOLLOW | libc::O_CLOEXEC,
                    0,
                )
                .ok()
            });
            if let Some(child) = opened {
                walk_fd(&Fd(child), prefix, visit, depth + 1);
            }
        }
        prefix.truncate(len);
    }
}

/// What the listing says `name` is, or `lstat` where it does not say.
fn kind_of(dir: &Fd, name: &[u8], d_type: u8) -> Kind {
    match d_type {
        libc::DT_DIR => Kind::Dir,
        libc::DT_REG => Kind::File,
        libc::DT_LNK => Kind::Symlink,
        libc::DT_FIFO => Kind::Fifo,
        libc::DT_SOCK => Kind::Socket,
        libc::DT_CHR | libc::DT_BLK => Kind::Device,
        _ => CString::new(name)
            .ok()
            .and_then(|c| fstatat(dir.fd(), &c, libc::AT_SYMLINK_NOFOLLOW).ok())
            .map_or(Kind::Other, |st| Kind::of(st.st_mode)),
    }
}

/// Calls `f` with each name in the folder `dir` (including `.` and `..`).
pub(super) fn for_each_entry(dir: &Fd, mut f: impl FnMut(&[u8])) {
    for_each_typed_entry(dir, |name, _| f(name));
}

/// Calls `f` with each name in the folder `dir` and its `d_type` (including `.` and `..`).
///
/// The folder is listed through a descriptor of its own (`openat(dir, ".")`), never a
/// duplicate of `dir`: a duplicate shares the file offset, so a listing left it at the
/// end and the next listing of the same `Dir` in the same process saw nothing (issue 21:
/// `pagent loop`, which keeps its project's `Dir` for the whole run, stopped seeing new
/// files from its second decision on, where each Stop hook process saw them).
pub(super) fn for_each_typed_entry(dir: &Fd, f: impl FnMut(&[u8], u8)) {
    if let Ok(listing) = open_own(dir.fd()) {
        list_own(&listing, f);
    }
}

/// A descriptor of its own for the folder `dir` (its own offset for a listing).
pub(super) fn open_own(dir: BorrowedFd<'_>) -> io::Result<Fd> {
    openat(
        dir,
        &CString::from(c"."),
        libc::O_RDONLY | libc::O_DIRECTORY | libc::O_CLOEXEC,
        0,
    )
    .map(Fd)
}

/// Lists `dir`, a descriptor nobody else lists (opened for this walk or by [`open_own`]):
/// on Linux straight from the kernel (`getdents64`), which spares the three calls of
/// `fdopendir` on every folder of every Stop's walk.
#[cfg(target_os = "linux")]
fn list_own(dir: &Fd, mut f: impl FnMut(&[u8], u8)) {
    // u64s: the kernel's records are 8-byte aligned. 16 KiB, about 500 names a call.
    let mut buf = std::mem::MaybeUninit::<[u64; 2048]>::uninit();
    let size = std::mem::size_of_val(&buf);
    loop {
        // SAFETY: getdents64 on an open descriptor writes at most `size` bytes into `buf`.
        let got = unsafe {
            libc::syscall(
                libc::SYS_getdents64,
                dir.fd().as_raw_fd(),
                buf.as_mut_ptr(),
                size,
            )
        };
        let Ok(got) = usize::try_from(got) else {
            return; // an error ends the listing, as readdir's would
        };
        if got == 0 {
            return;
        }
        let base = buf.as_ptr().cast::<u8>();
        let mut at = 0;
        // SAFETY: the kernel wrote `got` bytes (at most `size`) from `base`.
        let written = unsafe { std::slice::from_raw_parts(base, got.min(size)) };
        while at + 20 <= written.len() {
            // struct linux_dirent64: d_ino u64, d_off i64, d_reclen u16 (at 16), d_type u8
            // (at 18), then the name (at 19), NUL-terminated within the record.
            let reclen = usize::from(u16::from_ne_bytes([written[at + 16], written[at + 17]]));
            let Some(record) = written.get(at..at + reclen).filter(|_| reclen >= 20) else {
                return; // not a record the kernel writes: the listing ends here
            };
            let Ok(name) = std::ffi::CStr::from_bytes_until_nul(&record[19..]) else {
                return;
            };
            f(name.to_bytes(), record[18]);
            at += reclen;
        }
    }
}

/// Lists `dir` through `fdopendir` on a descriptor of its own (other Unix systems).
#[cfg(not(target_os = "linux"))]
fn list_own(dir: &Fd, mut f: impl FnMut(&[u8], u8)) {
    let Ok(listing) = open_own(dir.fd()) else {
        return;
    };
    // SAFETY: fdopendir takes ownership of the descriptor; closedir frees both.
    let handle = unsafe { libc::fdopendir(std::os::fd::IntoRawFd::into_raw_fd(listing.0)) };
    if handle.is_null() {
        return;
    }
    loop {
        // SAFETY: readdir on an open DIR*; the entry stays valid until the next call.
        let entry = unsafe { libc::readdir(handle) };
        if entry.is_null() {
            break;
        }
        // SAFETY: d_name is NUL-terminated within the entry; d_type is a plain byte.
        let (name, d_type) = unsafe {
            (
                std::ffi::CStr::from_ptr((*entry).d_name.as_ptr()),
                (*entry).d_type,
            )
        };
        f(name.to_bytes(), d_type);
    }
    // SAFETY: closes the DIR* opened above (and its descriptor).
    unsafe {
        libc::closedir(handle);
    }
}
