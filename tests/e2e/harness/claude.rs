//! One `claude -p` run of a test: the command (arguments, environment, the plugin folder)
//! and what it printed (the stream's init, result, hook outputs and block reasons).

use super::*;
use pagent_door::testing;

pub struct ClaudeCommand<'a> {
    pub(super) e2e: &'a E2e,
    pub(super) command: Command,
    pub(super) plugin_dir: Option<PathBuf>,
}

impl ClaudeCommand<'_> {
    pub fn arg(mut self, arg: impl AsRef<std::ffi::OsStr>) -> Self {
        self.command.arg(arg);
        self
    }

    pub fn env(mut self, key: &str, value: impl AsRef<std::ffi::OsStr>) -> Self {
        self.command.env(key, value);
        self
    }

    pub fn env_remove(mut self, key: &str) -> Self {
        self.command.env_remove(key);
        self
    }

    pub fn plugin_dir(mut self, dir: Option<PathBuf>) -> Self {
        self.plugin_dir = dir;
        self
    }

    /// Runs the CLI to its end (killing its process group after [`RUN_TIMEOUT`]).
    pub fn run(mut self) -> ClaudeRun {
        if let Some(dir) = &self.plugin_dir {
            self.command.arg("--plugin-dir").arg(dir);
        }
        let started = Instant::now();
        let child = self.command.spawn().unwrap();
        let pid = child.id() as i32;
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            let _ = tx.send(child.wait_with_output());
        });
        let (output, timed_out) = match rx.recv_timeout(RUN_TIMEOUT) {
            Ok(output) => (output.unwrap(), false),
            Err(_) => {
                // The process group the CLI leads.
                testing::signal(-pid, testing::SIGKILL);
                (
                    rx.recv_timeout(Duration::from_secs(10)).unwrap().unwrap(),
                    true,
                )
            }
        };
        // Hooks or tools the CLI left behind die with it.
        testing::signal(-pid, testing::SIGKILL);
        let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
        let run = ClaudeRun {
            code: output.status.code(),
            lines: stdout.lines().map(str::to_owned).collect(),
            events: stdout
                .lines()
                .filter_map(|l| serde_json::from_str(l).ok())
                .collect(),
            stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
            timed_out,
            elapsed: started.elapsed(),
        };
        self.e2e.runs.borrow_mut().push(run.clone());
        assert!(
            !timed_out,
            "claude -p did not finish within {RUN_TIMEOUT:?}"
        );
        run
    }
}

#[derive(Debug, Clone)]
pub struct ClaudeRun {
    pub code: Option<i32>,
    pub lines: Vec<String>,
    pub events: Vec<Value>,
    pub stderr: String,
    pub timed_out: bool,
    pub elapsed: Duration,
}

impl ClaudeRun {
    pub fn init(&self) -> &Value {
        self.events
            .iter()
            .find(|e| e["type"] == "system" && e["subtype"] == "init")
            .expect("no init event in the stream")
    }

    pub fn result(&self) -> &Value {
        self.events
            .iter()
            .rev()
            .find(|e| e["type"] == "result")
            .expect("no result event in the stream")
    }

    /// The stdout of every Stop hook run, in order, parsed (`Null` for an empty output).
    pub fn stop_hook_outputs(&self) -> Vec<Value> {
        self.hook_responses("Stop")
            .iter()
            .map(|e| {
                serde_json::from_str(e["stdout"].as_str().unwrap_or("").trim())
                    .unwrap_or(Value::Null)
            })
            .collect()
    }

    /// The Stop hook's re-prompts, in order: `additionalContext` without a decision (what
    /// pagent prints), or a block's reason.
    pub fn block_reasons(&self) -> Vec<String> {
        self.stop_hook_outputs()
            .iter()
            .filter_map(|o| {
                o["hookSpecificOutput"]["additionalContext"]
                    .as_str()
                    .or_else(|| (o["decision"] == "block").then(|| o["reason"].as_str())?)
                    .map(str::to_owned)
            })
            .collect()
    }

    /// The lines Claude Code 2.1.330 prints in the stream for what the user sees of the
    /// hooks (`system`/`informational`: "UserPromptExpansion says: ...", "Stop says: ...",
    /// a blocked command's text). 2.1.197 prints none of them in `-p` mode.
    pub fn shown(&self) -> Vec<String> {
        self.events
            .iter()
            .filter(|e| e["type"] == "system" && e["subtype"] == "informational")
            .filter_map(|e| e["content"].as_str().map(str::to_owned))
            .collect()
    }

    pub fn hook_responses(&self, event: &str) -> Vec<&Value> {
        self.events
            .iter()
            .filter(|e| {
                e["type"] == "system" && e["subtype"] == "hook_response" && e["hook_event"] == event
            })
            .collect()
    }
}
