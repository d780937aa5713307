//! Issue 35: `pagent loop --agent opencode --sandbox` with the real OpenCode (1.18.33)
//! against the mock. OpenCode runs inside pagent's walls, its network pagent's proxy to
//! its API host (the mock, named by its configuration's `baseURL`): a scripted bash tool
//! call that tries to write `~/.bashrc`, read `~/.ssh/id_ed25519`, reach a server on
//! loopback that is not allowed (directly, and through the proxy), write outside the
//! project, and kill pagent and another of the user's processes is refused each time, the
//! refusals reach the next iteration's prompt (through the loop's `--check`, which prints
//! what the agent logged), while its real work (a file, the project's tests, a `git
//! commit`) succeeds and the loop completes; what OpenCode wrote in its own folders stays
//! in a private copy, gone with the loop.

use std::fs;
use std::net::TcpListener;
use std::path::Path;
use std::process::{Command, Stdio};

use serde_json::json;

use super::Agent;
use crate::harness::E2e;
use crate::mock::Reply;

/// An OpenCode bash call that appends what `attack` did to `attempts.txt`: its output,
/// then `ok what` or `REFUSED what`.
fn attempt(attack: &str, ok: &str, what: &str) -> Reply {
    Reply::Tool {
        text: None,
        name: "bash".into(),
        input: json!({
            "command": format!(
                "{attack} >> attempts.txt 2>&1 && echo {ok} {what} >> attempts.txt || echo REFUSED {what} >> attempts.txt"
            ),
            "description": "try something",
        }),
    }
}

fn attacks(port: u16, victim: u32, outside: &Path) -> Vec<Reply> {
    vec![
        attempt("echo pwned >> ~/.bashrc", "WROTE", "bashrc"),
        attempt("cat ~/.ssh/id_ed25519", "READ", "key"),
        attempt(
            &format!(
                "python3 -c 'import socket; socket.create_connection((\"127.0.0.1\", {port}), 3)'"
            ),
            "REACHED",
            "loopback",
        ),
        attempt(
            &format!("curl -sS -m 10 --fail-with-body http://127.0.0.1:{port}/"),
            "REACHED",
            "proxied",
        ),
        attempt(
            &format!("touch {}/pwned", outside.display()),
            "WROTE",
            "outside",
        ),
        attempt(&format!("kill -9 {victim}"), "KILLED", "victim"),
        attempt("kill -9 $(cat pagent.pid)", "KILLED", "pagent"),
        Reply::text("Tried everything.\n<promise>STORY DONE</promise>"),
    ]
}

fn work() -> Vec<Reply> {
    vec![
        Reply::Tool {
            text: None,
            name: "bash".into(),
            input: json!({
                "command": "echo work > work.txt && sh test.sh && git add work.txt && git commit -qm work && echo COMMITTED",
                "description": "do the work",
            }),
        },
        Reply::text("Done.\n<promise>STORY DONE</promise>"),
    ]
}

/// The user's secrets, git identity and OpenCode's settings (anything runs without
/// asking: its own permission would refuse a path outside the project before the walls
/// are tried), another project beside this one, and this project's tests, check and plan.
fn user_with_secrets_and_a_project(e2e: &E2e, outside: &Path) {
    fs::create_dir_all(outside).unwrap();
    fs::create_dir_all(e2e.home.join(".ssh")).unwrap();
    fs::write(e2e.home.join(".ssh/id_ed25519"), "PRIVATE-KEY-35\n").unwrap();
    fs::write(
        e2e.home.join(".gitconfig"),
        "[user]\n\tname = A\n\temail = a@example.com\n",
    )
    .unwrap();
    let config = e2e.home.join(".config/opencode/opencode.json");
    let mut settings: serde_json::Value =
        serde_json::from_slice(&fs::read(&config).unwrap()).unwrap();
    settings["permission"] =
        json!({"bash": "allow", "edit": "allow", "external_directory": "allow"});
    fs::write(&config, settings.to_string()).unwrap();
    e2e.write("test.sh", "grep -q work work.txt && echo TESTS PASS\n");
    e2e.write(
        "check.sh",
        "cat attempts.txt 2>/dev/null; test -f work.txt\n",
    );
    e2e.write(
        "prd.json",
        &json!({"project": "demo", "userStories": [
            {"id": "US-1", "title": "Work", "priority": 1, "passes": false}
        ]})
        .to_string(),
    );
}

/// `pagent loop --agent opencode --sandbox` to its end (with OpenCode's `offline`
/// environment), its pid in `pagent.pid` (where the
/// agent looks for it): its exit code, stdout and a report of everything.
fn contained_loop(e2e: &E2e, offline: &[(String, String)]) -> (Option<i32>, String, String) {
    let agent = Agent::Opencode;
    let binary = agent.binary();
    let mut command = e2e.driving(
        "loop",
        &[
            "--agent",
            "opencode",
            "--agent-bin",
            binary.to_str().unwrap(),
            "--sandbox",
            "--iteration-timeout",
            "2m",
            "--outage-wait",
            "5s",
            "--stories",
            "prd.json",
            "--check",
            "sh check.sh",
        ],
    );
    for (key, value) in offline {
        command.env(key, value);
    }
    command.stdout(Stdio::piped()).stderr(Stdio::piped());
    let child = command.spawn().unwrap();
    fs::write(e2e.path("pagent.pid"), child.id().to_string()).unwrap();
    let out = child.wait_with_output().unwrap();
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr),
    );
    let report = format!(
        "{stdout}\n--- stderr ---\n{stderr}\n--- runs ---\n{}",
        super::run_logs(e2e)
    );
    (out.status.code(), stdout, report)
}

#[test]
#[ignore = "end-to-end: needs the OpenCode CLI (scripts/test.sh runs it)"]
fn issue_35_a_contained_opencode_is_refused_each_attack_while_its_work_succeeds() {
    let server = TcpListener::bind("127.0.0.1:0").unwrap();
    server.set_nonblocking(true).unwrap();
    let port = server.local_addr().unwrap().port();
    let mut victim = Command::new("sleep").arg("300").spawn().unwrap();
    let victim_pid = victim.id();
    let e2e = E2e::start_with(|e2e| {
        let outside = e2e.home.parent().unwrap().join("other");
        let mut script = attacks(port, victim_pid, &outside);
        script.extend(work());
        script
    });
    let outside = e2e.home.parent().unwrap().join("other");
    let offline = Agent::Opencode.offline(&e2e);
    user_with_secrets_and_a_project(&e2e, &outside);
    let config_before = fs::read(e2e.home.join(".config/opencode/opencode.json")).unwrap();
    let (code, stdout, report) = contained_loop(&e2e, &offline);
    assert_eq!(code, Some(0), "{report}");
    let mock = e2e.mock.base_url().replace("http://", "");
    assert!(
        stdout.contains(&format!(
            "the agent and the loop's checks run contained (bubblewrap): they write only in the \
             project and a private /tmp, their HOME is empty, they reach no network but {mock}"
        )),
        "{report}"
    );
    // Each attack was refused, and the refusals reached the next iteration's prompt.
    let second = e2e
        .mock
        .requests()
        .iter()
        .position(|r| crate::mock::told(r).join("\n").contains("iteration 2 of"))
        .unwrap_or_else(|| panic!("no second iteration: {report}"));
    let told = e2e.mock.all_text(second);
    for refused in [
        "bashrc", "key", "loopback", "proxied", "outside", "victim", "pagent",
    ] {
        assert!(
            told.contains(&format!("REFUSED {refused}")),
            "{refused}: {told}"
        );
    }
    assert!(
        told.contains(&format!("pagent's sandbox refused 127.0.0.1:{port}")),
        "{told}"
    );
    assert!(!told.contains("PRIVATE-KEY-35"), "{told}");
    assert!(!e2e.home.join(".bashrc").exists(), "~/.bashrc was written");
    assert!(
        !outside.join("pwned").exists(),
        "the other project was written"
    );
    assert!(
        server.accept().is_err(),
        "the agent reached the loopback server"
    );
    assert_eq!(
        victim.try_wait().unwrap(),
        None,
        "the user's process was killed"
    );
    victim.kill().unwrap();
    // Its real work: a file, the project's tests, a commit; and the loop completed.
    assert_eq!(fs::read_to_string(e2e.path("work.txt")).unwrap(), "work\n");
    let log = Command::new("git")
        .args(["log", "--format=%s"])
        .current_dir(&e2e.project)
        .output()
        .unwrap();
    assert!(
        String::from_utf8_lossy(&log.stdout).starts_with("work\n"),
        "{report}"
    );
    assert_eq!(e2e.status()["status"], "complete", "{report}");
    // OpenCode wrote its sessions in a private copy: the user's folders are as they were.
    assert_eq!(
        fs::read(e2e.home.join(".config/opencode/opencode.json")).unwrap(),
        config_before
    );
    let data = e2e.home.join(".local/share/opencode");
    let written: Vec<_> = fs::read_dir(&data)
        .map(|d| d.flatten().map(|e| e.path()).collect())
        .unwrap_or_default();
    assert!(written.is_empty(), "{written:?}");
}
