//! `pagent status`: where the loop is, stage by stage, with each condition's progress
//! measured now (files and folders; commands are not run, their last result is shown).
//! The report itself is built in [`crate::world::report`]. `--all` lists every loop on
//! the machine instead (the register of loops, [`crate::world::overview`]), as the
//! dashboard does.
//!
//! `--slash` is /pagent:status's `!` line, which runs only when pagent's
//! UserPromptExpansion hook let the command through: the user sent it while the model
//! worked (2.1.330's send-now, which cuts the turn) and has the status on screen already,
//! so the model is told to go on with the loop. Without the hook (an older hooks.json), it
//! hands the model the status to show.

use pagent_engine::{Whose, whose_loop};

use crate::cli::args::{Global, StatusArgs};
use crate::cli::env::Env;
use crate::cli::exit::ExitStatus;
use crate::cli::ui::{Style, printable, printable_json};
use crate::io::{Io, now};
use crate::store;
use crate::store::project::Project;
use crate::store::user::UserDir;
use crate::world::overview;
use crate::world::report::{build, print_human};

pub fn run(
    global: &Global,
    env: &Env,
    args: &StatusArgs,
    io: &mut Io,
) -> anyhow::Result<ExitStatus> {
    if args.all {
        let rows = overview::gather(&UserDir::of(env), now());
        if args.json {
            let text = serde_json::to_string_pretty(&rows)?;
            writeln!(io.stdout, "{}", printable_json(&text))?;
        } else {
            let style = Style::for_stdout(env.no_color, io.stdout_is_terminal);
            overview::print_all(&rows, style, io.stdout)?;
        }
        return Ok(ExitStatus::Success);
    }
    let project =
        crate::store::nearest::project_of_loop(global.project.as_deref(), env, &mut |m: &str| {
            let _ = writeln!(io.stderr, "pagent: {m}");
        })?;
    if args.slash {
        writeln!(io.stdout, "{}", for_the_model(&project, env))?;
        return Ok(ExitStatus::Success);
    }
    let Some(state) = store::read_state(&project)? else {
        if args.json {
            writeln!(io.stdout, "null")?;
        } else {
            writeln!(
                io.stdout,
                "pagent: no loop in {} (start one with /pagent:run PRD or /pagent:ralph TASK).",
                printable(&project.root.display().to_string(), false)
            )?;
        }
        return Ok(ExitStatus::Success);
    };
    let sealed = store::ownership(&project, &UserDir::of(env), &state) == store::Ownership::Own;
    let mut report = build(&project, &UserDir::of(env), &state, sealed);
    report.measure_logs(&project, crate::store::config::logs_cap(&UserDir::of(env)));
    let zones = crate::world::zone::Zones {
        tz: env.tz.as_deref(),
        tzdir: env.tzdir.as_deref(),
    };
    report.localize(&zones, crate::io::now());
    if args.json {
        writeln!(
            io.stdout,
            "{}",
            printable_json(&serde_json::to_string_pretty(&report)?)
        )?;
    } else {
        print_human(
            &report,
            Style::for_stdout(env.no_color, io.stdout_is_terminal),
            io.stdout,
        )?;
    }
    Ok(ExitStatus::Success)
}

/// What /pagent:status's `!` line tells the model.
fn for_the_model(project: &Project, env: &Env) -> String {
    let running = store::read_state(project).ok().flatten().filter(|s| {
        s.is_active()
            && s.paused.is_none()
            && env.session_id.is_some()
            && whose_loop(s, env.session_id.as_deref()) == Whose::This
    });
    match running {
        Some(state) => format!(
            "pagent showed the user the loop's status on their screen: they asked while you worked, \
             which interrupted your turn. Do not reply about it; go on with the loop's work where you \
             left it.\n\n{}\n\n{}",
            pagent_engine::prompt::current_header(&state),
            state.current().prompt.trim_end()
        ),
        None => format!(
            "{}\n\nShow the user the status above as written, inside a plain fenced code block, and \
             nothing else. Run no tools.",
            crate::slash::answer::status_text(project, env)
        ),
    }
}
