//! The door's rules, each against the thing a hostile repository would plant.

#![allow(clippy::disallowed_methods, clippy::disallowed_types)]

use std::fs;
use std::os::unix::fs::symlink;
use std::path::Path;
use std::time::{Duration, Instant};

use pagent_test_support::timing::Baseline;

use super::*;

/// What appending to and reading a regular file takes through the door here, now: a
/// refusal of a FIFO must cost about as much, never a wait for a writer or a reader.
fn regular_file_calls(dir: &Dir, project: &Path) -> Baseline {
    fs::write(project.join("regular"), "x").unwrap();
    Baseline::measure(3, || {
        dir.append(Path::new("regular"), b"x").unwrap();
        dir.read(Path::new("regular"), 10).unwrap();
    })
}

fn setup() -> (tempfile::TempDir, tempfile::TempDir, Dir) {
    let project = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    let root = project.path().canonicalize().unwrap();
    let dir = Dir::open(&root).unwrap();
    (project, outside, dir)
}

fn mkfifo(path: &Path) {
    let c = CString::new(path.as_os_str().as_bytes()).unwrap();
    // SAFETY: mkfifo with a NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0);
}

#[test]
fn writes_never_follow_a_symlink_in_the_last_component() {
    let (project, outside, dir) = setup();
    let target = outside.path().join("bashrc");
    fs::write(&target, "original").unwrap();
    fs::create_dir(project.path().join(".claude")).unwrap();
    symlink(&target, project.path().join(".claude/state.json")).unwrap();
    let err = dir
        .write_atomic(Path::new(".claude/state.json"), b"x")
        .unwrap_err();
    assert!(matches!(err, DoorError::Symlink(_)), "{err}");
    let err = dir
        .append(Path::new(".claude/state.json"), b"x")
        .unwrap_err();
    assert!(matches!(err, DoorError::Symlink(_)), "{err}");
    assert!(dir.create(Path::new(".claude/state.json")).is_err());
    assert_eq!(fs::read_to_string(&target).unwrap(), "original");
}

#[test]
fn writes_never_pass_through_a_symlinked_folder() {
    for link in ["../../..", "/tmp"] {
        let (project, outside, dir) = setup();
        let target = if link.starts_with('/') {
            outside.path().to_path_buf()
        } else {
            Path::new(link).to_path_buf()
        };
        symlink(&target, project.path().join(".claude")).unwrap();
        let err = dir
            .write_atomic(Path::new(".claude/pagent/events.jsonl"), b"x")
            .unwrap_err();
        assert!(matches!(err, DoorError::Symlink(_)), "{link}: {err}");
        assert!(dir.lock(Path::new(".claude/lock"), Duration::ZERO).is_err());
        assert!(dir.create_dir_all(Path::new(".claude/pagent")).is_err());
        assert_eq!(fs::read_dir(outside.path()).unwrap().count(), 0);
    }
}

#[test]
fn writes_replace_only_regular_files() {
    let (project, _outside, dir) = setup();
    fs::create_dir(project.path().join("d")).unwrap();
    mkfifo(&project.path().join("fifo"));
    assert!(matches!(
        dir.write_atomic(Path::new("d"), b"x"),
        Err(DoorError::NotRegular(_, Kind::Dir))
    ));
    assert!(matches!(
        dir.write_atomic(Path::new("fifo"), b"x"),
        Err(DoorError::NotRegular(_, Kind::Fifo))
    ));
    // Appending to a FIFO must neither block nor write.
    let baseline = regular_file_calls(&dir, project.path());
    let started = Instant::now();
    assert!(dir.append(Path::new("fifo"), b"x").is_err());
    baseline.assert_within(
        started.elapsed(),
        1000,
        Duration::from_secs(2),
        "appending to a FIFO",
    );
}

#[test]
fn reads_refuse_fifos_devices_and_folders_without_blocking() {
    let (project, _outside, dir) = setup();
    mkfifo(&project.path().join("fifo"));
    symlink("/dev/zero", project.path().join("zero")).unwrap();
    fs::create_dir(project.path().join("d")).unwrap();
    let baseline = regular_file_calls(&dir, project.path());
    let started = Instant::now();
    assert!(matches!(
        dir.read(Path::new("fifo"), 10),
        Err(DoorError::NotRegular(_, Kind::Fifo))
    ));
    assert!(matches!(
        dir.read(Path::new("zero"), 10),
        Err(DoorError::Outside(_))
    ));
    assert!(matches!(
        dir.read(Path::new("d"), 10),
        Err(DoorError::NotRegular(_, Kind::Dir))
    ));
    baseline.assert_within(
        started.elapsed(),
        1000,
        Duration::from_secs(2),
        "refusing a FIFO, a device and a folder",
    );
    // Outside any root: a device is refused too.
    assert!(matches!(
        read_outside(Path::new("/dev/zero"), 10),
        Err(DoorError::NotRegular(_, Kind::Device))
    ));
    assert!(matches!(
        read_outside(&project.path().join("fifo"), 10),
        Err(DoorError::NotRegular(_, Kind::Fifo))
    ));
}

#[test]
fn reads_are_capped() {
    let (project, _outside, dir) = setup();
    fs::write(project.path().join("big"), vec![b'a'; 100]).unwrap();
    assert_eq!(dir.read(Path::new("big"), 100).unwrap().len(), 100);
    assert!(matches!(
        dir.read(Path::new("big"), 99),
        Err(DoorError::TooLarge(_, 99))
    ));
    // A sparse 2 GB file costs nothing to refuse.
    let sparse = fs::File::create(project.path().join("sparse")).unwrap();
    sparse.set_len(2 << 30).unwrap();
    assert!(matches!(
        dir.read(Path::new("sparse"), 1 << 20),
        Err(DoorError::TooLarge(..))
    ));
}

#[test]
fn reads_follow_symlinks_only_while_they_stay_inside() {
    let (project, outside, dir) = setup();
    fs::write(outside.path().join("secret"), "s").unwrap();
    fs::create_dir(project.path().join("a")).unwrap();
    fs::write(project.path().join("a/f"), "inside").unwrap();
    symlink("a/f", project.path().join("rel")).unwrap();
    symlink(project.path().join("a"), project.path().join("abs")).unwrap();
    symlink("../../../../../../../..", project.path().join("up")).unwrap();
    symlink(outside.path().join("secret"), project.path().join("out")).unwrap();
    symlink("loop2", project.path().join("loop1")).unwrap();
    symlink("loop1", project.path().join("loop2")).unwrap();
    assert_eq!(dir.read(Path::new("rel"), 99).unwrap(), b"inside");
    assert_eq!(dir.read(Path::new("abs/f"), 99).unwrap(), b"inside");
    assert!(matches!(
        dir.read(Path::new("up/etc/passwd"), 1 << 20),
        Err(DoorError::Outside(_))
    ));
    assert!(matches!(
        dir.read(Path::new("out"), 99),
        Err(DoorError::Outside(_))
    ));
    assert!(dir.read(Path::new("loop1"), 99).is_err());
    for bad in ["../x", "/etc/passwd", "a/../../x"] {
        assert!(
            matches!(dir.read(Path::new(bad), 99), Err(DoorError::BadPath(_))),
            "{bad}"
        );
    }
}

#[test]
fn atomic_writes_replace_and_leave_no_temp_files() {
    let (project, _outside, dir) = setup();
    dir.write_atomic(Path::new("sub/f.json"), b"one").unwrap();
    dir.write_atomic(Path::new("sub/f.json"), b"two").unwrap();
    assert_eq!(fs::read(project.path().join("sub/f.json")).unwrap(), b"two");
    let names: Vec<_> = fs::read_dir(project.path().join("sub"))
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names, ["f.json"]);
}

#[test]
fn stale_temp_files_of_dead_writers_are_removed_at_the_next_write() {
    let (project, _outside, dir) = setup();
    // A pid that cannot be alive (beyond the kernel's maximum).
    let stale = project.path().join(".f.json.999999999.1.tmp");
    fs::write(&stale, "half").unwrap();
    let mine = project
        .path()
        .join(format!(".f.json.{}.2.tmp", std::process::id()));
    fs::write(&mine, "in progress").unwrap();
    dir.write_atomic(Path::new("f.json"), b"x").unwrap();
    assert!(!stale.exists());
    assert!(mine.exists(), "a live writer's temp file is left alone");
}

#[test]
fn a_failed_write_leaves_no_temp_file() {
    let (project, _outside, dir) = setup();
    let limit = libc::rlimit {
        rlim_cur: 4096,
        rlim_max: libc::RLIM_INFINITY,
    };
    // The limit applies to this whole test process; a child keeps others out of it.
    ignore_sigxfsz();
    // SAFETY: fork in a test; the child only makes system calls and exits.
    let pid = unsafe { libc::fork() };
    if pid == 0 {
        // SAFETY: setrlimit on the child's own limits.
        unsafe { libc::setrlimit(libc::RLIMIT_FSIZE, &raw const limit) };
        let failed = dir.write_atomic(Path::new("f"), &[b'x'; 10_000]).is_err();
        // SAFETY: _exit ends the forked child without running the parent's destructors.
        unsafe { libc::_exit(if failed { 0 } else { 1 }) };
    }
    let mut status = 0;
    // SAFETY: waiting for the child forked above.
    unsafe { libc::waitpid(pid, &raw mut status, 0) };
    assert!(libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0);
    assert_eq!(fs::read_dir(project.path()).unwrap().count(), 0);
}

#[test]
fn a_held_lock_is_waited_for_only_so_long() {
    let (_project, _outside, dir) = setup();
    let held = dir.lock(Path::new("lock"), Duration::ZERO).unwrap();
    let started = Instant::now();
    let err = dir
        .lock(Path::new("lock"), Duration::from_millis(200))
        .unwrap_err();
    assert!(matches!(err, DoorError::Busy(..)), "{err}");
    assert!(started.elapsed() >= Duration::from_millis(200));
    drop(held);
    // Free once dropped. Not at once: a sibling test's fork (`a_failed_write_leaves_no_
    // temp_file`) may have copied the held descriptor into its child, which shares the
    // flock until it exits (a failure of the full suite at a load of 15).
    assert!(dir.lock(Path::new("lock"), Duration::from_secs(10)).is_ok());
}

#[test]
fn lists_a_folder_and_refuses_one_outside() {
    let (project, outside, dir) = setup();
    fs::create_dir(project.path().join("w")).unwrap();
    fs::write(project.path().join("w/a.json"), "").unwrap();
    fs::write(outside.path().join("b.json"), "").unwrap();
    symlink(outside.path(), project.path().join("x")).unwrap();
    assert_eq!(dir.list(Path::new("w")).unwrap(), ["a.json"]);
    assert!(matches!(
        dir.list(Path::new("x")),
        Err(DoorError::Outside(_))
    ));
}

#[test]
fn removes_only_regular_files_and_never_through_a_symlink() {
    let (project, outside, dir) = setup();
    fs::create_dir(project.path().join("w")).unwrap();
    fs::write(project.path().join("w/a"), "x").unwrap();
    assert!(dir.remove_file(Path::new("w/a")).unwrap());
    assert!(!project.path().join("w/a").exists());
    assert!(!dir.remove_file(Path::new("w/a")).unwrap());
    assert!(!dir.remove_file(Path::new("none/a")).unwrap());
    // A symlinked folder on the way, or a symlink as the file: nothing outside is touched.
    fs::write(outside.path().join("a"), "keep").unwrap();
    symlink(outside.path(), project.path().join("x")).unwrap();
    assert!(matches!(
        dir.remove_file(Path::new("x/a")),
        Err(DoorError::Symlink(_))
    ));
    symlink(outside.path().join("a"), project.path().join("w/l")).unwrap();
    assert!(matches!(
        dir.remove_file(Path::new("w/l")),
        Err(DoorError::NotRegular(_, Kind::Symlink))
    ));
    assert_eq!(
        fs::read_to_string(outside.path().join("a")).unwrap(),
        "keep"
    );
    assert!(matches!(
        dir.remove_file(Path::new("w")),
        Err(DoorError::NotRegular(_, Kind::Dir))
    ));
}

/// A merged task's worktree is removed through the door: a symlink inside it to a folder
/// outside is removed as a link, and what it pointed at is untouched.
#[test]
fn removing_a_tree_never_follows_a_symlink_out() {
    let (project, outside, dir) = setup();
    fs::write(outside.path().join("keep.txt"), "precious").unwrap();
    let tree = project.path().join("wt");
    fs::create_dir_all(tree.join("a/b")).unwrap();
    fs::write(tree.join("a/b/file.txt"), "x").unwrap();
    symlink(outside.path(), tree.join("a/out")).unwrap();
    symlink(outside.path().join("keep.txt"), tree.join("link.txt")).unwrap();
    mkfifo(&tree.join("fifo"));
    assert!(dir.remove_tree(Path::new("wt")).unwrap());
    assert!(!tree.exists());
    assert_eq!(
        fs::read_to_string(outside.path().join("keep.txt")).unwrap(),
        "precious"
    );
    assert!(!dir.remove_tree(Path::new("wt")).unwrap());
    // The folder itself as a symlink: refused, nothing removed.
    symlink(outside.path(), project.path().join("wt")).unwrap();
    assert!(dir.remove_tree(Path::new("wt")).is_err());
    assert!(outside.path().join("keep.txt").exists());
}

/// Issue 21, item 1: `pagent loop` keeps one `Dir` for the whole run. Listing the root
/// through a duplicate of its descriptor shared the descriptor's offset, so the second
/// walk started where the first ended and saw no file at the root at all: new files
/// stopped being progress from the runner's second decision on.
#[test]
fn issue_21_every_walk_of_one_dir_sees_the_whole_tree() {
    let (project, _outside, dir) = setup();
    let walk = |dir: &Dir| {
        let mut seen = Vec::new();
        dir.walk_tree(&mut |path, _| {
            seen.push(String::from_utf8_lossy(path).into_owned());
            true
        });
        seen.sort();
        seen
    };
    fs::write(project.path().join("a.txt"), "a").unwrap();
    assert_eq!(walk(&dir), ["a.txt"]);
    fs::write(project.path().join("b.txt"), "b").unwrap();
    fs::create_dir(project.path().join("new")).unwrap();
    fs::write(project.path().join("new/c.txt"), "c").unwrap();
    assert_eq!(walk(&dir), ["a.txt", "b.txt", "new", "new/c.txt"]);
    assert_eq!(walk(&dir), ["a.txt", "b.txt", "new", "new/c.txt"]);
    let mut listed = dir.list(Path::new(".")).unwrap();
    listed.sort();
    assert_eq!(listed, ["a.txt", "b.txt", "new"]);
    let mut again = dir.list(Path::new(".")).unwrap();
    again.sort();
    assert_eq!(again, listed);
}

/// The hooks' fast path skips a hook only when the state is surely not there: a missing
/// file is, anything else (a file, a dangling link, a path the system cannot answer for)
/// is not. (A CI run under Wine saw one of 64 Stop hooks end before reading its input
/// while the others replaced the state: a state being replaced that read as absent would
/// do just that.)
#[test]
fn surely_absent_is_only_what_the_system_calls_not_found() {
    let (_keep, _outside, dir) = setup();
    let root = dir.root().to_path_buf();
    assert!(surely_absent(&root.join("missing")));
    fs::write(root.join("state"), "{}").unwrap();
    assert!(!surely_absent(&root.join("state")));
    symlink(root.join("nowhere"), root.join("dangling")).unwrap();
    assert!(!surely_absent(&root.join("dangling")));
    // A path through a file: ENOTDIR, which says nothing for sure.
    assert!(!surely_absent(&root.join("state").join("inner")));
}

/// A checker's scratch folder (issue 30: Python's byte code): private, never one that
/// existed, and gone with what was written in it once dropped.
#[test]
fn a_private_temp_dir_is_new_private_and_removed_with_its_content() {
    use std::os::unix::fs::PermissionsExt;
    let first = private_temp_dir("pagent-test-").unwrap();
    let second = private_temp_dir("pagent-test-").unwrap();
    assert_ne!(first.path(), second.path());
    let mode = fs::metadata(first.path()).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o700);
    fs::create_dir_all(first.path().join("pycache/a/b")).unwrap();
    fs::write(first.path().join("pycache/a/b/c.pyc"), "x").unwrap();
    let outside = tempfile::tempdir().unwrap();
    fs::write(outside.path().join("keep"), "mine").unwrap();
    symlink(outside.path(), first.path().join("link")).unwrap();
    let path = first.path().to_path_buf();
    drop(first);
    assert!(!path.exists());
    assert!(
        outside.path().join("keep").exists(),
        "a link inside was followed"
    );
}

/// The user's folder: created private, made private when it is not, and, once private,
/// opened without being written (issue 33: a chmod on every Stop).
#[test]
fn the_users_folder_is_made_private_and_then_left_alone() {
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    let dir = tempfile::tempdir().unwrap();
    let mode = |p: &Path| fs::metadata(p).unwrap().permissions().mode() & 0o7777;
    let created = dir.path().join("a/b/pagent");
    Dir::open_or_create_private(&created).unwrap();
    assert_eq!(mode(&created), 0o700);
    let open = dir.path().join("open");
    fs::create_dir(&open).unwrap();
    fs::set_permissions(&open, fs::Permissions::from_mode(0o755)).unwrap();
    Dir::open_or_create_private(&open).unwrap();
    assert_eq!(mode(&open), 0o700);
    let changed = || {
        let meta = fs::metadata(&open).unwrap();
        (meta.ctime(), meta.ctime_nsec())
    };
    let before = changed();
    std::thread::sleep(Duration::from_millis(20));
    Dir::open_or_create_private(&open).unwrap();
    let after = changed();
    assert_eq!(before, after, "a private folder was written to");
    let file = dir.path().join("file");
    fs::write(&file, "x").unwrap();
    assert!(Dir::open_or_create_private(&file).is_err());
}

/// Issue 33: folders are listed straight from the kernel on Linux. Every name comes back
/// once, however many calls a listing takes (2,000 names, a third 255 bytes long), in a list
/// and in a walk, and a second listing of the same `Dir` sees them all again.
#[test]
fn a_folder_of_many_long_names_is_listed_whole_every_time() {
    let dir = tempfile::tempdir().unwrap();
    let mut names: Vec<String> = (0..2000)
        .map(|i| match i % 3 {
            // 255 bytes, the most a name holds.
            0 => format!("{i:04}-{}", "x".repeat(250)),
            1 => format!("é{i}"),
            _ => format!("f{i}"),
        })
        .collect();
    for name in &names {
        fs::write(dir.path().join(name), "").unwrap();
    }
    names.sort();
    let root = Dir::open(dir.path()).unwrap();
    for _ in 0..2 {
        let mut listed: Vec<String> = root
            .list(Path::new(""))
            .unwrap()
            .into_iter()
            .map(|n| n.into_string().unwrap())
            .collect();
        listed.sort();
        assert_eq!(listed, names);
        let mut walked = Vec::new();
        root.walk_tree(&mut |path, kind| {
            assert_eq!(kind, Kind::File);
            walked.push(String::from_utf8(path.to_vec()).unwrap());
            false
        });
        walked.sort();
        assert_eq!(walked, names);
    }
}

/// Issue 33: a marker (the newest generation) is a symlink's target, replaced whole and
/// never followed: a value that names a real file reads as the value, a regular file or a
/// folder in its place is no marker, and a bad value is refused.
#[test]
fn a_marker_is_replaced_whole_and_never_followed() {
    let dir = tempfile::tempdir().unwrap();
    let root = Dir::open(dir.path()).unwrap();
    let rel = Path::new("projects/k/newest");
    assert_eq!(root.read_marker(rel).unwrap(), None);
    root.write_marker(rel, "1").unwrap();
    assert_eq!(root.read_marker(rel).unwrap().as_deref(), Some("1"));
    fs::write(dir.path().join("projects/k/secret"), "not a number").unwrap();
    root.write_marker(rel, "secret").unwrap();
    assert_eq!(root.read_marker(rel).unwrap().as_deref(), Some("secret"));
    for n in 2..50 {
        root.write_marker(rel, &n.to_string()).unwrap();
    }
    assert_eq!(root.read_marker(rel).unwrap().as_deref(), Some("49"));
    let names: Vec<_> = fs::read_dir(dir.path().join("projects/k"))
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names.len(), 2, "temp links left behind: {names:?}");
    for bad in ["", "a\0b", &"9".repeat(256)] {
        assert!(root.write_marker(rel, bad).is_err(), "{bad:?}");
    }
    let file = Path::new("projects/k/plain");
    fs::write(dir.path().join(file), "7").unwrap();
    assert_eq!(root.read_marker(file).unwrap(), None);
    fs::create_dir(dir.path().join("projects/k/folder")).unwrap();
    assert!(
        root.write_marker(Path::new("projects/k/folder"), "1")
            .is_err()
    );
    assert_eq!(
        root.read_marker(Path::new("missing/k/newest")).unwrap(),
        None
    );
}

/// Issue 33: the state is written into the previous state's file and swapped in. Every
/// write leaves the new content under the name and the previous one as the shadow; a
/// shadow that is a hard link, a symlink, a FIFO or a folder is never written through
/// (nor does it block), and the write still happens.
#[test]
fn a_swapping_write_keeps_the_previous_content_and_writes_through_nothing() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let root = Dir::open(dir.path()).unwrap();
    let (rel, shadow) = (Path::new(".claude/state.json"), ".state.json.prev");
    let read = |name: &str| fs::read_to_string(dir.path().join(".claude").join(name)).ok();
    for n in 1..6 {
        root.write_atomic_swapping(rel, shadow, format!("state {n}").as_bytes())
            .unwrap();
        assert_eq!(read("state.json").unwrap(), format!("state {n}"));
        let previous = (n > 1).then(|| format!("state {}", n - 1));
        if cfg!(target_os = "linux") {
            assert_eq!(read(shadow), previous, "write {n}");
        }
    }
    // Shorter content than before: nothing of the longer one is left at the end.
    root.write_atomic_swapping(rel, shadow, b"s").unwrap();
    assert_eq!(read("state.json").unwrap(), "s");
    let outside = dir.path().join("user-file");
    let place = dir.path().join(".claude").join(shadow);
    let reset = || {
        let _ = fs::remove_file(&place);
        let _ = fs::remove_dir(&place);
    };
    fs::write(&outside, "mine").unwrap();
    reset();
    fs::hard_link(&outside, &place).unwrap();
    root.write_atomic_swapping(rel, shadow, b"after a hard link")
        .unwrap();
    assert_eq!(read("state.json").unwrap(), "after a hard link");
    assert_eq!(fs::read_to_string(&outside).unwrap(), "mine");
    reset();
    // A planted mode never becomes the state's: a write-only shadow is not written.
    fs::write(&place, "planted").unwrap();
    fs::set_permissions(&place, fs::Permissions::from_mode(0o200)).unwrap();
    root.write_atomic_swapping(rel, shadow, b"after a mode")
        .unwrap();
    let state = dir.path().join(".claude/state.json");
    let mode = fs::metadata(&state).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode & 0o600, 0o600, "{mode:o}");
    assert_eq!(read("state.json").unwrap(), "after a mode");
    reset();
    symlink(&outside, &place).unwrap();
    root.write_atomic_swapping(rel, shadow, b"after a symlink")
        .unwrap();
    assert_eq!(fs::read_to_string(&outside).unwrap(), "mine");
    assert_eq!(read("state.json").unwrap(), "after a symlink");
    reset();
    mkfifo(&place);
    let started = Instant::now();
    root.write_atomic_swapping(rel, shadow, b"after a fifo")
        .unwrap();
    assert!(started.elapsed() < Duration::from_secs(2));
    reset();
    fs::create_dir(&place).unwrap();
    root.write_atomic_swapping(rel, shadow, b"after a folder")
        .unwrap();
    assert_eq!(read("state.json").unwrap(), "after a folder");
    let leftovers: Vec<_> = fs::read_dir(dir.path().join(".claude"))
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n.ends_with(".tmp"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
}

/// Issue 33: a file rewritten in place while a reader holds it open (a swapped-out state
/// the next write fills) looks different afterwards, so `read_settled` reads it again;
/// an untouched one looks the same.
#[test]
fn a_file_rewritten_in_place_is_seen_to_change_and_read_again() {
    use std::os::unix::fs::FileExt;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("state.json");
    fs::write(&path, "first version").unwrap();
    let held = fs::File::open(&path).unwrap();
    let before = looked(&held);
    assert!(before.is_some());
    assert_eq!(looked(&held), before);
    std::thread::sleep(Duration::from_millis(10));
    let writer = fs::OpenOptions::new().write(true).open(&path).unwrap();
    writer.write_all_at(b"second", 0).unwrap();
    assert_ne!(looked(&held), before, "a rewrite in place went unseen");
    let root = Dir::open(dir.path()).unwrap();
    assert_eq!(
        root.read_settled(Path::new("state.json"), 1024)
            .unwrap()
            .unwrap(),
        b"secondversion"
    );
    assert_eq!(root.read_settled(Path::new("missing"), 1024).unwrap(), None);
}

/// Issue 33: a lock file removed and made again while a writer waited for it locks
/// nothing: the waiter locks the file the name holds now, and so waits for its holder.
#[test]
fn a_lock_file_replaced_while_waiting_is_not_taken_for_the_lock() {
    let dir = tempfile::tempdir().unwrap();
    let root = Dir::open(dir.path()).unwrap();
    let rel = Path::new("pagent/lock");
    let first = root.lock(rel, Duration::from_secs(1)).unwrap();
    let waiter = std::thread::scope(|scope| {
        let waiter = scope.spawn(|| root.lock(rel, Duration::from_millis(600)));
        std::thread::sleep(Duration::from_millis(100));
        // The old file goes, a new one comes, and someone else locks the new one.
        fs::remove_file(dir.path().join(rel)).unwrap();
        let second = root.lock(rel, Duration::from_secs(1)).unwrap();
        drop(first);
        let result = waiter.join().unwrap();
        drop(second);
        result
    });
    assert!(
        matches!(waiter, Err(DoorError::Busy(..))),
        "the waiter took a lock someone else held: {waiter:?}"
    );
}
