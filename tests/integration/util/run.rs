//! What one pagent command did ([`Run`]), and the assertions a test makes of it. Each
//! assertion of a hook's answer (an allow, a re-prompt, a context) also checks how the hook
//! ended: exit 0 and no crash. A hook that crashed, or met an error, allows the stop too
//! (that is pagent's failure policy), so an "allowed" that looked only at stdout would
//! pass when the hook never decided anything. An error that allows is its own assertion,
//! [`Run::allowed_on_error`], and every command of every test fails on a crash
//! ([`super::TestCommand::run`]).

use serde_json::Value;

#[derive(Debug)]
pub struct Run {
    pub code: Option<i32>,
    pub stdout: String,
    pub stderr: String,
    command: String,
}

impl std::fmt::Display for Run {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "command: {}\nexit: {:?}\n--- stdout ---\n{}\n--- stderr ---\n{}",
            self.command, self.code, self.stdout, self.stderr
        )
    }
}

impl Run {
    pub(super) fn new(code: Option<i32>, stdout: &[u8], stderr: &[u8], command: String) -> Run {
        Run {
            code,
            stdout: String::from_utf8_lossy(stdout).into_owned(),
            stderr: String::from_utf8_lossy(stderr).into_owned(),
            command,
        }
    }

    /// Whether stderr shows a crash: Rust's panic message, or the binary's report of a
    /// caught panic ([`pagent::report_panic`]). A hook that crashed allows the stop too, so
    /// every helper below that asserts a hook's answer checks this first: an "allowed"
    /// that is really a crash must fail the test.
    pub fn crashed(&self) -> bool {
        self.stderr.contains("panicked at") || self.stderr.contains("internal error")
    }

    /// A run as a test would see it: for the tests of these assertions themselves.
    #[cfg(test)]
    pub fn made(code: Option<i32>, stdout: &str, stderr: &str) -> Run {
        Run {
            code,
            stdout: stdout.to_owned(),
            stderr: stderr.to_owned(),
            command: "pagent hook stop (made up)".to_owned(),
        }
    }

    /// What every command of every test is held to, whatever the test expects of it: it
    /// never exits 2 (Claude Code reads that as "block") and never crashes. No test
    /// expects a crash, so none can pass because of one.
    pub(super) fn never_blocks_by_exit_or_crashes(&self) {
        assert_ne!(
            self.code,
            Some(2),
            "pagent exited 2, which blocks in Claude Code\n{self}"
        );
        assert!(!self.crashed(), "pagent crashed\n{self}");
    }

    /// Asserts the hook answered normally: exit 0 and no crash on stderr.
    pub fn answered(&self) -> &Self {
        assert_eq!(self.code, Some(0), "expected exit 0\n{self}");
        assert!(!self.crashed(), "the hook crashed\n{self}");
        self
    }

    /// The hook's decision JSON; `None` when it printed nothing (allow). Checks nothing
    /// about how the hook ended: the helpers below do.
    pub fn decision(&self) -> Option<Value> {
        let text = self.stdout.trim();
        (!text.is_empty()).then(|| {
            serde_json::from_str(text)
                .unwrap_or_else(|e| panic!("hook stdout is not JSON: {e}\n{self}"))
        })
    }

    /// Asserts the Stop hook keeps the model going (exit 0, no crash, a re-prompt:
    /// `additionalContext` with no `decision`, which both clients take as "go on") and
    /// returns what the model reads.
    pub fn blocked(&self) -> String {
        self.answered();
        let decision = self
            .decision()
            .unwrap_or_else(|| panic!("expected a re-prompt, got an allow\n{self}"));
        assert!(decision.get("decision").is_none(), "{self}");
        assert!(decision.get("reason").is_none(), "{self}");
        assert_eq!(
            decision["hookSpecificOutput"]["hookEventName"], "Stop",
            "{self}"
        );
        decision["hookSpecificOutput"]["additionalContext"]
            .as_str()
            .unwrap_or_else(|| panic!("a re-prompt without additionalContext\n{self}"))
            .to_owned()
    }

    /// Whether the Stop hook keeps the model going (a re-prompt).
    pub fn continues(&self) -> bool {
        self.decision().is_some_and(|d| {
            d.get("decision").is_some() || d["hookSpecificOutput"]["additionalContext"].is_string()
        })
    }

    /// The PostToolUse additional context (exit 0, no crash), or `None` when the hook
    /// said nothing.
    pub fn context(&self) -> Option<String> {
        self.answered();
        let decision = self.decision()?;
        assert_eq!(
            decision["hookSpecificOutput"]["hookEventName"], "PostToolUse",
            "{self}"
        );
        Some(
            decision["hookSpecificOutput"]["additionalContext"]
                .as_str()
                .unwrap()
                .to_owned(),
        )
    }

    /// Asserts the stop is allowed by a hook that answered (exit 0, no crash) and returns
    /// the user message, if any.
    pub fn allowed(&self) -> Option<String> {
        self.answered();
        self.allow_message()
    }

    /// Asserts the stop is allowed because the hook met an error it reported (exit 1, one
    /// `pagent: error: ...` on stderr, no crash, nothing on stdout: Claude Code's
    /// "non-blocking error"). Returns stderr.
    pub fn allowed_on_error(&self) -> String {
        assert_eq!(self.code, Some(1), "expected exit 1 (an error)\n{self}");
        assert!(!self.crashed(), "the hook crashed\n{self}");
        assert!(
            self.stderr.contains("pagent: error: "),
            "expected a reported error\n{self}"
        );
        assert_eq!(self.allow_message(), None, "{self}");
        self.stderr.clone()
    }

    /// The message for the user (`systemMessage`) of a hook that answered (exit 0, no
    /// crash), beside a block or an allow.
    pub fn system_message(&self) -> Option<String> {
        self.answered();
        self.decision()?["systemMessage"]
            .as_str()
            .map(str::to_owned)
    }

    fn allow_message(&self) -> Option<String> {
        let decision = self.decision()?;
        assert!(
            !self.continues(),
            "expected an allow, got a re-prompt\n{self}"
        );
        decision["systemMessage"].as_str().map(str::to_owned)
    }
}

/// Item 22 (tests that cannot pass by accident): each assertion fails on a run that did
/// not answer, whatever its stdout says.
#[cfg(test)]
mod tests {
    use super::Run;

    const ALLOW: &str = "";
    const BLOCK: &str =
        r#"{"hookSpecificOutput":{"hookEventName":"Stop","additionalContext":"keep going"}}"#;
    const PANIC: &str = "thread 'main' panicked at crates/cli/x.rs:1:1:\nboom\n";
    const CAUGHT: &str = "pagent: error: internal error (a bug in pagent); nothing was blocked\n";
    const ERROR: &str = "pagent: error: the Stop hook failed, so Claude may stop: x\n";

    fn fails(what: impl FnOnce() + std::panic::UnwindSafe) -> bool {
        std::panic::catch_unwind(what).is_err()
    }

    #[test]
    fn item_22_allowed_fails_when_the_hook_crashed_or_failed() {
        assert_eq!(Run::made(Some(0), ALLOW, "").allowed(), None);
        for (code, stderr) in [(Some(1), PANIC), (Some(1), CAUGHT), (Some(0), PANIC)] {
            assert!(fails(|| {
                Run::made(code, ALLOW, stderr).allowed();
            }));
        }
        assert!(fails(|| {
            Run::made(Some(1), ALLOW, ERROR).allowed();
        }));
        assert!(fails(|| {
            Run::made(None, ALLOW, "").allowed();
        }));
    }

    #[test]
    fn item_22_blocked_and_context_fail_unless_the_hook_exited_0() {
        assert_eq!(Run::made(Some(0), BLOCK, "").blocked(), "keep going");
        assert!(fails(|| {
            Run::made(Some(1), BLOCK, "").blocked();
        }));
        assert!(fails(|| {
            Run::made(Some(0), BLOCK, PANIC).blocked();
        }));
        assert!(fails(|| {
            Run::made(Some(1), ALLOW, ERROR).context();
        }));
    }

    #[test]
    fn item_22_an_error_that_allows_is_its_own_assertion_and_no_crash() {
        assert!(
            Run::made(Some(1), ALLOW, ERROR)
                .allowed_on_error()
                .contains("failed")
        );
        for (code, stderr) in [(Some(1), CAUGHT), (Some(1), PANIC), (Some(0), ERROR)] {
            assert!(fails(|| {
                Run::made(code, ALLOW, stderr).allowed_on_error();
            }));
        }
        assert!(fails(|| {
            Run::made(Some(1), BLOCK, ERROR).allowed_on_error();
        }));
    }

    #[test]
    fn item_22_every_command_fails_on_a_crash_or_exit_2() {
        Run::made(Some(1), ALLOW, ERROR).never_blocks_by_exit_or_crashes();
        for (code, stderr) in [(Some(2), ""), (Some(0), PANIC), (Some(1), CAUGHT)] {
            assert!(fails(
                || Run::made(code, ALLOW, stderr).never_blocks_by_exit_or_crashes()
            ));
        }
    }
}
