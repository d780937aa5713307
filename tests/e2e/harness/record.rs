//! `PAGENT_E2E_RECORD=DIR`: what the real Claude Code hands pagent in a test, kept as
//! fixtures for the parser and hook tests (`tests/fixtures/claude-code-<version>/`). The
//! hooks then run pagent through a small wrapper that first appends each hook's stdin to
//! a file of its event; when the test ends, those files, each `claude -p` run's stream
//! and each session's transcript are copied to `DIR/<test>-<event>.jsonl`,
//! `DIR/<test>-stream-<n>.jsonl` and `DIR/<test>-transcript-<n>.jsonl`, temp paths
//! rewritten to `/home/user/...`. Codex's and OpenCode's streams are recorded
//! the same way by `agents::record`. Without the variable nothing changes: the hooks run
//! the binary under test directly.

use super::*;

/// The folder recordings go to, when asked for.
pub fn dir() -> Option<PathBuf> {
    std::env::var_os("PAGENT_E2E_RECORD").map(PathBuf::from)
}

/// The test's own name, which libtest gives its thread.
fn test_name() -> String {
    let thread = std::thread::current();
    let name = thread.name().unwrap_or("e2e");
    name.rsplit("::").next().unwrap_or(name).to_owned()
}

/// A shell script that runs `bin` with its arguments and stdin, first appending a hook's
/// stdin (`bin hook EVENT`) as one line to `raw/EVENT.jsonl`.
fn wrapper_script(raw: &Path, bin: &Path) -> String {
    let quote = |p: &Path| format!("'{}'", p.display().to_string().replace('\'', "'\\''"));
    let (raw, bin) = (quote(raw), quote(bin));
    [
        "#!/bin/sh".to_owned(),
        "if [ \"$1\" = hook ]; then".to_owned(),
        "input=$(cat)".to_owned(),
        format!("printf '%s\\n' \"$input\" >> {raw}/\"$2\".jsonl"),
        format!("printf '%s' \"$input\" | {bin} \"$@\""),
        "exit $?".to_owned(),
        "fi".to_owned(),
        format!("exec {bin} \"$@\""),
    ]
    .map(|line| line + "\n")
    .concat()
}

impl E2e {
    /// The program the hooks find as `PAGENT_BIN`: the binary under test, or, when
    /// recording, the wrapper that saves each hook's stdin before it runs the binary.
    pub fn hook_bin(&self) -> PathBuf {
        if dir().is_none() {
            return pagent_bin();
        }
        let raw = self.raw_records();
        let wrapper = raw.join("pagent");
        if !wrapper.exists() {
            fs::create_dir_all(&raw).unwrap();
            fs::write(&wrapper, wrapper_script(&raw, &pagent_bin())).unwrap();
            let mode = std::os::unix::fs::PermissionsExt::from_mode(0o755);
            fs::set_permissions(&wrapper, mode).unwrap();
        }
        wrapper
    }

    fn raw_records(&self) -> PathBuf {
        self.home.parent().unwrap().join("record")
    }

    /// Copies what this test recorded to the recording folder (called when it ends).
    pub(super) fn save_records(&self) {
        let Some(dir) = dir() else { return };
        fs::create_dir_all(&dir).unwrap();
        let test = test_name();
        let anonymous = |text: &str| self.anonymous(text);
        if let Ok(entries) = fs::read_dir(self.raw_records()) {
            for path in entries.map(|e| e.unwrap().path()) {
                if path.extension().is_some_and(|x| x == "jsonl") {
                    let event = path.file_stem().unwrap().to_string_lossy().into_owned();
                    let text = fs::read_to_string(&path).unwrap();
                    fs::write(dir.join(format!("{test}-{event}.jsonl")), anonymous(&text)).unwrap();
                }
            }
        }
        let transcripts = fs::read_dir(self.home.join(".claude/projects"))
            .into_iter()
            .flatten()
            .flat_map(|folder| fs::read_dir(folder.unwrap().path()).into_iter().flatten())
            .map(|file| file.unwrap().path())
            .filter(|path| path.extension().is_some_and(|x| x == "jsonl"));
        for (n, path) in transcripts.enumerate() {
            let text = fs::read_to_string(&path).unwrap();
            fs::write(
                dir.join(format!("{test}-transcript-{}.jsonl", n + 1)),
                anonymous(&text),
            )
            .unwrap();
        }
        for (n, run) in self.runs.borrow().iter().enumerate() {
            let stream: String = run.lines.iter().map(|l| format!("{l}\n")).collect();
            fs::write(
                dir.join(format!("{test}-stream-{}.jsonl", n + 1)),
                anonymous(&stream),
            )
            .unwrap();
        }
    }

    /// `text` with this test's temp folders named as a user's would be.
    fn anonymous(&self, text: &str) -> String {
        let base = self.home.parent().unwrap().display().to_string();
        // Claude Code names a project's transcript folder after its path, `/` and `.`
        // made `-`.
        let encoded = |path: &str| path.replace(['/', '.'], "-");
        let project = self.project.display().to_string();
        text.replace(&encoded(&project), "-home-user-project")
            .replace(&project, "/home/user/project")
            .replace(&self.home.display().to_string(), "/home/user")
            .replace(
                &self.config.display().to_string(),
                "/home/user/.config/pagent",
            )
            .replace(&repo_root().display().to_string(), "/home/user/plugin")
            .replace(&base, "/home/user")
    }
}
