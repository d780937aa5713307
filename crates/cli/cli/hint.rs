//! An error that carries what to do next as data, as jj's command errors do: the message
//! (what went wrong) and a list of hints (what the user can do about it), rendered in one
//! place ([`Hinted`]'s `Display`: the message, then each hint after "; "), so every
//! output that shows an error (`pagent: error:` and its `caused by:` lines, a slash
//! command's answer, a hook's report) says the hints the same way. A value every room may
//! make and carry, the store included (which names nothing above it).

use std::fmt;

/// An error's message and its hints ("run `pagent cancel` again").
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hinted {
    message: String,
    hints: Vec<String>,
}

impl Hinted {
    /// An error saying `message`, with no hint yet.
    pub fn new(message: impl Into<String>) -> Hinted {
        Hinted {
            message: message.into(),
            hints: Vec::new(),
        }
    }

    /// The same error with one more thing the user can do.
    #[must_use]
    pub fn hint(mut self, hint: impl Into<String>) -> Hinted {
        self.hints.push(hint.into());
        self
    }
}

#[cfg(test)]
impl Hinted {
    pub fn message(&self) -> &str {
        &self.message
    }

    pub fn hints(&self) -> &[String] {
        &self.hints
    }
}

/// The one rendering: "message; hint; hint".
impl fmt::Display for Hinted {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)?;
        for hint in &self.hints {
            write!(f, "; {hint}")?;
        }
        Ok(())
    }
}

impl std::error::Error for Hinted {}

#[cfg(test)]
mod tests {
    use super::*;

    /// The hints of the [`Hinted`] in `err` (its context, or a cause in its chain).
    fn hints_of(err: &anyhow::Error) -> Vec<String> {
        err.downcast_ref::<Hinted>()
            .or_else(|| err.chain().find_map(|cause| cause.downcast_ref::<Hinted>()))
            .map(|hinted| hinted.hints().to_vec())
            .unwrap_or_default()
    }

    #[test]
    fn issue_31_an_error_carries_its_hints_as_data_and_renders_them_in_one_place() {
        let err = Hinted::new("the loop state kept changing while pagent tried to cancel it")
            .hint("run `pagent cancel` again");
        assert_eq!(
            err.message(),
            "the loop state kept changing while pagent tried to cancel it"
        );
        assert_eq!(err.hints(), ["run `pagent cancel` again"]);
        assert_eq!(
            err.to_string(),
            "the loop state kept changing while pagent tried to cancel it; run `pagent cancel` again"
        );
        assert_eq!(Hinted::new("a").hint("b").hint("c").to_string(), "a; b; c");
        assert_eq!(Hinted::new("only").to_string(), "only");
        // As an anyhow error, a context over a cause, or under another context.
        let as_error = anyhow::Error::new(err.clone());
        assert_eq!(hints_of(&as_error), ["run `pagent cancel` again"]);
        let as_context = anyhow::anyhow!("expected value at line 1").context(err.clone());
        assert_eq!(hints_of(&as_context), ["run `pagent cancel` again"]);
        let under = anyhow::Error::new(err).context("the Stop hook failed, so Claude may stop");
        assert_eq!(hints_of(&under), ["run `pagent cancel` again"]);
        assert!(hints_of(&anyhow::anyhow!("plain")).is_empty());
    }
}
