//! The binary under test is the build for this test's own platform, and proves the
//! hook's contract there: `--version` names the target it was built for, a Stop with no
//! state is silent, a ralph loop's Stop blocks; and `pagent install` refuses a binary
//! of another platform before it changes anything.
//!
//! `scripts/test.sh` runs this suite on Linux x86-64, and again as the Linux arm64 build
//! under qemu (`PAGENT_TEST_BIN` is then the `pagent-linux-arm64` package's binary); the
//! release workflow runs it on each native runner. There `PAGENT_TEST_FOREIGN_BIN` names
//! a real binary of another platform (the x86-64 build, in the arm64 run); without it the
//! foreign binary is a copy of the one under test whose header names another CPU, which
//! is all the check reads.

use std::fs;
use std::path::{Path, PathBuf};

use crate::util::{SESSION, TestEnv, pagent_bin};

/// The npm platform name of the target these tests were built for.
fn this_platform() -> &'static str {
    pagent_test_support::project::npm_platform(env!("PAGENT_TARGET"))
}

#[test]
fn the_binary_under_test_is_this_platforms_and_decides_stops() {
    let env = TestEnv::new();
    let version = env.bin(&["--version"]).success();
    assert_eq!(
        version.stdout,
        format!(
            "pagent {} ({})\n",
            env!("CARGO_PKG_VERSION"),
            env!("PAGENT_TARGET")
        ),
        "{version}"
    );

    let no_state = env
        .bin(&["hook", "stop"])
        .env("CLAUDE_PROJECT_DIR", &env.root)
        .stdin(env.stop_input("Done.").to_string())
        .success();
    assert_eq!(
        (no_state.stdout.as_str(), no_state.stderr.as_str()),
        ("", "")
    );

    env.bin(&["ralph", "Fix the parser"])
        .env("CLAUDE_CODE_SESSION_ID", SESSION)
        .success();
    let stop = env
        .bin(&["hook", "stop"])
        .env("CLAUDE_PROJECT_DIR", &env.root)
        .stdin(env.stop_input("Still working.").to_string())
        .success();
    let reason = stop.blocked();
    assert!(reason.contains("Fix the parser"), "{stop}");
    assert!(reason.contains("iteration 2"), "{stop}");
}

/// A copy of `bin` in `dir` whose header says it is for the other 64-bit CPU.
fn other_cpu_copy(bin: &Path, dir: &Path) -> PathBuf {
    let mut bytes = fs::read(bin).unwrap();
    let swap = |bytes: &mut [u8], at: usize, a: &[u8], b: &[u8]| {
        let field = &mut bytes[at..at + a.len()];
        let new = if field == a { b } else { a };
        field.copy_from_slice(new);
    };
    match bytes[..4] {
        // ELF's e_machine, little-endian: EM_X86_64 (62) and EM_AARCH64 (183).
        [0x7f, b'E', b'L', b'F'] => swap(&mut bytes, 18, &[62, 0], &[183, 0]),
        // Mach-O's cputype: CPU_TYPE_X86_64 and CPU_TYPE_ARM64.
        [0xcf, 0xfa, 0xed, 0xfe] => swap(&mut bytes, 4, &[7, 0, 0, 1], &[12, 0, 0, 1]),
        _ => panic!("{} is in no format this test knows", bin.display()),
    }
    let path = dir.join("pagent-other-cpu");
    fs::write(&path, bytes).unwrap();
    path
}

#[test]
fn install_refuses_a_binary_of_another_platform_and_changes_nothing() {
    let env = TestEnv::new();
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    let install = |binary: &Path| {
        let args = ["install", "--from", repo.to_str().unwrap()];
        env.cmd(&[&args[..], &["--binary", binary.to_str().unwrap()]].concat())
            .env("PATH", "/usr/bin:/bin")
            .env("XDG_DATA_HOME", env.home.join("data"))
            .current_dir(&env.home)
            .run()
    };
    let copied = env
        .home
        .join(".claude/plugins/data/pagent-pagent/bin/pagent");

    let foreign = match std::env::var_os("PAGENT_TEST_FOREIGN_BIN") {
        Some(path) => PathBuf::from(path),
        None => other_cpu_copy(&pagent_bin(), &env.home),
    };
    let refused = install(&foreign);
    assert_eq!(refused.code, Some(1), "{refused}");
    let expected = format!(
        "{} is a binary for {}, and this pagent is for {} ({})",
        foreign.display(),
        if this_platform().ends_with("arm64") {
            this_platform().replace("arm64", "x64")
        } else {
            this_platform().replace("x64", "arm64")
        },
        this_platform(),
        env!("PAGENT_TARGET")
    );
    assert!(refused.stderr.contains(&expected), "{expected}\n{refused}");
    assert!(refused.stderr.contains("--binary"), "{refused}");
    assert!(!copied.exists(), "nothing installed\n{refused}");
    assert!(!env.home.join("data").exists(), "nothing staged\n{refused}");

    // The binary under test itself is accepted (no `claude` on PATH: only the binary).
    let accepted = install(&pagent_bin());
    assert_eq!(accepted.code, Some(0), "{accepted}");
    assert_eq!(fs::read(&copied).unwrap(), fs::read(pagent_bin()).unwrap());
}
