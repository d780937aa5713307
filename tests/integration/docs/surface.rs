//! What a user can hold (issue 31, item 4): the commands and flags `--help` shows, the
//! environment variables pagent reads and the keys of the files a person writes, counted
//! in `docs/surface.md`. The tests fail when one is added without its documentation (a
//! visible command or flag no page of the docs names) and when the counts in
//! `docs/surface.md` are not the real ones; `PAGENT_BLESS_DOCS=1` rewrites the counts.

#![cfg_attr(
    not(target_os = "linux"),
    allow(
        dead_code,
        reason = "the counts are of the Linux build: its helpers serve the Linux test alone"
    )
)]

use std::collections::BTreeSet;

use serde_json::Value;

use super::repo;

/// Each visible command (`pagent run`), with its visible long flags (a global flag under
/// the command that declares it, not again under its subcommands; `--help` and
/// `--version` left out).
fn commands() -> Vec<(String, Vec<String>)> {
    fn walk(
        command: &clap::Command,
        path: &str,
        inherited: &BTreeSet<String>,
        out: &mut Vec<(String, Vec<String>)>,
    ) {
        let flags: Vec<String> = command
            .get_arguments()
            .filter(|a| !a.is_hide_set())
            .filter_map(|a| a.get_long().map(|l| format!("--{l}")))
            .filter(|l| l != "--help" && l != "--version" && !inherited.contains(l))
            .collect();
        let mut inherited = inherited.clone();
        inherited.extend(
            command
                .get_arguments()
                .filter(|a| a.is_global_set())
                .filter_map(|a| a.get_long().map(|l| format!("--{l}"))),
        );
        out.push((path.to_owned(), flags));
        for sub in command
            .get_subcommands()
            .filter(|s| !s.is_hide_set() && s.get_name() != "help")
        {
            walk(sub, &format!("{path} {}", sub.get_name()), &inherited, out);
        }
    }
    let mut out = Vec::new();
    walk(
        &pagent::surface::command(),
        "pagent",
        &BTreeSet::new(),
        &mut out,
    );
    out
}

/// The keys of a schema, as dotted paths (`notify.command`); a map keyed by the user
/// (`checks.<ext>`, `prices.<model>`) is one key with its own keys under `*`.
fn keys(root: &Value, schema: &Value, at: &str, out: &mut BTreeSet<String>) {
    if let Some(name) = schema["$ref"]
        .as_str()
        .and_then(|r| r.strip_prefix("#/$defs/"))
    {
        if name != "condition" && name != "stage" {
            keys(root, &root["$defs"][name], at, out);
        }
        return;
    }
    let join = |key: &str| {
        if at.is_empty() {
            key.to_owned()
        } else {
            format!("{at}.{key}")
        }
    };
    for (key, value) in schema["properties"].as_object().into_iter().flatten() {
        out.insert(join(key));
        keys(root, value, &join(key), out);
    }
    if let Some(each) = schema.get("additionalProperties").filter(|v| v.is_object()) {
        keys(root, each, &join("*"), out);
    }
    for item in schema
        .get("items")
        .into_iter()
        .chain(schema["oneOf"].as_array().into_iter().flatten())
    {
        keys(root, item, at, out);
    }
}

fn schema_keys(schema: &Value) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    keys(schema, schema, "", &mut out);
    out
}

/// The generated part of `docs/surface.md`.
fn counted() -> String {
    let commands = commands();
    let flags: BTreeSet<&String> = commands.iter().flat_map(|(_, f)| f).collect();
    let config = schema_keys(&pagent::schemas::config());
    let workflow = schema_keys(&pagent_engine::schema::workflow());
    let stage = schema_keys(&pagent_engine::schema::workflow()["$defs"]["stage"]);
    let forms = pagent_engine::schema::workflow()["$defs"]["condition"]["oneOf"]
        .as_array()
        .map_or(0, Vec::len);
    let mut text = format!(
        "| what | count |\n| --- | --- |\n| commands | {} |\n| flags (distinct names) | {} |\n| environment variables read (Linux) | {} |\n| `config.json` keys | {} |\n| workflow keys (and a stage's) | {} (+{}) |\n| exit-condition forms | {forms} |\n\n",
        commands.len(),
        flags.len(),
        pagent::surface::VARIABLES.len(),
        config.len(),
        workflow.len(),
        stage.len(),
    );
    for (command, flags) in &commands {
        let flags: Vec<String> = flags.iter().map(|f| format!("`{f}`")).collect();
        text += &format!(
            "- `{command}`: {}\n",
            if flags.is_empty() {
                "-".to_owned()
            } else {
                flags.join(", ")
            }
        );
    }
    text += "\nEnvironment variables: ";
    text += &pagent::surface::VARIABLES
        .iter()
        .map(|v| format!("`{v}`"))
        .collect::<Vec<_>>()
        .join(", ");
    text += ".\n\n`config.json` keys: ";
    text += &config
        .iter()
        .map(|k| format!("`{k}`"))
        .collect::<Vec<_>>()
        .join(", ");
    text += ".\n";
    text
}

const BEGIN: &str = "<!-- counted: begin (PAGENT_BLESS_DOCS=1 cargo test --test integration docs::surface rewrites it) -->\n";
const END: &str = "<!-- counted: end -->";

/// Issue 31, item 4: `docs/surface.md` counts the real surface (on Linux, where the
/// variables read are the ones it lists).
#[cfg(target_os = "linux")]
#[test]
fn issue_31_docs_surface_md_counts_the_surface() {
    let path = repo().join("docs/surface.md");
    let doc = std::fs::read_to_string(&path).unwrap();
    let (head, rest) = doc
        .split_once(BEGIN)
        .expect("docs/surface.md has its begin marker");
    let (_, tail) = rest
        .split_once(END)
        .expect("docs/surface.md has its end marker");
    let fresh = format!("{head}{BEGIN}{}{END}{tail}", counted());
    if std::env::var_os("PAGENT_BLESS_DOCS").is_some() {
        std::fs::write(&path, &fresh).unwrap();
    }
    assert!(
        doc == fresh,
        "docs/surface.md does not count the surface as it is (PAGENT_BLESS_DOCS=1 rewrites it; review the diff)"
    );
}

/// Whether `text` names `word` whole (`--all`, not only `--all-branches`).
fn names(text: &str, word: &str) -> bool {
    text.match_indices(word).any(|(at, _)| {
        !text[at + word.len()..]
            .starts_with(|c: char| c.is_ascii_alphanumeric() || c == '-' || c == '_')
    })
}

/// Issue 31, item 4: a command or flag `--help` shows is named in the docs (README.md or
/// `docs/*.md`, beyond the counted list), so none is added without saying what it does.
#[test]
fn issue_31_every_visible_command_and_flag_is_documented() {
    let mut docs = std::fs::read_to_string(repo().join("README.md")).unwrap();
    for entry in std::fs::read_dir(repo().join("docs")).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "md") && !path.ends_with("surface.md") {
            docs += &std::fs::read_to_string(path).unwrap();
        }
    }
    let mut missing = Vec::new();
    for (command, flags) in commands() {
        if command != "pagent" && !names(&docs, &command) {
            missing.push(command.clone());
        }
        missing.extend(
            flags
                .iter()
                .filter(|f| !names(&docs, f))
                .map(|f| format!("{command} {f}")),
        );
    }
    assert!(
        missing.is_empty(),
        "not named in README.md or docs/: {missing:#?}"
    );
}

/// Issue 31, item 4: what only pagent and Claude Code's hooks call stays out of `--help`.
#[test]
fn issue_31_internal_commands_and_flags_are_hidden() {
    let commands = commands();
    let names: Vec<&str> = commands.iter().map(|(c, _)| c.as_str()).collect();
    assert!(
        !names.iter().any(|c| c.starts_with("pagent hook")),
        "{names:?}"
    );
    for (command, internal) in [
        ("pagent run", "--stdin-args"),
        ("pagent ralph", "--stdin-args"),
        ("pagent parallel", "--stdin-args"),
        ("pagent status", "--slash"),
        ("pagent status", "--pause"),
        ("pagent parallel", "--checkpoint"),
    ] {
        let (_, flags) = commands.iter().find(|(c, _)| c == command).unwrap();
        assert!(
            !flags.iter().any(|f| f == internal),
            "{command} shows {internal}"
        );
    }
}

/// Issue 31, item 4: the tuning a user sets once lives in their config's `loop` section;
/// its old flags are kept for older command lines but no longer crowd `--help`.
#[test]
fn issue_31_the_loop_tuning_flags_are_hidden_from_help() {
    let commands = commands();
    for command in ["pagent loop", "pagent parallel", "pagent team start"] {
        let (_, flags) = commands.iter().find(|(c, _)| c == command).unwrap();
        for hidden in [
            "--idle-timeout",
            "--retries",
            "--retry-delay",
            "--outage-wait",
            "--limit-wait",
            "--limit-margin",
        ] {
            assert!(
                !flags.iter().any(|f| f == hidden),
                "{command} shows {hidden}"
            );
        }
        for kept in ["--iteration-timeout", "--no-limit-wait"] {
            assert!(flags.iter().any(|f| f == kept), "{command} hides {kept}");
        }
    }
}
