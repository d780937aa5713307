//! Whole-output snapshots of what a user or the model reads: a hook's block reason and
//! message, `status`, an error. A `.contains` of one phrase still passes when the words
//! around it change, break or double; a snapshot shows every change as a diff to review
//! (`cargo insta review`). What differs from run to run (the temp folders, elapsed times,
//! clock times, the build's target) is filtered out, so the snapshot holds the words.
//!
//! `.contains` stays where a test asserts a property rather than the wording: that a
//! path is quoted, that nothing leaked, that a planted escape is inert.

/// What changes between runs of the same test: the binary under test (its path is the
/// checkout's, or `$PAGENT_TEST_BIN`), the temp folders, elapsed times, clock times, the
/// build's target, a file name's time stamp, how long a check took.
pub fn filters() -> Vec<(&'static str, &'static str)> {
    static BINARY: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    let binary = BINARY.get_or_init(|| regex_escape(&super::pagent_bin().display().to_string()));
    let mut filters = vec![(binary.as_str(), "[PAGENT]")];
    if pagent_test_support::project::testing_windows_bin() {
        // The Windows build under Wine names the same paths its way: `Z:\tmp\.tmpX\a\b`
        // for `/tmp/.tmpX/a/b`, `flows\one.json` for `flows/one.json`. The snapshots hold
        // the words, so the separators are read as `/` (each pass turns every other one).
        filters.push((r"\b[A-Z]:\\", "/"));
        for _ in 0..3 {
            filters.push((r"([\w.-])\\([\w.-])", "$1/$2"));
        }
    }
    filters.extend([
        (r"[^\s'`]*/\.tmp[A-Za-z0-9]+", "[TMP]"),
        (r"· \d+(h\d\dm|m\d\ds|s)\b", "· [ELAPSED]"),
        (r"started \d+(h\d\dm|m\d\ds|s) ago", "started [ELAPSED] ago"),
        (
            r"(\d+ iterations?), \d+(h\d\dm|m\d\ds|s)\b",
            "$1, [ELAPSED]",
        ),
        (
            r"(\d+ iterations?) in \d+(h\d\dm|m\d\ds|s)\b",
            "$1 in [ELAPSED]",
        ),
        (r"-\d{9,}\.", "-[STAMP]."),
        (r"\(\d+ ms\)", "([N] ms)"),
        (r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", "[TIME]"),
        (r"\((x86_64|aarch64)-[a-z0-9_-]+\)", "([TARGET])"),
    ]);
    filters.extend(SIZES);
    filters
}

/// What the logs take varies with the times and durations they record: status's `logs:`
/// line, with its sizes masked (every snapshot of status applies these).
pub const SIZES: [(&str, &str); 3] = [
    (
        r"logs: [0-9.]+ [KMG]?i?B on disk \(the event log\)",
        "logs: [SIZE] on disk (the event log)",
    ),
    (
        r"logs: [0-9.]+ [KMG]?i?B on disk \(runs [0-9.]+ [KMG]?i?B in",
        "logs: [SIZE] on disk (runs [SIZE] in",
    ),
    (r"; events [0-9.]+ [KMG]?i?B\)", "; events [SIZE])"),
];

/// `text` as a regular expression that matches it literally.
pub fn regex_escape(text: &str) -> String {
    regex::escape(text)
}

/// `assert_text!(text)` or `assert_text!("name", text)`: a snapshot of `text` with
/// [`filters`] applied, named after the test (and `name`).
macro_rules! assert_text {
    ($text:expr) => {
        insta::with_settings!({filters => $crate::util::snapshot::filters()}, {
            insta::assert_snapshot!($text);
        })
    };
    ($name:expr, $text:expr) => {
        insta::with_settings!({filters => $crate::util::snapshot::filters()}, {
            insta::assert_snapshot!($name, $text);
        })
    };
}
pub(crate) use assert_text;

/// `text` with a stage's prompt (from its `# Stage:` heading on) left out, for a test
/// whose subject is what pagent says around it: the prompts have snapshots of their own
/// (`texts::run_start`, the pipeline's five stages).
pub fn prompt_elided(text: &str) -> String {
    match text.find("# Stage: ") {
        Some(at) => {
            let name = text[at + 9..].lines().next().unwrap_or_default();
            format!("{}[the prompt of stage {name}]\n", &text[..at])
        }
        None => text.to_owned(),
    }
}

/// The texts of several steps, each under a label, as one snapshot: a scenario read the
/// way a user meets it.
#[derive(Debug, Default)]
pub struct Said(String);

impl Said {
    pub fn new() -> Said {
        Said::default()
    }

    /// Adds `text` under `label`.
    pub fn say(&mut self, label: &str, text: &str) -> &mut Said {
        if !self.0.is_empty() {
            self.0.push('\n');
        }
        self.0
            .push_str(&format!("=== {label}\n{}", text.trim_end()));
        self.0.push('\n');
        self
    }

    pub fn text(&self) -> &str {
        &self.0
    }
}
