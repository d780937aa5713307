//! What a condition says about itself without the world: the paths set-up checks for
//! symlinks, the commands consent lists, whether it may start a process, its promise.

use serde_json::json;

use super::parse;

#[test]
fn paths_name_every_file_and_folder_however_deep() {
    let condition = parse(json!({"all": [
        {"file_exists": "a.md"},
        {"any": [
            {"directory_exists": "src"},
            {"all_files_exist": ["b.md", "docs/c.md"]},
            {"promise_in_output": "DONE"}
        ]},
        {"stories_pass": "prd.json"},
        {"command": ["cargo", "test"]}
    ]}))
    .unwrap();
    let paths: Vec<&str> = condition.paths().iter().map(|p| p.as_str()).collect();
    assert_eq!(paths, ["a.md", "src", "b.md", "docs/c.md", "prd.json"]);
    assert!(
        parse(json!({"custom": "make check"}))
            .unwrap()
            .paths()
            .is_empty()
    );
}

#[test]
fn commands_and_runs_commands_see_nested_checks() {
    let nested = parse(json!({"any": [
        {"promise_in_output": "DONE"},
        {"all": [{"file_exists": "a"}, {"custom": "make check"}]},
        {"command": ["cargo", "test", "--quiet"]}
    ]}))
    .unwrap();
    assert!(nested.runs_commands());
    assert_eq!(nested.commands(), ["make check", "cargo test --quiet"]);

    for quiet in [
        json!({"file_exists": "a"}),
        json!({"promise_in_output": "DONE"}),
        json!({"all": [{"file_exists": "a"}, {"any": [{"directory_exists": "b"}]}]}),
    ] {
        let condition = parse(quiet.clone()).unwrap();
        assert!(!condition.runs_commands(), "{quiet}");
        assert!(condition.commands().is_empty(), "{quiet}");
    }
    assert!(parse(json!({"custom": "true"})).unwrap().runs_commands());
}

#[test]
fn the_promise_is_found_inside_combinations() {
    let promise = |value| parse(value).unwrap().promise().map(str::to_owned);
    assert_eq!(
        promise(json!({"promise_in_output": "DONE"})),
        Some("DONE".into())
    );
    assert_eq!(
        promise(
            json!({"all": [{"file_exists": "a"}, {"any": [{"command": ["x"]}, {"promise_in_output": "SHIPPED"}]}]})
        ),
        Some("SHIPPED".into())
    );
    assert_eq!(promise(json!({"file_exists": "a"})), None);
}
