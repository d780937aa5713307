//! `pagent parallel`'s work brought home (issue 20 item 6, issue 21's merge): runs whose
//! branches hold the work, second runs that resume, and the merge queue, each driven
//! through the real binary with a fake agent script.
//!
//! The fake agent is one shell script for every test: it reads its prompt, and either
//! does its task (the prompt's last line names it) or, when a merge is under way in its
//! worktree, resolves it. What it does is steered by files in a control folder outside the
//! project (`slow-NAME` sleeps, `unresolvable` gives up, ...), and every run appends a line
//! to a log there, so a test can count what ran.

mod child_plan;
mod merge;
mod merge_hostile;
mod runs;
mod trial;

use std::fs;
use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Stdio};

use serde_json::Value;

use crate::util::*;
use pagent_door::testing;

/// The fake agent. Tasks: `alpha` and `gamma` change line two of shared.txt (so they
/// conflict), `beta` writes beta.txt, `binary*` write bin.dat, `never` makes no promise.
/// A resolution prompt is answered by keeping both sides (or as the control files say).
const AGENT: &str = r#"
prompt=$(cat)
ctl=CTL
task=$(printf '%s' "$prompt" | tail -n 1)
if printf '%s' "$prompt" | grep -q '^# Merge: resolve the conflicts'; then
  printf '%s\n' "$prompt" > "$ctl/resolve-prompt.txt"
  echo "resolve $(basename "$PWD")" >> "$ctl/log"
  if [ -f "$ctl/slow-resolve" ]; then echo waiting; sleep 30; fi
  if [ -f "$ctl/unresolvable" ]; then echo 'I cannot resolve this.'; exit 0; fi
  if [ -f "$ctl/edit-outside" ]; then echo "theirs too" >> ../../../shared.txt; fi
  if [ -f "$ctl/something-else" ]; then
    git merge --abort 2>/dev/null; date +%N > other.txt; git add other.txt; git commit -q -m other
    echo 'committed something'; exit 0
  fi
  if [ -f "$ctl/markers-once" ] && [ ! -f "$ctl/markers-done" ]; then
    touch "$ctl/markers-done"
    git add -A && git commit -q --no-edit && echo 'committed'; exit 0
  fi
  if [ -f bin.dat ] && git ls-files -u | grep -q bin.dat; then
    git checkout --theirs bin.dat
  fi
  for f in $(git diff --name-only --diff-filter=U) shared.txt; do
    [ -f "$f" ] && sed -i -e '/^<<<<<<< /d' -e '/^=======$/d' -e '/^>>>>>>> /d' "$f"
  done
  [ -f "$ctl/make-ok" ] && touch ok
  git add -A
  if git rev-parse -q --verify MERGE_HEAD >/dev/null 2>&1; then git commit -q --no-edit; else git commit -q -m fix; fi
  echo resolved
  exit 0
fi
name=$(basename "$PWD")
echo "task $name" >> "$ctl/log"
if [ -f "$ctl/git-attack" ]; then sh "$ctl/git-attack"; fi
if [ -f "$ctl/slow-$name" ]; then echo working; sleep 30; fi
case "$task" in
  *alpha*) sed -i 's/^two$/two by alpha/' shared.txt ;;
  *beta*) echo beta > beta.txt ;;
  *gamma*) sed -i 's/^two$/two by gamma/' shared.txt ;;
  *binary*) printf 'bin\000%s' "$name" > bin.dat ;;
  *never*) date +%N >> never.txt; exit 0 ;;
esac
echo '<promise>DONE</promise>'
"#;

/// A project for parallel runs: a git repository on branch main with a committed
/// shared.txt, an identity for the fake agent's commits, the agent script and a control
/// folder.
pub struct Parallel {
    pub env: TestEnv,
    pub ctl: PathBuf,
}

impl Parallel {
    pub fn new(tasks: &str) -> Parallel {
        let env = TestEnv::new();
        let ctl = env.home.join("ctl");
        fs::create_dir_all(&ctl).unwrap();
        for args in [
            ["symbolic-ref", "HEAD", "refs/heads/main"].as_slice(),
            &["config", "user.name", "Tess"],
            &["config", "user.email", "tess@example.com"],
            &["config", "commit.gpgsign", "false"],
        ] {
            crate::git::git(&env.root, args);
        }
        env.write("shared.txt", "one\ntwo\nthree\n");
        crate::git::git(&env.root, &["add", "shared.txt"]);
        crate::git::git(&env.root, &["commit", "-q", "-m", "init"]);
        env.write("tasks.txt", tasks);
        fs::write(
            env.home.join("agent.sh"),
            AGENT.replace("CTL", &ctl.display().to_string()),
        )
        .unwrap();
        Parallel { env, ctl }
    }

    pub fn agent(&self) -> String {
        format!("sh {}", self.env.home.join("agent.sh").display())
    }

    /// `pagent parallel tasks.txt --command AGENT ARGS`, run to its end.
    pub fn run(&self, args: &[&str]) -> Run {
        self.run_file("tasks.txt", args)
    }

    /// The same with another tasks file.
    pub fn run_file(&self, file: &str, args: &[&str]) -> Run {
        let agent = self.agent();
        let mut all = vec!["parallel", file, "--command", &agent];
        all.extend(args);
        self.env.cmd(&all).run()
    }

    /// The same, in its own process group, with stdout read line by line.
    pub fn spawn(
        &self,
        args: &[&str],
    ) -> (Child, std::io::Lines<BufReader<std::process::ChildStdout>>) {
        let mut all = vec!["--json"];
        all.extend(args);
        self.spawn_plain(&all)
    }

    /// [`Parallel::spawn`] without `--json`: the lines a person reads.
    pub fn spawn_plain(
        &self,
        args: &[&str],
    ) -> (Child, std::io::Lines<BufReader<std::process::ChildStdout>>) {
        use std::os::unix::process::CommandExt;
        let agent = self.agent();
        let mut all = vec!["parallel", "tasks.txt", "--command", &agent];
        all.extend(args);
        let mut command = self.env.bin(&all).command();
        command
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .process_group(0);
        let mut child = command.spawn().unwrap();
        let lines = BufReader::new(child.stdout.take().unwrap()).lines();
        (child, lines)
    }

    pub fn control(&self, name: &str) {
        fs::write(self.ctl.join(name), "").unwrap();
    }

    pub fn uncontrol(&self, name: &str) {
        let _ = fs::remove_file(self.ctl.join(name));
    }

    /// The agent's runs so far, one line each ("task alpha", "resolve gamma").
    pub fn log(&self) -> Vec<String> {
        fs::read_to_string(self.ctl.join("log"))
            .unwrap_or_default()
            .lines()
            .map(str::to_owned)
            .collect()
    }

    pub fn repo(&self) -> git2::Repository {
        git2::Repository::open(&self.env.root).unwrap()
    }

    pub fn tip(&self, branch: &str) -> git2::Commit<'static> {
        let repo = Box::leak(Box::new(self.repo()));
        repo.find_branch(branch, git2::BranchType::Local)
            .unwrap()
            .get()
            .peel_to_commit()
            .unwrap()
    }

    pub fn worktree(&self, name: &str) -> PathBuf {
        self.env.path(&format!(".pagent/worktrees/{name}"))
    }
}

/// The summary object (`--json`'s last line).
pub fn summary(out: &Run) -> Value {
    let last = out.stdout.lines().last().unwrap_or("");
    let value: Value =
        serde_json::from_str(last).unwrap_or_else(|e| panic!("no JSON summary ({e})\n{out}"));
    assert_eq!(value["event"], "summary", "{out}");
    value
}

/// Reads `lines` until each of `wanted` (event, task) was seen, in any order.
pub fn read_until_all(
    lines: &mut impl Iterator<Item = std::io::Result<String>>,
    wanted: &[(&str, &str)],
) {
    let mut left: Vec<(&str, &str)> = wanted.to_vec();
    let mut seen = Vec::new();
    for line in lines.by_ref() {
        let line = line.unwrap();
        seen.push(line.clone());
        if let Ok(value) = serde_json::from_str::<Value>(&line) {
            left.retain(|(event, task)| !(value["event"] == *event && value["task"] == *task));
        }
        if left.is_empty() {
            return;
        }
    }
    panic!("never saw {left:?} in:\n{}", seen.join("\n"));
}

/// Reads `lines` until one is the JSON event `event` of task `task` (and `phase`, when
/// given); the lines read.
pub fn read_until(
    lines: &mut impl Iterator<Item = std::io::Result<String>>,
    event: &str,
    task: &str,
    phase: Option<&str>,
) -> Vec<String> {
    let mut seen = Vec::new();
    for line in lines.by_ref() {
        let line = line.unwrap();
        seen.push(line.clone());
        let Ok(value) = serde_json::from_str::<Value>(&line) else {
            continue;
        };
        if value["event"] == event
            && value["task"] == task
            && phase.is_none_or(|p| value["phase"] == p)
        {
            return seen;
        }
    }
    panic!("no {event} event for {task} in:\n{}", seen.join("\n"));
}

/// SIGINT to the whole process group, as a terminal's Ctrl-C sends it.
pub fn ctrl_c(child: &Child) {
    testing::signal(-(child.id() as i32), testing::SIGINT);
}

/// Filters for snapshots of summaries: the temp folder and commit ids.
pub fn filters() -> Vec<(&'static str, &'static str)> {
    vec![
        (r"/[^\s`']*/project", "[PROJECT]"),
        (r"\b[0-9a-f]{10}\b", "[COMMIT]"),
    ]
}
