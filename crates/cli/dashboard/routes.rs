//! What the dashboard answers, once [`guard`](super::guard) has admitted a request:
//!
//! ```text
//! GET  /?token=T                     the page (embedded, the token written into it)
//! GET  /app.js?token=T, /app.css     its script and style (embedded)
//! GET  /api/loops                    every loop: world::overview's rows
//! GET  /api/loops/<id>               one loop's page: stages, timeline, charts, output
//! POST /api/loops/<id>/pause|resume|cancel
//!                                    session::control, as the commands do
//! GET  /api/teams                    every team this machine knows, as last fetched
//! POST /api/teams/<id>/pause|resume|cancel
//!                                    as `pagent team pause|resume|cancel` do
//! ```
//!
//! `<id>` is a register key (32 hex digits) and nothing else: a loop is found through the
//! register, a team through the teams this machine knows, never through a path in the
//! request, and no project file is ever served.

use pagent_engine::notice::By;
use serde::Serialize;
use serde_json::json;

use super::detail;
use super::guard::TokenIn;
use super::http::{Request, Response};
use crate::cli::env::Env;
use crate::cli::ui;
use crate::io::now;
use crate::session::control;
use crate::store::register;
use crate::store::user::UserDir;
use crate::world::overview;

const INDEX: &str = include_str!("assets/index.html");
const SCRIPT: &str = include_str!("assets/app.js");
const STYLE: &str = include_str!("assets/app.css");

/// What the pause button says the loop is paused because of.
pub const PAUSED_WHY: &str = "you paused it from the dashboard";

/// Everything a worker needs to answer.
#[derive(Debug)]
pub struct Site {
    pub env: Env,
    pub guard: super::guard::Guard,
    /// The page, with the token written into its asset addresses.
    pub index: String,
    pub teams: std::sync::Arc<dyn super::Teams>,
}

impl Site {
    pub fn new(
        env: Env,
        guard: super::guard::Guard,
        token: &str,
        teams: std::sync::Arc<dyn super::Teams>,
    ) -> Site {
        Site {
            env,
            guard,
            index: INDEX.replace("{{TOKEN}}", token),
            teams,
        }
    }
}

/// The answer to an admitted-or-not request.
pub fn answer(site: &Site, request: &Request) -> Response {
    let token_in = if request.path.starts_with("/api/") {
        TokenIn::Header
    } else if request.path == "/" {
        TokenIn::Page
    } else {
        TokenIn::Query
    };
    if let Err(why) = site.guard.admit(request, token_in) {
        return Response::text(403, &format!("pagent dashboard: forbidden: {why}\n"));
    }
    let method = request.method.as_str();
    let parts: Vec<&str> = request.path.split('/').collect();
    match (method, parts.as_slice()) {
        ("GET", ["", ""]) => asset(&site.index, "text/html; charset=utf-8"),
        ("GET", ["", "app.js"]) => asset(SCRIPT, "text/javascript; charset=utf-8"),
        ("GET", ["", "app.css"]) => asset(STYLE, "text/css; charset=utf-8"),
        ("GET", ["", "api", "loops"]) => {
            let now = now();
            let rows = overview::gather(&UserDir::of(&site.env), now);
            Response::json(200, &json!({ "now": now, "loops": rows }))
        }
        ("GET", ["", "api", "loops", id]) => loop_page(site, id),
        ("POST", ["", "api", "loops", id, action]) => act(site, id, action),
        ("GET", ["", "api", "teams"]) => Response::json(200, &site.teams.page(now())),
        ("POST", ["", "api", "teams", id, action]) => team_act(site, id, action),
        (
            _,
            ["", ""]
            | ["", "app.js" | "app.css"]
            | ["", "api", "loops" | "teams"]
            | ["", "api", "loops", _]
            | ["", "api", "loops" | "teams", _, _],
        ) => Response::text(405, "pagent dashboard: method not allowed\n"),
        _ => Response::text(404, "pagent dashboard: not found\n"),
    }
}

fn asset(body: &str, content_type: &'static str) -> Response {
    Response {
        status: 200,
        content_type,
        body: body.as_bytes().to_vec(),
    }
}

/// The registered loop `id` with its project, row and (when the user's own) state.
fn find(site: &Site, id: &str) -> Option<overview::Found> {
    let user_dir = &UserDir::of(&site.env);
    let entry = register::find(user_dir, id)?;
    overview::row(user_dir, &entry, now())
}

fn loop_page(site: &Site, id: &str) -> Response {
    let Some(found) = find(site, id) else {
        return Response::text(404, "pagent dashboard: no such loop\n");
    };
    let user_dir = &UserDir::of(&site.env);
    let page = detail::build(&found.project, user_dir, found.row, found.state.as_ref());
    Response::json(200, &page)
}

/// Pause, resume or cancel a team: its push to the remote is the one thing the page waits
/// for the remote for.
fn team_act(site: &Site, id: &str, action: &str) -> Response {
    if !register::is_key(id) {
        return Response::text(404, "pagent dashboard: no such team\n");
    }
    match site.teams.act(id, action) {
        Some((ok, message)) => Response::json(200, &json!({ "ok": ok, "message": message })),
        None => Response::text(404, "pagent dashboard: no such team\n"),
    }
}

#[derive(Debug, Serialize)]
struct Acted {
    /// Whether the operation changed the loop.
    ok: bool,
    /// What the command would have printed.
    message: String,
    /// The loop's row after it.
    row: Option<overview::LoopRow>,
}

fn act(site: &Site, id: &str, action: &str) -> Response {
    let Some(overview::Found { project, .. }) = find(site, id) else {
        return Response::text(404, "pagent dashboard: no such loop\n");
    };
    let env = &site.env;
    // Warnings (a log line that could not be written) are the command's stderr; the page
    // shows the outcome, which the state decides.
    let mut stderr = Vec::new();
    let done = match action {
        "cancel" => control::cancel(&project, env, By::Dashboard, &mut |m: &str| {
            ui::warn(&mut stderr, m)
        })
        .map(|done| {
            let ok = matches!(done, control::Cancelled::Done { .. });
            (ok, done.message(&project.root))
        }),
        "pause" => control::pause(&project, env, PAUSED_WHY, &mut |m: &str| {
            ui::warn(&mut stderr, m)
        })
        .map(|done| {
            (
                matches!(done, control::Paused::Done { .. }),
                done.message(&project.root),
            )
        }),
        "resume" => control::resume(&project, env, By::Dashboard, &mut |m: &str| {
            ui::warn(&mut stderr, m)
        })
        .map(|done| {
            (
                matches!(done, control::Resumed::Done { .. }),
                done.message(),
            )
        }),
        _ => return Response::text(404, "pagent dashboard: not found\n"),
    };
    let (ok, message) = match done {
        Ok(done) => done,
        Err(err) => (false, format!("pagent: error: {err:#}")),
    };
    let row = find(site, id).map(|found| found.row);
    Response::json(200, &Acted { ok, message, row })
}
