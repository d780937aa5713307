//! The system calls the door makes, each behind a small safe wrapper, one file per
//! system where they differ: [`unix`] what Linux and macOS do alike (the whole `*at`
//! family the door is built on), [`linux`] and [`macos`] the rest. Windows has no
//! `openat` and no `O_NOFOLLOW` in Win32, so its door is a model of its own beside these
//! (`../win`: NT handles and `FILE_OPEN_REPARSE_POINT`), not a branch inside them.
//!
//! What differs today is durability: on macOS `fsync(2)` hands data to the drive, whose
//! cache may still reorder or lose it on power loss; only `fcntl(F_FULLFSYNC)` asks the
//! drive to write it out (Rust's `File::sync_all` already does that on Apple systems,
//! for the temp file; [`sync_durably`] does it for the folder after the rename).

mod unix;

pub(super) use unix::*;

#[cfg(not(target_os = "macos"))]
mod linux;
#[cfg(not(target_os = "macos"))]
pub(super) use linux::*;

#[cfg(target_os = "macos")]
mod macos;
#[cfg(target_os = "macos")]
pub(super) use macos::*;

#[cfg(test)]
mod tests {
    use std::os::fd::AsFd;

    use super::*;

    /// Runs on every system the suite runs on: `F_FULLFSYNC` on the macOS runners.
    #[test]
    fn a_file_and_its_folder_sync_durably() {
        let dir = tempfile::tempdir().unwrap();
        let folder = std::fs::File::open(dir.path()).unwrap();
        let path = dir.path().join("f");
        std::fs::write(&path, b"x").unwrap();
        let file = std::fs::File::open(&path).unwrap();
        sync_durably(file.as_fd()).unwrap();
        sync_durably(folder.as_fd()).unwrap();
    }
}
