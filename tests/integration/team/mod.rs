//! `pagent team` (issue 32): a team of loops across machines sharing one plan through a
//! git remote, proven here the way it runs: a bare remote served by a real `git daemon`
//! on 127.0.0.1 (and over `file://`), each worker a separate `pagent team work` process
//! with its own clone and its own HOME (separate machines in all but the kernel), and a
//! fake agent (`--command`) that does one story's work.
//!
//! The fake agent and the gate check are shell scripts steered by files in a control
//! folder outside every clone (`hold-NAME` makes the agent wait, `hold-gate-NAME` the
//! gate, `two-runs-NAME` makes a story take two iterations), and they log what they do
//! there, so a test can wait for a moment precisely and count what ran. The remote can
//! hold pushes in a `pre-receive` hook until the test lets them go: the way to put two
//! pushes at the server at the same moment.
//!
//! Leases are 3 s in these tests (a worker renews every second, a silent one is taken
//! over after 3.6 s), so every fault shows within seconds.

mod dashboard;
mod faults;
mod from_issues;
mod hostile;
mod many;
mod runner;
mod sandbox;
mod words;
mod workflow;

use std::fs;
use std::net::TcpListener;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use serde_json::{Value, json};

use crate::util::*;

/// The fake agent: its story is the name of the worktree it runs in.
const AGENT: &str = r#"
prompt=$(cat)
ctl=CTL
name=$(basename "$PWD")
printf '%s\n' "$prompt" > "$ctl/prompt-$name-$$"
env > "$ctl/env-$name"
if printf '%s' "$prompt" | grep -q '^# Merge: resolve the conflicts'; then
  echo "resolve $name" >> "$ctl/log"
  for f in $(git diff --name-only --diff-filter=U) shared.txt; do
    [ -f "$f" ] && sed -i -e '/^<<<<<<< /d' -e '/^=======$/d' -e '/^>>>>>>> /d' "$f"
  done
  git add -A
  git commit -q --no-edit
  echo resolved
  exit 0
fi
echo "run $name" >> "$ctl/log"
mkdir -p work
echo "run $$" >> "work/$name.txt"
runs=$(wc -l < "work/$name.txt")
if [ -f "$ctl/two-runs-$name" ] && [ "$runs" -lt 2 ]; then echo 'not yet'; exit 0; fi
if [ -f "$ctl/never-$name" ]; then echo 'I cannot do this one.'; exit 0; fi
echo "holding $name" >> "$ctl/log"
while [ -f "$ctl/hold-$name" ]; do sleep 0.05; done
case "$name" in
  conflict-*) sed -i "s/^two.*$/two by $name/" shared.txt ;;
esac
echo '<promise>DONE</promise>'
"#;

/// The gate: logs the commit it checks, waits while held, fails on conflict markers.
const GATE: &str = r#"
ctl=CTL
name=$(basename "$PWD")
head=$(git rev-parse HEAD)
echo "start $name $head" >> "$ctl/gate-log"
while [ -f "$ctl/hold-gate-$name" ] || [ -f "$ctl/hold-gate" ]; do sleep 0.05; done
env > "$ctl/gate-env-$name"
if grep -rqE '^(<<<<<<<|>>>>>>>)' --include='*.txt' . ; then echo 'conflict markers'; exit 1; fi
if [ -f "$ctl/fail-gate" ]; then echo 'the gate fails'; exit 1; fi
echo "pass $name $head" >> "$ctl/gate-log"
"#;

/// A `pre-receive` hook that holds every push touching `refs/heads/` while
/// `CTL/hold-landings` exists, counting the pushes it holds.
const HOLD_LANDINGS: &str = r#"#!/bin/sh
ctl=CTL
held=no
while read old new ref; do
  case "$ref" in refs/heads/*) held=yes ;; esac
done
if [ "$held" = yes ] && [ -f "$ctl/hold-landings" ]; then
  echo "held $$" >> "$ctl/held"
  while [ -f "$ctl/hold-landings" ]; do sleep 0.05; done
fi
exit 0
"#;

/// A `pre-receive` hook that holds each new claim of `US-001` (its creation) until two
/// have arrived.
const RACE_BARRIER: &str = r#"#!/bin/sh
ctl=CTL
while read old new ref; do
  case "$old $ref" in
    0000000000000000000000000000000000000000\ */claims/US-001)
      echo "claim $$" >> "$ctl/claims-arrived"
      n=0
      while [ "$(wc -l < "$ctl/claims-arrived")" -lt 2 ] && [ $n -lt 400 ]; do sleep 0.05; n=$((n+1)); done
      ;;
  esac
done
exit 0
"#;

/// The bare remote, served by `git daemon` on loopback (or reached over `file://`).
pub struct Served {
    pub bare: PathBuf,
    pub port: u16,
    daemon: Option<Child>,
    pub file: bool,
}

impl Served {
    pub fn url(&self) -> String {
        if self.file {
            format!("file://{}", self.bare.display())
        } else {
            format!("git://127.0.0.1:{}/remote.git", self.port)
        }
    }

    /// Starts `git daemon` on the port (again, after a [`Served::stop`]).
    pub fn serve(&mut self) {
        if self.file {
            return;
        }
        let base = self.bare.parent().unwrap();
        let mut child = Command::new("git")
            .args([
                "daemon",
                "--export-all",
                "--enable=receive-pack",
                "--reuseaddr",
                "--listen=127.0.0.1",
                &format!("--port={}", self.port),
                &format!("--base-path={}", base.display()),
            ])
            .arg(base)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .process_group(0)
            .spawn()
            .unwrap();
        let port = self.port;
        let answers = wait_showing(Duration::from_secs(10), "git daemon to listen", || {
            if let Ok(Some(status)) = child.try_wait() {
                return Ok(Err(format!("git daemon ended: {status}")));
            }
            std::net::TcpStream::connect(("127.0.0.1", port))
                .map(|_| Ok(()))
                .map_err(|e| e.to_string())
        });
        answers.unwrap();
        self.daemon = Some(child);
    }

    /// Another daemon serving the same repository on a port of its own: a second way to
    /// the same remote, which can be away while the first answers.
    pub fn another_way(&self) -> Served {
        let mut other = Served {
            bare: self.bare.clone(),
            port: free_port(),
            daemon: None,
            file: false,
        };
        other.serve();
        other
    }

    /// Stops the daemon: the remote is unreachable (connections are refused).
    pub fn stop(&mut self) {
        if let Some(mut child) = self.daemon.take() {
            // The daemon's own process group (it forks one child per connection).
            pagent_door::testing::signal(-(child.id() as i32), pagent_door::testing::SIGKILL);
            let _ = child.wait();
        }
    }
}

impl Drop for Served {
    fn drop(&mut self) {
        self.stop();
    }
}

/// A free port on loopback.
fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// A team's world: the remote, a seed clone that publishes, workers' clones and HOMEs,
/// the control folder.
pub struct World {
    _dir: tempfile::TempDir,
    pub base: PathBuf,
    pub remote: Served,
    pub seed: PathBuf,
    pub ctl: PathBuf,
    pub agent: String,
    pub gate: String,
}

/// A running worker.
pub struct Worker {
    pub name: String,
    pub clone: PathBuf,
    pub home: PathBuf,
    pub child: Child,
    pub log: PathBuf,
}

impl Worker {
    /// Its output so far.
    pub fn output(&self) -> String {
        fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// Waits for its end; its exit code.
    pub fn wait(&mut self, limit: Duration) -> Option<i32> {
        let code = wait_until(
            limit,
            format!("worker {} to end\n{}", self.name, self.output()),
            || self.child.try_wait().unwrap(),
        );
        code.code()
    }

    /// SIGKILL to it and everything in its process group (its story loops): the machine
    /// is gone.
    pub fn kill(&mut self) {
        // The worker's own process group.
        pagent_door::testing::signal(-(self.child.id() as i32), pagent_door::testing::SIGKILL);
        let _ = self.child.wait();
    }

    /// The JSON lines it printed.
    pub fn events(&self) -> Vec<Value> {
        self.output()
            .lines()
            .filter_map(|l| serde_json::from_str(l).ok())
            .collect()
    }
}

impl Drop for Worker {
    fn drop(&mut self) {
        if matches!(self.child.try_wait(), Ok(None)) {
            self.kill();
        }
    }
}

impl World {
    /// A remote (a daemon unless `file`), a seed clone on `main` with `files` committed
    /// and pushed.
    pub fn new(files: &[(&str, &str)], file: bool) -> World {
        let dir = tempfile::tempdir().unwrap();
        let base = dir.path().canonicalize().unwrap();
        let served = base.join("served");
        let bare = served.join("remote.git");
        fs::create_dir_all(&served).unwrap();
        git(&base, &["init", "-q", "--bare", bare.to_str().unwrap()]);
        git(&bare, &["symbolic-ref", "HEAD", "refs/heads/main"]);
        git(&bare, &["config", "core.logAllRefUpdates", "always"]);
        let ctl = base.join("ctl");
        fs::create_dir_all(&ctl).unwrap();
        let mut remote = Served {
            bare,
            port: free_port(),
            daemon: None,
            file,
        };
        remote.serve();
        let seed = base.join("seed");
        git(&base, &["init", "-q", "-b", "main", seed.to_str().unwrap()]);
        for (rel, text) in files {
            let path = seed.join(rel);
            fs::create_dir_all(path.parent().unwrap()).unwrap();
            fs::write(path, text).unwrap();
        }
        git(&seed, &["add", "-A"]);
        git(&seed, &["commit", "-q", "-m", "init"]);
        git(&seed, &["remote", "add", "origin", &remote.url()]);
        git(&seed, &["push", "-q", "origin", "main"]);
        let scripts = base.join("scripts");
        fs::create_dir_all(&scripts).unwrap();
        let ctl_text = ctl.display().to_string();
        fs::write(scripts.join("agent.sh"), AGENT.replace("CTL", &ctl_text)).unwrap();
        fs::write(scripts.join("gate.sh"), GATE.replace("CTL", &ctl_text)).unwrap();
        World {
            agent: format!("sh {}", scripts.join("agent.sh").display()),
            gate: format!("sh {}", scripts.join("gate.sh").display()),
            _dir: dir,
            base,
            remote,
            seed,
            ctl,
        }
    }

    /// Installs a `pre-receive` hook on the remote (`HOLD_LANDINGS` or `RACE_BARRIER`).
    pub fn hook(&self, script: &str) {
        let path = self.remote.bare.join("hooks/pre-receive");
        fs::write(
            &path,
            script.replace("CTL", &self.ctl.display().to_string()),
        )
        .unwrap();
        use std::os::unix::fs::PermissionsExt;
        fs::set_permissions(&path, fs::Permissions::from_mode(0o755)).unwrap();
    }

    pub fn control(&self, name: &str) {
        fs::write(self.ctl.join(name), "").unwrap();
    }

    pub fn uncontrol(&self, name: &str) {
        let _ = fs::remove_file(self.ctl.join(name));
    }

    pub fn ctl_lines(&self, file: &str) -> Vec<String> {
        fs::read_to_string(self.ctl.join(file))
            .unwrap_or_default()
            .lines()
            .map(str::to_owned)
            .collect()
    }

    /// A `pagent` command in `dir` with `home` as HOME.
    pub fn pagent(&self, dir: &Path, home: &Path, args: &[&str]) -> TestCommand {
        TestCommand::new(
            args,
            dir,
            format!("a team of {}", self.base.display()),
            true,
        )
        .env("HOME", home)
        .env("PAGENT_CONFIG_DIR", home.join(".config/pagent"))
        .env("NO_COLOR", "1")
        .env("HOSTNAME", "testhost")
    }

    /// `pagent team start ARGS` in the seed clone (its HOME: `home-seed`).
    pub fn start(&self, args: &[&str]) -> Run {
        let home = self.base.join("home-seed");
        fs::create_dir_all(&home).unwrap();
        let mut all = vec!["team", "start"];
        all.extend(args);
        self.pagent(&self.seed, &home, &all).run()
    }

    /// `pagent team ARGS` from the seed clone.
    pub fn team(&self, args: &[&str]) -> Run {
        let home = self.base.join("home-seed");
        fs::create_dir_all(&home).unwrap();
        let mut all = vec!["team"];
        all.extend(args);
        self.pagent(&self.seed, &home, &all).run()
    }

    /// `pagent team status --json`, parsed.
    pub fn status(&self) -> Value {
        let run = self.team(&["status", "--json"]);
        assert_eq!(run.code, Some(0), "{run}");
        serde_json::from_str(&run.stdout).unwrap_or_else(|e| panic!("{e}\n{run}"))
    }

    /// A fresh clone and HOME for worker `name`.
    pub fn clone_for(&self, name: &str) -> (PathBuf, PathBuf) {
        self.clone_via(name, &self.remote.url())
    }

    /// A fresh clone of the remote at `url` and a HOME for worker `name`.
    pub fn clone_via(&self, name: &str, url: &str) -> (PathBuf, PathBuf) {
        let clone = self.base.join(format!("clone-{name}"));
        let home = self.base.join(format!("home-{name}"));
        if !clone.exists() {
            git(&self.base, &["clone", "-q", url, clone.to_str().unwrap()]);
            git(&clone, &["config", "user.name", name]);
            git(&clone, &["config", "user.email", "w@example.com"]);
            git(&clone, &["config", "commit.gpgsign", "false"]);
        }
        fs::create_dir_all(&home).unwrap();
        (clone, home)
    }

    /// `pagent team work --json --name NAME --command AGENT --check GATE ARGS` in a clone
    /// of its own, in its own process group, its output in a file.
    pub fn worker(&self, name: &str, args: &[&str]) -> Worker {
        self.worker_with(name, args, &[])
    }

    pub fn worker_with(&self, name: &str, args: &[&str], vars: &[(&str, &str)]) -> Worker {
        self.worker_via(name, args, vars, &self.remote.url())
    }

    /// [`World::worker_with`], its clone made from (and pushing to) `url`.
    pub fn worker_via(
        &self,
        name: &str,
        args: &[&str],
        vars: &[(&str, &str)],
        url: &str,
    ) -> Worker {
        let (clone, home) = self.clone_via(name, url);
        let mut all = vec![
            "team",
            "work",
            "--json",
            "--name",
            name,
            "--command",
            &self.agent,
            "--check",
            &self.gate,
        ];
        all.extend(args);
        let mut command = self.pagent(&clone, &home, &all);
        for (key, value) in vars {
            command = command.env(key, value);
        }
        let mut command = command.command();
        let log = self.base.join(format!("worker-{name}.log"));
        let file = fs::File::create(&log).unwrap();
        command
            .stdout(file.try_clone().unwrap())
            .stderr(file)
            .stdin(Stdio::null())
            .process_group(0);
        Worker {
            name: name.to_owned(),
            clone,
            home,
            child: command.spawn().unwrap(),
            log,
        }
    }

    /// The remote's refs and the commits they name.
    pub fn refs(&self) -> Vec<(String, String)> {
        let out = Command::new("git")
            .args(["for-each-ref", "--format=%(refname) %(objectname)"])
            .current_dir(&self.remote.bare)
            .output()
            .unwrap();
        String::from_utf8(out.stdout)
            .unwrap()
            .lines()
            .filter_map(|l| l.split_once(' '))
            .map(|(a, b)| (a.to_owned(), b.to_owned()))
            .collect()
    }

    /// `git -C remote ARGS`'s output.
    pub fn remote_git(&self, args: &[&str]) -> String {
        let out = Command::new("git")
            .args(args)
            .current_dir(&self.remote.bare)
            .output()
            .unwrap();
        assert!(out.status.success(), "git {args:?}: {out:?}");
        String::from_utf8(out.stdout).unwrap()
    }

    /// The first-parent history of the remote's `main`, newest first: (commit, subject).
    pub fn landings(&self) -> Vec<(String, String)> {
        self.remote_git(&["log", "--first-parent", "--format=%H %s", "main"])
            .lines()
            .filter_map(|l| l.split_once(' '))
            .filter(|(_, s)| s.starts_with("pagent: land "))
            .map(|(h, s)| (h.to_owned(), s.to_owned()))
            .collect()
    }

    /// A file of `main` on the remote.
    pub fn file_on_main(&self, path: &str) -> String {
        self.remote_git(&["show", &format!("main:{path}")])
    }
}

/// `git ARGS` in `dir`, with the suite's identity.
pub fn git(dir: &Path, args: &[&str]) {
    crate::git::git(dir, args);
}

/// A prd.json of `n` stories `US-001`...; `depends(i)` names the ones story `i` waits
/// for (1-based).
pub fn prd(n: usize, depends: impl Fn(usize) -> Vec<usize>) -> String {
    let stories: Vec<Value> = (1..=n)
        .map(|i| {
            json!({
                "id": format!("US-{i:03}"),
                "title": format!("Story {i}"),
                "description": format!("Write work/US-{i:03}.txt."),
                "acceptanceCriteria": ["the file exists"],
                "priority": i,
                "passes": false,
                "dependsOn": depends(i).iter().map(|d| format!("US-{d:03}")).collect::<Vec<_>>(),
            })
        })
        .collect();
    serde_json::to_string_pretty(&json!({"project": "team", "userStories": stories})).unwrap()
}

/// Waits until the team's status says `test`.
pub fn wait_status(
    world: &World,
    limit: Duration,
    what: &str,
    test: impl Fn(&Value) -> bool,
) -> Value {
    wait_showing(limit, what, || {
        let status = world.status();
        if test(&status) {
            Ok(status)
        } else {
            Err(status.to_string())
        }
    })
}

/// The row of `story` in a status.
pub fn row<'a>(status: &'a Value, story: &str) -> &'a Value {
    status["stories"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == story)
        .unwrap_or_else(|| panic!("no {story} in {status}"))
}
