//! macOS: `fsync(2)` leaves data in the drive's cache (Apple's fsync(2) page says so);
//! `fcntl(F_FULLFSYNC)` is what writes it out, on APFS and HFS+. A file system that does
//! not implement it (some network and FUSE mounts) gets `fsync`, which is all it offers.

use super::super::*;

/// Makes what was written to `fd` (a file, or a folder after a rename) survive a power
/// loss.
pub(in crate::files) fn sync_durably(fd: BorrowedFd<'_>) -> io::Result<()> {
    // SAFETY: fcntl with F_FULLFSYNC on a valid descriptor takes no pointer.
    if unsafe { libc::fcntl(fd.as_raw_fd(), libc::F_FULLFSYNC) } != -1 {
        return Ok(());
    }
    super::unix::fsync(fd)
}
