//! A team on `pagent dashboard`, beside the local loops (issue 32), in a real headless
//! Chromium: every story and every worker as `pagent team status` says them, read from a
//! team on a `git daemon` remote by the dashboard's own background fetch; pause, resume
//! and cancel from the page reach the workers as `pagent team` does; and a remote that
//! stops answering never slows the page (the page says how old what it shows is).

use std::time::{Duration, Instant};

use std::net::TcpListener;

use super::words::masked;
use super::*;
use crate::dashboard::Dashboard;
use crate::dashboard::browser::{ONE_AT_A_TIME, save};
use crate::dashboard::webdriver::Browser;

const LIMIT: Duration = Duration::from_secs(120);

fn team_field(name: &str) -> String {
    format!("[data-team] [data-field=\"{name}\"]")
}

fn story_said(story: &str) -> String {
    format!("[data-team] [data-story=\"{story}\"] [data-field=\"said\"]")
}

/// `pagent dashboard --no-open` on the machine whose HOME is `home` (in `dir`).
fn dashboard(world: &World, dir: &Path, home: &Path) -> Dashboard {
    let mut command = world
        .pagent(dir, home, &["dashboard", "--no-open"])
        .command();
    command.env("NO_COLOR", "1");
    Dashboard::spawn(command)
}

/// The page's text of the team, with what changes between runs masked.
fn team_text(browser: &Browser) -> String {
    let text = browser.eval(
        "return document.querySelector('[data-team]').innerText",
        &[],
    );
    let rules = [
        (r"\d{4}-\d\d-\d\dT[0-9:.]+Z?", "[TIME]"),
        (r"\d+ (s|min|h) ago", "[N] ago"),
    ];
    rules
        .iter()
        .fold(masked(text.as_str().unwrap()), |text, (pattern, with)| {
            regex::Regex::new(pattern)
                .unwrap()
                .replace_all(&text, *with)
                .into_owned()
        })
}

/// Issue 32: the team on the dashboard, beside the local loops: each story (landed as
/// which commit, in work by which worker on which host since when, waiting for which,
/// gave up and why, never starting) and each worker (what it holds, its spend), in the
/// words of `pagent team status`, as the dashboard's background fetch read them from a
/// `git daemon` remote; then Pause, Resume and Cancel clicked on the page reach the
/// remote and every worker as `pagent team pause|resume|cancel` do.
#[test]
fn issue_32_the_team_on_the_dashboard_every_story_and_worker_with_pause_resume_and_cancel() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let world = board_team();
    let mut worker = world.worker("w1", &["-j", "3"]);
    wait_status(&world, LIMIT, "US-001 landed, US-002 in work", |s| {
        row(s, "US-001")["state"] == "landed"
            && row(s, "US-004")["state"] == "gave_up"
            && row(s, "US-002")["state"] == "working"
            && s["workers"][0]["holds"] == json!(["US-002"])
    });
    // The machine that started the team knows it: its dashboard shows it.
    let home = world.base.join("home-seed");
    let dash = dashboard(&world, &world.seed, &home);
    let browser = Browser::start(1280, 1000);
    browser.goto(&dash.url);
    browser.wait_text(&story_said("US-002"), LIMIT, |t| {
        t.starts_with("working: w1 on testhost since ")
    });
    browser.wait_text(&story_said("US-001"), LIMIT, |t| {
        t.starts_with("landed as ")
    });
    let landed = world.landings();
    let said = browser.text(&story_said("US-001")).unwrap();
    assert!(
        said.starts_with(&format!("landed as {} by w1", &landed[0].0[..10])),
        "{said} {landed:?}"
    );
    browser.wait_text("[data-team] [data-worker=\"w1\"]", LIMIT, |t| {
        t.contains("holds US-002, 1 landed")
    });
    assert_eq!(
        browser.text("#summary").unwrap(),
        "0 loops · 0 active · 1 team"
    );
    save(&browser, "dashboard-team.png");
    assert_text!(team_text(&browser));

    // Pause from the page: the remote's state says so, and the worker's loop waits.
    browser.click("[data-team] [data-action=\"pause\"]");
    browser.wait_text(&team_field("control"), LIMIT, |t| t == "paused");
    assert_eq!(world.status()["control"], "paused");
    let result = browser.text(&team_field("result")).unwrap();
    assert!(
        result.starts_with("pagent team: paused the team board"),
        "{result}"
    );
    wait_for(LIMIT, "the worker's loop to stop for the pause", || {
        worker
            .output()
            .contains("the loop saves its state and waits")
    });
    browser.wait_text(&team_field("headline"), LIMIT, |t| {
        t.contains("paused by testhost (dashboard) at ")
    });
    browser.click("[data-team] [data-action=\"resume\"]");
    browser.wait_text(&team_field("control"), LIMIT, |t| t == "running");
    assert_eq!(world.status()["control"], "running");

    cancel_from_the_page(&world, &browser, &mut worker);
}

/// Five stories (3 after 2, 5 after 4), published as the team "board"; US-002 held in
/// work and US-004 made to give up by the fake agent's controls.
fn board_team() -> World {
    let plan = prd(5, |i| match i {
        3 => vec![2],
        5 => vec![4],
        _ => vec![],
    });
    let world = World::new(&[("prd.json", &plan)], false);
    let start = world.start(&[
        "prd.json",
        "--name",
        "board",
        "--lease",
        "3s",
        "--max-iterations",
        "1",
        "--check",
        "true",
    ]);
    assert_eq!(start.code, Some(0), "{start}");
    world.control("hold-US-002");
    world.control("never-US-004");
    world
}

/// Cancel takes a second click, and ends the worker at its next step: nothing lands.
fn cancel_from_the_page(world: &World, browser: &Browser, worker: &mut Worker) {
    let cancel = "[data-team] [data-action=\"cancel\"]";
    browser.click(cancel);
    assert_eq!(browser.text(cancel).unwrap(), "Confirm cancel");
    browser.click(cancel);
    browser.wait_text(&team_field("control"), LIMIT, |t| t == "cancelled");
    assert_eq!(world.status()["control"], "cancelled");
    world.uncontrol("hold-US-002");
    worker.wait(LIMIT);
    assert_eq!(world.landings().len(), 1, "a story landed after the cancel");
    let hidden = format!("return document.querySelector('{cancel}').hidden");
    assert_eq!(
        browser.eval(&hidden, &[]),
        true,
        "a cancelled team offers a cancel"
    );
    save(browser, "dashboard-team-cancelled.png");
}

/// A listener on `port` once the stopped daemon's processes let it go: the children it
/// forked per connection die with it, but the kernel frees their socket only once each is
/// gone (CI met "address in use" at once on 2026-11-27).
fn bind_when_free(port: u16) -> TcpListener {
    let started = Instant::now();
    loop {
        match TcpListener::bind(("127.0.0.1", port)) {
            Ok(listener) => return listener,
            Err(err) if started.elapsed() < Duration::from_secs(20) => {
                assert_eq!(err.kind(), std::io::ErrorKind::AddrInUse, "{err}");
                std::thread::sleep(Duration::from_millis(50));
            }
            Err(err) => panic!("port {port} still in use after 20 s: {err}"),
        }
    }
}

/// Issue 32: the dashboard fetches a team in the background, never on a request's path:
/// a change made elsewhere (a pause from another machine) shows without a reload; and a
/// remote that stops answering (it accepts connections and says nothing) never slows
/// the page: every request is answered at once from what was last seen, the page says
/// how old it is, and the hung fetch gives up at its bound, which the page then says.
#[test]
fn issue_32_a_team_on_the_dashboard_is_fetched_in_the_background_and_a_silent_remote_never_slows_the_page()
 {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let world = World::new(&[("prd.json", &prd(2, |_| vec![]))], false);
    let start = world.start(&["prd.json", "--name", "far", "--lease", "3s"]);
    assert_eq!(start.code, Some(0), "{start}");
    // Another machine looks at the team through a way to the remote of its own.
    let mut other = world.remote.another_way();
    let viewer = world.base.join("home-viewer");
    fs::create_dir_all(&viewer).unwrap();
    let look = world
        .pagent(
            &world.seed,
            &viewer,
            &["team", "status", "--team", "far", "--remote", &other.url()],
        )
        .run();
    assert_eq!(look.code, Some(0), "{look}");
    let dash = dashboard(&world, &world.seed, &viewer);
    let browser = Browser::start(1280, 900);
    browser.goto(&dash.url);
    browser.wait_text(&story_said("US-001"), LIMIT, |t| t == "ready to be claimed");
    browser.eval("window.__sameDocument = 'yes';", &[]);
    let pause = world.team(&["pause", "--team", "far"]);
    assert_eq!(pause.code, Some(0), "{pause}");
    let took = browser.wait_text(&team_field("control"), LIMIT, |t| t == "paused");
    assert_eq!(browser.eval("return window.__sameDocument", &[]), "yes");
    eprintln!("a pause from elsewhere showed {took:?} after it was pushed");

    // The remote goes silent: it takes connections and answers nothing.
    other.stop();
    let silent = bind_when_free(other.port);
    let held = std::thread::spawn(move || {
        let mut held = Vec::new();
        for stream in silent.incoming().take(8) {
            held.push(stream);
        }
        held
    });
    let watched = Instant::now();
    let mut slowest = Duration::ZERO;
    while watched.elapsed() < Duration::from_secs(8) {
        for path in ["/api/teams", "/api/loops"] {
            let asked = Instant::now();
            let (status, body) = dash.api(path);
            slowest = slowest.max(asked.elapsed());
            assert_eq!(status, 200, "{path}: {body}");
            if path == "/api/teams" {
                assert_eq!(body["teams"][0]["control"], "paused", "{body}");
            }
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    assert!(
        slowest < Duration::from_secs(1),
        "a request waited {slowest:?} for a silent remote"
    );
    let said = browser.text(&team_field("seen")).unwrap();
    assert!(said.starts_with("As the remote showed it "), "{said}");
    browser.wait_text(&team_field("seen"), Duration::from_secs(60), |t| {
        t.starts_with("The last look at the remote failed: git fetch took more than 30 s. As the remote showed it ")
    });
    assert_eq!(
        browser.text(&story_said("US-001")).unwrap(),
        "ready to be claimed",
        "what was last seen is still shown"
    );
    eprintln!("the slowest request while the remote was silent: {slowest:?}");
    drop(held);
}

/// Issue 32: the team's buttons on the dashboard are guarded as a loop's are: a form
/// another site posts (the token in the address, not the header) is refused and the team
/// runs on; only a team this machine knows can be named, by its key, and only pause,
/// resume and cancel can be asked of it.
#[test]
fn issue_32_a_teams_buttons_act_only_with_the_header_token_and_only_on_a_known_team() {
    let world = World::new(&[("prd.json", &prd(1, |_| vec![]))], false);
    let start = world.start(&["prd.json", "--name", "guarded", "--lease", "3s"]);
    assert_eq!(start.code, Some(0), "{start}");
    let home = world.base.join("home-seed");
    let dash = dashboard(&world, &world.seed, &home);
    let seen = wait_showing(LIMIT, "the team on the dashboard", || {
        let (status, body) = dash.api("/api/teams");
        match body["teams"][0]["control"].as_str() {
            Some("running") if status == 200 => Ok(body),
            _ => Err(body.to_string()),
        }
    });
    let id = seen["teams"][0]["id"].as_str().unwrap().to_owned();
    let post = |target: &str, headers: &str| {
        let request = format!(
            "POST {target} HTTP/1.1\r\nHost: {}\r\nContent-Length: 0\r\n{headers}\r\n",
            dash.addr
        );
        crate::dashboard::http(dash.addr, request.as_bytes())
    };
    let form = format!("/api/teams/{id}/cancel?token={}", dash.token);
    assert_eq!(
        post(&form, "Content-Type: application/x-www-form-urlencoded\r\n").0,
        403
    );
    let token = format!("X-Pagent-Token: {}\r\n", dash.token);
    for target in [
        "/api/teams/0123456789abcdef0123456789abcdef/cancel".to_owned(),
        "/api/teams/../../x/cancel".to_owned(),
        "/api/teams/%2e%2e/cancel".to_owned(),
        format!("/api/teams/{id}/delete"),
    ] {
        let (status, body) = post(&target, &token);
        assert!(
            matches!(status, 403 | 404),
            "{target}: {status} {}",
            String::from_utf8_lossy(&body)
        );
    }
    assert_eq!(world.status()["control"], "running");
    let (status, body) = post(&format!("/api/teams/{id}/cancel"), &token);
    assert_eq!(status, 200);
    let done: Value = serde_json::from_slice(&body).unwrap();
    assert_eq!(done["ok"], true, "{done}");
    assert_eq!(
        done["message"],
        "pagent team: cancelled the team guarded: no landing goes through after this, and every worker stops at its next step"
    );
    assert_eq!(world.status()["control"], "cancelled");
}
