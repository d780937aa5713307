//! Issue 30, point 6: the pages that name the pinned agent CLIs name the ones
//! `scripts/clients.sh` pins, so that proving a new release cannot leave a page calling the
//! old one the newest proven (docs/testing.md says what else a new pin needs).

use super::{read, repo};

/// `NAME=VERSION` of scripts/clients.sh.
fn pinned(name: &str) -> String {
    let text = std::fs::read_to_string(repo().join("scripts/clients.sh")).unwrap();
    text.lines()
        .find_map(|line| line.strip_prefix(name)?.strip_prefix('='))
        .unwrap_or_else(|| panic!("scripts/clients.sh pins no {name}"))
        .trim()
        .to_owned()
}

/// `text` with every run of whitespace made one space, as Markdown reads it.
fn flat(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[test]
fn issue_30_6_the_docs_name_the_pinned_clients() {
    let oldest = pinned("CLAUDE_CODE_OLDEST");
    let newest = pinned("CLAUDE_CODE_NEWEST");
    let codex = pinned("CODEX_VERSION");
    let opencode = pinned("OPENCODE_VERSION");
    for (file, said) in [
        (
            "docs/testing.md",
            format!("**Supported Claude Code versions: {oldest} to {newest}**"),
        ),
        (
            "docs/testing.md",
            format!("Codex {codex} and OpenCode {opencode}, pinned in `scripts/clients.sh`"),
        ),
        (
            "docs/testing.md",
            format!("scripts/install-client.sh claude {newest} # once"),
        ),
        (
            "docs/claude-code.md",
            format!(
                "the pinned versions **{oldest}** (the oldest supported) and **{newest}** (the \
                 newest proven)"
            ),
        ),
        (
            "docs/claude-code.md",
            format!("## The newest pinned client, {newest}"),
        ),
        (
            "docs/windows.md",
            format!("through Claude Code {newest}'s Windows build"),
        ),
        (
            "docs/windows.md",
            format!("through each pinned version, {oldest} and {newest}"),
        ),
        (
            "docs/releases.md",
            format!("through Claude Code {newest}'s Windows build"),
        ),
        (
            "tests/e2e/agents/mod.rs",
            format!("(Codex {codex} and //! OpenCode {opencode}, pinned"),
        ),
        (
            &format!("tests/fixtures/claude-code-{newest}/README.md"),
            format!("Recorded from Claude Code {newest}"),
        ),
        (
            &format!("tests/fixtures/agents/codex-{codex}/README.md"),
            format!("Recorded from Codex {codex}"),
        ),
    ] {
        let text = flat(&read(std::path::Path::new(file)));
        assert!(text.contains(&flat(&said)), "{file} does not say: {said}");
    }
}
