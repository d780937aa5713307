//! `pagent dashboard`: serve the live page of every loop on this machine until Ctrl-C.
//! The server is [`crate::dashboard`]; this file only turns the arguments into its
//! options.

use crate::cli::args::DashboardArgs;
use crate::cli::env::Env;
use crate::cli::exit::ExitStatus;
use crate::dashboard::{self, Options};
use crate::io::Io;

pub fn run(env: &Env, args: &DashboardArgs, io: &mut Io) -> anyhow::Result<ExitStatus> {
    let options = Options {
        bind: args.bind,
        port: args.port.unwrap_or(0),
        open: !args.no_open,
    };
    dashboard::serve(env, &options, io.stdout)?;
    Ok(ExitStatus::Success)
}
