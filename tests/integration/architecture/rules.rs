//! The stack as data: which room a module path belongs to, and which arrows between rooms
//! are allowed. The essay in `mod.rs` says the same in words.

use std::fmt;
use std::path::Path;

use super::scan::named_paths;

/// The rooms, by the module path they start with (longest prefix wins), and their tier:
/// a lower tier is higher in the stack.
pub const ROOMS: &[(&str, Room)] = &[
    ("main", Room::Tier(0)),
    ("lib", Room::Tier(0)),
    ("dispatch", Room::Tier(0)),
    ("cmd", Room::Tier(1)),
    ("hooks", Room::Tier(2)),
    ("runner", Room::Tier(3)),
    ("slash", Room::Tier(3)),
    ("dashboard", Room::Tier(3)),
    ("install", Room::Tier(3)),
    ("setup", Room::Tier(4)),
    ("session", Room::Tier(5)),
    ("world", Room::Tier(6)),
    ("agent", Room::Tier(7)),
    ("store", Room::Tier(8)),
    ("cli", Room::Edge),
    ("io", Room::Edge),
    ("cli::args", Room::Args),
    ("cli::agent_args", Room::Args),
    ("cli::budget_args", Room::Args),
    ("cli::loop_args", Room::Args),
    ("cli::stdin_args", Room::Args),
    ("cli::clap_error", Room::Args),
    ("cli::task", Room::Args),
    ("cli::env", Room::Value),
    ("cli::hint", Room::Value),
];

const STORE: u8 = 8;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Room {
    /// A room of the stack.
    Tier(u8),
    /// The command line's parsers: for `cmd/`, `setup/` and `slash/` only.
    Args,
    /// The command line's output, exit codes, streams and clock: down to `world`.
    Edge,
    /// The captured environment, a value: down to the store.
    Value,
}

/// A module path's room: its name (the matched prefix) and kind.
fn room_of(path: &[String]) -> Option<(String, Room)> {
    ROOMS
        .iter()
        .filter(|(prefix, _)| {
            let segs: Vec<&str> = prefix.split("::").collect();
            segs.len() <= path.len() && segs.iter().zip(path).all(|(a, b)| a == b)
        })
        .max_by_key(|(prefix, _)| prefix.len())
        .map(|(prefix, room)| ((*prefix).to_owned(), *room))
}

/// One forbidden arrow: the file and line that draw it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Arrow {
    pub file: String,
    pub line: usize,
    pub from: String,
    pub to: String,
    pub why: &'static str,
}

impl Arrow {
    /// "file: from -> to", the form of an entry of `KNOWN`.
    pub fn key(&self) -> String {
        format!("{}: {} -> {}", self.file, self.from, self.to)
    }
}

impl fmt::Display for Arrow {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}:{}: {} -> {} ({})",
            self.file, self.line, self.from, self.to, self.why
        )
    }
}

/// The module path of a file relative to `crates/cli` (`store/door/mod.rs` is
/// `store::door`; `lib.rs`, `main.rs` keep their names so they map to the entry).
pub fn module_of(rel: &Path) -> Vec<String> {
    let mut segs: Vec<String> = rel
        .iter()
        .map(|s| s.to_string_lossy().trim_end_matches(".rs").to_owned())
        .collect();
    if segs.last().is_some_and(|s| s == "mod") {
        segs.pop();
    }
    segs
}

/// Why `from` may not name `to`, or `None` when the stack allows it.
fn forbids(
    from: &(String, Room),
    to: &(String, Room),
    from_mod: &[String],
    to_path: &[String],
) -> Option<&'static str> {
    use Room::{Args, Edge, Tier, Value};
    if from.0 == to.0 {
        // Within a room, only `cmd/` has a rule: no subcommand names another.
        let (a, b) = (from_mod.get(1), to_path.get(1));
        let is_file = |p: &[String]| p.len() >= 2;
        if from.0 == "cmd" && is_file(from_mod) && is_file(to_path) && a != b {
            return Some("no subcommand names another");
        }
        return None;
    }
    const QUIET: &str =
        "the store and the doors neither print, read the clock nor know the command line";
    match (from.1, to.1) {
        (Tier(0), _) => None,
        (Args | Edge | Value, Args | Edge | Value) => None,
        (Args | Edge | Value, Tier(t)) if t > STORE => None,
        (Args | Edge | Value, _) => Some("the command line's edge names only itself and the doors"),
        (Tier(_), Args) if matches!(from.0.as_str(), "cmd" | "setup" | "slash") => None,
        (Tier(_), Args) => Some("arguments become plan values in cmd/, setup/ or slash/"),
        (Tier(f), Edge) if f >= STORE => Some(QUIET),
        (Tier(f), Value) if f > STORE => Some(QUIET),
        (Tier(_), Edge | Value) => None,
        (Tier(f), Tier(t)) if f < t => None,
        (Tier(f), Tier(t)) if f == t => Some("rooms on one tier do not name each other"),
        (Tier(_), Tier(_)) => Some("a room names only the rooms below it"),
    }
}

/// The forbidden arrows drawn by one file (`rel` relative to `crates/cli`).
pub fn check_source(rel: &Path, src: &str) -> Vec<Arrow> {
    let module = module_of(rel);
    let file = rel.to_string_lossy().replace('\\', "/");
    let Some(from) = room_of(&module) else {
        return vec![Arrow {
            file,
            line: 1,
            from: module.join("::"),
            to: "?".to_owned(),
            why: "a room that is not in the stack: give it a tier in rules.rs",
        }];
    };
    let mut arrows: Vec<Arrow> = Vec::new();
    for named in named_paths(src, &module) {
        let Some(to) = room_of(&named.path) else {
            continue;
        };
        if let Some(why) = forbids(&from, &to, &module, &named.path) {
            let to_name = if matches!(to.0.as_str(), "cmd" | "cli") {
                named
                    .path
                    .iter()
                    .take(2)
                    .cloned()
                    .collect::<Vec<_>>()
                    .join("::")
            } else {
                to.0.clone()
            };
            let from_name = if from.0 == "cmd" {
                module.join("::")
            } else {
                from.0.clone()
            };
            let arrow = Arrow {
                file: file.clone(),
                line: named.line,
                from: from_name,
                to: to_name,
                why,
            };
            if !arrows.iter().any(|a| a.key() == arrow.key()) {
                arrows.push(arrow);
            }
        }
    }
    arrows
}
