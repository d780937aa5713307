//! `pagent prompt`: the current stage's full instructions (a ralph loop's task), as the
//! model read them on stage entry. Quiet re-prompts point here instead of repeating them.

#![allow(clippy::print_stdout)]

use crate::cli::args::Global;
use crate::cli::env::Env;
use crate::cli::exit::ExitStatus;
use crate::store::project::Project;
use crate::{cli::ui, store};

pub fn run(global: &Global, env: &Env) -> anyhow::Result<ExitStatus> {
    let project = Project::resolve(global, env, None)?;
    let Some(state) = store::read_state(&project)? else {
        println!("pagent: no loop in this project.");
        return Ok(ExitStatus::Success);
    };
    println!(
        "{}",
        ui::printable(&pagent_engine::prompt::current_header(&state), false)
    );
    println!();
    println!("{}", ui::printable(state.current().prompt.trim_end(), true));
    Ok(ExitStatus::Success)
}
