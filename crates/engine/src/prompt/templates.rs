//! The prompt templates a model reads: written as Markdown in `plugin/prompts/`, where the
//! plugin's readers find them and a change reads as a diff of prose, and compiled in here,
//! the one place the binary takes them from. Placeholders (`{{story}}`, `{{branch}}`) are
//! filled by [`crate::render_template`] and [`super::merge`].

/// The five stages of the built-in PRD pipeline (`plugin/workflows/prd-to-code.json`).
pub const ARCHITECT: &str = include_str!("../../../../plugin/prompts/architect.md");
pub const QA: &str = include_str!("../../../../plugin/prompts/qa.md");
pub const SECURITY: &str = include_str!("../../../../plugin/prompts/security.md");
pub const IMPLEMENTER: &str = include_str!("../../../../plugin/prompts/implementer.md");
pub const VERIFIER: &str = include_str!("../../../../plugin/prompts/verifier.md");
/// A stories loop: every iteration's agent reads it, `{{story}}` filled at each.
pub const STORIES: &str = include_str!("../../../../plugin/prompts/stories.md");
/// `pagent parallel --merge`'s resolution loop, filled by [`super::merge::prompt`].
pub const MERGE: &str = include_str!("../../../../plugin/prompts/merge.md");
/// A team's landing whose checks fail on the merged work, filled by [`super::team::gate`].
pub const TEAM_GATE: &str = include_str!("../../../../plugin/prompts/team-gate.md");
