//! The plan's own done marker, ticked in the landing commit: the story's marker in the
//! plan file as the merged tree has it, changed by the stories reader's `mark_done` (one
//! checkbox byte, one status word, one JSON `false`), the rest of the file byte for byte.
//! A marker that cannot be ticked leaves the tree as it was and says why; the story lands
//! all the same (the team's state records it as landed either way).

use std::path::Path;

use git2::build::TreeUpdateBuilder;
use git2::{FileMode, ObjectType, Oid, Repository};
use pagent_stories::{Format, MAX_PLAN_BYTES, mark_done};

use super::super::records::{TeamPlan, TeamStory};

/// `tree` with the story ticked in the plan file; or `tree` and why it was not.
pub fn tick(
    repo: &Repository,
    tree: Oid,
    plan: &TeamPlan,
    story: &TeamStory,
) -> (Oid, Option<String>) {
    let (Some(file), Some(id)) = (&plan.plan_file, &story.id) else {
        return (tree, None);
    };
    match ticked(repo, tree, &file.path, Format::from_name(&file.format), id) {
        Ok(new) => (new, None),
        Err(why) => (tree, Some(why)),
    }
}

fn ticked(
    repo: &Repository,
    tree: Oid,
    path: &str,
    format: Option<Format>,
    id: &str,
) -> Result<Oid, String> {
    let base = repo.find_tree(tree).map_err(|e| e.message().to_owned())?;
    let entry = base
        .get_path(Path::new(path))
        .map_err(|_| format!("{path} is not in the merged tree"))?;
    if entry.kind() != Some(ObjectType::Blob) {
        return Err(format!("{path} is not a file in the merged tree"));
    }
    let odb = repo.odb().map_err(|e| e.message().to_owned())?;
    let (size, _) = odb
        .read_header(entry.id())
        .map_err(|e| e.message().to_owned())?;
    if size > MAX_PLAN_BYTES {
        return Err(format!("{path} is larger than the plan readers read"));
    }
    let blob = repo
        .find_blob(entry.id())
        .map_err(|e| e.message().to_owned())?;
    let text = std::str::from_utf8(blob.content()).map_err(|_| format!("{path} is not UTF-8"))?;
    let Some(new) = mark_done(text, format, id).map_err(|e| e.to_string())? else {
        return Ok(tree);
    };
    let blob = repo
        .blob(new.as_bytes())
        .map_err(|e| e.message().to_owned())?;
    let mode = if entry.filemode() == 0o100_755 {
        FileMode::BlobExecutable
    } else {
        FileMode::Blob
    };
    TreeUpdateBuilder::new()
        .upsert(path, blob, mode)
        .create_updated(repo, &base)
        .map_err(|e| e.message().to_owned())
}
