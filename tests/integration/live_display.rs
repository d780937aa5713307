//! `pagent loop`'s status line and `pagent parallel`'s table on a real terminal (issue 20,
//! item 5): the real binary in tmux at 80x24 and 40x20, a fake `claude` that shows a
//! long, wide-character tool call and waits for the test's go-ahead, and the screen read
//! with `capture-pane` as a person would see it. A line that is one column too wide, or a
//! table taller than the screen, leaves copies of itself at every redraw; these tests
//! count them. Waiting is polling the screen with a deadline, never a fixed sleep. They
//! need `tmux` (scripts/install-tools.sh installs it); without it they fail, never skip.

use std::path::PathBuf;

use crate::util::*;

const SPINNER: &[char] = &['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];
/// A tool call wider than any terminal, with wide and combining characters.
const COMMAND: &str = "cargo test --workspace -- 日本語のテスト名をすべて実行する cafe\u{301} \
                       and a long tail of arguments that goes past the edge of every terminal";

/// A fake `claude -p`: reports a Bash call of [`COMMAND`], waits until the file
/// `go/<task>.<run>` exists (task: the folder it runs in), then ends its run, with the
/// promise from its second run on.
fn fake_claude(env: &TestEnv) -> PathBuf {
    let go = env.home.join("go");
    std::fs::create_dir_all(&go).unwrap();
    let tool = serde_json::json!({"type": "assistant", "message": {"content": [
        {"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": COMMAND}}]}});
    let dir = env.fake_tool(
        "bin",
        "claude",
        &format!(
            "cat >/dev/null\n\
             task=$(basename \"$PWD\"); count=\"{go}/$task.count\"\n\
             n=$(cat \"$count\" 2>/dev/null || echo 0); n=$((n+1)); echo $n > \"$count\"\n\
             echo '{tool}'\n\
             while [ ! -e \"{go}/$task.$n\" ] && [ ! -e \"{go}/all\" ]; do sleep 0.05; done\n\
             if [ $n -ge 2 ]; then text='All green.\\n<promise>DONE</promise>'; else text='Fixed one.'; fi\n\
             printf '{{\"type\":\"result\",\"subtype\":\"success\",\"is_error\":false,\"result\":\"%s\",\"usage\":{{\"input_tokens\":500,\"output_tokens\":100}}}}\\n' \"$text\"\n",
            go = go.display()
        ),
    );
    dir.join("claude")
}

fn go(env: &TestEnv, name: &str) {
    std::fs::write(env.home.join("go").join(name), "").unwrap();
}

fn spinner_rows(rows: &[String]) -> Vec<&String> {
    rows.iter().filter(|r| r.starts_with(SPINNER)).collect()
}

/// One loop of two iterations at `size`: at every moment one status line, one screen
/// row long, and the tool call cut rather than wrapped; afterwards no status line left.
fn loop_screen(size: (u16, u16)) -> String {
    let env = TestEnv::new();
    let claude = fake_claude(&env);
    let script = pagent_script(
        &env,
        &format!(
            "loop --agent-bin '{}' ralph 'Make every test pass'",
            claude.display()
        ),
    );
    let tmux = Tmux::start(size, &env.root, &script);
    let cols = usize::from(size.0);
    for n in 1..=2 {
        // Two seconds of redraws (the spinner turns at every tick) before looking.
        let two_seconds_in =
            regex::Regex::new(&format!(r"iteration {n}/25 · ([2-9]|\d\d+)s\b")).unwrap();
        let rows = tmux.wait_until(&format!("iteration {n}'s status line, 2s in"), |rows| {
            spinner_rows(rows)
                .iter()
                .any(|r| two_seconds_in.is_match(r))
        });
        let status = spinner_rows(&rows);
        assert_eq!(
            status.len(),
            1,
            "one status line, not {}:\n{}",
            status.len(),
            rows.join("\n")
        );
        let line = status[0];
        assert!(line.contains("Bash cargo") || cols < 50, "{line}");
        assert!(line.ends_with('…'), "the tool call is cut: {line}");
        let spilled: Vec<&String> = rows
            .iter()
            .filter(|r| r.contains("テスト") || r.contains("arguments") || r.contains("Bash"))
            .filter(|r| !r.starts_with(SPINNER))
            .collect();
        assert!(
            spilled.is_empty(),
            "spilled rows {spilled:?}:\n{}",
            rows.join("\n")
        );
        go(&env, &format!("project.{n}"));
    }
    let rows = tmux.wait_until("the loop's end", |rows| {
        rows.iter().any(|r| r.starts_with("[exit "))
    });
    assert!(
        spinner_rows(&rows).is_empty(),
        "a status line is left:\n{}",
        rows.join("\n")
    );
    assert!(rows.iter().any(|r| r == "[exit 0]"), "{}", rows.join("\n"));
    shown(&env, &tmux.joined())
}

/// The screen with temp paths and times masked, for a snapshot.
fn shown(env: &TestEnv, screen: &str) -> String {
    let text = screen
        .replace(&env.home.display().to_string(), "[HOME]")
        .replace(&env.root.display().to_string(), "[PROJECT]");
    let elapsed = regex::Regex::new(r"\b\d+h\d\dm\b|\b\d+m\d\ds\b|\b\d+s\b").unwrap();
    let text = elapsed.replace_all(text.trim_end(), "[T]");
    text.lines()
        .map(|l| format!("{}\n", l.trim_end()))
        .collect()
}

#[test]
fn item_5_loop_line_fits_80_columns() {
    insta::assert_snapshot!(loop_screen((80, 24)));
}

#[test]
fn item_5_loop_line_fits_40_columns() {
    insta::assert_snapshot!(loop_screen((40, 20)));
}

/// `pagent parallel` over `names` at `size`, every agent held until the test lets go:
/// returns the screen while the first `jobs` tasks run (the first one in its second
/// iteration), and the
/// screen at the end.
fn parallel_screens(
    names: &[String],
    jobs: usize,
    size: (u16, u16),
) -> (Vec<String>, Vec<String>, String) {
    let env = TestEnv::new();
    crate::git::git(&env.root, &["commit", "-q", "--allow-empty", "-m", "init"]);
    let claude = fake_claude(&env);
    let tasks: String = names
        .iter()
        .map(|n| format!("{n}: Fix the {n} tests\n"))
        .collect();
    env.write("tasks.txt", &tasks);
    let script = pagent_script(
        &env,
        &format!(
            "parallel tasks.txt -j {jobs} --agent-bin '{}'",
            claude.display()
        ),
    );
    let tmux = Tmux::start(size, &env.root, &script);
    tmux.wait_until("the first tasks running", |rows| {
        rows.iter()
            .filter(|r| r.contains("running") && r.contains("ralph 1/25 Bash"))
            .count()
            == jobs
    });
    // The first task goes on to its second iteration while the others wait: redraws
    // over a changed row.
    go(&env, &format!("{}.1", names[0]));
    let running = tmux.wait_until("the first task's second iteration", |rows| {
        rows.iter()
            .any(|r| r.starts_with(&names[0]) && r.contains("ralph 2/25 Bash"))
    });
    go(&env, "all");
    let end = tmux.wait_until("the end", |rows| {
        rows.iter().any(|r| r.starts_with("[exit "))
    });
    let joined = shown(&env, &tmux.joined());
    (running, end, joined)
}

/// Rows of the live table (a task's name first) by task: how often each appears.
fn table_rows<'a>(rows: &'a [String], names: &[String]) -> Vec<(&'a String, usize)> {
    let mut out = Vec::new();
    for row in rows {
        let first = row.split_whitespace().next().unwrap_or("");
        if names.iter().any(|n| n == first) {
            let count = rows
                .iter()
                .filter(|r| r.split_whitespace().next() == Some(first))
                .count();
            out.push((row, count));
        }
    }
    out
}

#[test]
fn item_5_parallel_table_redraws_cleanly_at_80x24() {
    let names: Vec<String> = ["alpha", "beta", "gamma"]
        .iter()
        .map(|s| (*s).to_owned())
        .collect();
    let (running, end, joined) = parallel_screens(&names, 2, (80, 24));
    let table = table_rows(&running, &names);
    assert_eq!(table.len(), 3, "one row per task:\n{}", running.join("\n"));
    assert!(
        table.iter().all(|(_, n)| *n == 1),
        "a repeated row:\n{}",
        running.join("\n")
    );
    let others: Vec<&String> = running.iter().filter(|r| !r.trim().is_empty()).collect();
    assert_eq!(
        others.len(),
        3,
        "rows that are not the table's:\n{}",
        running.join("\n")
    );
    assert!(
        running
            .iter()
            .filter(|r| r.contains("Bash cargo"))
            .all(|r| r.ends_with('…')),
        "{}",
        running.join("\n")
    );
    assert!(end.iter().any(|r| r == "[exit 0]"), "{}", end.join("\n"));
    let collapsed = regex::Regex::new(" +")
        .unwrap()
        .replace_all(&joined, " ")
        .into_owned();
    insta::assert_snapshot!(collapsed);
}

#[test]
fn item_5_parallel_table_fits_40x20() {
    let names: Vec<String> = (0..21).map(|i| format!("t{i:02}")).collect();
    let (running, end, _) = parallel_screens(&names, 3, (40, 20));
    let table = table_rows(&running, &names);
    assert_eq!(
        table.len(),
        18,
        "18 tasks of 21 fit above the note:\n{}",
        running.join("\n")
    );
    assert!(
        table.iter().all(|(_, n)| *n == 1),
        "a repeated row:\n{}",
        running.join("\n")
    );
    assert!(
        running.iter().any(|r| r.starts_with("… and 3 more tasks")),
        "{}",
        running.join("\n")
    );
    let used = running
        .iter()
        .rposition(|r| !r.trim().is_empty())
        .unwrap_or(0)
        + 1;
    assert!(
        used <= 19,
        "the table takes {used} rows of 20:\n{}",
        running.join("\n")
    );
    assert!(end.iter().any(|r| r == "[exit 0]"), "{}", end.join("\n"));
}
