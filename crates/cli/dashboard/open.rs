//! Opening the page in the user's browser.
//!
//! The page's address carries the token, and a program's arguments are readable by every
//! user of the machine (`ps`, `/proc/*/cmdline`): a browser started with the address
//! would show it for as long as it runs. So the address goes into a small private file in
//! pagent's config folder that redirects to it, and the browser is given that file's path
//! (as Jupyter does). [`start`] is the dashboard's one child process, kept in one small
//! function so that it can go through the binary's process door.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use anyhow::Context;

use crate::cli::env::Env;
use crate::store::door::Dir;
use crate::world::backpressure::find_program;

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
    let program = find_program(name, env.path.as_deref())
        .with_context(|| format!("{name} is not on PATH"))?;
    start(&program, &page).with_context(|| format!("cannot start {}", program.display()))
}

/// The file that sends the browser on to `url` (which holds only characters that need no
/// escaping in an attribute: an address pagent built, with a hex or checked token).
fn write_redirect(config: &Path, url: &str) -> anyhow::Result<PathBuf> {
    let dir = Dir::open_or_create_private(config)?;
    let html = format!(
        "<!doctype html>\n<meta charset=\"utf-8\">\n<meta name=\"referrer\" content=\"no-referrer\">\n\
         <meta http-equiv=\"refresh\" content=\"0;url={url}\">\n<title>pagent dashboard</title>\n\
         <p><a href=\"{url}\">Open the pagent dashboard</a></p>\n"
    );
    dir.write_atomic(Path::new(REDIRECT), html.as_bytes())?;
    Ok(config.join(REDIRECT))
}

/// Starts `program page`, detached from the terminal; a thread reaps it.
fn start(program: &Path, page: &Path) -> std::io::Result<()> {
    let mut child = Command::new(program)
        .arg(page)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()?;
    std::thread::spawn(move || {
        let _ = child.wait();
    });
    Ok(())
}
