//! Issue 21's merge queue against what goes wrong: the user's uncommitted work on the
//! target, a deleted task branch, a target checked out in another worktree, a resolution
//! that gives up, Ctrl-C in the middle of a resolution, a repository that signs commits.
//! In each, the user's work is kept, the repository is never left mid-merge without the
//! summary saying where, and running the same command again carries on.

use super::*;

#[test]
fn issue_21_a_dirty_target_is_refused_and_the_users_changes_are_kept() {
    let p = Parallel::new("beta: do beta\n");
    assert_eq!(p.run(&[]).code, Some(0));
    p.env.write("shared.txt", "one\nmy edit\nthree\n");
    let before = p.tip("main").id();
    let out = p.run(&["--merge-only", "--json"]);
    assert_eq!(out.code, Some(3), "{out}");
    let detail = summary(&out)["tasks"][0]["merge"]["detail"].clone();
    assert_eq!(
        detail,
        format!(
            "not merged: main is checked out in {} and it has uncommitted changes (shared.txt); pagent merges only into a clean checkout and never touches your changes: commit or stash them there (`git stash`), then run the same command again",
            p.env.root.display()
        )
    );
    assert_eq!(p.tip("main").id(), before);
    assert_eq!(p.env.read("shared.txt"), "one\nmy edit\nthree\n");
    assert!(p.worktree("beta").exists());
    // Committed, the same command merges.
    crate::git::git(&p.env.root, &["commit", "-q", "-am", "my edit"]);
    assert_eq!(p.run(&["--merge-only"]).code, Some(0));
    assert!(p.env.exists("beta.txt"));
}

/// An untracked file of the user's where the task adds one: the checkout refuses before
/// writing anything, main does not move, and the file is intact.
#[test]
fn issue_21_an_untracked_file_in_the_way_is_never_overwritten() {
    let p = Parallel::new("beta: do beta\n");
    assert_eq!(p.run(&[]).code, Some(0));
    p.env.write("beta.txt", "the user's own\n");
    let before = p.tip("main").id();
    let out = p.run(&["--merge-only"]);
    assert_eq!(out.code, Some(3), "{out}");
    assert!(
        out.stdout
            .contains("not merged: merging would overwrite files that are not committed: beta.txt"),
        "{out}"
    );
    assert_eq!(p.tip("main").id(), before);
    assert_eq!(p.env.read("beta.txt"), "the user's own\n");
}

#[test]
fn issue_21_a_deleted_task_branch_is_reported_not_merged() {
    let p = Parallel::new("alpha: do alpha\nbeta: do beta\n");
    assert_eq!(p.run(&[]).code, Some(0));
    // git refuses to delete a branch checked out in a worktree; its plumbing does not.
    crate::git::git(
        &p.env.root,
        &["update-ref", "-d", "refs/heads/pagent/alpha"],
    );
    let out = p.run(&["--merge-only", "--json"]);
    assert_eq!(out.code, Some(3), "{out}");
    let summary = summary(&out);
    assert_eq!(
        summary["tasks"][0]["merge"]["detail"],
        format!(
            "not merged: the branch pagent/alpha no longer exists in {}",
            p.env.root.display()
        )
    );
    assert_eq!(summary["tasks"][1]["merge"]["outcome"], "merged");
}

#[test]
fn issue_21_a_target_checked_out_in_another_worktree_is_left_alone() {
    let p = Parallel::new("beta: do beta\n");
    crate::git::git(&p.env.root, &["branch", "release"]);
    let other = p.env.home.join("release-tree");
    crate::git::git(
        &p.env.root,
        &["worktree", "add", "-q", other.to_str().unwrap(), "release"],
    );
    let before = p.tip("release").id();
    let out = p.run(&["--merge", "--into", "release"]);
    assert_eq!(out.code, Some(3), "{out}");
    assert!(
        out.stdout.contains(&format!(
            "not merged: release is checked out in the worktree {}",
            other.display()
        )),
        "{out}"
    );
    assert_eq!(p.tip("release").id(), before);
}

/// A resolution that gives up leaves the branch unmerged, its worktree mid-merge as the
/// agent left it, and says so; `--force` lets the agent try again, and then it merges.
#[test]
fn issue_21_a_resolution_that_gives_up_leaves_the_branch_unmerged_and_says_so() {
    let p = Parallel::new("alpha: do alpha\ngamma: do gamma\n");
    p.control("unresolvable");
    let out = p.run(&["-j", "1", "--merge", "--max-iterations", "2"]);
    assert_eq!(out.code, Some(3), "{out}");
    let main = p.tip("main");
    assert_eq!(main.summary(), Some("Merge pagent/alpha: do alpha"));
    let tree = p.worktree("gamma");
    let merge = &out.stdout[out.stdout.find("\nmerge\n").unwrap()..];
    insta::with_settings!({filters => filters()}, {
        insta::assert_snapshot!(merge);
    });
    // The user's checkout is not mid-merge; the worktree is.
    assert_eq!(p.repo().state(), git2::RepositoryState::Clean);
    let wt = git2::Repository::open(&tree).unwrap();
    assert_eq!(wt.state(), git2::RepositoryState::Merge);
    // Without --force the same command leaves it (and says so again); with it, the
    // agent tries again and the merge lands.
    let again = p.run(&["--merge-only"]);
    assert_eq!(again.code, Some(3), "{again}");
    assert!(again.stdout.contains("gave up"), "{again}");
    p.uncontrol("unresolvable");
    let forced = p.run(&["--merge-only", "--force"]);
    assert_eq!(forced.code, Some(0), "{forced}");
    assert_eq!(
        p.tip("main").summary(),
        Some("Merge pagent/gamma: do gamma")
    );
    assert!(!tree.exists());
}

/// Ctrl-C while the resolution loop runs: everything stops, the user's checkout is clean
/// and not mid-merge, the summary names the worktree that is, and the same command
/// continues the resolution and merges.
#[test]
fn issue_21_ctrl_c_during_a_resolution_is_resumed_by_the_same_command() {
    let p = Parallel::new("alpha: do alpha\ngamma: do gamma\n");
    p.control("slow-resolve");
    let (mut child, mut lines) = p.spawn(&["-j", "1", "--merge"]);
    read_until(&mut lines, "iteration_started", "gamma", Some("merge"));
    // A second queue in the same repository meanwhile merges nothing, and says why.
    let second = p.run(&["--merge-only", "--json"]);
    assert_eq!(second.code, Some(3), "{second}");
    assert_eq!(
        summary(&second)["tasks"][0]["merge"]["detail"],
        format!(
            "not merged: another `pagent parallel` is merging in {} now; run the same command again when it is done",
            p.env.root.display()
        )
    );
    ctrl_c(&child);
    let rest: Vec<String> = lines.map(|l| l.unwrap()).collect();
    assert_eq!(child.wait().unwrap().code(), Some(130), "{rest:?}");
    let last: Value = serde_json::from_str(rest.last().unwrap()).unwrap();
    let tree = p.worktree("gamma");
    assert_eq!(
        last["tasks"][1]["merge"]["outcome"], "interrupted",
        "{last}"
    );
    assert_eq!(
        last["tasks"][1]["merge"]["detail"],
        format!(
            "interrupted while resolving its conflicts with main: {} is mid-merge; run the same command again to continue",
            tree.display()
        )
    );
    assert_eq!(p.repo().state(), git2::RepositoryState::Clean);
    assert_eq!(
        p.tip("main").summary(),
        Some("Merge pagent/alpha: do alpha")
    );
    p.uncontrol("slow-resolve");
    let out = p.run(&["-j", "1", "--merge"]);
    assert_eq!(out.code, Some(0), "{out}");
    assert_eq!(
        p.tip("main").summary(),
        Some("Merge pagent/gamma: do gamma")
    );
    assert_eq!(p.log().iter().filter(|l| *l == "task gamma").count(), 1);
}

/// A repository that signs its commits gets a signed merge commit: made by the user's
/// own `git commit-tree` (libgit2 cannot sign), here with a stand-in signing program.
#[test]
fn issue_21_a_repository_that_signs_commits_gets_signed_merges() {
    let p = Parallel::new("beta: do beta\n");
    let gpg = p.env.fake_tool(
        "signer",
        "gpg",
        "cat > /dev/null\necho '[GNUPG:] SIG_CREATED D 1 8 00 1 X' >&2\nprintf -- '-----BEGIN PGP SIGNATURE-----\\nfake\\n-----END PGP SIGNATURE-----\\n'",
    );
    for args in [
        ["config", "commit.gpgsign", "true"],
        ["config", "user.signingkey", "TESTKEY"],
        ["config", "gpg.program", gpg.join("gpg").to_str().unwrap()],
    ] {
        crate::git::git(&p.env.root, &args);
    }
    // Set before the tasks ran: settings changed since then would not be run (issue 30).
    assert_eq!(p.run(&[]).code, Some(0));
    let out = p.run(&["--merge-only"]);
    assert_eq!(out.code, Some(0), "{out}");
    let main = p.tip("main");
    assert_eq!(main.parent_count(), 2);
    let header = String::from_utf8_lossy(main.raw_header_bytes()).into_owned();
    assert!(
        header.contains("gpgsig -----BEGIN PGP SIGNATURE-----"),
        "{header}"
    );
}

/// A resolver that edits the user's checkout (outside its worktree): the merge is not
/// landed on a checkout with changes pagent did not make, and those changes stay.
#[test]
fn issue_21_a_resolver_that_edits_outside_its_worktree_lands_nothing() {
    let p = Parallel::new("alpha: do alpha\ngamma: do gamma\n");
    p.control("edit-outside");
    let out = p.run(&["-j", "1", "--merge", "--json"]);
    assert_eq!(out.code, Some(3), "{out}");
    let detail = summary(&out)["tasks"][1]["merge"]["detail"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(
        detail.starts_with(&format!(
            "not merged: main is checked out in {} and it has uncommitted changes (shared.txt)",
            p.env.root.display()
        )),
        "{detail}"
    );
    assert_eq!(
        p.tip("main").summary(),
        Some("Merge pagent/alpha: do alpha")
    );
    assert!(p.env.read("shared.txt").ends_with("theirs too\n"));
}

/// A resolver that aborts the merge and commits something else is told the branch does
/// not contain main, and in the end gives up: nothing of it reaches main.
#[test]
fn issue_21_a_resolver_that_commits_something_else_is_not_merged() {
    let p = Parallel::new("alpha: do alpha\ngamma: do gamma\n");
    p.control("something-else");
    let out = p.run(&["-j", "1", "--merge", "--max-iterations", "2"]);
    assert_eq!(out.code, Some(3), "{out}");
    let prompt = std::fs::read_to_string(p.ctl.join("resolve-prompt.txt")).unwrap();
    assert!(
        prompt.contains("this branch does not contain main (commit "),
        "{prompt}"
    );
    assert_eq!(
        p.tip("main").summary(),
        Some("Merge pagent/alpha: do alpha")
    );
    assert!(!p.env.exists("other.txt"));
    assert!(
        out.stdout
            .contains("gamma  not merged: resolving its conflicts with main gave up"),
        "{out}"
    );
}
