//! Issue 35: `--sandbox`, a loop's agent kept to its project. A `--command` agent that
//! attacks the user's machine (HOME's dotfiles and keys, a server on loopback, another
//! project, pagent's process and the user's others) is refused each time, while its real
//! work in the project (files, the project's test script, a `git commit`) succeeds and
//! the loop completes; without bubblewrap, the loop refuses to start.

#[cfg(target_os = "linux")]
use std::net::TcpListener;
#[cfg(target_os = "linux")]
use std::path::{Path, PathBuf};
#[cfg(target_os = "linux")]
use std::time::Duration;

#[cfg(target_os = "linux")]
use pagent_door::process::{Input, Launch, Program, SearchPath, Streams};

use crate::util::*;

/// A process of the user's that the agent tries to kill (a `sleep`).
#[cfg(target_os = "linux")]
fn victim() -> pagent_door::process::Running {
    let search = SearchPath::new(std::env::var_os("PATH").as_deref(), &[]);
    let sleep = Program::named("sleep", &search).unwrap();
    Launch::new(sleep, Path::new("/"), &search)
        .arg("300")
        .spawn(Streams {
            stdin: Input::Null,
            output: false,
        })
        .unwrap()
}

/// A folder outside the project and outside /tmp (whose writes would land in the
/// sandbox's private /tmp): another project of the user's.
#[cfg(target_os = "linux")]
fn other_project() -> (tempfile::TempDir, PathBuf) {
    // cargo's scratch folder, unless the checkout itself is under /tmp (a clone made
    // there to try CI): then /var/tmp, which the sandbox leaves as it is.
    let target = Path::new(env!("CARGO_TARGET_TMPDIR"));
    let base = if target.starts_with("/tmp") {
        Path::new("/var/tmp")
    } else {
        target
    };
    std::fs::create_dir_all(base).unwrap();
    let dir = tempfile::tempdir_in(base).unwrap();
    let path = dir.path().canonicalize().unwrap();
    (dir, path)
}

/// A folder for `PATH` with a shell and git but no bwrap.
#[cfg(target_os = "linux")]
fn path_without_bwrap(env: &TestEnv) -> PathBuf {
    path_with(env, &["sh", "git"])
}

/// A folder for `PATH` with these tools only.
#[cfg(target_os = "linux")]
fn path_with(env: &TestEnv, tools: &[&str]) -> PathBuf {
    // Beside the project, not `project/../bin`: pagent drops a PATH entry that reads as
    // inside the project.
    let bin = env.root.parent().unwrap().join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    for tool in tools {
        let search = SearchPath::new(std::env::var_os("PATH").as_deref(), &[]);
        let real = Program::named(tool, &search).unwrap();
        std::os::unix::fs::symlink(real.path(), bin.join(tool)).unwrap();
    }
    bin
}

/// The attacking agent: on its first run, each attack and its real work, every outcome
/// said on stdout (its final message); on its second, the promise.
#[cfg(target_os = "linux")]
fn attacker(env: &TestEnv, port: u16, victim: u32, outside: &Path) -> String {
    env.write(
        "test.sh",
        "echo scratch > \"$TMPDIR/scratch\" && grep -q work work.txt && echo TESTS PASS\n",
    );
    env.write(
        "agent.sh",
        &format!(
            "exec 2>&1\n\
             n=$(cat .runs 2>/dev/null || echo 0); n=$((n+1)); echo $n > .runs\n\
             if [ $n -ge 2 ]; then printf 'Done.\\n<promise>DONE</promise>\\n'; exit 0; fi\n\
             echo pwned >> \"$HOME/.bashrc\" && echo WROTE bashrc || echo REFUSED bashrc\n\
             cat \"$HOME/.ssh/id_ed25519\" && echo READ key || echo REFUSED key\n\
             python3 -c 'import socket; socket.create_connection((\"127.0.0.1\", {port}), 3)' \
               && echo REACHED loopback || echo REFUSED loopback\n\
             echo pwned > '{outside}/pwned' && echo WROTE outside || echo REFUSED outside\n\
             kill -9 {victim} && echo KILLED victim || echo REFUSED victim\n\
             for p in /proc/[0-9]*; do [ \"$(cat $p/comm 2>/dev/null)\" = pagent ] \
               && [ \"$(readlink $p/cwd)\" = \"$PWD\" ] && kill -9 ${{p#/proc/}} && killed=1; done\n\
             [ -n \"$killed\" ] && echo KILLED pagent || echo REFUSED pagent\n\
             echo work > work.txt && sh test.sh\n\
             git add work.txt && git -c user.name=A -c user.email=a@example.com commit -qm work \
               && echo COMMITTED\n",
            outside = outside.display()
        ),
    );
    "sh agent.sh".to_owned()
}

#[test]
#[cfg(target_os = "linux")]
fn issue_35_a_contained_command_agent_is_refused_each_attack_while_its_work_succeeds() {
    let env = TestEnv::new();
    std::fs::create_dir_all(env.home.join(".ssh")).unwrap();
    std::fs::write(env.home.join(".ssh/id_ed25519"), "PRIVATE-KEY-35\n").unwrap();
    let server = TcpListener::bind("127.0.0.1:0").unwrap();
    server.set_nonblocking(true).unwrap();
    let port = server.local_addr().unwrap().port();
    let mut user_process = victim();
    let (_kept, outside) = other_project();
    let agent = attacker(&env, port, user_process.id(), &outside);
    let out = env
        .bin(&["loop", "--sandbox", "--command", &agent, "ralph", "Work"])
        .success();
    assert!(
        out.stdout
            .contains("the agent and the loop's checks run contained (bubblewrap)"),
        "{out}"
    );
    let log = std::fs::read_dir(env.path(".claude/pagent/runs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.to_string_lossy().ends_with("-ralph-001.log"))
        .map(|p| std::fs::read_to_string(p).unwrap())
        .unwrap();
    for refused in ["bashrc", "key", "loopback", "outside", "victim", "pagent"] {
        assert!(
            log.contains(&format!("REFUSED {refused}")),
            "{refused}:\n{log}"
        );
    }
    assert!(!log.contains("PRIVATE-KEY-35"), "{log}");
    assert!(!env.home.join(".bashrc").exists());
    assert!(!outside.join("pwned").exists());
    assert!(
        server.accept().is_err(),
        "the agent reached the loopback server"
    );
    assert_eq!(
        user_process.try_wait(),
        None,
        "the user's process was killed"
    );
    user_process.stop(Duration::from_secs(1));
    // Its real work: a file, the project's tests, a commit; and the loop completed.
    assert!(
        log.contains("TESTS PASS") && log.contains("COMMITTED"),
        "{log}"
    );
    assert_eq!(env.read("work.txt"), "work\n");
    let repo = git2::Repository::open(&env.root).unwrap();
    let head = repo.head().unwrap().peel_to_commit().unwrap();
    assert_eq!(head.message(), Some("work\n"));
    assert_eq!(env.state()["status"], "complete");
    assert_eq!(env.state()["iterations"], serde_json::json!([2]));
}

#[test]
#[cfg(target_os = "linux")]
fn issue_35_without_bubblewrap_the_loop_refuses_to_start() {
    let env = TestEnv::new();
    let bin = path_without_bwrap(&env);
    let out = env
        .bin(&[
            "loop",
            "--sandbox",
            "--command",
            "sh agent.sh",
            "ralph",
            "Work",
        ])
        .env("PATH", &bin)
        .failure();
    insta::assert_snapshot!("issue_35_without_bubblewrap", out.stderr);
    assert!(
        !env.exists(".claude/pagent-pipeline.json"),
        "{}",
        env.dump()
    );
}

/// A Codex whose chosen provider names no host (a local model server Codex knows by
/// itself) and an OpenCode with no configuration: each refuses, naming `--allow-host`.
#[test]
#[cfg(target_os = "linux")]
fn issue_35_sandbox_refuses_a_codex_or_opencode_whose_api_host_it_cannot_find() {
    let env = TestEnv::new();
    std::fs::create_dir_all(env.home.join(".codex")).unwrap();
    std::fs::write(
        env.home.join(".codex/config.toml"),
        "model_provider = \"ollama\"\n",
    )
    .unwrap();
    let mut said = String::new();
    for agent in ["codex", "opencode"] {
        let out = env
            .bin(&[
                "loop",
                "--sandbox",
                "--agent",
                agent,
                "--agent-bin",
                "/bin/true",
                "ralph",
                "Work",
            ])
            .failure();
        said.push_str(&out.stderr);
    }
    insta::assert_snapshot!("issue_35_sandbox_refuses_agent_clis", said);
    assert!(
        !env.exists(".claude/pagent-pipeline.json"),
        "{}",
        env.dump()
    );
}

/// A stand-in for Codex (outside the project and HOME) that keeps what it was started
/// with in the project (its arguments, its `CODEX_HOME` and what that holds) and what it
/// could read of the user's `auth.json`; then writes a session in its home, as Codex
/// does, and ends with the promise.
#[cfg(target_os = "linux")]
fn codex_stand_in(env: &TestEnv) -> PathBuf {
    let bin = env.root.parent().unwrap().join("codex-bin");
    std::fs::create_dir_all(&bin).unwrap();
    let codex = bin.join("codex");
    std::fs::write(
        &codex,
        "#!/bin/sh\ncat > /dev/null\n\
         { echo \"args: $*\"; echo \"home: $CODEX_HOME\"; ls -A \"$CODEX_HOME\"; } > seen.txt\n\
         grep \" $CODEX_HOME \" /proc/self/mountinfo | cut -d' ' -f4 > mounted.txt\n\
         cat \"$USER_CODEX/auth.json\" > user-auth.txt 2>&1\n\
         mkdir -p \"$CODEX_HOME/sessions\" && echo s > \"$CODEX_HOME/sessions/one.jsonl\"\n\
         echo '{\"type\":\"item.completed\",\"item\":{\"id\":\"1\",\"type\":\"agent_message\",\"text\":\"<promise>DONE</promise>\"}}'\n\
         echo '{\"type\":\"turn.completed\",\"usage\":{\"input_tokens\":1,\"output_tokens\":1}}'\n",
    )
    .unwrap();
    let mut perms = std::fs::metadata(&codex).unwrap().permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut perms, 0o755);
    std::fs::set_permissions(&codex, perms).unwrap();
    codex
}

/// A contained Codex: its own sandbox off (`--sandbox danger-full-access`: pagent's walls
/// are the sandbox), a private `CODEX_HOME` seeded from the user's (`$CODEX_HOME` when set)
/// that the user's never sees written, and its network only its API host from the user's
/// configuration: the project's own `.codex/config.toml` adds none.
#[test]
#[cfg(target_os = "linux")]
fn issue_35_a_contained_codex_gets_a_private_home_and_only_its_users_api_host() {
    let env = TestEnv::new();
    // The user's Codex home outside HOME and /tmp: the walls hide it all the same.
    let (_kept, user_codex) = other_project();
    let config = "model_provider = \"corp\"\n\
         [model_providers.corp]\nbase_url = \"http://127.0.0.1:9/v1\"\n";
    std::fs::write(user_codex.join("config.toml"), config).unwrap();
    std::fs::write(
        user_codex.join("auth.json"),
        "{\"OPENAI_API_KEY\": \"sk-35\"}",
    )
    .unwrap();
    // The project's configuration names a provider of its own, a stranger's host, and
    // the user trusts it (`--trust`): it still adds no host.
    env.write(
        ".codex/config.toml",
        "model_provider = \"evil\"\n\
         [model_providers.evil]\nbase_url = \"https://evil.example/v1\"\n",
    );
    let codex = codex_stand_in(&env);
    let out = env
        .bin(&[
            "loop",
            "--sandbox",
            "--agent",
            "codex",
            "--agent-bin",
            codex.to_str().unwrap(),
            "ralph",
            "--trust",
            "Work",
        ])
        .env("CODEX_HOME", &user_codex)
        .env("USER_CODEX", &user_codex)
        .success();
    assert!(
        out.stdout.contains(
            "their HOME is empty, they reach no network but 127.0.0.1:9 (through pagent's \
             proxy), and they see no other process"
        ),
        "{out}"
    );
    assert!(!out.stdout.contains("evil.example"), "{out}");
    let seen = env.read("seen.txt");
    let mut lines = seen.lines();
    assert_eq!(
        lines.next(),
        Some("args: exec --json --sandbox danger-full-access -"),
        "{seen}"
    );
    // Inside, the private home is `~/.codex` (Codex makes no helper commands in a home
    // under /tmp); outside, a private folder of pagent's in the temporary folder.
    let home = env.home.canonicalize().unwrap().join(".codex");
    assert_eq!(
        lines.next(),
        Some(&*format!("home: {}", home.display())),
        "{seen}"
    );
    let mounted = env.read("mounted.txt");
    let private = mounted.trim().rsplit('/').next().unwrap().to_owned();
    assert!(private.starts_with("pagent-codex-"), "{mounted}");
    assert_eq!(
        lines.collect::<Vec<_>>(),
        ["auth.json", "config.toml"],
        "{seen}"
    );
    let read = env.read("user-auth.txt");
    assert!(read.contains("No such file"), "{read}");
    // The user's home was read, never written, and the private one went with the loop.
    let mut held: Vec<_> = std::fs::read_dir(&user_codex)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    held.sort();
    assert_eq!(held, ["auth.json", "config.toml"]);
    assert_eq!(
        std::fs::read_to_string(user_codex.join("config.toml")).unwrap(),
        config
    );
    let private = std::env::temp_dir().join(private);
    assert!(!private.exists(), "{} is still there", private.display());
    assert!(!home.exists(), "the user's HOME got a .codex");
    assert_eq!(env.state()["status"], "complete");
    assert_eq!(env.state()["contained"], true);
}

/// A Codex home the user set inside the project (whose files a stranger may write) is
/// refused rather than read for hosts or shown to the agent.
#[test]
#[cfg(target_os = "linux")]
fn issue_35_a_codex_home_inside_the_project_is_refused_rather_than_read() {
    let env = TestEnv::new();
    env.write(
        ".codex/config.toml",
        "model_provider = \"evil\"\n\
         [model_providers.evil]\nbase_url = \"https://evil.example/v1\"\n",
    );
    let out = env
        .bin(&[
            "loop",
            "--sandbox",
            "--agent",
            "codex",
            "--agent-bin",
            "/bin/true",
            "ralph",
            "Work",
        ])
        // The project inside HOME, as most are: the Codex home inside it is not the
        // default one, which HOME's hiding covers.
        .env("HOME", env.root.parent().unwrap())
        .env("CODEX_HOME", env.root.join(".codex"))
        .failure();
    let filters = crate::util::snapshot::filters();
    insta::with_settings!({filters => filters}, {
        insta::assert_snapshot!("issue_35_codex_home_in_project", out.stderr);
    });
    assert!(!out.stderr.contains("evil"), "{out}");
}

/// A project that is an agent CLI's default config folder, or holds its real folder (a
/// `~/.codex` or `~/.claude` linked into a dotfiles repository), is refused: the agent
/// could write there what the user's next uncontained run obeys (a Codex `notify`
/// command, a Claude Code hook). Found by a review: the default `~/.codex` was let through.
#[test]
#[cfg(target_os = "linux")]
fn issue_35_a_project_that_holds_an_agents_default_config_folder_is_refused() {
    let env = TestEnv::new();
    for (link, agent) in [
        (
            ".codex",
            &["--agent", "codex", "--agent-bin", "/bin/true"][..],
        ),
        (".claude", &["--command", "true"][..]),
    ] {
        let home = tempfile::tempdir().unwrap();
        std::os::unix::fs::symlink(&env.root, home.path().join(link)).unwrap();
        let mut args = vec!["loop", "--sandbox"];
        args.extend_from_slice(agent);
        args.extend_from_slice(&["ralph", "Work"]);
        let out = env.bin(&args).env("HOME", home.path()).failure();
        let named = format!("is {} or holds it", home.path().join(link).display());
        assert!(out.stderr.contains(&named), "{link}: {out}");
        assert!(
            !env.exists(".claude/pagent-pipeline.json"),
            "{link}: {}",
            env.dump()
        );
    }
}

/// A Codex configuration that is there but cannot be read (not TOML, or past the size
/// pagent copies) refuses a contained loop: read as empty, it would have left Codex on
/// OpenAI's default provider, with that host allowed. Found by a review.
#[test]
#[cfg(target_os = "linux")]
fn issue_35_a_codex_config_that_cannot_be_read_refuses_the_loop() {
    let env = TestEnv::new();
    for config in [
        "model_provider = [unclosed".to_owned(),
        "#".repeat(2 * 1024 * 1024),
    ] {
        let home = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(home.path().join(".codex")).unwrap();
        std::fs::write(home.path().join(".codex/config.toml"), &config).unwrap();
        let out = env
            .bin(&[
                "loop",
                "--sandbox",
                "--agent",
                "codex",
                "--agent-bin",
                "/bin/true",
                "ralph",
                "Work",
            ])
            .env("HOME", home.path())
            .failure();
        assert!(
            out.stderr.contains("config.toml could not be read"),
            "{out}"
        );
        assert!(!out.stderr.contains("api.openai.com"), "{out}");
        assert!(
            !env.exists(".claude/pagent-pipeline.json"),
            "{}",
            env.dump()
        );
    }
}

/// A hangup (the terminal closed, an SSH session lost) stops `pagent loop` as Ctrl-C does:
/// the agent stopped, the state saved, exit 130, so a contained loop's private folders (a
/// Codex's copy of its credentials) go with it; the default action ended pagent there and
/// then. Under `nohup`, which ignores the hangup, the loop runs on. Found by a review.
#[test]
#[cfg(target_os = "linux")]
fn issue_35_a_hangup_stops_a_loop_as_ctrl_c_does_unless_nohup_ignored_it() {
    use std::io::{BufRead, BufReader};
    let env = TestEnv::new();
    env.write("agent.sh", "cat > /dev/null\nsleep 30\n");
    let args = [
        "loop",
        "--json",
        "--command",
        "sh agent.sh",
        "ralph",
        "Task",
    ];
    let started = |mut command: std::process::Command| {
        let mut child = command
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
        assert!(lines.any(|l| l.unwrap().contains("iteration_started")));
        (child, lines)
    };
    let mut plain = env.bin(&args).command();
    pagent_door::testing::with_default_hangup(&mut plain);
    let (mut child, _lines) = started(plain);
    let pid = i32::try_from(child.id()).unwrap();
    pagent_door::testing::signal(pid, pagent_door::testing::SIGHUP);
    assert_eq!(child.wait().unwrap().code(), Some(130));
    assert_eq!(env.status()["status"], "active");

    let inner = env.bin(&["--force"]).command();
    let mut nohup = std::process::Command::new("nohup");
    nohup.arg(inner.get_program()).args(args).arg("--force");
    nohup.current_dir(inner.get_current_dir().unwrap());
    nohup
        .env_clear()
        .envs(inner.get_envs().filter_map(|(k, v)| Some((k, v?))));
    let (mut child, _lines) = started(nohup);
    let pid = i32::try_from(child.id()).unwrap();
    pagent_door::testing::signal(pid, pagent_door::testing::SIGHUP);
    std::thread::sleep(std::time::Duration::from_millis(500));
    assert!(
        child.try_wait().unwrap().is_none(),
        "nohup's loop stopped on a hangup"
    );
    pagent_door::testing::signal(pid, pagent_door::testing::SIGTERM);
    assert_eq!(child.wait().unwrap().code(), Some(130));
}

/// Without bubblewrap, a contained Codex loop refuses to start, naming what to install.
#[test]
#[cfg(target_os = "linux")]
fn issue_35_without_bubblewrap_a_contained_codex_refuses_naming_what_to_install() {
    let env = TestEnv::new();
    let bin = path_without_bwrap(&env);
    let out = env
        .bin(&[
            "loop",
            "--sandbox",
            "--agent",
            "codex",
            "--agent-bin",
            "/bin/true",
            "ralph",
            "Work",
        ])
        .env("PATH", &bin)
        .failure();
    insta::assert_snapshot!("issue_35_without_bubblewrap", out.stderr);
    assert!(
        !env.exists(".claude/pagent-pipeline.json"),
        "{}",
        env.dump()
    );
}

#[test]
#[cfg(target_os = "linux")]
fn issue_35_status_and_the_overview_say_a_loop_is_contained() {
    let env = TestEnv::new();
    env.write(
        "agent.sh",
        "cat > /dev/null\nwhile [ ! -f go ]; do sleep 0.05; done\necho '<promise>DONE</promise>'\n",
    );
    let mut child = env
        .bin(&[
            "loop",
            "--json",
            "--sandbox",
            "--command",
            "sh agent.sh",
            "ralph",
            "Task",
        ])
        .command()
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = std::io::BufRead::lines(std::io::BufReader::new(child.stdout.take().unwrap()));
    for line in lines.by_ref() {
        let event: serde_json::Value = serde_json::from_str(&line.unwrap()).unwrap();
        if event["event"] == "iteration_started" {
            break;
        }
    }
    let human = env.cmd(&["status"]).success().stdout;
    let json = env.status();
    let all = env.cmd(&["status", "--all"]).success().stdout;
    let rows: serde_json::Value =
        serde_json::from_str(&env.cmd(&["status", "--all", "--json"]).success().stdout).unwrap();
    env.write("go", "");
    lines.for_each(drop);
    assert_eq!(child.wait().unwrap().code(), Some(0));
    let mut filters = crate::util::snapshot::filters();
    filters.push((r"waiting \d+s", "waiting [T]"));
    // Whether a run's log exists yet when status looks is a race: the logs line has its
    // own snapshots (status::status_shows_what_a_loops_logs_take_and_their_cap).
    filters.push((r"(?m)^logs: .*$", "logs: [LOGS]"));
    insta::with_settings!({filters => filters}, {
        insta::assert_snapshot!("issue_35_status_contained", format!("{human}---\n{all}"));
    });
    assert_eq!(json["contained"], true, "{json}");
    assert_eq!(rows[0]["contained"], true, "{rows}");
    assert_eq!(env.state()["contained"], true);
}

/// The project a repository on `main` with one commit, and `tasks.txt` one task, `beta`.
#[cfg(target_os = "linux")]
fn repository_with_task_beta(env: &TestEnv) {
    for args in [
        ["symbolic-ref", "HEAD", "refs/heads/main"].as_slice(),
        &["config", "user.name", "Tess"],
        &["config", "user.email", "tess@example.com"],
        &["config", "commit.gpgsign", "false"],
    ] {
        crate::git::git(&env.root, args);
    }
    env.write("shared.txt", "one\n");
    crate::git::git(&env.root, &["add", "shared.txt"]);
    crate::git::git(&env.root, &["commit", "-q", "-m", "init"]);
    env.write("tasks.txt", "beta: do beta\n");
}

/// `pagent parallel --agent codex --sandbox`: each task's loop contains its Codex the way
/// `pagent loop` does (the same code), and says so.
#[test]
#[cfg(target_os = "linux")]
fn issue_35_parallel_runs_each_codex_contained() {
    let env = TestEnv::new();
    repository_with_task_beta(&env);
    let codex = codex_stand_in(&env);
    let out = env
        .bin(&[
            "parallel",
            "tasks.txt",
            "--agent",
            "codex",
            "--agent-bin",
            codex.to_str().unwrap(),
            "--sandbox",
            "--json",
        ])
        .success();
    let tree = env.root.join(".pagent/worktrees/beta");
    let seen = std::fs::read_to_string(tree.join("seen.txt")).unwrap();
    assert!(
        seen.starts_with("args: exec --json --sandbox danger-full-access -\nhome: "),
        "{seen}\n{out}"
    );
    assert!(seen.ends_with("/home/.codex\n"), "{seen}");
    let rows: serde_json::Value =
        serde_json::from_str(&env.cmd(&["status", "--all", "--json"]).success().stdout).unwrap();
    assert_eq!(rows[0]["contained"], true, "{rows}");
}

#[test]
#[cfg(target_os = "linux")]
fn issue_35_parallel_runs_each_loop_contained_and_the_agents_commit_lands() {
    let env = TestEnv::new();
    repository_with_task_beta(&env);
    std::fs::write(
        env.home.join(".netrc"),
        "machine example.com password hunter2\n",
    )
    .unwrap();
    // Outside HOME and /tmp, which the sandbox hides: a program of the user's.
    let (_kept, programs) = other_project();
    let agent = programs.join("agent.sh");
    std::fs::write(
        &agent,
        "cat > /dev/null\necho beta > beta.txt\nls -A \"$HOME\" > home.txt\n\
         git add beta.txt && git commit -qm 'beta by the agent'\necho '<promise>DONE</promise>'\n",
    )
    .unwrap();
    let line = format!("sh {}", agent.display());
    let out = env
        .bin(&[
            "parallel",
            "tasks.txt",
            "--command",
            &line,
            "--sandbox",
            "--json",
        ])
        .success();
    let tree = env.root.join(".pagent/worktrees/beta");
    assert_eq!(
        std::fs::read_to_string(tree.join("home.txt")).unwrap(),
        "",
        "{out}"
    );
    let repo = git2::Repository::open(&env.root).unwrap();
    let tip = repo
        .revparse_single("pagent/beta")
        .unwrap()
        .peel_to_commit()
        .unwrap();
    let agents = tip.parent(0).unwrap();
    assert_eq!(agents.message(), Some("beta by the agent\n"), "{out}");
    let rows: serde_json::Value =
        serde_json::from_str(&env.cmd(&["status", "--all", "--json"]).success().stdout).unwrap();
    assert_eq!(rows[0]["contained"], true, "{rows}");
}

#[test]
#[cfg(target_os = "linux")]
fn issue_35_a_project_that_is_home_itself_is_refused_rather_than_exposed() {
    let env = TestEnv::new();
    let out = env
        .bin(&[
            "loop",
            "--sandbox",
            "--command",
            "sh agent.sh",
            "ralph",
            "Work",
        ])
        .env("HOME", &env.root)
        .failure();
    insta::with_settings!({filters => crate::util::snapshot::filters()}, {
        insta::assert_snapshot!("issue_35_project_is_home", out.stderr);
    });
    assert!(
        !env.exists(".claude/pagent-pipeline.json"),
        "{}",
        env.dump()
    );
}

/// What a sandboxed loop refuses before it starts: a Claude Code argument that would let
/// its commands out of the sandbox or replace its settings, and `--allow-host` for an agent
/// whose sandbox has no network at all.
#[test]
fn issue_35_a_sandboxed_loop_refuses_what_would_let_its_agent_out() {
    let env = TestEnv::new();
    let claude = |extra: &[&str]| {
        let mut args = vec!["loop", "--sandbox", "--agent-bin", "/bin/true"];
        args.extend_from_slice(extra);
        args.extend(["ralph", "Work"]);
        env.bin(&args).failure().stderr
    };
    let mut said = String::new();
    said.push_str(&claude(&["--permission-mode", "bypassPermissions"]));
    said.push_str(&claude(&["--agent-arg=--settings", "--agent-arg={}"]));
    said.push_str(&claude(&["--agent-arg=--dangerously-skip-permissions"]));
    // Codex's own sandbox, which cannot start inside pagent's.
    said.push_str(&claude(&[
        "--agent",
        "codex",
        "--agent-arg=--sandbox=workspace-write",
    ]));
    said.push_str(&claude(&[
        "--agent",
        "codex",
        "--agent-arg=-sworkspace-write",
    ]));
    said.push_str(
        &env.bin(&[
            "loop",
            "--sandbox",
            "--agent-bin",
            "/bin/true",
            "--allow-host",
            "localhost:8080",
            "ralph",
            "Work",
        ])
        .failure()
        .stderr,
    );
    said.push_str(
        &env.bin(&[
            "loop",
            "--sandbox",
            "--allow-host",
            "a b;c",
            "--command",
            "true",
            "ralph",
            "Work",
        ])
        .failure()
        .stderr,
    );
    insta::assert_snapshot!("issue_35_sandboxed_loop_refusals", said);
    assert!(
        !env.exists(".claude/pagent-pipeline.json"),
        "{}",
        env.dump()
    );
}

/// Claude Code's sandbox needs socat on Linux (its network proxy): without it the loop
/// refuses to start, naming what to install, rather than let Claude Code decide.
#[test]
#[cfg(target_os = "linux")]
fn issue_35_sandboxed_claude_without_socat_refuses_naming_it() {
    let env = TestEnv::new();
    let bin = path_with(&env, &["sh", "git", "bwrap", "true"]);
    let out = env
        .bin(&[
            "loop",
            "--sandbox",
            "--agent-bin",
            "/bin/true",
            "ralph",
            "Work",
        ])
        .env("PATH", &bin)
        .failure();
    insta::assert_snapshot!("issue_35_claude_without_socat", out.stderr);
    assert!(
        !env.exists(".claude/pagent-pipeline.json"),
        "{}",
        env.dump()
    );
}

#[test]
#[cfg(target_os = "linux")]
fn issue_35_parallel_without_bubblewrap_refuses_before_any_worktree() {
    let env = TestEnv::new();
    env.write("tasks.txt", "beta: do beta\n");
    let bin = path_without_bwrap(&env);
    let out = env
        .bin(&[
            "parallel",
            "tasks.txt",
            "--command",
            "sh agent.sh",
            "--sandbox",
        ])
        .env("PATH", &bin)
        .failure();
    insta::assert_snapshot!("issue_35_parallel_without_bubblewrap", out.stderr);
    assert!(!env.exists(".pagent/worktrees"), "{}", env.dump());
}

#[test]
#[cfg(not(target_os = "linux"))]
fn issue_35_off_linux_sandbox_refuses_naming_the_platform() {
    let env = TestEnv::new();
    let out = env
        .bin(&[
            "loop",
            "--sandbox",
            "--command",
            "sh agent.sh",
            "ralph",
            "Work",
        ])
        .failure();
    assert_eq!(
        out.stderr,
        "pagent: error: --sandbox runs the agent inside bubblewrap, which only Linux has: on \
         this system, run without --sandbox\n"
    );
    assert!(
        !env.exists(".claude/pagent-pipeline.json"),
        "{}",
        env.dump()
    );
}

/// Processes on this machine whose command line holds `word`.
#[cfg(target_os = "linux")]
fn processes_with(word: &str) -> Vec<String> {
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| std::fs::read(e.path().join("cmdline")).ok())
        .map(|c| String::from_utf8_lossy(&c).replace('\0', " "))
        .filter(|c| c.contains(word))
        .collect()
}

#[test]
#[cfg(target_os = "linux")]
fn issue_35_the_iteration_timeout_stops_a_contained_agent_and_all_it_started() {
    let env = TestEnv::new();
    // A duration no other process on the machine sleeps for.
    let word = format!("{}.35", 100_000 + std::process::id());
    env.write(
        "agent.sh",
        &format!("cat > /dev/null\nsleep {word} &\nsetsid sleep {word} &\nsleep {word}\n"),
    );
    env.bin(&[
        "loop",
        "--sandbox",
        "--command",
        "sh agent.sh",
        "--iteration-timeout",
        "2s",
        "--retries",
        "0",
        "ralph",
        "--max-iterations",
        "1",
        "Work",
    ])
    .run();
    wait_for(Duration::from_secs(10), "the agent's sleeps end", || {
        processes_with(&word).is_empty()
    });
}

/// The loop's check, attacking like the agent: it reads the key, writes `~/.bashrc` and
/// another project's folder, each outcome said in its output, then runs the project's
/// tests (which pass once the agent has done its work, `work.txt`).
#[cfg(target_os = "linux")]
fn attacking_check(env: &TestEnv, outside: &Path) -> String {
    env.write("test.sh", "grep -q work work.txt && echo TESTS PASS\n");
    env.write(
        "check.sh",
        &format!(
            "exec 2>&1\n\
             cat \"$HOME/.ssh/id_ed25519\" && echo READ key || echo REFUSED key\n\
             echo pwned >> \"$HOME/.bashrc\" && echo WROTE bashrc || echo REFUSED bashrc\n\
             echo pwned > '{outside}/pwned' && echo WROTE outside || echo REFUSED outside\n\
             sh test.sh\n",
            outside = outside.display()
        ),
    );
    std::fs::create_dir_all(env.home.join(".ssh")).unwrap();
    std::fs::write(env.home.join(".ssh/id_ed25519"), "PRIVATE-KEY-35\n").unwrap();
    // One story (spec-kit's tasks.md), done once the checks pass.
    env.write("tasks.md", "- [ ] T001 Write work.txt\n");
    "sh check.sh".to_owned()
}

/// What an agent does each run: keeps its prompt (`prompt-N.txt`), does the work on its
/// second run, and makes the promise each time.
#[cfg(target_os = "linux")]
const KEEPS_ITS_PROMPTS: &str = "n=$(cat .runs 2>/dev/null || echo 0); n=$((n+1)); echo $n > .runs\n\
     cat > prompt-$n.txt\n\
     if [ $n -ge 2 ]; then echo work > work.txt; fi\n";

/// The check's every attack was refused, its refusals reached the second iteration's
/// prompt, its real work (the project's tests) passed, and the loop completed.
#[cfg(target_os = "linux")]
fn assert_the_check_was_contained(env: &TestEnv, outside: &Path) {
    let second = env.read("prompt-2.txt");
    for refused in ["key", "bashrc", "outside"] {
        assert!(
            second.contains(&format!("REFUSED {refused}")),
            "{refused}:\n{second}"
        );
    }
    assert!(!second.contains("PRIVATE-KEY-35"), "{second}");
    assert!(!env.home.join(".bashrc").exists());
    assert!(!outside.join("pwned").exists());
    assert_eq!(env.state()["status"], "complete", "{}", env.dump());
    assert_eq!(env.state()["iterations"], serde_json::json!([2]));
}

#[test]
#[cfg(target_os = "linux")]
fn issue_35_a_contained_command_agents_check_is_refused_each_attack_while_its_tests_pass() {
    let env = TestEnv::new();
    let (_kept, outside) = other_project();
    let check = attacking_check(&env, &outside);
    env.write(
        "agent.sh",
        &format!("{KEEPS_ITS_PROMPTS}printf 'Done.\\n<promise>STORY DONE</promise>\\n'\n"),
    );
    let out = env
        .bin(&[
            "loop",
            "--sandbox",
            "--command",
            "sh agent.sh",
            "--check",
            &check,
            "--stories",
            "tasks.md",
        ])
        .success();
    insta::assert_snapshot!(
        "issue_35_command_agents_checks_contained",
        contained_line(&out.stdout)
    );
    assert_the_check_was_contained(&env, &outside);
}

/// The line a contained loop starts with, saying what runs contained.
#[cfg(target_os = "linux")]
fn contained_line(stdout: &str) -> String {
    stdout
        .lines()
        .find(|l| l.contains("contained"))
        .unwrap_or_else(|| panic!("{stdout}"))
        .to_owned()
}

#[test]
#[cfg(target_os = "linux")]
fn issue_35_a_contained_claude_agents_check_is_refused_each_attack_while_its_tests_pass() {
    let env = TestEnv::new();
    let (_kept, outside) = other_project();
    let check = attacking_check(&env, &outside);
    let claude = env.fake_tool(
        "bin",
        "claude",
        &format!(
            "{KEEPS_ITS_PROMPTS}\
             echo '{{\"type\":\"system\",\"subtype\":\"init\",\"session_id\":\"s\",\"model\":\"claude-sonnet-4-5\"}}'\n\
             printf '%s\\n' '{{\"type\":\"result\",\"subtype\":\"success\",\"is_error\":false,\"num_turns\":1,\"result\":\"Done.\\n<promise>STORY DONE</promise>\",\"session_id\":\"s\"}}'"
        ),
    );
    let claude = claude.join("claude").display().to_string();
    let out = env
        .bin(&[
            "loop",
            "--sandbox",
            "--agent-bin",
            &claude,
            "--check",
            &check,
            "--stories",
            "tasks.md",
        ])
        .success();
    insta::assert_snapshot!(
        "issue_35_claude_agents_checks_contained",
        contained_line(&out.stdout)
    );
    assert_the_check_was_contained(&env, &outside);
}

/// Without `--sandbox` the same check runs as it always did: as the user, everywhere.
#[test]
#[cfg(target_os = "linux")]
fn issue_35_an_uncontained_loops_check_is_unchanged() {
    let env = TestEnv::new();
    let (_kept, outside) = other_project();
    let check = attacking_check(&env, &outside);
    env.write(
        "agent.sh",
        &format!("{KEEPS_ITS_PROMPTS}printf 'Done.\\n<promise>STORY DONE</promise>\\n'\n"),
    );
    env.bin(&[
        "loop",
        "--command",
        "sh agent.sh",
        "--check",
        &check,
        "--stories",
        "tasks.md",
    ])
    .success();
    let second = env.read("prompt-2.txt");
    for done in [
        "READ key",
        "WROTE bashrc",
        "WROTE outside",
        "PRIVATE-KEY-35",
    ] {
        assert!(second.contains(done), "{done}:\n{second}");
    }
    assert!(outside.join("pwned").exists());
    assert_eq!(env.state()["status"], "complete", "{}", env.dump());
}

/// A reviewer command (`--reviewer-command`) of a contained loop runs inside the loop's
/// walls: its attacks are refused, and the verdict that names the refusals reaches the
/// next iteration's prompt; its second review agrees and the loop completes.
#[test]
#[cfg(target_os = "linux")]
fn issue_35_a_contained_loops_reviewer_command_is_refused_each_attack() {
    let env = TestEnv::new();
    let (_kept, outside) = other_project();
    std::fs::create_dir_all(env.home.join(".ssh")).unwrap();
    std::fs::write(env.home.join(".ssh/id_ed25519"), "PRIVATE-KEY-35\n").unwrap();
    env.write(
        "agent.sh",
        &format!("{KEEPS_ITS_PROMPTS}printf 'Done.\\n<promise>DONE</promise>\\n'\n"),
    );
    env.write(
        "review.sh",
        &format!(
            "cat > /dev/null\n\
             k=$(cat \"$HOME/.ssh/id_ed25519\" 2>/dev/null && echo READ key || echo REFUSED key)\n\
             b=$( (echo pwned >> \"$HOME/.bashrc\") 2>/dev/null && echo WROTE bashrc || echo REFUSED bashrc)\n\
             o=$( (echo pwned > '{outside}/pwned') 2>/dev/null && echo WROTE outside || echo REFUSED outside)\n\
             if [ -e .reviewed ]; then echo '{{\"met\": true}}'; else touch .reviewed; \
             echo \"{{\\\"met\\\": false, \\\"missing\\\": [\\\"$k\\\", \\\"$b\\\", \\\"$o\\\"]}}\"; fi\n",
            outside = outside.display()
        ),
    );
    env.bin(&[
        "loop",
        "--sandbox",
        "--command",
        "sh agent.sh",
        "ralph",
        "--review",
        "The work is done",
        "--reviewer-command",
        "sh review.sh",
        "Work",
    ])
    .success();
    let second = env.read("prompt-2.txt");
    for refused in ["key", "bashrc", "outside"] {
        assert!(
            second.contains(&format!("REFUSED {refused}")),
            "{refused}:\n{second}"
        );
    }
    assert!(!second.contains("PRIVATE-KEY-35"), "{second}");
    assert!(!env.home.join(".bashrc").exists());
    assert!(!outside.join("pwned").exists());
    assert_eq!(env.state()["status"], "complete", "{}", env.dump());
    assert_eq!(env.state()["iterations"], serde_json::json!([2]));
}

/// A contained loop refuses a Codex or OpenCode reviewer (not contained yet) before it
/// starts, in one sentence, and sets nothing up.
#[test]
#[cfg(target_os = "linux")]
fn issue_35_a_contained_loop_refuses_a_codex_or_opencode_reviewer() {
    let env = TestEnv::new();
    let mut said = String::new();
    for reviewer in ["codex", "opencode"] {
        let out = env
            .bin(&[
                "loop",
                "--sandbox",
                "--command",
                "cat",
                "ralph",
                "--review",
                "The work is done",
                "--reviewer",
                reviewer,
                "Work",
            ])
            .failure();
        said.push_str(&out.stderr);
    }
    insta::assert_snapshot!("issue_35_sandbox_refuses_reviewer_clis", said);
    assert!(
        !env.exists(".claude/pagent-pipeline.json"),
        "{}",
        env.dump()
    );
}

/// The agent of a contained `pagent parallel --merge`: tasks `alpha` and `gamma` change
/// the same line; a resolution (its prompt says so) attacks (the key, `~/.bashrc`, another
/// project, the user's checkout outside its worktree), each outcome kept in
/// `attempts.txt`, then keeps both sides and commits the merge.
#[cfg(target_os = "linux")]
fn resolving_attacker(outside: &Path) -> String {
    format!(
        "prompt=$(cat)\n\
         if printf '%s' \"$prompt\" | grep -q '^# Merge: resolve the conflicts'; then\n\
           {{ cat \"$HOME/.ssh/id_ed25519\" && echo READ key || echo REFUSED key; }} > attempts.txt 2>&1\n\
           (echo pwned >> \"$HOME/.bashrc\") 2>/dev/null && echo WROTE bashrc >> attempts.txt || echo REFUSED bashrc >> attempts.txt\n\
           (echo pwned > '{outside}/pwned') 2>/dev/null && echo WROTE outside >> attempts.txt || echo REFUSED outside >> attempts.txt\n\
           echo pwned >> ../../../shared.txt 2>/dev/null\n\
           sed -i -e '/^<<<<<<< /d' -e '/^=======$/d' -e '/^>>>>>>> /d' shared.txt\n\
           git add -A && git commit -q --no-edit && echo resolved; exit 0\n\
         fi\n\
         case \"$(printf '%s' \"$prompt\" | tail -n 1)\" in\n\
           *alpha*) sed -i 's/^two$/two by alpha/' shared.txt ;;\n\
           *gamma*) sed -i 's/^two$/two by gamma/' shared.txt ;;\n\
         esac\n\
         echo '<promise>DONE</promise>'\n",
        outside = outside.display()
    )
}

/// `pagent parallel --merge --sandbox`: the agent that resolves a conflict runs inside
/// the same walls as the tasks' agents (its child loop carries `--sandbox`): each attack
/// is refused, its resolution lands on main, and the user's checkout is untouched.
#[test]
#[cfg(target_os = "linux")]
fn issue_35_a_contained_runs_merge_resolution_is_refused_each_attack_while_it_lands() {
    let env = TestEnv::new();
    for args in [
        ["symbolic-ref", "HEAD", "refs/heads/main"].as_slice(),
        &["config", "user.name", "Tess"],
        &["config", "user.email", "tess@example.com"],
        &["config", "commit.gpgsign", "false"],
    ] {
        crate::git::git(&env.root, args);
    }
    env.write("shared.txt", "one\ntwo\nthree\n");
    crate::git::git(&env.root, &["add", "shared.txt"]);
    crate::git::git(&env.root, &["commit", "-q", "-m", "init"]);
    env.write("tasks.txt", "alpha: do alpha\ngamma: do gamma\n");
    std::fs::create_dir_all(env.home.join(".ssh")).unwrap();
    std::fs::write(env.home.join(".ssh/id_ed25519"), "PRIVATE-KEY-35\n").unwrap();
    // Outside HOME and /tmp, which the sandbox hides: the agent's program, and another
    // project of the user's.
    let (_kept, programs) = other_project();
    let (_kept_too, outside) = other_project();
    let agent = programs.join("agent.sh");
    std::fs::write(&agent, resolving_attacker(&outside)).unwrap();
    let line = format!("sh {}", agent.display());
    let out = env
        .bin(&[
            "parallel",
            "tasks.txt",
            "--command",
            &line,
            "--sandbox",
            "-j",
            "1",
            "--merge",
        ])
        .success();
    let repo = git2::Repository::open(&env.root).unwrap();
    let main = repo
        .revparse_single("main")
        .unwrap()
        .peel_to_commit()
        .unwrap();
    let attempts = main
        .tree()
        .unwrap()
        .get_path(Path::new("attempts.txt"))
        .unwrap_or_else(|_| panic!("no resolution landed: {out}"))
        .to_object(&repo)
        .unwrap();
    let attempts = String::from_utf8_lossy(attempts.as_blob().unwrap().content()).into_owned();
    for refused in ["key", "bashrc", "outside"] {
        assert!(
            attempts.contains(&format!("REFUSED {refused}")),
            "{refused}:\n{attempts}"
        );
    }
    assert!(!attempts.contains("PRIVATE-KEY-35"), "{attempts}");
    assert!(!env.home.join(".bashrc").exists());
    assert!(!outside.join("pwned").exists());
    // The user's checkout outside the worktree is untouched (this test's project is under
    // /tmp, so the write went to the sandbox's private /tmp; elsewhere it is refused), and
    // the merge landed in it.
    assert_eq!(
        env.read("shared.txt"),
        "one\ntwo by gamma\ntwo by alpha\nthree\n",
        "{out}"
    );
}

/// A server on loopback the test runs: answers every request `ALLOWED-35` and counts the
/// connections it accepted.
#[cfg(target_os = "linux")]
fn counting_server() -> (u16, std::sync::Arc<std::sync::atomic::AtomicUsize>) {
    use std::io::{Read, Write};
    let server = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = server.local_addr().unwrap().port();
    let count = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let seen = std::sync::Arc::clone(&count);
    std::thread::spawn(move || {
        for conn in server.incoming() {
            let Ok(mut conn) = conn else { continue };
            seen.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            let mut head = Vec::new();
            let mut byte = [0u8; 1];
            while !head.ends_with(b"\r\n\r\n") && conn.read(&mut byte).unwrap_or(0) == 1 {
                head.push(byte[0]);
            }
            let _ = conn.write_all(
                b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\nConnection: close\r\n\r\nALLOWED-35",
            );
        }
    });
    (port, count)
}

/// The probe a contained agent (and its check) runs: the allowed server through the
/// proxy, the other one through the proxy, the allowed one directly; with `all`, also a
/// request head too large and one too slow, straight to the proxy.
#[cfg(target_os = "linux")]
const PROBE: &str = r#"import os, socket, sys, urllib.request, urllib.error
allowed, denied = sys.argv[1], sys.argv[2]
def get(port):
    try:
        body = urllib.request.urlopen("http://localhost:%s/" % port, timeout=10).read().decode()
        return "REACHED " + body
    except urllib.error.HTTPError as e:
        return "REFUSED %s %s" % (e.code, e.read().decode().strip())
    except Exception as e:
        return "FAILED %s" % e
print("allowed:", get(allowed))
print("denied:", get(denied))
try:
    socket.create_connection(("127.0.0.1", int(allowed)), 3)
    print("direct: REACHED")
except OSError as e:
    print("direct: REFUSED", e)
if sys.argv[3:] == ["all"]:
    host, port = os.environ["HTTP_PROXY"].rsplit("/", 1)[1].split(":")
    def raw(data, wait):
        s = socket.create_connection((host, int(port)), 3)
        s.sendall(data)
        s.settimeout(wait)
        try:
            return s.recv(65536).decode(errors="replace")
        except Exception as e:
            return "no answer: %s" % e
    big = ("GET http://localhost:%s/ HTTP/1.1\r\nX-Big: %s\r\n\r\n" % (allowed, "a" * 40000)).encode()
    print("oversized:", raw(big, 10).splitlines()[0], raw(big, 10).splitlines()[-1])
    slow = raw(("GET http://localhost:%s/ HTTP/1.1\r\n" % allowed).encode(), 30)
    print("slow:", slow.splitlines()[0], slow.splitlines()[-1])
"#;

/// Issue 35: a contained `--command` agent's network is pagent's proxy for the
/// `--allow-host` hosts: the allowed server on loopback (allowed by `localhost:PORT`) is
/// reached, another server on loopback is refused with a 403 that says how to allow it,
/// a direct connection reaches nothing, and a request head too large or too slow is
/// refused; the check (inside the same walls) reaches the same hosts, and its refusal
/// reaches the next iteration's prompt.
#[test]
#[cfg(target_os = "linux")]
fn issue_35_a_contained_command_agent_reaches_only_its_allowed_hosts_through_pagents_proxy() {
    let env = TestEnv::new();
    let (allowed, allowed_count) = counting_server();
    let (denied, denied_count) = counting_server();
    env.write("probe.py", PROBE);
    env.write(
        "agent.sh",
        &format!(
            "{KEEPS_ITS_PROMPTS}if [ $n -eq 1 ]; then python3 probe.py {allowed} {denied} all \
             > agent-probe.txt 2>&1; fi\nprintf 'Done.\\n<promise>STORY DONE</promise>\\n'\n"
        ),
    );
    env.write("tasks.md", "- [ ] T001 Write work.txt\n");
    let check = format!("python3 probe.py {allowed} {denied} && test -f work.txt");
    let host = format!("localhost:{allowed}");
    let out = env
        .bin(&[
            "loop",
            "--sandbox",
            "--allow-host",
            &host,
            "--command",
            "sh agent.sh",
            "--check",
            &check,
            "--stories",
            "tasks.md",
        ])
        .success();
    let said = contained_line(&out.stdout).replace(&allowed.to_string(), "[PORT]");
    insta::assert_snapshot!("issue_35_command_agent_with_allowed_hosts", said);
    let probe = env.read("agent-probe.txt");
    let refusal = format!(
        "pagent's sandbox refused localhost:{denied}: it is not an allowed host; --allow-host \
         localhost:{denied} allows it"
    );
    for outcome in [
        "allowed: REACHED ALLOWED-35".to_owned(),
        format!("denied: REFUSED 403 {refusal}"),
        "direct: REFUSED".to_owned(),
        "oversized: HTTP/1.1 431 Request Header Fields Too Large pagent's sandbox proxy refused \
         a request whose head is over 16 KiB"
            .to_owned(),
        "slow: HTTP/1.1 408 Request Timeout pagent's sandbox proxy closed a request whose head \
         did not arrive within 10 seconds"
            .to_owned(),
    ] {
        assert!(probe.contains(&outcome), "{outcome}:\n{probe}");
    }
    let second = env.read("prompt-2.txt");
    assert!(second.contains(&refusal), "{second}");
    assert!(second.contains("allowed: REACHED ALLOWED-35"), "{second}");
    assert_eq!(
        denied_count.load(std::sync::atomic::Ordering::SeqCst),
        0,
        "the agent reached the server it was not allowed"
    );
    // The agent once, its check on both iterations.
    assert_eq!(allowed_count.load(std::sync::atomic::Ordering::SeqCst), 3);
    assert_eq!(env.state()["status"], "complete", "{}", env.dump());
}

/// What a contained agent of the next test runs: in its first iteration, as many tunnels
/// as the proxy serves at once to a server that never answers, each waited for until
/// its `200`, then it ends without closing them; in its second, a GET of the counting
/// server.
#[cfg(target_os = "linux")]
const TUNNELS: &str = r#"import os, socket, sys, urllib.request, urllib.error
n, silent, counting, many = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
if n == "1":
    host, port = os.environ["HTTP_PROXY"].rsplit("/", 1)[1].split(":")
    held = []
    for _ in range(many):
        s = socket.create_connection((host, int(port)), 10)
        s.sendall(("CONNECT localhost:%s HTTP/1.1\r\n\r\n" % silent).encode())
        answer = b""
        while not answer.endswith(b"\r\n\r\n"):
            answer += s.recv(1)
        held.append((s, answer.split(b"\r\n")[0].decode()))
    print("tunnels:", sum(" 200 " in line for _, line in held))
else:
    try:
        body = urllib.request.urlopen("http://localhost:%s/" % counting, timeout=10).read()
        print("second: REACHED", body.decode())
    except urllib.error.HTTPError as e:
        print("second: REFUSED", e.code, e.read().decode().strip())
    except Exception as e:
        print("second: FAILED", e)
"#;

/// Review M1 of issue 35: the tunnels a contained agent left open end with its sandbox:
/// an agent that opened as many as the proxy serves at once (to a server that never
/// answers) and ended does not leave the next iteration's agent refused as busy.
#[test]
#[cfg(target_os = "linux")]
fn issue_35_a_contained_agents_tunnels_end_with_its_sandbox() {
    use pagent_door::process::proxy::MAX_CONNECTIONS;
    let env = TestEnv::new();
    let silent = TcpListener::bind("127.0.0.1:0").unwrap();
    let silent_port = silent.local_addr().unwrap().port();
    std::thread::spawn(move || {
        let mut held = Vec::new();
        for conn in silent.incoming().flatten() {
            held.push(conn);
        }
    });
    let (counting, count) = counting_server();
    env.write("tunnels.py", TUNNELS);
    env.write(
        "agent.sh",
        &format!(
            "{KEEPS_ITS_PROMPTS}python3 tunnels.py $n {silent_port} {counting} \
             {MAX_CONNECTIONS} > agent-$n.txt 2>&1\n\
             printf 'Done.\\n<promise>STORY DONE</promise>\\n'\n"
        ),
    );
    env.write("tasks.md", "- [ ] T001 Write work.txt\n");
    let (silent_host, counting_host) = (
        format!("localhost:{silent_port}"),
        format!("localhost:{counting}"),
    );
    env.bin(&[
        "loop",
        "--sandbox",
        "--allow-host",
        &silent_host,
        "--allow-host",
        &counting_host,
        "--command",
        "sh agent.sh",
        "--check",
        "test -f work.txt",
        "--stories",
        "tasks.md",
    ])
    .success();
    let first = env.read("agent-1.txt");
    assert_eq!(
        first.trim(),
        format!("tunnels: {MAX_CONNECTIONS}"),
        "{first}"
    );
    let second = env.read("agent-2.txt");
    assert_eq!(second.trim(), "second: REACHED ALLOWED-35", "{second}");
    assert_eq!(count.load(std::sync::atomic::Ordering::SeqCst), 1);
    assert_eq!(env.state()["status"], "complete", "{}", env.dump());
}

/// `command` (a `pagent` command a test built) started from the binary `program`, its
/// output piped.
#[cfg(target_os = "linux")]
fn spawn_as(command: &std::process::Command, program: &Path) -> std::process::Child {
    let mut spawned = std::process::Command::new(program);
    spawned.args(command.get_args());
    spawned.current_dir(command.get_current_dir().unwrap());
    for (key, value) in command.get_envs() {
        match value {
            Some(value) => spawned.env(key, value),
            None => spawned.env_remove(key),
        };
    }
    spawned
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap()
}

/// Waits (two minutes at most) until the project holds `file`.
#[cfg(target_os = "linux")]
fn wait_for_file(env: &TestEnv, file: &str) {
    let started = std::time::Instant::now();
    while !env.exists(file) {
        assert!(
            started.elapsed() < Duration::from_secs(120),
            "{}",
            env.dump()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Review M2 of issue 35: a contained loop whose pagent binary is removed while it runs
/// (an uninstall, a package manager's upgrade) keeps its forwarder: the loop runs from a
/// copy of the binary, the copy is removed during the first iteration, and the check
/// that follows and the second iteration (which reaches an allowed host) still start in
/// their walls and the loop completes.
#[test]
#[cfg(target_os = "linux")]
fn issue_35_a_contained_loop_keeps_its_forwarder_when_its_binary_is_removed() {
    let env = TestEnv::new();
    let (bin_dir, bin_path) = other_project();
    let copy = bin_path.join("pagent");
    std::fs::copy(pagent_bin(), &copy).unwrap();
    let (counting, count) = counting_server();
    env.write(
        "agent.sh",
        &format!(
            "{KEEPS_ITS_PROMPTS}if [ $n -eq 1 ]; then touch ready; \
             while [ ! -e go ]; do sleep 0.1; done; else python3 -c \
             'import urllib.request; print(urllib.request.urlopen(\"http://localhost:{counting}/\", \
             timeout=10).read().decode())' > agent-2.txt 2>&1; fi\n\
             printf 'Done.\\n<promise>STORY DONE</promise>\\n'\n"
        ),
    );
    env.write("tasks.md", "- [ ] T001 Write work.txt\n");
    let host = format!("localhost:{counting}");
    let base = env
        .bin(&[
            "loop",
            "--sandbox",
            "--allow-host",
            &host,
            "--command",
            "sh agent.sh",
            "--check",
            "test -f work.txt",
            "--stories",
            "tasks.md",
        ])
        .command();
    let running = spawn_as(&base, &copy);
    wait_for_file(&env, "ready");
    std::fs::remove_file(&copy).unwrap();
    env.write("go", "");
    let out = running.wait_with_output().unwrap();
    let said = format!(
        "{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "{said}\n{}", env.dump());
    assert_eq!(env.read("agent-2.txt").trim(), "ALLOWED-35", "{said}");
    assert_eq!(count.load(std::sync::atomic::Ordering::SeqCst), 1);
    assert_eq!(env.state()["status"], "complete", "{}", env.dump());
    drop(bin_dir);
}

/// Review L4 of issue 35: pagent's process ignores SIGPIPE (Rust's runtime sets it so),
/// which its sandbox proxy depends on: it writes answers to Unix sockets a contained
/// child may have closed, and a SIGPIPE there would end the whole loop. Whoever
/// "restores" SIGPIPE's default in `main` breaks this test.
#[test]
#[cfg(target_os = "linux")]
fn issue_35_a_contained_loops_pagent_ignores_sigpipe_so_a_closed_socket_cannot_end_it() {
    let env = TestEnv::new();
    let (counting, _count) = counting_server();
    env.write(
        "agent.sh",
        "touch ready; while [ ! -e go ]; do sleep 0.1; done\n\
         printf 'Done.\\n<promise>STORY DONE</promise>\\n'\n",
    );
    env.write("tasks.md", "- [ ] T001 Wait\n");
    let host = format!("localhost:{counting}");
    let base = env
        .bin(&[
            "loop",
            "--sandbox",
            "--allow-host",
            &host,
            "--command",
            "sh agent.sh",
            "--stories",
            "tasks.md",
        ])
        .command();
    let running = spawn_as(&base, &pagent_bin());
    wait_for_file(&env, "ready");
    let status = std::fs::read_to_string(format!("/proc/{}/status", running.id())).unwrap();
    env.write("go", "");
    let out = running.wait_with_output().unwrap();
    assert!(out.status.success(), "{}", env.dump());
    let ignored = status
        .lines()
        .find_map(|l| l.strip_prefix("SigIgn:"))
        .map(|mask| u64::from_str_radix(mask.trim(), 16).unwrap())
        .unwrap();
    let sigpipe = 13;
    assert!(ignored & (1 << (sigpipe - 1)) != 0, "{status}");
}
