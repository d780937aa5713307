//! Issue 30's findings about `pagent parallel` in the third trial: a plan read as a plan
//! (one task per story), and one instruction to resume after Ctrl-C.

use std::time::Duration;

use super::*;

/// The parallel tests' filters, then the suite's (the binary, the temp folders).
fn all_filters() -> Vec<(&'static str, &'static str)> {
    let mut all = filters();
    all.extend(crate::util::snapshot::filters());
    all
}

/// After Ctrl-C, each task's row said "run `pagent loop` in WORKTREE to resume" and the
/// footer "run the same command again": the rows now say the state is saved, and the
/// footer alone says how to go on.
#[test]
fn issue_30_after_ctrl_c_parallel_gives_one_resume_instruction() {
    let p = Parallel::new("alpha: do alpha\nbeta: do beta\n");
    p.control("slow-alpha");
    p.control("slow-beta");
    let (mut child, mut lines) = p.spawn_plain(&["-j", "2"]);
    wait_for(Duration::from_secs(20), "both agents at work", || {
        let log = p.log();
        log.iter().any(|l| l == "task alpha") && log.iter().any(|l| l == "task beta")
    });
    ctrl_c(&child);
    let out: Vec<String> = lines.by_ref().map(|l| l.unwrap()).collect();
    assert_eq!(child.wait().unwrap().code(), Some(130), "{out:?}");
    // The two tasks start and stop in either order: their lines sorted, then the summary.
    let (mut rows, summary): (Vec<String>, Vec<String>) =
        out.into_iter().partition(|l| l.starts_with('['));
    rows.sort_by_key(|l| l.split(']').next().unwrap_or_default().to_owned());
    let text = [rows, summary].concat().join("\n");
    assert_eq!(text.to_lowercase().matches("resume").count(), 1, "{text}");
    insta::with_settings!({filters => filters()}, {
        insta::assert_snapshot!(text);
    });
}

/// A fake agent for plans: it notes which stories' work its branch already holds
/// (`seen-NAME`), does its own (`NAME.done`), and makes its promise, unless a control
/// file `never-NAME` says it never will.
fn story_agent(p: &Parallel) -> String {
    let script = format!(
        "cat > /dev/null\nname=$(basename \"$PWD\")\nctl={ctl}\n\
         ls *.done 2>/dev/null | tr '\\n' ' ' > \"$ctl/seen-$name\"\n\
         echo \"task $name\" >> \"$ctl/log\"\n\
         date +%N >> \"$name.done\"\n\
         [ -f \"$ctl/never-$name\" ] && exit 0\n\
         echo '<promise>DONE</promise>'\n",
        ctl = p.ctl.display()
    );
    let path = p.env.home.join("story-agent.sh");
    fs::write(&path, script).unwrap();
    format!("sh {}", path.display())
}

const PRD: &str = r#"{
  "project": "Recipe Box",
  "userStories": [
    {"id": "US-004", "title": "Export the box", "priority": 4, "dependsOn": ["US-001", "US-003"], "passes": false},
    {"id": "US-001", "title": "Save a recipe", "description": "As a cook, I want to save a recipe.",
     "acceptanceCriteria": ["box.sh save NAME writes recipes/NAME.txt"], "priority": 1, "passes": false},
    {"id": "US-003", "title": "Delete a recipe", "priority": 3, "dependsOn": ["US-002"], "passes": false},
    {"id": "US-002", "title": "List the recipes", "priority": 2, "passes": false},
    {"id": "US-000", "title": "Set up the box", "priority": 1, "passes": true}
  ]
}
"#;

/// `pagent parallel prd.json` read a Ralph prd.json as a text tasks file: four loops on
/// JSON fragments. It is a plan: one task per story left, named after the story, in the
/// plan's order, each after the stories it depends on and starting from their work.
#[test]
fn issue_30_parallel_reads_a_prd_json_as_one_task_per_story() {
    let p = Parallel::new("");
    p.env.write("prd.json", PRD);
    let agent = story_agent(&p);
    let plan = p
        .env
        .cmd(&[
            "parallel",
            "prd.json",
            "--dry-run",
            "-j",
            "2",
            "--command",
            &agent,
        ])
        .success();
    let out = p
        .env
        .cmd(&["parallel", "prd.json", "-j", "2", "--command", &agent])
        .run();
    assert_eq!(out.code, Some(0), "{out}");
    let mut log = p.log();
    log.sort();
    assert_eq!(
        log,
        ["task US-001", "task US-002", "task US-003", "task US-004"],
        "{out}"
    );
    let seen = |name: &str| fs::read_to_string(p.ctl.join(format!("seen-{name}"))).unwrap();
    assert_eq!(seen("US-002"), "");
    assert_eq!(
        seen("US-003"),
        "US-002.done ",
        "US-003 starts from US-002's work"
    );
    assert_eq!(
        seen("US-004"),
        "US-001.done US-002.done US-003.done ",
        "US-004 starts from the work of both"
    );
    // The story is the task, word for word as the loop's agent reads it.
    let state: Value = serde_json::from_str(
        &fs::read_to_string(p.worktree("US-003").join(".claude/pagent-pipeline.json")).unwrap(),
    )
    .unwrap();
    let prompt = state["stages"][0]["prompt"].as_str().unwrap().to_owned();
    insta::with_settings!({filters => all_filters()}, {
        insta::assert_snapshot!(format!("{}\n=== US-003's task\n{prompt}", plan.stdout));
    });
}

/// Every plan format `pagent loop --stories` takes, `parallel` takes: one task per
/// story, named after it, with what it waits for.
#[test]
fn issue_30_parallel_takes_every_plan_format_of_the_stories_loop() {
    let p = Parallel::new("");
    let plans = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/plans");
    let mut said = Said::new();
    for file in [
        "prd.json",
        "chief-prd.md",
        "speckit-tasks.md",
        "kiro-tasks.md",
        "ralphex-plan.md",
    ] {
        p.env.write(
            file,
            &fs::read_to_string(format!("{plans}/{file}")).unwrap(),
        );
        let out = p
            .env
            .cmd(&["parallel", file, "--dry-run", "--command", "true"])
            .success();
        let tasks: String = out
            .stdout
            .lines()
            .filter(|l| l.starts_with("  "))
            .map(|l| format!("{l}\n"))
            .collect();
        said.say(file, &tasks);
    }
    p.env.write(
        "issues.md",
        "<!-- pagent: GitHub issues -->\n- [ ] #12 Fix the login\n- [x] #13 Done already\n- [ ] #15 Add a logout\n",
    );
    let out = p
        .env
        .cmd(&["parallel", "issues.md", "--dry-run", "--command", "true"])
        .success();
    said.say("issues.md", &out.stdout);
    // Named when the content does not tell: a text file of checkboxes, as Kiro writes.
    p.env.write(
        "todo.txt",
        "- [ ] 1. Store recipes\n- [ ] 2. Delete recipes\n",
    );
    let out = p
        .env
        .cmd(&[
            "parallel",
            "todo.txt",
            "--format",
            "kiro",
            "--dry-run",
            "--command",
            "true",
        ])
        .success();
    said.say("todo.txt --format kiro", &out.stdout);
    insta::with_settings!({filters => all_filters()}, {
        insta::assert_snapshot!(said.text());
    });
}

/// A file that looks like a plan but is not one pagent reads, or a plan whose stories
/// could never all start, is refused with a sentence, and nothing starts.
#[test]
fn issue_30_parallel_refuses_a_file_it_cannot_read_as_a_plan() {
    let p = Parallel::new("");
    let mut said = Said::new();
    for (file, content) in [
        ("tasks.json", "{\"tasks\": [\"a\", \"b\"]}\n"),
        ("notes.json", "not json at all\n"),
        ("TODO.md", "# Todo\n\n- buy milk\n- [ ] call Bob\n"),
        (
            "cycle.json",
            r#"{"userStories": [{"id": "A", "title": "a", "dependsOn": ["B"], "passes": false}, {"id": "B", "title": "b", "dependsOn": ["A"], "passes": false}]}"#,
        ),
        (
            "missing.json",
            r#"{"userStories": [{"id": "A", "title": "a", "dependsOn": ["Z"], "passes": false}]}"#,
        ),
        (
            "done.json",
            r#"{"userStories": [{"id": "A", "title": "a", "passes": true}]}"#,
        ),
    ] {
        p.env.write(file, content);
        let out = p
            .env
            .cmd(&["parallel", file, "--command", "true"])
            .failure();
        said.say(file, &out.stderr);
    }
    assert!(!p.env.exists(".pagent/worktrees"), "something started");
    insta::with_settings!({filters => filters()}, {
        insta::assert_snapshot!(said.text());
    });
}

/// A story whose dependency gave up never starts, and says why; the others go on.
#[test]
fn issue_30_a_story_waits_for_its_dependencies_and_never_starts_after_one_gave_up() {
    let p = Parallel::new("");
    p.env.write("prd.json", PRD);
    p.control("never-US-002");
    let agent = story_agent(&p);
    let out = p
        .env
        .cmd(&[
            "parallel",
            "prd.json",
            "-j",
            "2",
            "--max-iterations",
            "1",
            "--command",
            &agent,
        ])
        .run();
    assert_eq!(out.code, Some(3), "{out}");
    let mut log = p.log();
    log.sort();
    assert_eq!(log, ["task US-001", "task US-002"], "{out}");
    let (mut rows, summary): (Vec<&str>, Vec<&str>) =
        out.stdout.lines().partition(|l| l.starts_with('['));
    rows.sort_by_key(|l| l.split(']').next().unwrap_or_default().to_owned());
    let text = [rows, summary].concat().join("\n");
    insta::with_settings!({filters => filters()}, {
        insta::assert_snapshot!(text);
    });
}
