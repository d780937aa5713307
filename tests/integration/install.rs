//! `pagent install` and `pagent uninstall` against a fake `claude` that keeps the
//! marketplace and plugin lists in files: what they delete, and what they must not.

use std::fs;
use std::path::{Path, PathBuf};

use crate::util::{SESSION, Said, TestEnv, assert_text};

/// A fake `claude` that answers `plugin ... list --json` from files in HOME and records
/// the rest.
fn fake_claude(env: &TestEnv) -> PathBuf {
    env.fake_tool(
        "bin",
        "claude",
        "case \"$*\" in\n\
           'plugin marketplace list --json') cat \"$HOME/marketplaces.json\" 2>/dev/null || echo '[]' ;;\n\
           'plugin list --json') echo '[]' ;;\n\
           'plugin marketplace add '*) printf '[{\"name\":\"pagent\",\"path\":\"%s\"}]' \"$4\" > \"$HOME/marketplaces.json\" ;;\n\
           'plugin marketplace remove pagent') rm -f \"$HOME/marketplaces.json\" ;;\n\
           *) ;;\n\
         esac",
    )
    .join("claude")
}

fn pagent(env: &TestEnv, args: &[&str], marketplace: &Path) -> crate::util::Run {
    let claude = fake_claude(env);
    let mut all = args.to_vec();
    let claude = claude.display().to_string();
    all.extend(["--claude", &claude]);
    if args[0] == "install" {
        all.extend(["--from", env!("CARGO_MANIFEST_DIR")]);
    }
    env.cmd(&all)
        .env("PAGENT_MARKETPLACE_DIR", marketplace)
        .env("CLAUDE_CONFIG_DIR", env.home.join(".claude"))
        .run()
}

/// Finding 6: `pagent uninstall` (and `install` replacing the staged copy) deleted
/// whatever folder `PAGENT_MARKETPLACE_DIR` named, with everything in it. A folder
/// without pagent's marker is now left, and both say so.
#[test]
fn finding_6_a_marketplace_dir_of_the_users_is_never_wiped() {
    let env = TestEnv::new();
    let mine = env.home.join("my-notes");
    fs::create_dir_all(&mine).unwrap();
    fs::write(mine.join("notes.txt"), "years of notes\n").unwrap();

    let install = pagent(&env, &["install"], &mine);
    assert_eq!(install.code, Some(1), "{install}");
    let mut said = Said::new();
    said.say("pagent install (stderr)", &install.stderr);
    let uninstall = pagent(&env, &["uninstall"], &mine);
    assert_eq!(uninstall.code, Some(0), "{uninstall}");
    said.say("pagent uninstall", &uninstall.stdout);
    assert_text!(said.text());
    assert_eq!(
        fs::read_to_string(mine.join("notes.txt")).unwrap(),
        "years of notes\n"
    );
}

/// What pagent staged itself it removes again, marker and all.
#[test]
fn what_install_staged_uninstall_removes() {
    let env = TestEnv::new();
    let staging = env.home.join("staged");
    let install = pagent(&env, &["install", "--no-short-commands"], &staging);
    assert_eq!(install.code, Some(0), "{install}");
    assert!(staging.join(".pagent-owned").is_file());
    assert!(staging.join(".claude-plugin/marketplace.json").is_file());
    let data = env.home.join(".claude/plugins/data/pagent-pagent");
    assert!(data.join(".pagent-owned").is_file() && data.join("bin/pagent").is_file());
    // Installing again over its own staged copy is fine.
    let again = pagent(&env, &["install", "--no-short-commands"], &staging);
    assert_eq!(again.code, Some(0), "{again}");
    let uninstall = pagent(&env, &["uninstall"], &staging);
    assert_eq!(uninstall.code, Some(0), "{uninstall}");
    assert!(!staging.exists(), "{uninstall}");
    assert!(!data.exists(), "{uninstall}");
    assert!(!uninstall.stdout.contains("left "), "{uninstall}");
}

/// A fake `claude` that, like the real one in a fresh HOME, creates its own settings file
/// and a backup of it at its first `plugin install`, and keeps the marketplace list. It
/// refuses to run in any HOME but the test's, since it writes there.
fn claude_that_makes_its_settings(env: &TestEnv) -> PathBuf {
    let guard = format!(
        "[ \"$HOME\" = '{}' ] || {{ echo \"not the test's HOME: $HOME\" >&2; exit 99; }}\n",
        env.home.display()
    );
    env.fake_tool(
        "claude-bin",
        "claude",
        &(guard
            + "case \"$*\" in\n\
           'plugin marketplace list --json') cat \"$HOME/.marketplaces\" 2>/dev/null || echo '[]' ;;\n\
           'plugin list --json') echo '[]' ;;\n\
           'plugin marketplace add '*) printf '[{\"name\":\"pagent\",\"path\":\"%s\"}]' \"$4\" > \"$HOME/.marketplaces\" ;;\n\
           'plugin marketplace remove pagent') rm -f \"$HOME/.marketplaces\" ;;\n\
           'plugin install '*) echo '{\"userID\": \"u\", \"firstStartTime\": \"t\"}' > \"$HOME/.claude.json\"\n\
             /bin/mkdir -p \"$HOME/.claude/backups\"; /bin/cp \"$HOME/.claude.json\" \"$HOME/.claude/backups/.claude.json.backup.1\" ;;\n\
           *) ;;\n\
         esac"),
    )
    .join("claude")
}

/// Every path under HOME, relative, sorted (the fake's own folder left out).
fn home_files(env: &TestEnv) -> Vec<String> {
    let mut out: Vec<String> = walkdir::WalkDir::new(&env.home)
        .min_depth(1)
        .into_iter()
        .flatten()
        .map(|e| {
            e.path()
                .strip_prefix(&env.home)
                .unwrap()
                .display()
                .to_string()
        })
        .filter(|p| !p.starts_with("claude-bin") && !p.starts_with(".marketplaces"))
        .collect();
    out.sort();
    out
}

/// `pagent ARGS` with the default layout in HOME: no marketplace, data or config folder
/// named, so everything lands where a user's would. The real binary, so that `claude`
/// inherits the test's HOME as it inherits the user's.
fn in_home(env: &TestEnv, args: &[&str]) -> crate::util::Run {
    env.bin(args)
        .env("PAGENT_CONFIG_DIR", "")
        .env("XDG_DATA_HOME", "")
        .env("PATH", env.home.join("no-claude-here"))
        .run()
}

/// Item 13: in a fresh HOME, uninstall leaves only what Claude Code made for itself and
/// pagent's config folder, and names each with the reason; `--purge` takes the config
/// folder too.
#[test]
fn item_13_uninstall_names_what_it_leaves_and_purge_removes_the_config_folder() {
    let env = TestEnv::new();
    let claude = claude_that_makes_its_settings(&env).display().to_string();
    let from = env!("CARGO_MANIFEST_DIR");
    let install = in_home(&env, &["install", "--claude", &claude, "--from", from]);
    assert_eq!(install.code, Some(0), "{install}");
    // A loop in a project makes pagent's config folder (~/.config/pagent).
    in_home(&env, &["ralph", "Fix it"]);
    assert!(env.home.join(".config/pagent/secret").is_file());
    let uninstall = in_home(&env, &["uninstall", "--claude", &claude]);
    assert_eq!(uninstall.code, Some(0), "{uninstall}");
    assert_eq!(
        home_files(&env),
        [
            ".claude",
            ".claude.json",
            ".claude/backups",
            ".claude/backups/.claude.json.backup.1",
            ".config",
            ".config/pagent",
        ]
        .into_iter()
        .chain(
            home_files(&env)
                .iter()
                .filter(|p| p.starts_with(".config/pagent/"))
                .map(String::as_str)
        )
        .collect::<Vec<_>>(),
        "{uninstall}"
    );
    let shown = |text: &str| text.replace(&env.home.display().to_string(), "~");
    let purge = in_home(&env, &["uninstall", "--purge"]);
    assert_eq!(purge.code, Some(0), "{purge}");
    assert!(!env.home.join(".config/pagent").exists(), "{purge}");
    assert_text!(format!(
        "{}--- with --purge ---\n{}",
        shown(&uninstall.stdout),
        shown(&purge.stdout)
    ));
}

/// Item 13: an install without `claude` on PATH puts only the binary in place; uninstall
/// then leaves HOME exactly as it was, with no empty `~/.claude`.
#[test]
fn item_13_an_install_without_claude_leaves_no_empty_claude_folder() {
    let env = TestEnv::new();
    let before = home_files(&env);
    let install = in_home(&env, &["install", "--from", env!("CARGO_MANIFEST_DIR")]);
    assert_eq!(install.code, Some(0), "{install}");
    assert!(
        install.stdout.contains("claude is not on PATH"),
        "{install}"
    );
    assert!(
        env.home
            .join(".claude/plugins/data/pagent-pagent/bin/pagent")
            .is_file()
    );
    let uninstall = in_home(&env, &["uninstall"]);
    assert_eq!(uninstall.code, Some(0), "{uninstall}");
    assert_eq!(home_files(&env), before, "{uninstall}");
    assert!(!uninstall.stdout.contains("left "), "{uninstall}");
}

/// Issue 30: `uninstall --purge` left 1.3 MB of Python byte code in pagent's config
/// folder (while saying pagent writes none there) and said nothing of the projects'
/// files, the lines in `.git/info/exclude` or pagent itself. After a loop whose Python
/// check ran, and with an older version's byte code in the config folder, HOME is as it
/// was, and uninstall names what remains elsewhere and how to remove it.
#[test]
fn issue_30_uninstall_purge_leaves_home_as_it_was_and_says_what_remains() {
    let env = TestEnv::new();
    let before = home_files(&env);
    let install = in_home(&env, &["install", "--from", env!("CARGO_MANIFEST_DIR")]);
    assert_eq!(install.code, Some(0), "{install}");
    let ralph = env
        .bin(&["ralph", "Fix it"])
        .env("PAGENT_CONFIG_DIR", "")
        .env("CLAUDE_CODE_SESSION_ID", SESSION)
        .run();
    assert_eq!(ralph.code, Some(0), "{ralph}");
    env.write("app.py", "def f(:\n");
    let input = serde_json::json!({
        "session_id": SESSION,
        "cwd": env.root,
        "hook_event_name": "PostToolUse",
        "tool_name": "Write",
        "tool_input": {"file_path": env.path("app.py")},
        "tool_response": {"type": "update"},
    });
    let check = env
        .bin(&["hook", "post-tool-use"])
        .env("PAGENT_CONFIG_DIR", "")
        .env("CLAUDE_PROJECT_DIR", &env.root)
        .stdin(input.to_string())
        .run();
    assert!(check.context().unwrap().contains("SyntaxError"), "{check}");
    let config = env.home.join(".config/pagent");
    assert!(!config.join("cache").exists(), "{:?}", home_files(&env));
    // What an older version's check left.
    let old = config.join("cache/pycache/usr/lib/python3.11");
    fs::create_dir_all(&old).unwrap();
    fs::write(old.join("typing.cpython-311.pyc"), "byte code").unwrap();

    let purge = in_home(&env, &["uninstall", "--purge"]);
    assert_eq!(purge.code, Some(0), "{purge}");
    assert_eq!(home_files(&env), before, "{purge}");
    let text = purge
        .stdout
        .replace(&env.home.display().to_string(), "~")
        .replace(&env.root.display().to_string(), "[PROJECT]");
    assert_text!(text);
}

/// A fake `claude` whose marketplace and plugin lists are `marketplaces` and `plugins`
/// (JSON), recording every other call in `$HOME/calls`.
fn claude_with(env: &TestEnv, marketplaces: &str, plugins: &str) -> String {
    env.fake_tool(
        "claude-bin",
        "claude",
        &format!(
            "case \"$*\" in\n\
               'plugin marketplace list --json') echo '{marketplaces}' ;;\n\
               'plugin list --json') echo '{plugins}' ;;\n\
               *) echo \"$*\" >> \"$HOME/calls\" ;;\n\
             esac"
        ),
    )
    .join("claude")
    .display()
    .to_string()
}

/// Issue 34: a user who installed pagent's plugin through a marketplace of their choice
/// (this repository as a git marketplace, or a plugin directory) and then runs the
/// command the plugin named, `npx pagent install`: their plugin and marketplace stay as
/// they are (no second pagent plugin, whose hooks would all run twice), and the install
/// brings what was missing, the binary the hooks run and the short names. Uninstall
/// leaves a plugin it did not install, and says how to remove it.
#[test]
fn issue_34_a_pagent_plugin_from_the_users_own_marketplace_is_kept() {
    let git_market = r#"[{"name":"pagent","source":"git","url":"https://git.example.invalid/me/pagent.git","installLocation":"/m/pagent"}]"#;
    let ours = r#"[{"id":"pagent@pagent","installPath":"/c/pagent/pagent/0.1.0"}]"#;
    let other = r#"[{"id":"pagent@claude-plugins-official","installPath":"/c/o/pagent/0.1.0"}]"#;
    let mut said = Said::new();
    for (case, marketplaces, plugins) in [
        ("the git marketplace, plugin installed", git_market, ours),
        (
            "the git marketplace, plugin not installed yet",
            git_market,
            "[]",
        ),
        ("a plugin from another marketplace", "[]", other),
    ] {
        let env = TestEnv::new();
        let claude = claude_with(&env, marketplaces, plugins);
        let from = env!("CARGO_MANIFEST_DIR");
        let install = in_home(&env, &["install", "--claude", &claude, "--from", from]);
        assert_eq!(install.code, Some(0), "{install}");
        let calls = fs::read_to_string(env.home.join("calls")).unwrap_or_default();
        assert!(!calls.contains("marketplace add"), "{case}: {calls}");
        assert!(!calls.contains("uninstall"), "{case}: {calls}");
        assert_eq!(
            calls.contains("plugin install pagent@pagent"),
            plugins == "[]",
            "{case}: {calls}"
        );
        assert!(
            env.home
                .join(".claude/plugins/data/pagent-pagent/bin/pagent")
                .is_file(),
            "{case}: {install}"
        );
        assert!(
            env.home.join(".claude/commands/ralph.md").is_file(),
            "{case}"
        );
        let shown = |text: &str| text.replace(&env.home.display().to_string(), "~");
        said.say(&format!("{case}: pagent install"), &shown(&install.stdout));
        if plugins == other {
            let uninstall = in_home(&env, &["uninstall", "--claude", &claude]);
            assert_eq!(uninstall.code, Some(0), "{uninstall}");
            said.say(
                &format!("{case}: pagent uninstall"),
                &shown(&uninstall.stdout),
            );
        }
    }
    assert_text!(said.text());
}

/// Issue 34: a binary with no plugin folder near it, as `cargo install pagent` or
/// Homebrew leave it, stages the plugin it carries and installs it like any other.
#[test]
fn issue_34_a_binary_alone_installs_the_plugin_it_carries() {
    let env = TestEnv::new();
    let alone = env.home.join("cargo/bin/pagent");
    fs::create_dir_all(alone.parent().unwrap()).unwrap();
    fs::copy(crate::util::pagent_bin(), &alone).unwrap();
    let claude = claude_with(&env, "[]", "[]");
    let out = std::process::Command::new(&alone)
        .args(["install", "--claude", &claude])
        .env("HOME", &env.home)
        .env("PATH", "/usr/bin:/bin")
        .env_remove("PAGENT_PLUGIN_SOURCE")
        .env_remove("PAGENT_MARKETPLACE_DIR")
        .env_remove("XDG_DATA_HOME")
        .env_remove("CLAUDE_CONFIG_DIR")
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let staged = env.home.join(".local/share/pagent/marketplace");
    for rel in [
        ".claude-plugin/marketplace.json",
        "hooks/hooks.json",
        "commands/ralph.md",
    ] {
        assert_eq!(
            fs::read(staged.join(rel)).unwrap(),
            fs::read(Path::new(env!("CARGO_MANIFEST_DIR")).join(rel)).unwrap(),
            "{rel}"
        );
    }
    // The hooks' program is the binary itself (issue 33: no shell on the hot path).
    assert_eq!(
        fs::read(staged.join("scripts/pagent")).unwrap(),
        fs::read(&alone).unwrap()
    );
    let calls = fs::read_to_string(env.home.join("calls")).unwrap();
    assert!(
        calls.contains(&format!("plugin marketplace add {}", staged.display())),
        "{calls}"
    );
    assert!(calls.contains("plugin install pagent@pagent"), "{calls}");
}

/// Issue 33, no shell on the hot path: where `pagent install` knows the binary (npm,
/// `cargo install`, Homebrew, a release archive, scripts/install.sh), the plugin it stages
/// carries the binary itself as `scripts/pagent`, the program its exec-form hooks name:
/// a Stop starts pagent and nothing else, and decides as the launcher's binary would.
#[test]
fn issue_33_the_installed_hooks_start_the_binary_with_no_shell_before_it() {
    let env = TestEnv::new();
    let staging = env.home.join("staged");
    let install = pagent(&env, &["install", "--no-short-commands"], &staging);
    assert_eq!(install.code, Some(0), "{install}");
    let hook = staging.join("scripts/pagent");
    assert_eq!(
        fs::read(&hook).unwrap(),
        fs::read(crate::util::pagent_bin()).unwrap(),
        "the hooks' program is the binary, not the launcher"
    );
    let hooks: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(staging.join("hooks/hooks.json")).unwrap())
            .unwrap();
    assert_eq!(
        hooks["hooks"]["Stop"][0]["hooks"][0]["command"],
        "${CLAUDE_PLUGIN_ROOT}/scripts/pagent"
    );
    // As Claude Code runs it: the program with its arguments, the input on stdin.
    env.cmd(&["ralph", "Fix it"])
        .env("CLAUDE_CODE_SESSION_ID", SESSION)
        .success();
    let out = run_hook(&env, &hook, &[], &env.stop_input("Not yet."));
    assert!(out.status.success(), "{out:?}");
    let said: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        said["hookSpecificOutput"]["hookEventName"], "Stop",
        "{said}"
    );
    assert!(
        said["systemMessage"]
            .as_str()
            .unwrap()
            .starts_with("pagent: Ralph loop, iteration 2 of 25"),
        "the loop goes on: {said}"
    );
}

/// Issue 33: the staged binary keeps the launcher's first rule, `PAGENT_BIN` (a custom
/// build, a test's recorder) runs instead, with the arguments and the input, marked as
/// handed over; a `PAGENT_BIN` that calls the staged binary back is not handed over to
/// again (no loop), and one that cannot start leaves the staged binary to decide.
#[test]
fn issue_33_the_staged_binary_hands_over_to_pagent_bin_once() {
    let env = TestEnv::new();
    let staging = env.home.join("staged");
    let install = pagent(&env, &["install", "--no-short-commands"], &staging);
    assert_eq!(install.code, Some(0), "{install}");
    let hook = staging.join("scripts/pagent");
    let log = env.home.join("handed-over");
    let custom = env.fake_tool(
        "custom",
        "pagent-custom",
        &format!(
            "printf '%s|%s|%s\\n' \"$*\" \"$(cat)\" \"$PAGENT_LAUNCHER_SEEN\" >> '{}'\n\
             printf '%s' '{{}}' | exec \"$PAGENT_LAUNCHER_SEEN\" \"$@\"",
            log.display()
        ),
    );
    let custom = custom.join("pagent-custom");
    let out = run_hook(&env, &hook, &[("PAGENT_BIN", &custom)], &json_input());
    assert!(out.status.success(), "{out:?}");
    assert_eq!(
        fs::read_to_string(&log).unwrap(),
        format!("hook stop|{{\"x\":1}}|{}\n", hook.display()),
        "handed over once, with the arguments, the input and the mark"
    );
    let missing = env.home.join("no-such-pagent");
    let out = run_hook(&env, &hook, &[("PAGENT_BIN", &missing)], &json_input());
    assert!(out.status.success(), "{out:?}");
    assert!(out.stdout.is_empty(), "{out:?}");
}

fn json_input() -> serde_json::Value {
    serde_json::json!({"x": 1})
}

/// The hook's program run as Claude Code runs an exec-form hook: no shell, the input on
/// stdin, the project in `CLAUDE_PROJECT_DIR`.
fn run_hook(
    env: &TestEnv,
    program: &Path,
    vars: &[(&str, &Path)],
    input: &serde_json::Value,
) -> std::process::Output {
    use std::io::Write;
    let mut command = std::process::Command::new(program);
    command
        .args(["hook", "stop"])
        .current_dir(&env.root)
        .env_clear()
        .env("HOME", &env.home)
        .env("PATH", "/usr/bin:/bin")
        .env("PAGENT_CONFIG_DIR", &env.config)
        .env("CLAUDE_PROJECT_DIR", &env.root)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    for (key, value) in vars {
        command.env(key, value);
    }
    let mut child = command.spawn().unwrap();
    // A hook that decides without its input (no loop here) may exit before it is written.
    if let Err(err) = child
        .stdin
        .take()
        .unwrap()
        .write_all(input.to_string().as_bytes())
    {
        assert_eq!(err.kind(), std::io::ErrorKind::BrokenPipe, "{err}");
    }
    child.wait_with_output().unwrap()
}
