//! `pagent dashboard`: serve the live page of every loop on this machine (and every team
//! it knows) until Ctrl-C. The server is [`crate::dashboard`], the teams are watched by
//! [`crate::runner::team::watch`]; this file only turns the arguments into options and
//! hands the one to the other.

use crate::cli::args::DashboardArgs;
use crate::cli::env::Env;
use crate::cli::exit::ExitStatus;
use crate::dashboard::{self, Options, Teams};
use crate::io::Io;
use crate::runner::team::watch::Watch;

pub fn run(env: &Env, args: &DashboardArgs, io: &mut Io) -> anyhow::Result<ExitStatus> {
    let options = Options {
        bind: args.bind,
        port: args.port.unwrap_or(0),
        open: !args.no_open,
    };
    let teams = Watch::start(env);
    dashboard::serve(env, &options, teams, io.stdout)?;
    Ok(ExitStatus::Success)
}

/// The runner's watch of the teams is what the page shows of them.
impl Teams for Watch {
    fn page(&self, now: pagent_engine::Timestamp) -> serde_json::Value {
        Watch::page(self, now)
    }

    fn act(&self, id: &str, action: &str) -> Option<(bool, String)> {
        Watch::act(self, id, action)
    }
}
