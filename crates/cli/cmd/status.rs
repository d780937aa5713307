//! `pagent status`: where the loop is, stage by stage, with each condition's progress
//! measured now (files and folders; commands are not run, their last result is shown).
//! The report itself is built in [`crate::world::report`]. `--all` lists every loop on
//! the machine instead (the register of loops, [`crate::world::overview`]), as the
//! dashboard does.

use pagent_engine::pause::decide_prompt;

use crate::cli::args::{Global, StatusArgs};
use crate::cli::env::Env;
use crate::cli::exit::ExitStatus;
use crate::cli::ui::{Style, printable, printable_json};
use crate::io::{Io, now};
use crate::store;
use crate::store::project::Project;
use crate::world::overview;
use crate::world::report::{build, print_human};

pub fn run(
    global: &Global,
    env: &Env,
    args: &StatusArgs,
    io: &mut Io,
) -> anyhow::Result<ExitStatus> {
    if args.all {
        let rows = overview::gather(env.config_dir.as_deref(), now());
        if args.json {
            let text = serde_json::to_string_pretty(&rows)?;
            writeln!(io.stdout, "{}", printable_json(&text))?;
        } else {
            let style = Style::for_stdout(env.no_color, io.stdout_is_terminal);
            overview::print_all(&rows, style, io.stdout)?;
        }
        return Ok(ExitStatus::Success);
    }
    let project = Project::resolve(global, env, None)?;
    if args.pause {
        // Claude Code may run the command's `!` line before the UserPromptSubmit hook
        // records the pause; doing it here makes the report true either way.
        let session = env.session_id.as_deref();
        let now = now();
        store::update_own_loop(
            &project,
            env.config_dir.as_deref(),
            |state| decide_prompt(state, session, "/pagent:status", now),
            io.stderr,
        )?;
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
    let sealed =
        store::ownership(&project, env.config_dir.as_deref(), &state) == store::Ownership::Own;
    let mut report = build(&project, &state, sealed);
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
