//! Issue 30, §5's first finding, as an attacker would: `git push` (and `--pr`) ran with
//! the repository's git configuration as the agent left it, so a `core.sshCommand` an
//! agent wrote into `.git/config` ran. Each test here has a fake agent write one setting
//! that runs a planted marker command (or redirects the push), then lets the real git
//! (and a `gh` that does what the real one does: `git status` before a pull request)
//! show whether the marker ran. The user's own settings, there before the loop, still
//! work; a hook the agent planted never runs; a resumed loop compares with the settings
//! when it started, a signed merge of `pagent parallel` too; and an include of a FIFO,
//! which libgit2 would block on, costs a Stop hook nothing.

use std::fs;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use serde_json::Value;

use crate::hostile_repo::HANG;
use crate::parallel::{Parallel, summary};
use crate::util::*;

/// A project with a commit on `main` and `origin` at `url`, whose agent runs `attack`
/// (shell lines) on its first iteration and makes its promise every time.
fn project(
    url: impl FnOnce(&TestEnv) -> String,
    attack: impl FnOnce(&TestEnv) -> String,
) -> TestEnv {
    let env = TestEnv::new();
    crate::git::git(&env.root, &["symbolic-ref", "HEAD", "refs/heads/main"]);
    env.write("README.md", "hello\n");
    crate::git::git(&env.root, &["add", "README.md"]);
    crate::git::git(&env.root, &["commit", "-q", "-m", "start"]);
    let url = url(&env);
    crate::git::git(&env.root, &["remote", "add", "origin", &url]);
    fs::write(env.home.join("attack.sh"), attack(&env)).unwrap();
    env.write(
        "agent.sh",
        &format!(
            "cat > /dev/null\n\
             if [ ! -f {home}/attacked ]; then touch {home}/attacked; sh {home}/attack.sh; fi\n\
             echo '<promise>DONE</promise>'\n",
            home = env.home.display()
        ),
    );
    env
}

/// `pagent loop --command 'sh agent.sh' ARGS ralph Task`, with `dir` first on `PATH`.
fn run_loop(env: &TestEnv, args: &[&str], dir: Option<&Path>) -> Run {
    let mut all = vec!["loop", "--command", "sh agent.sh"];
    all.extend(args);
    all.extend(["ralph", "Task"]);
    let mut command = env.cmd(&all).env("GIT_TERMINAL_PROMPT", "0");
    if let Some(dir) = dir {
        command = command.env(
            "PATH",
            format!("{}:{}", dir.display(), std::env::var("PATH").unwrap()),
        );
    }
    command.run()
}

/// The marker file `name` under HOME: the shell line that makes it.
fn touch(env: &TestEnv, name: &str) -> String {
    format!("touch {}", env.home.join(name).display())
}

fn ran(env: &TestEnv, name: &str) -> bool {
    env.home.join(name).exists()
}

/// The loop's last lines: its end and what pagent said after it.
fn ending(out: &Run) -> String {
    let lines: Vec<&str> = out.stdout.lines().collect();
    lines[lines.len().saturating_sub(2)..].join("\n")
}

/// A bare repository under HOME, as a remote.
fn bare(env: &TestEnv, name: &str) -> String {
    let path = env.home.join(name);
    git2::Repository::init_bare(&path).unwrap();
    path.display().to_string()
}

/// The branches of the bare repository `name` under HOME.
fn branches(env: &TestEnv, name: &str) -> Vec<String> {
    let repo = git2::Repository::open_bare(env.home.join(name)).unwrap();
    let found = repo.branches(None).unwrap();
    found
        .map(|b| b.unwrap().0.name().unwrap().unwrap().to_owned())
        .collect()
}

#[test]
fn issue_30_a_core_ssh_command_an_agent_wrote_never_runs_at_push() {
    let env = project(
        |_| "ssh://pagent.invalid/repo.git".to_owned(),
        |env| {
            format!(
                "git config core.sshCommand '{}; false'\n",
                touch(env, "pwned")
            )
        },
    );
    let out = run_loop(&env, &["--push"], None);
    assert_eq!(out.code, Some(1), "{out}");
    assert!(
        !ran(&env, "pwned"),
        "the agent's core.sshCommand ran\n{out}"
    );
    assert_text!(ending(&out));
}

/// The user's own setting, there before the loop, is still the one git runs.
#[test]
fn issue_30_the_users_own_core_ssh_command_still_runs_at_push() {
    let env = project(
        |_| "ssh://pagent.invalid/repo.git".to_owned(),
        |_| String::new(),
    );
    let mine = format!("{}; false", touch(&env, "mine"));
    crate::git::git(&env.root, &["config", "core.sshCommand", &mine]);
    let out = run_loop(&env, &["--push"], None);
    assert_eq!(out.code, Some(1), "{out}");
    assert!(ran(&env, "mine"), "{out}");
    assert!(
        out.stdout
            .contains("the loop completed, but pushing main failed: git push failed:"),
        "{out}"
    );
}

/// An HTTP remote that asks for credentials on every request, as a host does.
fn remote_asking_for_credentials() -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            stream
                .set_read_timeout(Some(Duration::from_secs(5)))
                .unwrap();
            let mut head = Vec::new();
            let mut byte = [0u8; 1];
            while !head.ends_with(b"\r\n\r\n") && stream.read(&mut byte).unwrap_or(0) == 1 {
                head.push(byte[0]);
            }
            let _ = stream.write_all(
                b"HTTP/1.1 401 Unauthorized\r\nWWW-Authenticate: Basic realm=\"x\"\r\n\
                  Content-Length: 0\r\nConnection: close\r\n\r\n",
            );
        }
    });
    format!("http://{addr}/repo.git")
}

#[test]
fn issue_30_a_credential_helper_an_agent_wrote_never_runs_at_push() {
    let url = remote_asking_for_credentials();
    let env = project(
        |_| url.clone(),
        |env| {
            format!(
                "git config credential.helper '!{}; true'\n",
                touch(env, "pwned")
            )
        },
    );
    let out = run_loop(&env, &["--push"], None);
    assert_eq!(out.code, Some(1), "{out}");
    assert!(
        !ran(&env, "pwned"),
        "the agent's credential.helper ran\n{out}"
    );
    assert_text!(ending(&out));
    // Without the agent's helper, the push reaches the remote and is asked for one.
    crate::git::git(&env.root, &["config", "--unset", "credential.helper"]);
    let helper = format!("!{}; true", touch(&env, "mine"));
    crate::git::git(&env.root, &["config", "credential.helper", &helper]);
    fs::remove_file(env.home.join("attacked")).unwrap();
    fs::write(env.home.join("attack.sh"), "").unwrap();
    let out = run_loop(&env, &["--push"], None);
    assert!(ran(&env, "mine"), "the user's own helper runs\n{out}");
}

/// gh as the real one behaves before a pull request: it asks git for uncommitted
/// changes (`git status`, which runs `core.fsmonitor`), then answers with an address.
const GH: &str = r#"echo "gh $*" >> "$HOME/gh-calls"
case "$1 $2" in
  "pr create") git status --porcelain > /dev/null; echo https://example.invalid/pull/1 ;;
  "issue view") echo '{"number": 7, "title": "Save", "body": "Save the file."}' ;;
  "issue comment") ;;
  *) exit 1 ;;
esac"#;

#[test]
fn issue_30_a_core_fsmonitor_an_agent_wrote_never_runs_through_gh() {
    let env = project(
        |env| bare(env, "origin.git"),
        |env| {
            let hook = env.fake_tool("hooks", "fsmonitor", &touch(env, "pwned"));
            format!(
                "git config core.fsmonitor {}\n",
                hook.join("fsmonitor").display()
            )
        },
    );
    let gh = env.fake_tool("fake-bin", "gh", GH);
    let out = run_loop(&env, &["--pr"], Some(&gh));
    assert_eq!(out.code, Some(1), "{out}");
    assert!(!ran(&env, "pwned"), "the agent's core.fsmonitor ran\n{out}");
    assert!(!ran(&env, "gh-calls"), "{out}");
    assert_text!(ending(&out));
}

/// An fsmonitor that is the user's own is not run by pagent's git either (nor by the
/// git gh starts): it is a program the repository names, and nothing it does is needed.
#[test]
fn issue_30_no_git_pagent_starts_runs_an_fsmonitor_or_a_hook() {
    let env = project(
        |env| bare(env, "origin.git"),
        |env| {
            let hook = env.root.join(".git/hooks/pre-push");
            format!(
                "printf '#!/bin/sh\\n{}\\n' > {hook}; chmod +x {hook}\n",
                touch(env, "pwned-hook"),
                hook = hook.display()
            )
        },
    );
    let fsmonitor = env.fake_tool("hooks", "fsmonitor", &touch(&env, "fsmonitor"));
    let path = fsmonitor.join("fsmonitor").display().to_string();
    crate::git::git(&env.root, &["config", "core.fsmonitor", &path]);
    let gh = env.fake_tool("fake-bin", "gh", GH);
    let out = run_loop(&env, &["--pr"], Some(&gh));
    assert_eq!(out.code, Some(0), "{out}");
    assert!(out.stdout.contains("pushed main"), "{out}");
    assert_eq!(branches(&env, "origin.git"), ["main"]);
    assert!(
        !ran(&env, "pwned-hook"),
        "the planted pre-push hook ran\n{out}"
    );
    assert!(ran(&env, "gh-calls"), "{out}");
    assert!(
        !ran(&env, "fsmonitor"),
        "an fsmonitor ran in gh's git\n{out}"
    );
}

#[test]
fn issue_30_a_remote_url_an_agent_changed_gets_no_push() {
    for (change, name) in [
        ("remote set-url origin", "url_changed"),
        ("config remote.origin.pushurl", "pushurl_set"),
    ] {
        let env = project(
            |env| bare(env, "origin.git"),
            |env| format!("git {change} {}\n", bare(env, "attacker.git")),
        );
        let out = run_loop(&env, &["--push"], None);
        assert_eq!(out.code, Some(1), "{change}: {out}");
        assert!(branches(&env, "attacker.git").is_empty(), "{change}: {out}");
        assert!(branches(&env, "origin.git").is_empty(), "{change}: {out}");
        assert_text!(name, ending(&out));
    }
}

/// An include the agent added (of a file it wrote) is as much a change as a key.
#[test]
fn issue_30_an_include_an_agent_added_gets_no_push() {
    let env = project(
        |env| bare(env, "origin.git"),
        |env| {
            let file = env.home.join("evil.gitconfig");
            format!(
                "printf '[core]\\n\\tsshCommand = {}\\n' > {file}; git config include.path {file}\n",
                touch(env, "pwned"),
                file = file.display()
            )
        },
    );
    let out = run_loop(&env, &["--push"], None);
    assert_eq!(out.code, Some(1), "{out}");
    assert!(
        out.stdout.contains("(core.sshcommand, include.path)"),
        "{out}"
    );
    assert!(branches(&env, "origin.git").is_empty(), "{out}");
}

#[test]
fn issue_30_no_issue_comment_after_an_agent_changed_the_git_configuration() {
    let env = project(
        |env| bare(env, "origin.git"),
        |env| format!("git remote set-url origin {}\n", bare(env, "attacker.git")),
    );
    env.write(
        "agent.sh",
        &format!(
            "cat > /dev/null\nif [ ! -f {home}/attacked ]; then touch {home}/attacked; sh {home}/attack.sh; fi\n\
             printf 'Did it.\\n<promise>STORY DONE</promise>\\n'\n",
            home = env.home.display()
        ),
    );
    let gh = env.fake_tool("fake-bin", "gh", GH);
    let out = env
        .cmd(&[
            "loop",
            "--command",
            "sh agent.sh",
            "--issues",
            "7",
            "--comment-progress",
        ])
        .env(
            "PATH",
            format!("{}:{}", gh.display(), std::env::var("PATH").unwrap()),
        )
        .run();
    assert_eq!(out.code, Some(0), "{out}");
    let calls = fs::read_to_string(env.home.join("gh-calls")).unwrap();
    assert_eq!(calls, "gh issue view 7 --json number,title,body\n", "{out}");
    let said: Vec<&str> = out
        .stderr
        .lines()
        .filter(|l| l.contains("comment"))
        .collect();
    assert_text!(said.join("\n"));
}

/// The agent writes its setting and the loop is interrupted; the same command resumes
/// the loop and compares with the settings of the loop's start, not of the resume.
#[test]
fn issue_30_a_resumed_loop_compares_with_the_configuration_when_the_loop_started() {
    let env = project(
        |_| "ssh://pagent.invalid/repo.git".to_owned(),
        |env| {
            format!(
                "git config core.sshCommand '{}; false'\n",
                touch(env, "pwned")
            )
        },
    );
    env.write(
        "agent.sh",
        &format!(
            "cat > /dev/null\nif [ ! -f {home}/attacked ]; then sh {home}/attack.sh; touch {home}/attacked; sleep 30; fi\n\
             echo '<promise>DONE</promise>'\n",
            home = env.home.display()
        ),
    );
    let mut child = env
        .bin(&[
            "loop",
            "--json",
            "--command",
            "sh agent.sh",
            "ralph",
            "Task",
        ])
        .command()
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let lines = BufReader::new(child.stdout.take().unwrap()).lines();
    wait_for(Duration::from_secs(60), "the agent's attack", || {
        ran(&env, "attacked")
    });
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    assert_eq!(child.wait().unwrap().code(), Some(130));
    let events: Vec<Value> = lines
        .map(|l| serde_json::from_str(&l.unwrap()).unwrap())
        .collect();
    assert_eq!(events.last().unwrap()["outcome"], "interrupted");
    let out = env
        .cmd(&["loop", "--command", "sh agent.sh", "--push"])
        .env("GIT_TERMINAL_PROMPT", "0")
        .run();
    assert_eq!(out.code, Some(1), "{out}");
    assert!(
        !ran(&env, "pwned"),
        "the agent's core.sshCommand ran\n{out}"
    );
    assert!(
        out.stdout.contains("pagent did not push main: the repository's git configuration changed since the loop started (core.sshcommand)"),
        "{out}"
    );
}

/// `pagent parallel --merge` in a repository that signs: a task's agent that turns
/// signing on with a `gpg.program` of its own gets no merge signed by it.
#[test]
fn issue_30_a_gpg_program_an_agent_wrote_never_signs_a_merge() {
    let p = Parallel::new("beta: do beta\n");
    let gpg = p.env.fake_tool(
        "signer",
        "gpg",
        &format!(
            "{}\ncat > /dev/null\necho '[GNUPG:] SIG_CREATED D 1 8 00 1 X' >&2\nprintf -- '-----BEGIN PGP SIGNATURE-----\\nfake\\n-----END PGP SIGNATURE-----\\n'",
            touch(&p.env, "pwned")
        ),
    );
    fs::write(
        p.ctl.join("git-attack"),
        format!(
            "git config commit.gpgsign true\ngit config user.signingkey KEY\ngit config gpg.program {}\n",
            gpg.join("gpg").display()
        ),
    )
    .unwrap();
    let out = p.run(&["--merge", "--json"]);
    assert_eq!(out.code, Some(3), "{out}");
    assert!(!ran(&p.env, "pwned"), "the agent's gpg.program ran\n{out}");
    assert_eq!(p.tip("main").summary(), Some("init"));
    let detail = summary(&out)["tasks"][0]["merge"]["detail"]
        .as_str()
        .unwrap()
        .to_owned();
    assert_text!(detail);
}

/// libgit2 opens every file the configuration includes as it opens the repository, and
/// blocks on a FIFO: an include the agent wrote must not hang the Stop hook.
#[test]
fn issue_30_an_include_of_a_fifo_never_hangs_the_stop_hook() {
    let env = crate::backpressure::active();
    let fifo = env.home.join("fifo");
    let c = std::ffi::CString::new(fifo.as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: mkfifo with a NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0);
    crate::git::git(
        &env.root,
        &["config", "include.path", fifo.to_str().unwrap()],
    );
    let stop = env
        .bin(&["hook", "stop"])
        .env("CLAUDE_PROJECT_DIR", &env.root)
        .stdin(env.stop_input("working").to_string())
        .run_bounded(HANG);
    stop.run.blocked();
}
