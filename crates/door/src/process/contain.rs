//! A child kept to its project: started inside bubblewrap (`bwrap`, Linux only), as a
//! value of the launch ([`Launch::contained`]) rather than argument lists assembled by
//! each caller, so that every contained child gets the same walls.
//!
//! The walls, in the order bwrap builds them (a later mount covers an earlier one):
//!
//! - the whole filesystem read-only (`--ro-bind / /`), a fresh `/dev` and a `/proc` of
//!   the child's own process namespace;
//! - an empty private `/tmp` (a tmpfs, `TMPDIR=/tmp`), and `/run/user` emptied (the
//!   user's agent sockets: ssh-agent, D-Bus, keyrings);
//! - each [`Containment::hide`] folder replaced by an empty read-only tmpfs (HOME, and
//!   pagent's config folder wherever it is), so `~/.ssh`, `~/.aws`, `~/.config/gh`,
//!   `~/.netrc`, the other projects in HOME and pagent's own state are not there to read;
//!   a write into HOME fails (`Read-only file system`) rather than vanishing silently;
//! - each [`Containment::read_only`] file put back, read-only (`~/.gitconfig`, so a
//!   commit keeps the user's name);
//! - each [`Containment::writable`] folder bound back writable: the project (or its
//!   worktree, and the repository's git folder a worktree commits into); a hidden
//!   folder inside one (pagent's config folder inside the project) is hidden after it;
//! - no network at all (`--unshare-net`: only a loopback of its own, so no server of the
//!   user's on 127.0.0.1 either), unless [`Containment::network`] gives it a proxy of
//!   pagent's for the allowed hosts: then the proxy's socket and a copy of pagent's
//!   binary (kept beside the socket, so an upgrade during the loop changes nothing) are
//!   bound read-only into its private `/tmp`, and the child starts under that binary as
//!   its forwarder (see [`proxy`](super::proxy));
//! - its own process namespace, IPC and session (`--unshare-pid --unshare-ipc
//!   --new-session`): pagent and the user's other processes are not there to signal or
//!   trace, and it cannot push keys into pagent's terminal (`TIOCSTI`);
//! - every capability dropped (`--cap-drop ALL`), which matters when pagent runs as root:
//!   otherwise root inside could remount the read-only filesystem;
//! - `--die-with-parent`: it ends when pagent does.
//!
//! What it is not: a virtual machine. The child shares the kernel, sees the machine's
//! other files read-only (as the user could read them), and uses the CPU, memory and
//! disk it likes within the project.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::proxy::{self, FORWARDER_ARG, Proxy};
use super::{Launch, Program, SearchPath};
use crate::files::PrivateTemp;

/// Why a child cannot be contained here.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ContainError {
    /// Not Linux: bubblewrap is a Linux program.
    #[error("this platform has no sandbox pagent can start agents in (bubblewrap is Linux only)")]
    Platform,
    /// No `bwrap` on the (cleaned) `PATH`.
    #[error("bubblewrap (bwrap) is not installed")]
    Missing,
    /// `bwrap` is there but could not start a sandbox (user namespaces turned off, say).
    #[error("bubblewrap ({program}) cannot start a sandbox here: {why}")]
    Broken { program: PathBuf, why: String },
}

/// The walls of a contained child (see the module's essay).
#[derive(Debug, Clone)]
pub struct Containment {
    bwrap: Program,
    hidden: Vec<PathBuf>,
    read_only: Vec<PathBuf>,
    writable: Vec<PathBuf>,
    network: Option<Network>,
    /// Variables set inside (`--setenv`), after the environment the child inherits.
    set: Vec<(OsString, OsString)>,
    /// Folders of pagent's own, writable inside, removed with the last clone of the walls.
    private: Vec<Arc<PrivateTemp>>,
    /// Folders bound writable at another path inside (`(outside, inside)`).
    moved: Vec<(PathBuf, PathBuf)>,
}

/// The allowed hosts' way out: the proxy (kept running as long as a clone of the walls
/// is held) and pagent's binary, which forwards to it from inside.
#[derive(Debug, Clone)]
struct Network {
    proxy: Arc<Proxy>,
    forwarder: PathBuf,
}

impl Containment {
    /// Containment by the `bwrap` found on `path`, with no walls opened yet: nothing
    /// hidden, nothing writable.
    pub fn find(path: &SearchPath) -> Result<Containment, ContainError> {
        if !cfg!(target_os = "linux") {
            return Err(ContainError::Platform);
        }
        let bwrap = Program::named("bwrap", path).map_err(|_| ContainError::Missing)?;
        Ok(Containment::with(bwrap))
    }

    /// Containment by this `bwrap` program.
    pub fn with(bwrap: Program) -> Containment {
        Containment {
            bwrap,
            hidden: Vec::new(),
            read_only: Vec::new(),
            writable: Vec::new(),
            network: None,
            set: Vec::new(),
            private: Vec::new(),
            moved: Vec::new(),
        }
    }

    /// Sets `key` to `value` inside the walls, whatever the child would inherit.
    pub fn setenv(mut self, key: impl Into<OsString>, value: impl Into<OsString>) -> Containment {
        self.set.push((key.into(), value.into()));
        self
    }

    /// Lets the child write in `dir`, a folder of pagent's own, kept until the last clone
    /// of these walls drops (an agent's private configuration, say).
    pub fn private(mut self, dir: PrivateTemp) -> Containment {
        self.writable.push(dir.path().to_path_buf());
        self.private.push(Arc::new(dir));
        self
    }

    /// [`Containment::private`], seen inside at `inside` (a path in a hidden folder, made
    /// there before it is made read-only): for a program that treats a folder under
    /// `/tmp` as temporary.
    pub fn private_at(mut self, dir: PrivateTemp, inside: &Path) -> Containment {
        self.moved
            .push((dir.path().to_path_buf(), inside.to_path_buf()));
        self.private.push(Arc::new(dir));
        self
    }

    /// The hosts the child reaches (through the proxy), as the user wrote them.
    pub fn hosts(&self) -> Vec<String> {
        self.network
            .as_ref()
            .map(|n| n.proxy.hosts().to_vec())
            .unwrap_or_default()
    }

    /// Lets the child reach the network through `proxy` (its allowed hosts only), with
    /// `forwarder` (pagent's own binary) relaying to it from inside. The proxy runs as
    /// long as these walls, or a clone of them, are held.
    pub fn network(mut self, proxy: Proxy, forwarder: &Path) -> Containment {
        let forwarder = kept_forwarder(&proxy, forwarder);
        self.network = Some(Network {
            proxy: Arc::new(proxy),
            forwarder,
        });
        self
    }

    /// Whether the child reaches allowed hosts through a proxy.
    pub fn has_network(&self) -> bool {
        self.network.is_some()
    }

    /// Replaces the folder `dir` by an empty read-only one (if it exists).
    pub fn hide(mut self, dir: &Path) -> Containment {
        self.hidden.push(dir.to_path_buf());
        self
    }

    /// Puts back the file or folder `path` (if it exists), read-only.
    pub fn read_only(mut self, path: &Path) -> Containment {
        self.read_only.push(path.to_path_buf());
        self
    }

    /// Lets the child write in `dir` (if it exists).
    pub fn writable(mut self, dir: &Path) -> Containment {
        self.writable.push(dir.to_path_buf());
        self
    }

    /// Starts an empty sandbox with these walls once (`true` inside it), so a bwrap that
    /// cannot work here (user namespaces off) is said before anything else runs.
    pub fn check(&self, path: &SearchPath) -> Result<(), ContainError> {
        let broken = |why: String| ContainError::Broken {
            program: self.bwrap.path().to_path_buf(),
            why,
        };
        let truth = Program::named("true", path).map_err(|e| broken(e.to_string()))?;
        let ran = Launch::new(truth, Path::new(super::NEUTRAL_DIR), path)
            .contained(self.clone())
            .output(std::time::Duration::from_secs(30), 4096)
            .map_err(|e| broken(e.to_string()))?;
        if ran.success() {
            Ok(())
        } else {
            let said = ran.stderr.trim();
            Err(broken(if said.is_empty() {
                format!("exit {:?}", ran.code)
            } else {
                said.to_owned()
            }))
        }
    }

    pub fn program(&self) -> &Program {
        &self.bwrap
    }

    /// bwrap's arguments that start `program` with `args` in `cwd` inside the walls.
    pub(super) fn wrap(&self, program: &Path, args: &[OsString], cwd: &Path) -> Vec<OsString> {
        let mut out: Vec<OsString> = Vec::new();
        let mut push = |items: &[&std::ffi::OsStr]| out.extend(items.iter().map(|s| s.into()));
        push(&["--ro-bind".as_ref(), "/".as_ref(), "/".as_ref()]);
        push(&["--dev".as_ref(), "/dev".as_ref()]);
        push(&["--proc".as_ref(), "/proc".as_ref()]);
        push(&["--tmpfs".as_ref(), "/tmp".as_ref()]);
        if Path::new("/run/user").is_dir() {
            push(&["--tmpfs".as_ref(), "/run/user".as_ref()]);
        }
        if let Some(net) = &self.network {
            let socket = net.proxy.socket().to_path_buf();
            let forwarder = net.forwarder.clone();
            out.extend([
                "--ro-bind".into(),
                socket.into(),
                proxy::inside_socket().into(),
            ]);
            out.extend([
                "--ro-bind".into(),
                forwarder.into(),
                proxy::inside_forwarder().into(),
            ]);
        }
        let writable: Vec<PathBuf> = existing(&self.writable);
        // A hidden folder inside a writable one is hidden after that one is bound back.
        let (inner, outer): (Vec<PathBuf>, Vec<PathBuf>) = existing(&self.hidden)
            .into_iter()
            .partition(|h| writable.iter().any(|w| h.starts_with(w) && h != w));
        // Each hidden folder is an empty tmpfs, made read-only last: the files and
        // folders put back inside it need their mount points made first.
        for dir in &outer {
            out.extend(["--tmpfs".into(), dir.into()]);
        }
        for path in existing(&self.read_only) {
            out.extend(["--ro-bind".into(), path.clone().into(), path.into()]);
        }
        for (outside, inside) in &self.moved {
            out.extend(["--bind".into(), outside.into(), inside.into()]);
        }
        for dir in &writable {
            out.extend(["--bind".into(), dir.into(), dir.into()]);
        }
        for dir in &inner {
            out.extend(["--tmpfs".into(), dir.into()]);
        }
        for dir in outer.iter().chain(&inner) {
            out.extend(["--remount-ro".into(), dir.into()]);
        }
        out.extend(
            [
                "--unshare-net",
                "--unshare-pid",
                "--unshare-ipc",
                "--new-session",
                "--die-with-parent",
                "--cap-drop",
                "ALL",
                "--setenv",
                "TMPDIR",
                "/tmp",
            ]
            .map(OsString::from),
        );
        for (key, value) in &self.set {
            out.extend(["--setenv".into(), key.clone(), value.clone()]);
        }
        out.extend(["--chdir".into(), cwd.into(), "--".into()]);
        if self.network.is_some() {
            out.extend([
                proxy::inside_forwarder().into(),
                FORWARDER_ARG.into(),
                proxy::inside_socket().into(),
            ]);
        }
        out.push(program.into());
        out.extend(args.iter().cloned());
        out
    }
}

/// The forwarder the walls bind at each launch: a copy of `forwarder` in the proxy's
/// private folder (which lives as long as the proxy), so a binary removed or replaced
/// during the loop (an uninstall, a package manager's upgrade) neither fails every later
/// launch nor runs another version inside. bwrap cannot bind a removed file (it resolves
/// `/proc/PID/exe` and `--ro-bind-fd`'s `/proc/self/fd/N` to the gone path), so the copy
/// is of the file this process runs when `forwarder` is that file. Where the copy cannot
/// be made (a full disk), the path itself, as before.
fn kept_forwarder(proxy: &Proxy, forwarder: &Path) -> PathBuf {
    let real = std::fs::canonicalize(forwarder).unwrap_or_else(|_| forwarder.into());
    let running = Path::new("/proc/self/exe");
    let source = if cfg!(target_os = "linux") && same_file(running, &real) {
        running
    } else {
        real.as_path()
    };
    let Some(dir) = proxy.socket().parent() else {
        return real;
    };
    let copy = dir.join("pagent");
    match std::fs::copy(source, &copy) {
        Ok(_) => copy,
        Err(_) => real,
    }
}

/// Whether `a` and `b` are the same file (by device and inode, a removed one included).
fn same_file(a: &Path, b: &Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        match (std::fs::metadata(a), std::fs::metadata(b)) {
            (Ok(a), Ok(b)) => (a.dev(), a.ino()) == (b.dev(), b.ino()),
            _ => false,
        }
    }
    #[cfg(not(unix))]
    {
        let _ = (a, b);
        false
    }
}

/// The paths of `paths` that exist, as real paths (bwrap mounts onto the real path; a
/// symlinked HOME would otherwise be hidden at its link and still read at its target).
fn existing(paths: &[PathBuf]) -> Vec<PathBuf> {
    paths
        .iter()
        .filter_map(|p| std::fs::canonicalize(p).ok())
        .collect()
}

impl Launch {
    /// Runs the child inside `containment`'s walls (see [`contain`](self)).
    pub fn contained(mut self, containment: Containment) -> Launch {
        self.contained = Some(containment);
        self
    }

    pub fn is_contained(&self) -> bool {
        self.contained.is_some()
    }
}

// The walls are bubblewrap's, a Linux program: their arguments name Unix paths, which a
// Windows build spells otherwise (`\\?\C:\...`, Wine's run of the door's tests met it).
#[cfg(all(test, unix))]
mod tests {
    use super::*;

    /// The walls' bubblewrap command line for `program args` in `cwd`, as text.
    fn wrapped(c: &Containment, program: &Path, args: &[OsString], cwd: &Path) -> Vec<String> {
        c.wrap(program, args, cwd)
            .into_iter()
            .map(|a| a.to_string_lossy().into_owned())
            .collect()
    }

    /// Where the run `needle` starts in `args` (the test fails without one).
    #[allow(
        clippy::panic,
        reason = "a test's helper: a missing run fails the test"
    )]
    fn position(args: &[String], needle: &[&str]) -> usize {
        args.windows(needle.len())
            .position(|w| w == needle)
            .unwrap_or_else(|| panic!("{needle:?} not in {args:?}"))
    }

    #[test]
    fn the_walls_hide_home_then_bind_the_project_back_and_cut_the_network() {
        let home = tempfile::tempdir().unwrap();
        let project = home.path().join("work/p");
        let state = project.join(".secret-state");
        std::fs::create_dir_all(&state).unwrap();
        let home_real = std::fs::canonicalize(home.path()).unwrap();
        let project_real = home_real.join("work/p");
        let c = Containment::with(Program::at("/usr/bin/bwrap".into()))
            .hide(home.path())
            .hide(&state)
            .hide(Path::new("/no/such/folder"))
            .writable(&project);
        let args = wrapped(
            &c,
            Path::new("/bin/sh"),
            &["-c".into(), "x".into()],
            &project,
        );
        let at = |needle: &[&str]| position(&args, needle);
        let home_s = home_real.to_string_lossy();
        let project_s = project_real.to_string_lossy();
        let state_s = project_real.join(".secret-state");
        let state_s = state_s.to_string_lossy();
        let hidden = at(&["--tmpfs", &home_s]);
        let bound = at(&["--bind", &project_s, &project_s]);
        let inner = at(&["--tmpfs", &state_s]);
        let sealed = at(&["--remount-ro", &home_s, "--remount-ro", &state_s]);
        assert!(at(&["--ro-bind", "/", "/"]) < hidden && hidden < bound);
        assert!(bound < inner && inner < sealed);
        at(&["--unshare-net"]);
        at(&["--unshare-pid", "--unshare-ipc", "--new-session"]);
        at(&["--cap-drop", "ALL"]);
        assert!(!args.iter().any(|a| a.contains("no/such")), "{args:?}");
        assert_eq!(
            args[args.len() - 6..],
            ["--chdir", &*project_s, "--", "/bin/sh", "-c", "x"]
        );
    }

    /// A private folder seen at another path inside: bound there after HOME's tmpfs (so
    /// its mount point can be made) and before HOME is made read-only; the project,
    /// bound after it, wins over it.
    #[test]
    fn a_private_folder_is_bound_at_its_inside_path_in_the_hidden_home() {
        let home = tempfile::tempdir().unwrap();
        let home_real = std::fs::canonicalize(home.path()).unwrap();
        let private = crate::files::private_temp_dir("pagent-door-test-").unwrap();
        let outside = private.path().to_string_lossy().into_owned();
        let inside = home_real.join(".codex");
        let c = Containment::with(Program::at("/usr/bin/bwrap".into()))
            .hide(home.path())
            .writable(home.path())
            .private_at(private, &inside);
        let args = wrapped(&c, Path::new("/bin/true"), &[], home.path());
        let at = |needle: &[&str]| position(&args, needle);
        let home_s = home_real.to_string_lossy();
        let moved = at(&["--bind", &outside, &inside.to_string_lossy()]);
        assert!(at(&["--tmpfs", &home_s]) < moved);
        assert!(moved < at(&["--bind", &home_s, &home_s]));
        assert!(moved < at(&["--remount-ro", &home_s]));
        // The folder goes with the last clone of the walls.
        drop(c);
        assert!(!Path::new(&outside).exists());
    }
}

#[cfg(all(test, target_os = "linux"))]
mod network_tests {
    use super::*;
    use crate::process::proxy::{AllowList, Proxy};

    #[test]
    fn walls_with_a_proxy_bind_its_socket_and_start_the_child_under_the_forwarder() {
        let proxy = Proxy::start(AllowList::parse(&["localhost:9"]).unwrap(), |_| {
            String::new()
        })
        .unwrap();
        let socket = proxy.socket().to_string_lossy().into_owned();
        let c = Containment::with(Program::at("/usr/bin/bwrap".into()))
            .network(proxy, Path::new("/bin/true"));
        let args: Vec<String> = c
            .wrap(
                Path::new("/bin/sh"),
                &["-c".into(), "x".into()],
                Path::new("/"),
            )
            .into_iter()
            .map(|a| a.to_string_lossy().into_owned())
            .collect();
        let joined = args.join(" ");
        let tmp = joined.find("--tmpfs /tmp ").unwrap();
        let bound = joined
            .find(&format!(
                "--ro-bind {socket} /tmp/.pagent-sandbox/proxy.sock"
            ))
            .unwrap();
        assert!(tmp < bound, "{joined}");
        // The forwarder is a copy kept in the proxy's folder, not the binary's own path
        // (which an upgrade may remove during the loop).
        let dir = Path::new(&socket).parent().unwrap().display().to_string();
        assert!(
            joined.contains(&format!(
                "--ro-bind {dir}/pagent /tmp/.pagent-sandbox/pagent"
            )),
            "{joined}"
        );
        assert!(joined.contains("--unshare-net"), "{joined}");
        assert!(
            joined.ends_with(
                "-- /tmp/.pagent-sandbox/pagent __pagent-sandbox-forward \
                 /tmp/.pagent-sandbox/proxy.sock /bin/sh -c x"
            ),
            "{joined}"
        );
        // The proxy stops and its private folder goes with the last clone of the walls.
        let dir = Path::new(&socket).parent().unwrap().to_path_buf();
        let copy = c.clone();
        drop(c);
        assert!(dir.exists());
        drop(copy);
        assert!(!dir.exists());
    }
}
