//! Opening the page in the user's browser.
//!
//! The page's address carries the token, and a program's arguments are readable by every
//! user of the machine (`ps`, `/proc/*/cmdline`): a browser started with the address
//! would show it for as long as it runs. So the address goes into a small private file in
//! pagent's config folder that redirects to it, and the browser is given that file's path
//! (as Jupyter does). The opener is the dashboard's one child process, started through the
//! process door: found on the cleaned `PATH`, in its own group, and let go (a browser it
//! starts may outlive it, so nothing waits to kill what is left of its group).

use std::path::{Path, PathBuf};

use anyhow::Context;

use crate::cli::env::Env;
use pagent_door::process::{Launch, NEUTRAL_DIR, Program, SearchPath};

const REDIRECT: &str = "dashboard.html";

/// Writes the redirect file and starts the system's opener on it.
pub fn open_in_browser(env: &Env, url: &str) -> anyhow::Result<()> {
    let config = env
        .config_dir
        .as_deref()
        .context("no config folder for pagent: set HOME or PAGENT_CONFIG_DIR")?;
    let page = write_redirect(config, url)?;
    let name = if cfg!(target_os = "macos") {
        "open"
    } else {
        "xdg-open"
    };
    let search = SearchPath::new(env.path.as_deref(), &[]);
    let program =
        Program::named(name, &search).with_context(|| format!("{name} is not on PATH"))?;
    let shown = program.path().display().to_string();
    Launch::new(program, Path::new(NEUTRAL_DIR), &search)
        .arg(&page)
        .spawn_detached()
        .with_context(|| format!("cannot start {shown}"))
}

/// The file that sends the browser on to `url` (which holds only characters that need no
/// escaping in an attribute: an address pagent built, with a hex or checked token).
fn write_redirect(config: &Path, url: &str) -> anyhow::Result<PathBuf> {
    let dir = crate::store::user::open_or_create_config(config)?;
    let html = format!(
        "<!doctype html>\n<meta charset=\"utf-8\">\n<meta name=\"referrer\" content=\"no-referrer\">\n\
         <meta http-equiv=\"refresh\" content=\"0;url={url}\">\n<title>pagent dashboard</title>\n\
         <p><a href=\"{url}\">Open the pagent dashboard</a></p>\n"
    );
    dir.write_atomic(Path::new(REDIRECT), html.as_bytes())?;
    Ok(config.join(REDIRECT))
}
