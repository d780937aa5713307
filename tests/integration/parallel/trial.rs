//! Issue 30's findings about `pagent parallel` in the third trial: a plan read as a plan
//! (one task per story), and one instruction to resume after Ctrl-C.

use std::time::Duration;

use super::*;

/// After Ctrl-C, each task's row said "run `pagent loop` in WORKTREE to resume" and the
/// footer "run the same command again": the rows now say the state is saved, and the
/// footer alone says how to go on.
#[test]
fn issue_30_after_ctrl_c_parallel_gives_one_resume_instruction() {
    let p = Parallel::new("alpha: do alpha\nbeta: do beta\n");
    p.control("slow-alpha");
    p.control("slow-beta");
    let (mut child, mut lines) = p.spawn_plain(&["-j", "2"]);
    wait_for(Duration::from_secs(20), "both agents at work", || {
        let log = p.log();
        log.iter().any(|l| l == "task alpha") && log.iter().any(|l| l == "task beta")
    });
    ctrl_c(&child);
    let out: Vec<String> = lines.by_ref().map(|l| l.unwrap()).collect();
    assert_eq!(child.wait().unwrap().code(), Some(130), "{out:?}");
    // The two tasks start and stop in either order: their lines sorted, then the summary.
    let (mut rows, summary): (Vec<String>, Vec<String>) =
        out.into_iter().partition(|l| l.starts_with('['));
    rows.sort_by_key(|l| l.split(']').next().unwrap_or_default().to_owned());
    let text = [rows, summary].concat().join("\n");
    assert_eq!(text.to_lowercase().matches("resume").count(), 1, "{text}");
    insta::with_settings!({filters => filters()}, {
        insta::assert_snapshot!(text);
    });
}
