//! The safety rules: never act for the wrong session, never run what the user did not set
//! up, never trap the user.

use std::fs;

use serde_json::json;

use crate::util::*;

#[test]
fn another_session_is_never_blocked_and_an_unclaimed_state_goes_to_the_first_stopper() {
    let env = TestEnv::new();
    env.cmd(&["ralph", "Fix it"]).success();
    assert_eq!(env.state()["session_id"], json!(null));
    let mut first = env.stop_input("hello");
    first["session_id"] = json!("first");
    env.stop(&first).blocked();
    assert_eq!(env.state()["session_id"], "first");
    let before = env.read(".claude/pagent-pipeline.json");
    for other in [json!("second"), json!(null)] {
        let mut input = env.stop_input("hello");
        input["session_id"] = other;
        assert_eq!(env.stop(&input).allowed(), None);
    }
    assert_eq!(
        env.read(".claude/pagent-pipeline.json"),
        before,
        "another session's stop wrote the state"
    );
    env.stop(&first).blocked();
}

/// A hook input that is not an object, or names no session, never blocks: not even an
/// unclaimed loop, which the first named session's stop claims. `[]` and `{}` used to
/// claim it for "no session" and block.
#[test]
fn a_hook_input_that_is_not_an_object_or_names_no_session_never_blocks() {
    let env = TestEnv::new();
    env.cmd(&["ralph", "Fix it"]).success();
    let before = env.read(".claude/pagent-pipeline.json");
    // Input that is not an object is an error (exit 1, the stop allowed); an object that
    // names no session is a stop of no loop (exit 0, allowed).
    let allowed = |out: &Run, object: bool| {
        if object {
            assert_eq!(out.allowed(), None, "{out}");
        } else {
            out.allowed_on_error();
        }
    };
    for stdin in ["[]", "\"x\"", "3", "null", "{}", r#"{"session_id": null}"#] {
        let object = stdin.starts_with('{');
        allowed(&env.stop_raw(stdin.as_bytes().to_vec()), object);
        // The environment naming a session does not stand in for the input's.
        let out = env
            .cmd(&["hook", "stop"])
            .env("CLAUDE_PROJECT_DIR", &env.root)
            .env("CLAUDE_CODE_SESSION_ID", SESSION)
            .stdin(stdin)
            .run();
        allowed(&out, object);
        assert_eq!(
            env.read(".claude/pagent-pipeline.json"),
            before,
            "{stdin} wrote the state"
        );
    }
    env.stop(&env.stop_input("working")).blocked();
    assert_eq!(env.state()["session_id"], SESSION);
}

/// A state with a command condition that would leave a file named `pwned`.
fn plant_command_state(env: &TestEnv) {
    env.write(".claude/pagent/workflows/evil.json", &json!({"stages": [{"name": "x", "prompt": "p", "exit_when": {"custom": "touch pwned; exit 1"}}]}).to_string());
    env.write("prd.md", "# PRD\n");
    env.cmd(&["run", "prd.md", "--workflow", "evil", "--trust"])
        .success();
}

#[test]
fn a_state_copied_from_another_project_never_runs_a_command_and_never_blocks() {
    let origin = TestEnv::new();
    plant_command_state(&origin);
    // The same user copies (or commits and checks out) the state into another project.
    let target = TestEnv::new();
    fs::create_dir_all(target.path(".claude")).unwrap();
    fs::copy(
        origin.path(".claude/pagent-pipeline.json"),
        target.path(".claude/pagent-pipeline.json"),
    )
    .unwrap();
    fs::remove_dir_all(&target.config).ok();
    fs::create_dir_all(&target.config).unwrap();
    fs::copy(origin.config.join("secret"), target.config.join("secret")).unwrap();

    let first = target.stop(&target.stop_input("hi"));
    let mut said = Said::new();
    said.say("the first stop", &first.allowed().unwrap());
    // Warned once; later stops are silent and still allowed.
    assert_eq!(target.stop(&target.stop_input("hi")).allowed(), None);
    assert!(!target.exists("pwned"), "a copied state ran its command");
    said.say("pagent status", &target.cmd(&["status"]).success().stdout);
    assert_text!(said.text());
}

/// The seal binds the project's path as bytes: two folders whose names differ only in
/// bytes that are not UTF-8 (a lossy rendering makes both `proj-\u{fffd}`) must not
/// accept each other's states.
#[test]
fn folders_whose_names_differ_only_in_non_utf8_bytes_do_not_share_seals() {
    use std::ffi::OsStr;
    use std::os::unix::ffi::OsStrExt;
    let env = TestEnv::new();
    let origin = env.home.join(OsStr::from_bytes(b"proj-\xff"));
    let target = env.home.join(OsStr::from_bytes(b"proj-\xfe"));
    for dir in [&origin, &target] {
        fs::create_dir_all(dir.join(".claude")).unwrap();
    }
    let stop = |project: &std::path::Path| {
        let mut input = env.stop_input("not yet");
        input["cwd"] = json!(null);
        env.cmd(&["hook", "stop"])
            .env("CLAUDE_PROJECT_DIR", project)
            .stdin(input.to_string())
            .run()
    };
    env.cmd(&["ralph", "Fix it"])
        .env("CLAUDE_PROJECT_DIR", &origin)
        .env("CLAUDE_CODE_SESSION_ID", SESSION)
        .success();
    stop(&origin).blocked();
    fs::copy(
        origin.join(".claude/pagent-pipeline.json"),
        target.join(".claude/pagent-pipeline.json"),
    )
    .unwrap();
    let out = stop(&target);
    assert_text!(out.allowed().unwrap());
}

#[test]
fn a_state_sealed_by_another_user_or_unsealed_is_ignored() {
    let env = TestEnv::new();
    plant_command_state(&env);
    let sealed = env.read(".claude/pagent-pipeline.json");
    // Another user: a different secret.
    let other_config = env.home.join("other-config");
    let out = env
        .cmd(&["hook", "stop"])
        .env("CLAUDE_PROJECT_DIR", &env.root)
        .env("PAGENT_CONFIG_DIR", &other_config)
        .stdin(env.stop_input("hi").to_string())
        .run();
    assert_text!("another_user", out.allowed().unwrap());
    // No seal at all, or a forged one, with the right secret.
    let mut state: serde_json::Value = serde_json::from_str(&sealed).unwrap();
    for seal in [json!(null), json!("00".repeat(32)), json!("nonsense")] {
        state["seal"] = seal;
        env.set_state(&state);
        fs::remove_file(env.path(".claude/pagent/unsealed-warned")).ok();
        assert!(env.stop(&env.stop_input("hi")).allowed().is_some());
    }
    // A sealed state edited by hand (the command changed) is no longer sealed.
    let edited = sealed.replace("touch pwned; exit 1", "touch pwned; exit 0");
    env.write(".claude/pagent-pipeline.json", &edited);
    env.stop(&env.stop_input("hi")).allowed();
    assert!(!env.exists("pwned"));
}

#[test]
fn bad_hook_input_fails_open_and_says_why() {
    let env = TestEnv::new();
    env.cmd(&["ralph", "Fix it"]).success();
    let huge = vec![b'x'; 65 * 1024 * 1024];
    let cases: Vec<(Vec<u8>, &str)> = vec![
        (b"".to_vec(), "no input"),
        (b"   \n".to_vec(), "blank input"),
        (b"garbage".to_vec(), "garbage"),
        (br#"{"session_id": "35f6"#.to_vec(), "JSON cut short"),
        (b"[1, 2, 3]".to_vec(), "an array"),
        (vec![0xff, 0xfe, 0x00], "bytes that are not UTF-8"),
        (huge, "65 MiB of input"),
    ];
    let mut said = Said::new();
    for (stdin, what) in cases {
        let out = env.stop_raw(stdin);
        said.say(what, &out.allowed_on_error());
    }
    assert_text!(said.text());
    // The state was not touched by any of it.
    assert_eq!(env.state()["iterations"], json!([1]));
}

#[test]
fn without_a_state_file_any_input_is_allowed_silently() {
    let env = TestEnv::new();
    for stdin in [&b""[..], b"garbage", br#"{"session_id":"x"}"#] {
        let out = env.stop_raw(stdin.to_vec());
        assert_eq!(
            (out.code, out.stdout.as_str(), out.stderr.as_str()),
            (Some(0), "", ""),
            "{out}"
        );
    }
    // Without CLAUDE_PROJECT_DIR the project comes from the input's cwd.
    let out = env
        .cmd(&["hook", "stop"])
        .current_dir(&env.home)
        .stdin(json!({"cwd": env.root}).to_string())
        .run();
    assert_eq!((out.code, out.stdout.as_str()), (Some(0), ""), "{out}");
}

#[test]
fn a_corrupt_state_fails_open_and_cancel_sets_it_aside() {
    let env = TestEnv::new();
    env.cmd(&["ralph", "Fix it"]).success();
    let good = env.read(".claude/pagent-pipeline.json");
    let mut said = Said::new();
    for (corrupt, what) in [
        (&good[..good.len() / 2], "half a state"),
        ("", "an empty file"),
        ("{}", "{}"),
        ("null", "null"),
        (r#"{"version": 99}"#, r#"{"version": 99}"#),
    ] {
        env.write(".claude/pagent-pipeline.json", corrupt);
        let out = env.stop(&env.stop_input("hi"));
        said.say(&format!("a stop over {what}"), &out.allowed_on_error());
    }
    let out = env.cmd(&["status"]).failure();
    said.say("pagent status", &out.stderr);
    let out = env.cmd(&["cancel"]).success();
    said.say("pagent cancel", &out.stdout);
    assert_text!(said.text());
    assert!(!env.exists(".claude/pagent-pipeline.json"));
    assert_eq!(env.stop(&env.stop_input("hi")).allowed(), None);
}

#[test]
fn usage_errors_exit_1_and_help_exits_0() {
    let env = TestEnv::new();
    let mut said = Said::new();
    for args in [
        &["hook"][..],
        &["hook", "nope"],
        &["--bogus"],
        &["run"],
        &["status", "--jsno"],
        &[],
        &["log", "-n", "x"],
    ] {
        let out = env.cmd(args).failure();
        // A command missing its subcommand prints its whole help: the test is about the
        // exit code and the error, so the snapshot keeps what comes before the list.
        let error = match out.stderr.find("\nCommands:\n") {
            Some(list) => format!("{}\n[the command list]\n", &out.stderr[..list]),
            None => out.stderr.clone(),
        };
        said.say(&format!("pagent {}", args.join(" ")), &error);
    }
    assert_text!(said.text());
    for args in [
        &["--help"][..],
        &["--version"],
        &["hook", "--help"],
        &["run", "--help"],
    ] {
        let out = env.cmd(args).success();
        assert!(!out.stdout.is_empty(), "{args:?}");
    }
}

#[test]
fn agents_driven_by_pagent_loop_are_not_blocked_by_their_own_hook() {
    let env = TestEnv::new();
    env.cmd(&["ralph", "Fix it"]).success();
    let out = env
        .cmd(&["hook", "stop"])
        .env("CLAUDE_PROJECT_DIR", &env.root)
        .env("PAGENT_DRIVER", "loop")
        .stdin(env.stop_input("hi").to_string())
        .run();
    assert_eq!((out.code, out.stdout.as_str()), (Some(0), ""), "{out}");
    assert_eq!(env.state()["iterations"], json!([1]));
}

#[test]
fn cancel_ends_the_loop_is_idempotent_and_the_next_stop_is_allowed() {
    let env = TestEnv::new();
    let out = env.cmd(&["cancel"]).success();
    let mut said = Said::new();
    said.say("pagent cancel, no loop", &out.stdout);
    env.cmd(&["ralph", "Fix it"]).success();
    env.stop(&env.stop_input("hi")).blocked();
    let out = env.cmd(&["cancel"]).success();
    assert_eq!(
        out.stdout, "pagent: cancelled the Ralph loop after 2 iterations. Claude can stop now.\n",
        "{out}"
    );
    // The session is told once that the loop was cancelled from a terminal (item 10).
    assert_eq!(
        env.stop(&env.stop_input("hi"))
            .allowed()
            .unwrap_or_default(),
        "pagent: the Ralph loop (iteration 2 of 25) was cancelled from a terminal (`pagent \
         cancel`). Claude may stop."
    );
    assert_eq!(env.stop(&env.stop_input("hi")).allowed(), None);
    let out = env.cmd(&["cancel"]).success();
    assert!(
        out.stdout
            .starts_with("pagent: no active loop to cancel (the last one, ralph, was cancelled ")
            && out.stdout.ends_with(" ago).\n"),
        "{out}"
    );
    let state = env.state();
    assert_eq!(state["status"], "cancelled");
    said.say("pagent status", &env.cmd(&["status"]).success().stdout);
    assert_text!(said.text());
}

#[test]
fn setup_keeps_pagent_files_out_of_git() {
    let env = TestEnv::new();
    env.cmd(&["ralph", "Fix it"]).success();
    let repo = git2::Repository::open(&env.root).unwrap();
    for path in [
        ".claude/pagent-pipeline.json",
        ".claude/pagent/events.jsonl",
    ] {
        assert!(repo.is_path_ignored(path).unwrap(), "{path} is not ignored");
    }
    let mut options = git2::StatusOptions::new();
    options
        .include_untracked(true)
        .recurse_untracked_dirs(true)
        .include_ignored(false);
    let statuses = repo.statuses(Some(&mut options)).unwrap();
    let listed: Vec<String> = statuses
        .iter()
        .filter_map(|s| s.path().map(str::to_owned))
        .collect();
    assert!(listed.iter().all(|p| !p.contains("pagent")), "{listed:?}");
}

#[test]
fn hook_input_cut_at_any_point_never_blocks_and_never_exits_2() {
    let env = TestEnv::new();
    env.cmd(&[
        "ralph",
        "--max-iterations",
        "1000",
        "--no-progress-limit",
        "0",
        "Fix it",
    ])
    .success();
    let whole = serde_json::to_vec(&env.stop_input("working")).unwrap();
    for cut in (0..whole.len()).step_by(9) {
        for event in ["stop", "post-tool-use"] {
            let out = env
                .cmd(&["hook", event])
                .env("CLAUDE_PROJECT_DIR", &env.root)
                .stdin(whole[..cut].to_vec())
                .run();
            // Every cut is JSON cut short: an error that allows.
            out.allowed_on_error();
        }
    }
    // The whole input still blocks: the loop was not disturbed by any of it.
    env.stop_raw(whole).blocked();
}
