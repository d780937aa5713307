//! Tests of the fast fingerprint: it sees what `git status` sees and nothing else, a
//! changed file is hashed once while it stays the same, and stat data is compared as git
//! keeps it, with the shapes Linux and macOS file systems give it.

use std::fs;
use std::path::Path;

use super::*;
use crate::store::project::Project;
use crate::world::fingerprint::tests::git;

fn fast(root: &Path) -> (String, usize) {
    let project = Project::at(root).unwrap();
    let repo = crate::store::git::discover(root).unwrap();
    let mut cache = Cache::load(project.dir());
    let digest = fingerprint(&repo, project.dir(), &mut cache).unwrap();
    cache.save(project.dir());
    (digest, cache.hits())
}

#[test]
fn the_fast_path_sees_what_git_status_sees_and_nothing_else() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    git(&root, &["init", "-q"]);
    fs::create_dir_all(root.join("src/deep")).unwrap();
    fs::write(root.join(".gitignore"), "target/\n*.log\n").unwrap();
    fs::write(root.join("src/a.rs"), "one\n").unwrap();
    fs::write(root.join("src/deep/b.rs"), "two\n").unwrap();
    git(&root, &["add", "-A"]);
    git(&root, &["commit", "-qm", "first"]);
    let mut last = fast(&root).0;
    let mut step = |what: &str, change: &dyn Fn(), progress: bool| {
        change();
        let now = fast(&root).0;
        assert_eq!(now != last, progress, "{what}");
        last = now;
    };
    step("nothing", &|| {}, false);
    // Same size, same second as the index: only git's racy rule catches it.
    step(
        "a same-size edit",
        &|| fs::write(root.join("src/a.rs"), "ONE\n").unwrap(),
        true,
    );
    step(
        "an ignored file",
        &|| fs::write(root.join("x.log"), "l").unwrap(),
        false,
    );
    step(
        "a file in an ignored folder",
        &|| {
            fs::create_dir_all(root.join("target/debug")).unwrap();
            fs::write(root.join("target/debug/o"), "o").unwrap();
        },
        false,
    );
    step(
        "an untracked file in an untracked folder",
        &|| {
            fs::create_dir_all(root.join("new/inner")).unwrap();
            fs::write(root.join("new/inner/c.rs"), "c").unwrap();
        },
        true,
    );
    step(
        "an edit of that file",
        &|| fs::write(root.join("new/inner/c.rs"), "d").unwrap(),
        true,
    );
    step(
        "a deletion",
        &|| fs::remove_file(root.join("src/deep/b.rs")).unwrap(),
        true,
    );
    step(
        "pagent's own files",
        &|| {
            fs::create_dir_all(root.join(".claude/pagent")).unwrap();
            fs::write(root.join(".claude/pagent-pipeline.json"), "{}").unwrap();
            fs::write(root.join(".claude/pagent/events.jsonl"), "{}").unwrap();
        },
        false,
    );
    step(
        "a nested repository",
        &|| {
            fs::create_dir_all(root.join("vendored")).unwrap();
            git(&root.join("vendored"), &["init", "-q"]);
        },
        true,
    );
    step(
        "a commit",
        &|| {
            git(&root, &["add", "-A", "--", ".", ":!vendored"]);
            git(&root, &["commit", "-qm", "second"]);
        },
        true,
    );
    step("nothing again", &|| {}, false);
}

/// The stat data of a file the index recorded at `T`: seven bytes, inode 42.
const T: (i64, i64) = (1_800_000_000, 123_456_789);
const KEPT: Entry<'static> = Entry {
    path: b"a.rs",
    oid: [0; 20],
    mode: 0o100644,
    size: 7,
    ino: 42,
    mtime: (1_800_000_000, 123_456_789),
    ctime: (1_800_000_000, 123_456_789),
    skip_worktree: false,
};
/// The same file, as the file system reports it.
const SAME: Stat = Stat {
    kind: Kind::File,
    size: 7,
    ino: 42,
    mtime: T,
    ctime: T,
};
const LINK: Entry<'static> = Entry {
    mode: 0o120000,
    ..KEPT
};

fn assert_differs(cases: &[(&str, Entry<'_>, Stat, bool)]) {
    for (what, entry, stat, expected) in cases {
        assert_eq!(differs(entry, stat, 2_000_000_000), *expected, "{what}");
    }
}

/// The index keeps 32 bits of a file's size, times and inode; the file system may
/// report more (APFS inode numbers pass 2^32) or less (HFS+ keeps whole seconds, and
/// git then records none): the same file compares equal, any change git would see
/// does not.
#[test]
fn stat_data_is_compared_as_git_keeps_it_on_linux_and_macos() {
    let (whole, kept_whole) = ((T.0, 0), (1_800_000_000, 0));
    assert_differs(&[
        ("unchanged", KEPT, SAME, false),
        (
            "an APFS inode past 2^32",
            KEPT,
            Stat {
                ino: 1 << 32 | 42,
                ..SAME
            },
            false,
        ),
        (
            "a size past 4 GiB",
            KEPT,
            Stat {
                size: 1 << 32 | 7,
                ..SAME
            },
            false,
        ),
        (
            "HFS+ whole seconds",
            Entry {
                mtime: kept_whole,
                ctime: kept_whole,
                ..KEPT
            },
            Stat {
                mtime: whole,
                ctime: whole,
                ..SAME
            },
            false,
        ),
        (
            "a link",
            LINK,
            Stat {
                kind: Kind::Symlink,
                ..SAME
            },
            false,
        ),
    ]);
}

/// Any change git would see makes the file differ, and so does a file not older than
/// the index (racily clean).
#[test]
fn a_change_git_would_see_differs() {
    let whole = (T.0, 0);
    assert_differs(&[
        (
            "a nanosecond later",
            KEPT,
            Stat {
                mtime: (T.0, T.1 + 1),
                ..SAME
            },
            true,
        ),
        (
            "only the ctime (chmod, xattrs)",
            KEPT,
            Stat {
                ctime: whole,
                ..SAME
            },
            true,
        ),
        ("another inode", KEPT, Stat { ino: 43, ..SAME }, true),
        ("another size", KEPT, Stat { size: 8, ..SAME }, true),
        ("a link became a file", LINK, SAME, true),
    ]);
    assert!(
        differs(&KEPT, &SAME, T.0),
        "racily clean: not older than the index"
    );
}

#[test]
fn a_changed_file_is_hashed_once_while_it_stays_the_same() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    git(&root, &["init", "-q"]);
    fs::write(root.join("big.txt"), "a".repeat(100_000)).unwrap();
    // Old enough not to be racy: the cache keeps only settled files.
    let old = std::time::SystemTime::now() - std::time::Duration::from_secs(60);
    fs::File::options()
        .write(true)
        .open(root.join("big.txt"))
        .unwrap()
        .set_modified(old)
        .unwrap();
    let (first, _) = fast(&root);
    // ctime moved just now (set_modified), so wait until it is settled too: the first
    // run that takes the file from the cache.
    let (second, hits) = pagent_test_support::wait::wait_until(
        std::time::Duration::from_secs(20),
        "the unchanged file to come from the cache",
        || Some(fast(&root)).filter(|(_, hits)| *hits > 0),
    );
    assert_eq!(first, second);
    assert_eq!(hits, 1, "the unchanged untracked file came from the cache");
    fs::write(root.join("big.txt"), "b".repeat(100_000)).unwrap();
    assert_ne!(fast(&root).0, second, "a content change is seen at once");
}

/// Runs git in `root`; its output.
fn git_out(root: &Path, args: &[&str]) -> Vec<u8> {
    std::process::Command::new("git")
        .args(args)
        .current_dir(root)
        .output()
        .unwrap()
        .stdout
}

/// What git says of the work tree at `root`: HEAD, the index as it holds it (a sparse
/// index's folder is one entry), the status, and the content of every changed or
/// untracked file.
fn git_view(root: &Path) -> Vec<u8> {
    let mut view = [
        git_out(root, &["rev-parse", "-q", "--verify", "HEAD"]),
        git_out(root, &["ls-files", "-s", "--sparse"]),
        git_out(root, &["status", "--porcelain", "--untracked-files=all"]),
        git_out(root, &["diff"]),
    ]
    .concat();
    for name in git_out(root, &["ls-files", "-o", "--exclude-standard", "-z"]).split(|b| *b == 0) {
        if !name.is_empty() {
            view.extend(
                fs::read(root.join(String::from_utf8_lossy(name).as_ref())).unwrap_or_default(),
            );
        }
    }
    view
}

/// Each step, against the fast fingerprint of the project at `dir` (a folder of
/// `root`'s work tree): the fingerprint changes exactly when what git says changes.
fn agrees_with_git_status(root: &Path, dir: &Path, steps: &[(&str, &dyn Fn())]) {
    let mut last = (fast(dir).0, git_view(root));
    for (what, change) in steps {
        change();
        let now = (fast(dir).0, git_view(root));
        assert_eq!(
            now.0 != last.0,
            now.1 != last.1,
            "{what}: the fingerprint and git disagree on whether anything changed\n{}",
            String::from_utf8_lossy(&now.1)
        );
        last = now;
    }
}

/// Issue 33: a monorepo is opened in one of its folders. The fingerprint reads the
/// repository's own index (no libgit2 load of it) and sees what `git status` sees there,
/// in the folder and beside it.
#[test]
fn a_folder_of_a_monorepo_is_fingerprinted_from_the_streamed_index() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    git(&root, &["init", "-q"]);
    for name in [
        "svc/a/src/x.rs",
        "svc/b/y.rs",
        "lib/z.rs",
        "svc-a.txt",
        "svc0",
    ] {
        let path = root.join(name);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(path, name).unwrap();
    }
    git(&root, &["add", "-A"]);
    git(&root, &["commit", "-qm", "first"]);
    let project = root.join("svc/a");
    let repo = crate::store::git::discover(&project).unwrap();
    let mut cache = Cache::load(Project::at(&project).unwrap().dir());
    assert!(
        fingerprint(&repo, Project::at(&project).unwrap().dir(), &mut cache).is_some(),
        "the streamed path, not libgit2's status"
    );
    let write = |p: &str, s: &str| {
        let path = root.join(p);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(path, s).unwrap();
    };
    agrees_with_git_status(
        &root,
        &project,
        &[
            ("nothing", &|| {}),
            ("an edit in the folder", &|| write("svc/a/src/x.rs", "X")),
            ("an edit beside it", &|| write("lib/z.rs", "Z")),
            ("a new file beside it", &|| write("svc/b/new.rs", "n")),
            ("a file named like a folder's neighbour", &|| {
                write("svc/a-b.rs", "ab")
            }),
            ("a deletion", &|| {
                fs::remove_file(root.join("svc0")).unwrap()
            }),
            ("staged", &|| git(&root, &["add", "-A"])),
            ("committed", &|| git(&root, &["commit", "-qm", "second"])),
            ("nothing again", &|| {}),
        ],
    );
}

/// The index versions and shapes big repositories use: version 4 (`feature.manyFiles`),
/// a sparse checkout (files not checked out are not deleted), a sparse index, and a
/// submodule.
#[test]
fn every_index_git_writes_for_large_repositories_is_read_as_git_status_reads_it() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    git(&root, &["init", "-q"]);
    for name in ["in/a.rs", "in/b.rs", "out/c.rs", "out/d/e.rs", "top.txt"] {
        let path = root.join(name);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(path, name).unwrap();
    }
    git(&root, &["add", "-A"]);
    git(&root, &["commit", "-qm", "first"]);
    let sub = tempfile::tempdir().unwrap();
    git(sub.path(), &["init", "-q"]);
    fs::write(sub.path().join("s.txt"), "s").unwrap();
    git(sub.path(), &["add", "-A"]);
    git(sub.path(), &["commit", "-qm", "sub"]);
    git(
        &root,
        &[
            "-c",
            "protocol.file.allow=always",
            "submodule",
            "add",
            "-q",
            sub.path().to_str().unwrap(),
            "vendor/sub",
        ],
    );
    git(&root, &["commit", "-qm", "submodule"]);
    let write = |p: &str, s: &str| {
        let path = root.join(p);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(path, s).unwrap();
    };
    let v4 = || git(&root, &["update-index", "--index-version", "4"]);
    let v2 = || git(&root, &["update-index", "--index-version", "2"]);
    agrees_with_git_status(
        &root,
        &root,
        &[
            ("version 4", &v4),
            ("an edit under version 4", &|| write("in/a.rs", "A")),
            ("a new file under version 4", &|| write("out/new.rs", "n")),
            ("back to version 2", &v2),
            ("a sparse checkout", &|| {
                git(&root, &["add", "-A"]);
                git(&root, &["commit", "-qm", "more"]);
                git(&root, &["sparse-checkout", "set", "in"]);
            }),
            ("an edit inside the cone", &|| write("in/b.rs", "B")),
            ("a sparse index", &|| {
                git(
                    &root,
                    &["sparse-checkout", "init", "--cone", "--sparse-index"],
                )
            }),
            ("an edit inside the cone of a sparse index", &|| {
                write("in/b.rs", "BB")
            }),
            ("nothing", &|| {}),
        ],
    );
    assert!(
        !root.join("out/c.rs").exists(),
        "the sparse checkout removed what is outside the cone"
    );
    assert!(
        fs::read(root.join(".git/index"))
            .unwrap()
            .windows(3)
            .any(|w| w == b"out"),
        "a sparse index keeps the folder"
    );
}
