//! Paths named by a workflow, checked lexically: relative, inside the project, no `..`.
//!
//! Symlinks that lead out of the project can only be seen on the real file system, so the
//! binary checks those at set-up and again when it probes; this type guarantees the part
//! that needs no I/O.

use std::fmt;

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct RelPath(String);

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RelPathError {
    #[error("the path is empty")]
    Empty,
    #[error("{0:?} is absolute; paths are relative to the project root")]
    Absolute(String),
    #[error("{0:?} leaves the project root (`..` is not allowed)")]
    Escapes(String),
    #[error("{0:?} contains a NUL byte")]
    Nul(String),
}

impl RelPath {
    /// Checks and normalises a path: `/` or `\\` separators, empty and `.` parts dropped,
    /// whitespace at either end of the path dropped.
    ///
    /// The result is a fixed point: `RelPath::new(p.as_str())` gives `p` back, byte for
    /// byte. The state file stores the normalised form and its seal covers it, so a form
    /// that normalised differently when read back would make the user's own loop look
    /// planted. That is why the end whitespace is trimmed from the *parts* (again after
    /// `.` and empty parts are dropped: `"src/ x /  "` is `src/ x`), and why the checks
    /// for `..` and absolute paths look at what is left, not only at the text as given.
    pub fn new(text: &str) -> Result<RelPath, RelPathError> {
        if text.contains('\0') {
            return Err(RelPathError::Nul(text.to_owned()));
        }
        let trimmed = text.trim();
        if trimmed.is_empty() {
            return Err(RelPathError::Empty);
        }
        if trimmed.starts_with('/') || trimmed.starts_with('\\') {
            return Err(RelPathError::Absolute(trimmed.to_owned()));
        }
        let mut parts: Vec<&str> = trimmed
            .split(['/', '\\'])
            .filter(|p| !p.is_empty() && *p != ".")
            .collect();
        // Trimming an end part may empty it (or make it `.`), exposing the next one.
        loop {
            let before = parts.len();
            if let Some(first) = parts.first_mut() {
                *first = first.trim_start();
            }
            if let Some(last) = parts.last_mut() {
                *last = last.trim_end();
            }
            parts.retain(|p| !p.is_empty() && *p != ".");
            if parts.len() == before {
                break;
            }
        }
        if parts.contains(&"..") {
            return Err(RelPathError::Escapes(trimmed.to_owned()));
        }
        let Some(first) = parts.first() else {
            return Ok(RelPath(".".to_owned()));
        };
        let looks_windows_absolute = first.len() > 1 && first.as_bytes()[1] == b':';
        if first.starts_with('~') || looks_windows_absolute {
            return Err(RelPathError::Absolute(trimmed.to_owned()));
        }
        Ok(RelPath(parts.join("/")))
    }

    /// The normalised form: `/`-separated, no `.` parts, `.` for the root itself.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for RelPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl TryFrom<String> for RelPath {
    type Error = RelPathError;
    fn try_from(value: String) -> Result<Self, Self::Error> {
        RelPath::new(&value)
    }
}

impl From<RelPath> for String {
    fn from(value: RelPath) -> Self {
        value.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalises_relative_paths() {
        for (input, expected) in [
            ("src", "src"),
            ("./src/", "src"),
            ("a//b/./c.md", "a/b/c.md"),
            (".", "."),
        ] {
            assert_eq!(RelPath::new(input).unwrap().as_str(), expected, "{input}");
        }
    }

    /// Found by the workflow fuzz target: `"src/ 2   $ /   "` normalised to `src/ 2   $ `,
    /// which read back as `src/ 2   $`, so the state's seal no longer verified and the
    /// user's own loop was ignored as "not set up by you".
    #[test]
    fn normalising_is_a_fixed_point_even_with_whitespace_parts() {
        for (input, expected) in [
            ("src/ 2   $ /   ", "src/ 2   $"),
            ("./ x", "x"),
            ("x/ /", "x"),
            (" ./ x/ y /. / ", "x/ y"),
            ("a/ /b", "a/ /b"),
            ("a/ . /", "a/ ."),
            (" ./ . /a", ". /a"),
            ("./ ", "."),
        ] {
            let once = RelPath::new(input).unwrap();
            assert_eq!(once.as_str(), expected, "{input:?}");
            let twice = RelPath::new(once.as_str()).unwrap();
            assert_eq!(twice, once, "{input:?} read back differently");
        }
    }

    /// What is left after normalising is what the checks see: a path that only becomes
    /// `..` or absolute-looking once trimmed is refused, rather than stored in a form that
    /// would be refused when the state is read back.
    #[test]
    fn checks_apply_to_the_normalised_form() {
        assert!(matches!(
            RelPath::new("./ ../x"),
            Err(RelPathError::Escapes(_))
        ));
        assert!(matches!(
            RelPath::new("./~x"),
            Err(RelPathError::Absolute(_))
        ));
        assert!(matches!(
            RelPath::new("./ C:/x"),
            Err(RelPathError::Absolute(_))
        ));
    }

    /// Serde reads a path through `TryFrom<String>` (so a state file cannot smuggle in
    /// `../x`) and writes it through `From<RelPath>`; messages show it through `Display`.
    #[test]
    fn conversions_keep_the_normalised_form() {
        let path = RelPath::try_from("./docs//a.md".to_owned()).unwrap();
        assert_eq!(path.to_string(), "docs/a.md");
        assert_eq!(String::from(path), "docs/a.md");
        assert!(RelPath::try_from("../a.md".to_owned()).is_err());
    }

    #[test]
    fn rejects_paths_that_leave_the_project() {
        assert!(matches!(
            RelPath::new("/etc/passwd"),
            Err(RelPathError::Absolute(_))
        ));
        assert!(matches!(
            RelPath::new("~/x"),
            Err(RelPathError::Absolute(_))
        ));
        assert!(matches!(
            RelPath::new("C:\\x"),
            Err(RelPathError::Absolute(_))
        ));
        assert!(matches!(
            RelPath::new("../x"),
            Err(RelPathError::Escapes(_))
        ));
        assert!(matches!(
            RelPath::new("src/../../x"),
            Err(RelPathError::Escapes(_))
        ));
        assert!(matches!(RelPath::new(""), Err(RelPathError::Empty)));
        assert!(matches!(RelPath::new("a\0b"), Err(RelPathError::Nul(_))));
    }
}
