//! The short slash-command names (/ralph, /pagent-run, ...) as user-scope Claude Code
//! commands: `<config>/commands/NAME.md`.
//!
//! Claude Code always namespaces a plugin's commands (/pagent:ralph); only user commands
//! have bare names. Each file is made from the plugin's own command file, with the
//! launcher's absolute path in place of `${CLAUDE_PLUGIN_ROOT}/scripts/pagent` (which a
//! user command does not get) and a marker line. A file without the marker is the user's
//! own and is never touched. This is the one writer of these files.
//!
//! The marker is a YAML comment inside the front matter, which Claude Code strips: the
//! model never reads it. (It used to be an HTML comment after the front matter, the first
//! line of the text the model was told to copy "exactly".) Either form marks a file as
//! pagent's ([`MARKERS`]), as does the one the former `scripts/install-commands.sh` wrote,
//! so an uninstall removes them all.
//!
//! The plugin's command files were renamed once (pagent-run.md became run.md); the short
//! names come from whichever of them the staged plugin has.

use std::path::{Path, PathBuf};

use super::files;

/// How a line that marks a short-name file as pagent's begins (today's, then older forms).
const MARKERS: &[&str] = &[
    "# pagent: short command name written by",
    "<!-- pagent: short command name written by",
];
const MARKER: &str =
    "# pagent: short command name written by pagent install; `pagent uninstall` deletes it";

/// Short name, then the plugin's command files it may come from (newest name first).
const SHORT_NAMES: &[(&str, &[&str])] = &[
    ("pagent-run", &["run", "pagent-run"]),
    ("pagent-status", &["status", "pagent-status"]),
    ("pagent-cancel", &["cancel", "pagent-cancel"]),
    ("pagent-resume", &["resume"]),
    ("ralph", &["ralph"]),
    ("ralph-cancel", &["ralph-cancel"]),
];

#[derive(Debug, PartialEq, Eq)]
pub enum Outcome {
    Written,
    Unchanged,
    /// A file of that name that pagent did not write.
    KeptUsers,
}

/// One short name to install: its file, and the plugin command it is made from.
#[derive(Debug)]
pub struct Planned {
    pub short: &'static str,
    pub plugin_command: &'static str,
    pub source: PathBuf,
    pub target: PathBuf,
}

/// The short names the plugin folder `plugin` can give, with their files in `dir`.
pub fn plan(plugin: &Path, dir: &Path) -> Vec<Planned> {
    SHORT_NAMES
        .iter()
        .filter_map(|(short, candidates)| {
            candidates.iter().find_map(|name| {
                let source = plugin.join("commands").join(format!("{name}.md"));
                files::is_file(&source).then(|| Planned {
                    short,
                    plugin_command: name,
                    source,
                    target: dir.join(format!("{short}.md")),
                })
            })
        })
        .collect()
}

pub fn is_marked(text: &str) -> bool {
    text.lines()
        .any(|line| MARKERS.iter().any(|marker| line.starts_with(marker)))
}

/// The user command made from a plugin command: the launcher's path in place of the
/// plugin root's, the marker as the front matter's last line (a front matter is added
/// when the plugin command has none).
pub fn render(plugin_text: &str, launcher: &Path) -> String {
    let text = plugin_text.replace(
        "${CLAUDE_PLUGIN_ROOT}/scripts/pagent",
        &launcher.to_string_lossy(),
    );
    let closing = text
        .strip_prefix("---\n")
        .and_then(|rest| rest.find("\n---\n").map(|i| 4 + i + 1));
    match closing {
        Some(at) => format!("{}{MARKER}\n{}", &text[..at], &text[at..]),
        None => format!("---\n{MARKER}\n---\n{text}"),
    }
}

/// A launcher path that can stand inside the commands' double quotes and permission
/// patterns as it is.
pub fn launcher_is_plain(launcher: &Path) -> bool {
    launcher.to_str().is_some_and(|s| {
        !s.chars()
            .any(|c| matches!(c, '"' | '$' | '`' | '\\' | '\n' | '*' | '(' | ')'))
    })
}

pub fn install_one(planned: &Planned, launcher: &Path) -> anyhow::Result<Outcome> {
    let current = files::read_text(&planned.target).ok().flatten();
    if files::exists(&planned.target) && !current.as_deref().is_some_and(is_marked) {
        return Ok(Outcome::KeptUsers);
    }
    let source = files::read_text(&planned.source)?.unwrap_or_default();
    let text = render(&source, launcher);
    if current.as_deref() == Some(text.as_str()) {
        return Ok(Outcome::Unchanged);
    }
    files::write_atomic(&planned.target, text.as_bytes(), 0o644)?;
    Ok(Outcome::Written)
}

/// Removes the marked short-name files in `dir`: the names removed, and the files left
/// alone because pagent did not write them.
pub fn remove_all(dir: &Path) -> anyhow::Result<(Vec<String>, Vec<PathBuf>)> {
    let (mut removed, mut kept) = (Vec::new(), Vec::new());
    for (short, _) in SHORT_NAMES {
        let file = dir.join(format!("{short}.md"));
        if !files::exists(&file) {
            continue;
        }
        if files::read_text(&file)
            .ok()
            .flatten()
            .is_some_and(|t| is_marked(&t))
        {
            files::remove_tree(&file)?;
            removed.push(format!("/{short}"));
        } else {
            kept.push(file);
        }
    }
    Ok((removed, kept))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_marker_ends_the_front_matter_and_the_launcher_replaces_the_root() {
        let plugin = "---\ndescription: \"x\"\nallowed-tools: ['Bash(\"${CLAUDE_PLUGIN_ROOT}/scripts/pagent\" cancel:*)']\n---\n\n```!\n\"${CLAUDE_PLUGIN_ROOT}/scripts/pagent\" cancel\n```\n";
        let text = render(
            plugin,
            Path::new("/h/.local/share/pagent/marketplace/scripts/pagent"),
        );
        assert_eq!(
            text,
            format!(
                "---\ndescription: \"x\"\nallowed-tools: ['Bash(\"/h/.local/share/pagent/marketplace/scripts/pagent\" cancel:*)']\n{MARKER}\n---\n\n```!\n\"/h/.local/share/pagent/marketplace/scripts/pagent\" cancel\n```\n"
            )
        );
        assert!(is_marked(&text));
        assert!(!is_marked(plugin));
    }

    #[test]
    fn item_11_the_marker_is_in_the_front_matter_which_the_model_never_reads() {
        let text = render("---\ndescription: \"x\"\n---\n\nBody.\n", Path::new("/l"));
        assert_eq!(
            text,
            format!("---\ndescription: \"x\"\n{MARKER}\n---\n\nBody.\n")
        );
        let body = text.rsplit("\n---\n").next().unwrap();
        assert!(!body.contains("pagent install"), "{body}");
        assert_eq!(
            render("Body.\n", Path::new("/l")),
            format!("---\n{MARKER}\n---\nBody.\n")
        );
    }

    #[test]
    fn the_markers_of_older_versions_count_too() {
        assert!(is_marked(
            "---\n---\n<!-- pagent: short command name written by pagent install; `pagent uninstall` deletes it -->\n"
        ));
        assert!(is_marked(
            "---\n---\n<!-- pagent: short command name written by scripts/install-commands.sh; scripts/install-commands.sh --remove deletes it -->\n"
        ));
    }

    #[test]
    #[allow(clippy::disallowed_methods)]
    fn old_and_new_plugin_command_names_both_give_the_short_names() {
        let dir = tempfile::tempdir().unwrap();
        let commands = dir.path().join("commands");
        std::fs::create_dir(&commands).unwrap();
        for name in ["pagent-run", "status", "ralph"] {
            std::fs::write(commands.join(format!("{name}.md")), "x").unwrap();
        }
        let planned: Vec<_> = plan(dir.path(), Path::new("/c"))
            .into_iter()
            .map(|p| (p.short, p.plugin_command))
            .collect();
        assert_eq!(
            planned,
            [
                ("pagent-run", "pagent-run"),
                ("pagent-status", "status"),
                ("ralph", "ralph")
            ]
        );
    }

    #[test]
    fn a_launcher_path_with_shell_characters_is_refused() {
        assert!(launcher_is_plain(Path::new("/home/a b/pagent")));
        assert!(!launcher_is_plain(Path::new("/home/$x/pagent")));
        assert!(!launcher_is_plain(Path::new("/home/\"x/pagent")));
    }
}
