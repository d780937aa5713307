//! `pagent install` and `pagent uninstall` against a fake `claude` that keeps the
//! marketplace and plugin lists in files: what they delete, and what they must not.

use std::fs;
use std::path::{Path, PathBuf};

use crate::util::TestEnv;

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
    assert!(
        install
            .stderr
            .contains("holds files pagent did not put there"),
        "{install}"
    );
    let uninstall = pagent(&env, &["uninstall"], &mine);
    assert_eq!(uninstall.code, Some(0), "{uninstall}");
    assert!(
        uninstall.stdout.contains(&format!(
            "left {} alone: it holds files pagent did not put there (no .pagent-owned marker)",
            mine.display()
        )),
        "{uninstall}"
    );
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
