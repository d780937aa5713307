//! The per-user secret that seals state files (see `pagent_engine::seal`).
//!
//! It lives outside every project, in pagent's config folder, readable only by its owner.
//! It is created on first set-up with `create_new`, so two set-ups racing cannot end with
//! different secrets; hooks only ever read it, and a missing secret means "nothing here
//! is sealed by this user".

use std::fs::{self, OpenOptions};
use std::io::{ErrorKind, Read, Write};
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

use anyhow::Context;

const FILE: &str = "secret";
const LEN: usize = 32;

fn path(config_dir: &Path) -> PathBuf {
    config_dir.join(FILE)
}

/// Reads the secret; `None` if there is none yet or it cannot be read.
pub fn read_secret(config_dir: Option<&Path>) -> Option<Vec<u8>> {
    let text = fs::read_to_string(path(config_dir?)).ok()?;
    let bytes = decode_hex(text.trim())?;
    (bytes.len() == LEN).then_some(bytes)
}

/// Reads the secret, creating it first if needed.
pub fn read_or_create_secret(config_dir: Option<&Path>) -> anyhow::Result<Vec<u8>> {
    let dir = config_dir.context(
        "cannot find a config folder for pagent's secret: set HOME or PAGENT_CONFIG_DIR",
    )?;
    if let Some(secret) = read_secret(Some(dir)) {
        return Ok(secret);
    }
    fs::create_dir_all(dir)
        .with_context(|| format!("cannot create pagent's config folder {}", dir.display()))?;
    let _ = fs::set_permissions(dir, fs::Permissions::from_mode(0o700));
    let mut random = [0u8; LEN];
    fs::File::open("/dev/urandom")
        .and_then(|mut f| f.read_exact(&mut random))
        .context("cannot read random bytes from /dev/urandom")?;
    let file = path(dir);
    match OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(&file)
    {
        Ok(mut f) => {
            f.write_all(pagent_engine::seal::hex(&random).as_bytes())
                .and_then(|()| f.sync_all())
                .with_context(|| format!("cannot write {}", file.display()))?;
        }
        // Another process created it first: use theirs.
        Err(err) if err.kind() == ErrorKind::AlreadyExists => {}
        Err(err) => return Err(err).with_context(|| format!("cannot create {}", file.display())),
    }
    read_secret(Some(dir)).with_context(|| {
        format!(
            "{} exists but is not a valid pagent secret; delete it and run again",
            file.display()
        )
    })
}

fn decode_hex(text: &str) -> Option<Vec<u8>> {
    if !text.len().is_multiple_of(2) {
        return None;
    }
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(text.get(i..i + 2)?, 16).ok())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn creates_once_and_reads_back() {
        let dir = tempfile::tempdir().unwrap();
        let config = dir.path().join("pagent");
        assert_eq!(read_secret(Some(&config)), None);
        let first = read_or_create_secret(Some(&config)).unwrap();
        assert_eq!(first.len(), LEN);
        assert_eq!(read_or_create_secret(Some(&config)).unwrap(), first);
        let mode = fs::metadata(path(&config)).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
    }
}
