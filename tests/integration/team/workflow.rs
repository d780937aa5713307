//! The GitHub Actions workflow `pagent team workflow` writes, run here step by step: it
//! cannot run on GitHub from this machine, so each of its steps runs as a local process
//! with what a runner would give it (the repository's URL, the run's id, the matrix's
//! worker, the secrets), and the checkout action is done as it is configured.

use std::collections::HashMap;
use std::os::unix::fs::PermissionsExt;
use std::process::{Command, Stdio};
use std::time::Duration;

use yaml_rust2::{Yaml, YamlLoader};

use super::*;

/// What `${{ EXPR }}` becomes on this machine.
fn expression(expr: &str) -> String {
    match expr {
        "secrets.ANTHROPIC_API_KEY" => "test-anthropic-key".into(),
        "github.token" => "test-github-token".into(),
        "matrix.worker" => "1".into(),
        other => panic!("the workflow uses an expression this test does not know: {other}"),
    }
}

/// The command's output, failing the test if it takes longer than `limit`.
fn output_within(mut command: Command, limit: Duration) -> std::process::Output {
    let child = command
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(child.wait_with_output());
    });
    rx.recv_timeout(limit)
        .expect("the step did not end in time")
        .unwrap()
}

fn substitute(text: &str) -> String {
    let re = regex::Regex::new(r"\$\{\{\s*([^}]+?)\s*\}\}").unwrap();
    re.replace_all(text, |c: &regex::Captures<'_>| expression(&c[1]))
        .into_owned()
}

/// Issue 32: the workflow for a team started here, its every step run as a local process
/// for worker 1 of the matrix: the checkout (a clone without credentials), the install
/// (a recording `npm`), the identity, and the worker itself, which lands the team's two
/// stories; the job's token reaches pagent's own git only, never the agent or the gate,
/// while the agent gets its API key.
#[test]
fn issue_32_each_step_of_the_generated_workflow_runs_here_and_lands_the_team() {
    let world = World::new(&[("prd.json", &prd(2, |_| vec![]))], false);
    let start = world.start(&[
        "prd.json",
        "--name",
        "actions",
        "--lease",
        "3s",
        "--command",
        &world.agent,
        "--check",
        &world.gate,
    ]);
    assert_eq!(start.code, Some(0), "{start}");
    let made = world.team(&[
        "workflow",
        "--team",
        "actions",
        "--workers",
        "2",
        "--timeout-minutes",
        "30",
    ]);
    assert_eq!(made.code, Some(0), "{made}");
    let doc = YamlLoader::load_from_str(&made.stdout).unwrap().remove(0);
    let job = &doc["jobs"]["worker"];
    assert_eq!(
        job["strategy"]["matrix"]["worker"],
        Yaml::Array(vec![Yaml::Integer(1), Yaml::Integer(2)])
    );
    assert_eq!(doc["permissions"]["contents"].as_str(), Some("write"));
    assert_eq!(job["timeout-minutes"].as_i64(), Some(30));

    let runner = Runner::new(&world);
    let ran: Vec<String> = job["steps"]
        .as_vec()
        .unwrap()
        .iter()
        .filter_map(|step| runner.run(&world, step))
        .collect();
    assert_eq!(
        ran,
        [
            "checkout",
            "Install pagent and the agent",
            "Commit as the team",
            "Work on the team's stories"
        ]
    );
    assert_eq!(
        fs::read_to_string(&runner.npm_log)
            .unwrap()
            .lines()
            .collect::<Vec<_>>(),
        [
            "install",
            "--global",
            &format!("pagent@{}", env!("CARGO_PKG_VERSION")),
            "@anthropic-ai/claude-code"
        ]
    );
    the_token_reached_only_pagents_git(&world, &runner.workspace);
}

/// A runner's machine, here: a `bin` with a recording `npm` and pagent, a workspace, a
/// HOME, and what GitHub tells a job about its repository.
struct Runner {
    root: PathBuf,
    npm_log: PathBuf,
    workspace: PathBuf,
    home: PathBuf,
    path: String,
    server: String,
    repository: String,
}

impl Runner {
    fn new(world: &World) -> Runner {
        let root = world.base.join("runner");
        let bin = root.join("bin");
        fs::create_dir_all(&bin).unwrap();
        let npm_log = world.ctl.join("npm-args");
        let npm = format!("#!/bin/sh\nprintf '%s\\n' \"$@\" > {}\n", npm_log.display());
        fs::write(bin.join("npm"), npm).unwrap();
        fs::set_permissions(bin.join("npm"), fs::Permissions::from_mode(0o755)).unwrap();
        std::os::unix::fs::symlink(pagent_bin(), bin.join("pagent")).unwrap();
        let home = root.join("home");
        fs::create_dir_all(&home).unwrap();
        let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap());
        let (server, repository) = world
            .remote
            .url()
            .rsplit_once('/')
            .map(|(s, r)| (s.to_owned(), r.trim_end_matches(".git").to_owned()))
            .unwrap();
        Runner {
            workspace: root.join("work"),
            root,
            npm_log,
            home,
            path,
            server,
            repository,
        }
    }

    /// Runs one step of the job; the name it is counted by, none for setup-node (the
    /// runner image's node: nothing to do here).
    fn run(&self, world: &World, step: &Yaml) -> Option<String> {
        let Some(action) = step["uses"].as_str() else {
            return Some(self.script(step));
        };
        let with = &step["with"];
        if action.starts_with("actions/checkout@") {
            assert_eq!(with["persist-credentials"].as_bool(), Some(false));
            assert_eq!(with["fetch-depth"].as_i64(), Some(0));
            git(
                &self.root,
                &[
                    "clone",
                    "-q",
                    &world.remote.url(),
                    self.workspace.to_str().unwrap(),
                ],
            );
            return Some("checkout".to_owned());
        }
        assert!(action.starts_with("actions/setup-node@"), "{action}");
        None
    }

    /// A `run` step, with the step's environment over the runner's.
    fn script(&self, step: &Yaml) -> String {
        let script = step["run"].as_str().unwrap();
        let mut env: HashMap<String, String> = HashMap::new();
        if let Some(vars) = step["env"].as_hash() {
            for (k, v) in vars {
                env.insert(
                    k.as_str().unwrap().to_owned(),
                    substitute(v.as_str().unwrap()),
                );
            }
        }
        let mut command = Command::new("bash");
        command
            .args(["--noprofile", "--norc", "-eo", "pipefail", "-c", script])
            .current_dir(&self.workspace)
            .env_clear()
            .env("PATH", &self.path)
            .env("HOME", &self.home)
            .env("PAGENT_CONFIG_DIR", self.home.join(".config/pagent"))
            .env("GITHUB_SERVER_URL", &self.server)
            .env("GITHUB_REPOSITORY", &self.repository)
            .env("GITHUB_RUN_ID", "42")
            .envs(&env);
        let out = output_within(command, Duration::from_secs(120));
        assert!(out.status.success(), "{script}\n{out:?}");
        step["name"].as_str().unwrap().to_owned()
    }
}

/// Both stories landed by worker 1; the agent got its API key, and the job's token
/// reached neither the agent nor the gate, nor stayed in the clone's config.
fn the_token_reached_only_pagents_git(world: &World, workspace: &Path) {
    let status = world.status();
    for story in ["US-001", "US-002"] {
        assert_eq!(row(&status, story)["state"], "landed", "{status:#}");
        assert_eq!(row(&status, story)["worker"], "gh-42-1", "{status:#}");
        let agent_env = fs::read_to_string(world.ctl.join(format!("env-{story}"))).unwrap();
        assert!(
            agent_env.contains("ANTHROPIC_API_KEY=test-anthropic-key"),
            "{agent_env}"
        );
        assert!(
            !agent_env.contains("test-github-token"),
            "the token reached the agent:\n{agent_env}"
        );
        let gate_env = fs::read_to_string(world.ctl.join(format!("gate-env-{story}"))).unwrap();
        assert!(
            !gate_env.contains("test-github-token"),
            "the token reached the gate:\n{gate_env}"
        );
    }
    let config = fs::read_to_string(workspace.join(".git/config")).unwrap();
    assert!(
        !config.contains("extraheader") && !config.contains("test-github-token"),
        "{config}"
    );
}
