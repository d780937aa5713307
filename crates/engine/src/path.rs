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
    pub fn new(text: &str) -> Result<RelPath, RelPathError> {
        if text.contains('\0') {
            return Err(RelPathError::Nul(text.to_owned()));
        }
        let trimmed = text.trim();
        if trimmed.is_empty() {
            return Err(RelPathError::Empty);
        }
        let looks_windows_absolute = trimmed.len() > 1 && trimmed.as_bytes()[1] == b':';
        if trimmed.starts_with('/')
            || trimmed.starts_with('\\')
            || trimmed.starts_with('~')
            || looks_windows_absolute
        {
            return Err(RelPathError::Absolute(trimmed.to_owned()));
        }
        let parts: Vec<&str> = trimmed
            .split(['/', '\\'])
            .filter(|p| !p.is_empty() && *p != ".")
            .collect();
        if parts.contains(&"..") {
            return Err(RelPathError::Escapes(trimmed.to_owned()));
        }
        if parts.is_empty() {
            return Ok(RelPath(".".to_owned()));
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
