//! The system's randomness: the per-user secret, loop ids, the terminal edge's nonce and
//! temp names. From `/dev/urandom` on Unix (never blocks once the system has booted, and
//! a file every Unix pagent runs on has) and `BCryptGenRandom` on Windows.

use std::io;

/// `N` random bytes from the system's generator.
pub fn random_bytes<const N: usize>() -> io::Result<[u8; N]> {
    let mut bytes = [0u8; N];
    fill(&mut bytes)?;
    Ok(bytes)
}

#[cfg(unix)]
fn fill(bytes: &mut [u8]) -> io::Result<()> {
    use std::io::Read;
    std::fs::File::open("/dev/urandom")?.read_exact(bytes)
}

/// Fills `bytes` from the system's preferred random number generator.
#[cfg(windows)]
fn fill(bytes: &mut [u8]) -> io::Result<()> {
    use windows_sys::Win32::Security::Cryptography as bc;
    let len = u32::try_from(bytes.len()).map_err(|_| io::Error::other("too many random bytes"))?;
    // SAFETY: the buffer is writable for `len` bytes; a null algorithm handle is what
    // BCRYPT_USE_SYSTEM_PREFERRED_RNG asks for.
    let status = unsafe {
        bc::BCryptGenRandom(
            std::ptr::null_mut(),
            bytes.as_mut_ptr(),
            len,
            bc::BCRYPT_USE_SYSTEM_PREFERRED_RNG,
        )
    };
    if status < 0 {
        return Err(io::Error::other(format!(
            "BCryptGenRandom failed: {status:#x}"
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    #[test]
    fn two_draws_differ() {
        let a: [u8; 16] = super::random_bytes().unwrap();
        let b: [u8; 16] = super::random_bytes().unwrap();
        assert_ne!(a, b);
    }
}
