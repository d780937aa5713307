//! The prompt templates a model reads, and the built-in workflow that names five of them:
//! written as Markdown and JSON in `crates/engine/builtin/`, where readers find them and a
//! change reads as a diff of prose, and compiled in here, the one place the binary takes
//! them from. They live inside this crate's folder so that the crate, published on its own,
//! carries them. Placeholders (`{{story}}`, `{{branch}}`) are filled by
//! [`crate::render_template`] and [`super::merge`].

/// The built-in PRD pipeline, `prd-to-code`: its `prompt_file`s name the five templates
/// below by their paths relative to it (`../prompts/architect.md`, ...).
pub const PRD_TO_CODE: &str = include_str!("../../builtin/workflows/prd-to-code.json");

/// The five stages of the built-in PRD pipeline ([`PRD_TO_CODE`]).
pub const ARCHITECT: &str = include_str!("../../builtin/prompts/architect.md");
pub const QA: &str = include_str!("../../builtin/prompts/qa.md");
pub const SECURITY: &str = include_str!("../../builtin/prompts/security.md");
pub const IMPLEMENTER: &str = include_str!("../../builtin/prompts/implementer.md");
pub const VERIFIER: &str = include_str!("../../builtin/prompts/verifier.md");
/// A stories loop: every iteration's agent reads it, `{{story}}` filled at each.
pub const STORIES: &str = include_str!("../../builtin/prompts/stories.md");
/// `pagent parallel --merge`'s resolution loop, filled by [`super::merge::prompt`].
pub const MERGE: &str = include_str!("../../builtin/prompts/merge.md");
/// A team's landing whose checks fail on the merged work, filled by [`super::team::gate`].
pub const TEAM_GATE: &str = include_str!("../../builtin/prompts/team-gate.md");
