//! The per-user secret that seals state files (see `pagent_engine::seal`).
//!
//! It lives outside every project, in pagent's config folder, readable only by its owner.
//! It is created on first set-up with `O_EXCL`, so two set-ups racing cannot end with
//! different secrets; hooks only ever read it, and a missing secret means "nothing here
//! is sealed by this user".

use std::path::{Path, PathBuf};

use anyhow::Context;

use crate::cli::hint::Hinted;
use crate::store::user::UserDir;
use pagent_door::files;

const FILE: &str = "secret";
const LEN: usize = 32;

fn path(config_dir: &Path) -> PathBuf {
    config_dir.join(FILE)
}

/// Reads the secret; `None` if there is none yet or it cannot be read.
pub fn read_secret(user_dir: &UserDir) -> Option<Vec<u8>> {
    let config_dir = user_dir.path();
    let bytes = files::read_outside(&path(config_dir?), 1024).ok()?;
    let bytes = pagent_engine::seal::unhex(std::str::from_utf8(&bytes).ok()?.trim())?;
    (bytes.len() == LEN).then_some(bytes)
}

/// Reads the secret, creating it first if needed.
pub fn read_or_create_secret(user_dir: &UserDir) -> anyhow::Result<Vec<u8>> {
    let config_dir = user_dir.path();
    let dir = config_dir.context(
        "cannot find a config folder for pagent's secret: set HOME or PAGENT_CONFIG_DIR",
    )?;
    if let Some(secret) = read_secret(user_dir) {
        return Ok(secret);
    }
    crate::store::user::open_or_create_config(dir)
        .with_context(|| format!("cannot create pagent's config folder {}", dir.display()))?;
    let random: [u8; LEN] =
        pagent_door::random_bytes().context("cannot read random bytes from /dev/urandom")?;
    let file = path(dir);
    // Another process may have created it first: then theirs is used.
    files::create_new_private(&file, pagent_engine::seal::hex(&random).as_bytes())
        .with_context(|| format!("cannot create {}", file.display()))?;
    read_secret(user_dir).with_context(|| {
        Hinted::new(format!(
            "{} exists but is not a valid pagent secret",
            file.display()
        ))
        .hint("delete it and run again")
    })
}

#[cfg(test)]
#[allow(clippy::disallowed_methods, clippy::disallowed_types)]
mod tests {
    use std::fs;

    use super::*;

    /// Found when `pagent parallel` started two loops on a fresh config folder: the second
    /// read the secret file between the first's create and its write, found it empty, and
    /// failed its task ("exists but is not a valid pagent secret").
    #[test]
    fn loops_creating_the_secret_at_once_all_read_the_same_whole_secret() {
        for _ in 0..40 {
            let dir = tempfile::tempdir().unwrap();
            let config = dir.path().join("pagent");
            let secrets: Vec<Vec<u8>> = std::thread::scope(|scope| {
                let racers: Vec<_> = (0..8)
                    .map(|_| scope.spawn(|| read_or_create_secret(&UserDir::at(Some(&config)))))
                    .collect();
                racers
                    .into_iter()
                    .map(|r| r.join().unwrap().unwrap())
                    .collect()
            });
            assert!(secrets.iter().all(|s| *s == secrets[0] && s.len() == LEN));
            let left: Vec<_> = fs::read_dir(&config).unwrap().flatten().collect();
            assert_eq!(left.len(), 1, "temp files left behind: {left:?}");
        }
    }

    #[cfg(unix)] // file modes
    #[test]
    fn creates_once_and_reads_back() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let config = dir.path().join("pagent");
        assert_eq!(read_secret(&UserDir::at(Some(&config))), None);
        let first = read_or_create_secret(&UserDir::at(Some(&config))).unwrap();
        assert_eq!(first.len(), LEN);
        assert_eq!(
            read_or_create_secret(&UserDir::at(Some(&config))).unwrap(),
            first
        );
        let mode = fs::metadata(path(&config)).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
    }
}
