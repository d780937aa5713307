//! Linux (and, untested, other Unix systems): `fsync(2)` flushes the drive's write cache
//! on the file systems Linux mounts with barriers, its default, so it is the durable sync.

use super::super::*;

/// Makes what was written to `fd` (a file, or a folder after a rename) survive a power
/// loss.
pub(in crate::files) fn sync_durably(fd: BorrowedFd<'_>) -> io::Result<()> {
    super::unix::fsync(fd)
}
