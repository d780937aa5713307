//! The Windows door's rules, each against what a hostile repository would plant there:
//! stream and device names, links out of the project, files that must not be replaced.
//! They run under Wine here (`scripts/test.sh`) and natively on the release workflow's
//! Windows runner, which also runs the `#[ignore]`d ones: Wine 8 cannot create NTFS
//! reparse points (`mklink` and `CreateSymbolicLinkW` do nothing there), so junctions and
//! symbolic links are proven on NTFS, and under Wine by the integration tests' Unix
//! symlinks, which Wine shows as the folders they lead to (caught by the final-path check).

#![allow(clippy::disallowed_methods, clippy::disallowed_types)]

use std::fs;
use std::path::Path;
use std::time::Duration;

use super::super::*;

fn setup() -> (tempfile::TempDir, tempfile::TempDir, Dir) {
    let project = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    let root = canonical(project.path()).unwrap();
    let dir = Dir::open(&root).unwrap();
    (project, outside, dir)
}

/// Issue 25: an alternate data stream name, as the state or a condition file, is refused
/// before any call, for reads and writes, and nothing is written.
#[test]
fn windows_stream_names_are_refused_and_write_nothing() {
    let (project, _outside, dir) = setup();
    fs::write(project.path().join("file.txt"), "visible").unwrap();
    for rel in [
        "file.txt:stream",
        ".claude/pagent-pipeline.json:x",
        "file.txt::$DATA",
    ] {
        let rel = Path::new(rel);
        assert!(
            matches!(dir.write_atomic(rel, b"hidden"), Err(DoorError::BadPath(_))),
            "{rel:?}"
        );
        assert!(matches!(
            dir.append(rel, b"hidden"),
            Err(DoorError::BadPath(_))
        ));
        assert!(matches!(dir.read(rel, 100), Err(DoorError::BadPath(_))));
        assert!(matches!(dir.kind(rel), Err(DoorError::BadPath(_))));
    }
    assert_eq!(
        fs::read_to_string(project.path().join("file.txt")).unwrap(),
        "visible"
    );
    assert!(!project.path().join(".claude").exists());
}

/// Issue 25: `NUL`, `CON`, `con.txt`, `COM1` as the state or a condition file never open
/// a device and never create a file no other program could delete.
#[test]
fn windows_device_names_are_refused_and_open_no_device() {
    let (project, _outside, dir) = setup();
    for rel in [
        "NUL",
        "CON",
        "con.txt",
        "COM1",
        ".claude/nul",
        "aux/state.json",
        "a.",
        "b ",
    ] {
        let rel = Path::new(rel);
        assert!(
            matches!(dir.write_atomic(rel, b"x"), Err(DoorError::BadPath(_))),
            "{rel:?}"
        );
        assert!(
            matches!(dir.read(rel, 100), Err(DoorError::BadPath(_))),
            "{rel:?}"
        );
        assert!(matches!(
            dir.lock(rel, Duration::ZERO),
            Err(DoorError::BadPath(_))
        ));
        assert!(matches!(
            dir.create_dir_all(rel),
            Err(DoorError::BadPath(_))
        ));
    }
    assert_eq!(fs::read_dir(project.path()).unwrap().count(), 0);
    // Outside any root the same names are devices: refused by name, or as a device.
    assert!(matches!(
        read_outside(Path::new("NUL"), 10),
        Err(DoorError::BadPath(_))
    ));
    assert!(matches!(
        read_outside(Path::new(r"\\.\NUL"), 10),
        Err(DoorError::NotRegular(_, Kind::Device) | DoorError::Missing(_) | DoorError::Io(..))
    ));
}

/// Issue 25: atomic replace by handle (`FILE_CREATE` temp, flushed, renamed over the
/// target by `FileRenameInformation`), no temp file left, folders created on the way.
#[test]
fn windows_atomic_writes_replace_and_leave_no_temp_files() {
    let (project, _outside, dir) = setup();
    let rel = Path::new(".claude/pagent-pipeline.json");
    dir.write_atomic(rel, b"one").unwrap();
    dir.write_atomic(rel, b"two").unwrap();
    dir.write_atomic_unsynced(rel, b"three").unwrap();
    assert_eq!(dir.read(rel, 100).unwrap(), b"three");
    let names = dir.list(Path::new(".claude")).unwrap();
    assert_eq!(
        names,
        vec![std::ffi::OsString::from("pagent-pipeline.json")]
    );
    assert_eq!(
        fs::read_to_string(project.path().join(".claude").join("pagent-pipeline.json")).unwrap(),
        "three"
    );
}

/// A temp file of a writer that is gone is removed at the next write in its folder.
#[test]
fn windows_stale_temp_files_of_dead_writers_are_removed() {
    let (project, _outside, dir) = setup();
    // No process has id 4294967292 (ids are multiples of 4 below 2^32 - 4 in practice).
    let stale = project.path().join(".state.json.4294967292.1.tmp");
    fs::write(&stale, "half").unwrap();
    dir.write_atomic(Path::new("state.json"), b"whole").unwrap();
    assert!(!stale.exists());
}

#[test]
fn windows_appends_locks_renames_and_removes_regular_files() {
    let (project, _outside, dir) = setup();
    let log = Path::new(".claude/pagent/events.jsonl");
    dir.append(log, b"a\n").unwrap();
    dir.append(log, b"b\n").unwrap();
    assert_eq!(dir.read(log, 100).unwrap(), b"a\nb\n");

    let lock = Path::new(".claude/pagent/lock");
    assert!(!dir.lock_is_held(lock).unwrap(), "no file: nobody holds it");
    assert!(!project.path().join(".claude/pagent/lock").exists());
    let held = dir.lock(lock, Duration::ZERO).unwrap();
    assert!(dir.lock_is_held(lock).unwrap());
    assert!(matches!(
        dir.lock(lock, Duration::from_millis(50)),
        Err(DoorError::Busy(..))
    ));
    drop(held);
    assert!(!dir.lock_is_held(lock).unwrap());
    dir.lock(lock, Duration::ZERO).unwrap();

    dir.rename_in_place(log, "events.old").unwrap();
    assert!(project.path().join(".claude/pagent/events.old").exists());
    assert!(
        dir.remove_file(Path::new(".claude/pagent/events.old"))
            .unwrap()
    );
    assert!(
        !dir.remove_file(Path::new(".claude/pagent/events.old"))
            .unwrap()
    );
    assert!(matches!(
        dir.remove_file(Path::new(".claude/pagent")),
        Err(DoorError::NotRegular(_, Kind::Dir))
    ));
}

#[test]
fn windows_reads_are_capped_and_refuse_folders() {
    let (project, _outside, dir) = setup();
    fs::write(project.path().join("big"), vec![b'a'; 100]).unwrap();
    assert_eq!(dir.read(Path::new("big"), 100).unwrap().len(), 100);
    assert!(matches!(
        dir.read(Path::new("big"), 99),
        Err(DoorError::TooLarge(_, 99))
    ));
    fs::create_dir(project.path().join("d")).unwrap();
    assert!(matches!(
        dir.read(Path::new("d"), 10),
        Err(DoorError::NotRegular(_, Kind::Dir))
    ));
    assert_eq!(dir.kind(Path::new("d")).unwrap(), Some((Kind::Dir, 0)));
    assert_eq!(dir.kind(Path::new("big")).unwrap(), Some((Kind::File, 100)));
    assert_eq!(dir.kind(Path::new("none")).unwrap(), None);
    assert!(
        dir.read_if_exists(Path::new("d/none"), 10)
            .unwrap()
            .is_none()
    );
}

/// Names are kept as Windows gives them: UTF-16, never through a lossy string.
#[test]
fn windows_names_round_trip_as_the_system_gives_them() {
    let (project, _outside, dir) = setup();
    let name = "ünïcödé 日本.md";
    dir.write_atomic(Path::new(name), b"x").unwrap();
    assert_eq!(
        dir.list(Path::new("")).unwrap(),
        vec![std::ffi::OsString::from(name)]
    );
    let mut seen = Vec::new();
    dir.walk_tree(&mut |path, kind| {
        seen.push((String::from_utf8(path.to_vec()).unwrap(), kind));
        true
    });
    assert_eq!(seen, vec![(name.to_owned(), Kind::File)]);
    assert!(project.path().join(name).exists());
    let stat = dir.stat_rel(name.as_bytes()).unwrap();
    assert_eq!((stat.kind, stat.size, stat.ino), (Kind::File, 1, 0));
}

/// The verbatim prefix `canonicalize` gives is dropped when the path means the same
/// without it, so paths shown and handed to git read as the user wrote them.
#[test]
fn windows_canonical_paths_are_plain_drive_paths() {
    let dir = tempfile::tempdir().unwrap();
    let real = canonical(dir.path()).unwrap();
    let shown = real.to_string_lossy();
    assert!(!shown.starts_with(r"\\?\"), "{shown}");
    assert_eq!(shown.as_bytes().get(1), Some(&b':'), "{shown}");
}

fn mklink(args: &[&str]) {
    let status = std::process::Command::new("cmd")
        .arg("/c")
        .arg("mklink")
        .args(args)
        .status()
        .unwrap();
    assert!(status.success(), "mklink {args:?}");
}

/// Issue 25: a junction out of the project is never written through or read through.
#[test]
#[ignore = "needs NTFS junctions, which Wine 8 cannot make: the Windows runner runs it"]
fn windows_a_junction_out_of_the_project_is_refused() {
    let (project, outside, dir) = setup();
    fs::write(outside.path().join("secret"), "s").unwrap();
    let link = project.path().join(".claude");
    mklink(&[
        "/J",
        link.to_str().unwrap(),
        outside.path().to_str().unwrap(),
    ]);
    let err = dir
        .write_atomic(Path::new(".claude/pagent-pipeline.json"), b"x")
        .unwrap_err();
    assert!(matches!(err, DoorError::Symlink(_)), "{err}");
    assert!(matches!(
        dir.read(Path::new(".claude/secret"), 10),
        Err(DoorError::Reparse(_))
    ));
    assert!(matches!(
        dir.kind(Path::new(".claude/secret")),
        Err(DoorError::Reparse(_))
    ));
    assert_eq!(fs::read_dir(outside.path()).unwrap().count(), 1);
}

/// Issue 25: a symbolic link (to a file or a folder, in or out) is never followed.
#[test]
#[ignore = "needs NTFS symbolic links, which Wine 8 cannot make: the Windows runner runs it"]
fn windows_a_symbolic_link_is_never_followed() {
    let (project, outside, dir) = setup();
    let target = outside.path().join("bashrc");
    fs::write(&target, "original").unwrap();
    std::os::windows::fs::symlink_file(&target, project.path().join("state.json")).unwrap();
    std::os::windows::fs::symlink_dir(outside.path(), project.path().join("out")).unwrap();
    assert!(matches!(
        dir.write_atomic(Path::new("state.json"), b"x"),
        Err(DoorError::Symlink(_))
    ));
    assert!(matches!(
        dir.append(Path::new("state.json"), b"x"),
        Err(DoorError::Symlink(_))
    ));
    assert!(matches!(
        dir.read(Path::new("state.json"), 100),
        Err(DoorError::Reparse(_))
    ));
    assert!(matches!(
        dir.read(Path::new("out/bashrc"), 100),
        Err(DoorError::Reparse(_))
    ));
    assert!(matches!(
        dir.remove_file(Path::new("state.json")),
        Err(DoorError::Symlink(_))
    ));
    assert_eq!(fs::read_to_string(&target).unwrap(), "original");
}

/// Found under Wine with 64 hooks at once: a replace failed ("Access denied") while
/// another hook was reading the state. Readers share delete access, the rename asks for
/// POSIX semantics where the system has them, and a busy target is retried.
#[test]
fn windows_a_reader_holding_the_state_does_not_fail_its_replace() {
    let (_project, _outside, dir) = setup();
    let rel = Path::new(".claude/pagent-pipeline.json");
    dir.write_atomic(rel, b"old").unwrap();
    let reader = dir.open_read(rel).unwrap();
    let release = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(300));
        drop(reader);
    });
    dir.write_atomic(rel, b"new").unwrap();
    release.join().unwrap();
    assert_eq!(dir.read(rel, 100).unwrap(), b"new");
}

/// A merged task's worktree goes whole, by handle; a file or nothing there is said so.
#[test]
fn windows_a_whole_folder_is_removed_by_handle() {
    let (project, _outside, dir) = setup();
    dir.write_atomic(Path::new("wt/a/b/c.txt"), b"x").unwrap();
    dir.write_atomic(Path::new("wt/d.txt"), b"y").unwrap();
    assert!(dir.remove_tree(Path::new("wt")).unwrap());
    assert!(!project.path().join("wt").exists());
    assert!(!dir.remove_tree(Path::new("wt")).unwrap());
    dir.write_atomic(Path::new("f"), b"x").unwrap();
    assert!(matches!(
        dir.remove_tree(Path::new("f")),
        Err(DoorError::NotADir(_, Kind::File))
    ));
}

/// A state file being deleted while another process still holds it is "delete pending":
/// Windows answers an open of it with access denied, never "not found", so the hooks'
/// fast path must not take it for no loop. Wine 8 still shows such a file as it was, so
/// only the Windows runner tells the two answers apart here.
#[test]
fn windows_a_state_pending_deletion_is_not_surely_absent() {
    use std::os::windows::fs::OpenOptionsExt;
    let (_project, _outside, dir) = setup();
    let state = dir.root().join("state.json");
    fs::write(&state, "{}").unwrap();
    let holder = fs::OpenOptions::new()
        .read(true)
        .share_mode(7)
        .open(&state)
        .unwrap();
    let deleter = fs::OpenOptions::new()
        .read(true)
        .access_mode(0x0001_0000) // DELETE
        .share_mode(7)
        .custom_flags(windows_sys::Win32::Storage::FileSystem::FILE_FLAG_DELETE_ON_CLOSE)
        .open(&state)
        .unwrap();
    drop(deleter);
    let seen = fs::symlink_metadata(&state)
        .map(|_| ())
        .map_err(|e| e.kind());
    assert!(!surely_absent(&state), "{seen:?}");
    drop(holder);
    assert!(surely_absent(&state));
}
