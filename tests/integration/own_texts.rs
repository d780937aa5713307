//! pagent's own texts never make the promise: a model that quotes a command file, a stage
//! prompt, the set-up output or a re-prompt back must not end its loop by doing so
//! (issue 10). The rule itself is a table in `crates/engine/src/promise.rs`.

use pagent_engine::contains_promise;

use crate::util::*;

fn assert_no_promise(what: &str, text: &str) {
    assert!(
        !contains_promise(text, "DONE"),
        "{what} has a line that would count as the promise:\n{text}"
    );
}

#[test]
fn command_files_and_prompts_never_make_the_promise() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut seen = 0;
    for dir in ["commands", "crates/engine/builtin/prompts"] {
        for entry in std::fs::read_dir(root.join(dir)).unwrap() {
            let path = entry.unwrap().path();
            assert_no_promise(
                &path.display().to_string(),
                &std::fs::read_to_string(&path).unwrap(),
            );
            seen += 1;
        }
    }
    assert!(seen >= 10, "only {seen} files checked");
}

#[test]
fn set_up_output_and_re_prompts_never_make_the_promise() {
    let env = TestEnv::new();
    let out = env.cmd(&["ralph", "Fix it"]).success();
    assert_no_promise("pagent ralph's output", &out.stdout);
    let reason = env.stop(&env.stop_input("Not yet.")).blocked();
    assert_no_promise("a ralph re-prompt", &reason);
    // Quoting the re-prompt back does not end the loop either.
    let reason = env.stop(&env.stop_input(&reason)).blocked();
    assert_no_promise("a ralph re-prompt", &reason);

    let env = TestEnv::new();
    env.write("prd.md", "# PRD\nA todo app.\n");
    let out = env.cmd(&["run", "prd.md", "--max-stages", "1"]).success();
    assert_no_promise("pagent run's output", &out.stdout);
    let reason = env.stop(&env.stop_input(&out.stdout)).blocked();
    assert_no_promise("a pipeline re-prompt", &reason);
}
