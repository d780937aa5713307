//! Issue 35: a team's workers run their agents contained, when the plan asks
//! (`pagent team start --sandbox`) or the worker does (`pagent team work --sandbox`),
//! and the story still lands. The agent (a command line: the suite's fake agent is a
//! script under /tmp, which a contained agent does not see) does its story's work and
//! tries to write into the control folder outside the clone: contained, it cannot. The
//! landing checks (the gate, the project's code on the merged tree) of a contained
//! worker run inside the same walls.

use super::*;

/// The gate of these teams: the story's work is there (inline: a contained gate does not
/// see the suite's scripts under /tmp).
const GATE_INLINE: &str = "test -f work/story.txt";

/// One story's team, started with `start_flags`, worked by one worker with
/// `work_flags` to its end: whether it landed, and what the agent logged outside.
fn one_story(name: &str, start_flags: &[&str], work_flags: &[&str]) -> (usize, bool) {
    let world = World::new(&[("prd.json", &prd(1, |_| vec![]))], false);
    one_story_in(&world, name, (start_flags, work_flags), GATE_INLINE)
}

/// [`one_story`] in `world`, its gate `check`.
fn one_story_in(
    world: &World,
    name: &str,
    (start_flags, work_flags): (&[&str], &[&str]),
    check: &str,
) -> (usize, bool) {
    let escaped = world.ctl.join("escaped");
    let agent = format!(
        "cat >/dev/null; mkdir -p work && echo done > work/story.txt; echo out > '{}'; \
         echo '<promise>DONE</promise>'",
        escaped.display()
    );
    let mut args = vec![
        "prd.json",
        "--name",
        name,
        "--lease",
        "3s",
        "--command",
        &agent,
        "--check",
        check,
    ];
    args.extend(start_flags);
    let start = world.start(&args);
    assert_eq!(start.code, Some(0), "{start}");
    let (clone, home) = world.clone_for("w1");
    let mut work = vec!["team", "work", "--team", name, "--name", "w1", "--trust"];
    work.extend(work_flags);
    let out = world.pagent(&clone, &home, &work).run();
    assert_eq!(out.code, Some(0), "{out}");
    (world.landings().len(), escaped.exists())
}

#[test]
#[cfg(target_os = "linux")]
fn issue_35_a_team_started_with_sandbox_runs_every_workers_agent_contained() {
    let (landed, escaped) = one_story("boxed", &["--sandbox"], &[]);
    assert_eq!(landed, 1);
    assert!(!escaped, "the agent wrote outside the clone");
}

#[test]
#[cfg(target_os = "linux")]
fn issue_35_a_worker_with_sandbox_contains_its_agent_whatever_the_plan_says() {
    let (landed, escaped) = one_story("open", &[], &["--sandbox"]);
    assert_eq!(landed, 1);
    assert!(!escaped, "the agent wrote outside the clone");
}

#[test]
fn issue_35_a_teams_plan_never_opens_hosts() {
    let world = World::new(&[("prd.json", &prd(1, |_| vec![]))], false);
    let start = world.start(&[
        "prd.json",
        "--sandbox",
        "--allow-host",
        "registry.example.org",
    ]);
    assert_eq!(start.code, Some(1), "{start}");
    assert_text!(start.stderr);
}

#[test]
fn issue_35_uncontained_a_workers_agent_writes_where_it_likes() {
    // The control: without --sandbox the same agent's log is there.
    let (landed, escaped) = one_story("plain", &[], &[]);
    assert_eq!(landed, 1);
    assert!(escaped);
}

/// The gate of a contained team attacks like an agent: it copies the worker's key out,
/// writes `~/.bashrc` and a folder outside the clone, then runs the project's test.
#[cfg(target_os = "linux")]
fn attacking_gate(world: &World, home: &Path) -> String {
    fs::create_dir_all(home.join(".ssh")).unwrap();
    fs::write(home.join(".ssh/id_ed25519"), "PRIVATE-KEY-35\n").unwrap();
    format!(
        "cat \"$HOME/.ssh/id_ed25519\" > '{ctl}/key'; echo pwned >> \"$HOME/.bashrc\"; \
         echo out > '{ctl}/gate-escaped'; {GATE_INLINE}",
        ctl = world.ctl.display()
    )
}

#[test]
#[cfg(target_os = "linux")]
fn issue_35_a_contained_workers_landing_checks_are_refused_each_attack_while_the_story_lands() {
    let world = World::new(&[("prd.json", &prd(1, |_| vec![]))], false);
    let (_, home) = world.clone_for("w1");
    let gate = attacking_gate(&world, &home);
    let (landed, escaped) = one_story_in(&world, "gated", (&[], &["--sandbox"]), &gate);
    assert_eq!(landed, 1, "the project's test passed in the gate");
    assert!(!escaped);
    assert!(
        !world.ctl.join("key").exists(),
        "the gate copied the key out"
    );
    assert!(
        !world.ctl.join("gate-escaped").exists(),
        "the gate wrote outside"
    );
    assert!(!home.join(".bashrc").exists(), "the gate wrote ~/.bashrc");
}

/// The control: an uncontained team's gate runs as the user, everywhere.
#[test]
#[cfg(target_os = "linux")]
fn issue_35_an_uncontained_workers_landing_checks_are_unchanged() {
    let world = World::new(&[("prd.json", &prd(1, |_| vec![]))], false);
    let (_, home) = world.clone_for("w1");
    let gate = attacking_gate(&world, &home);
    let (landed, _) = one_story_in(&world, "open-gate", (&[], &[]), &gate);
    assert_eq!(landed, 1);
    assert_eq!(
        fs::read_to_string(world.ctl.join("key")).unwrap(),
        "PRIVATE-KEY-35\n"
    );
    assert!(world.ctl.join("gate-escaped").exists());
    assert!(home.join(".bashrc").exists());
}

/// A worker's `--allow-host` opens that host to its contained agents, through pagent's
/// proxy: the agent fetches from a server on loopback allowed by `localhost:PORT`, and
/// its story lands.
#[test]
#[cfg(target_os = "linux")]
fn issue_35_a_workers_allow_host_lets_its_contained_agent_reach_that_host() {
    use std::io::{Read, Write};
    let server = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = server.local_addr().unwrap().port();
    let served = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let count = std::sync::Arc::clone(&served);
    std::thread::spawn(move || {
        for mut conn in server.incoming().flatten() {
            count.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            let mut buf = [0u8; 4096];
            let _ = conn.read(&mut buf);
            let _ = conn.write_all(
                b"HTTP/1.1 200 OK\r\nContent-Length: 7\r\nConnection: close\r\n\r\nserved\n",
            );
        }
    });
    let world = World::new(&[("prd.json", &prd(1, |_| vec![]))], false);
    let agent = format!(
        "cat >/dev/null; mkdir -p work && curl -sS -m 10 http://localhost:{port}/ > work/story.txt; \
         echo '<promise>DONE</promise>'"
    );
    let start = world.start(&[
        "prd.json",
        "--name",
        "hosts",
        "--lease",
        "3s",
        "--command",
        &agent,
        "--check",
        GATE_INLINE,
    ]);
    assert_eq!(start.code, Some(0), "{start}");
    let (clone, home) = world.clone_for("w1");
    let host = format!("localhost:{port}");
    let work = [
        "team",
        "work",
        "--team",
        "hosts",
        "--name",
        "w1",
        "--trust",
        "--sandbox",
        "--allow-host",
        &host,
    ];
    let out = world.pagent(&clone, &home, &work).run();
    assert_eq!(out.code, Some(0), "{out}");
    assert_eq!(world.landings().len(), 1, "{out}");
    assert_eq!(served.load(std::sync::atomic::Ordering::SeqCst), 1, "{out}");
}
