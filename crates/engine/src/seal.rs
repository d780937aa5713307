//! Sealing state files so pagent only acts on loops its own user set up.
//!
//! A state file can arrive from anywhere: committed to a repository, unpacked from an
//! archive, planted by another local user. Acting on it would let a stranger run commands
//! (`custom` conditions) or trap a session. So every state pagent writes carries an
//! HMAC-SHA256 over its canonical JSON and the project root, keyed with a per-user secret
//! kept outside the project (the binary owns where). A file whose seal does not verify is
//! ignored. Binding the project root means a sealed file copied to another checkout is
//! also refused.

use hmac::{Hmac, Mac};
use sha2::Sha256;

use crate::State;

const DOMAIN: &[u8] = b"pagent-seal-v1\0";

/// The seal of `state` (its `seal` field ignored) for the project at `project_key`: the
/// bytes of the project's real path, as the OS spells it. Not text: two folders whose
/// names differ only in bytes that are not UTF-8 would share a lossy key, and with it
/// every seal.
pub fn compute(state: &State, project_key: &[u8], secret: &[u8]) -> String {
    let mut unsealed = state.clone();
    unsealed.seal = None;
    // Struct fields serialise in declaration order and JSON maps are sorted (serde_json's
    // default `Map` is a BTreeMap), so these bytes are canonical for a given state.
    let body = serde_json::to_vec(&unsealed).unwrap_or_default();
    let Ok(mut mac) = Hmac::<Sha256>::new_from_slice(secret) else {
        return String::new();
    };
    mac.update(DOMAIN);
    mac.update(project_key);
    mac.update(b"\0");
    mac.update(&body);
    hex(&mac.finalize().into_bytes())
}

/// Sets `state.seal`.
pub fn apply(state: &mut State, project_key: &[u8], secret: &[u8]) {
    state.seal = Some(compute(state, project_key, secret));
}

/// True when `state.seal` is the seal this user would have written, compared in constant
/// time.
pub fn verify(state: &State, project_key: &[u8], secret: &[u8]) -> bool {
    let Some(seal) = state.seal.as_deref() else {
        return false;
    };
    let expected = compute(state, project_key, secret);
    !expected.is_empty()
        && expected.len() == seal.len()
        && expected
            .bytes()
            .zip(seal.bytes())
            .fold(0u8, |acc, (a, b)| acc | (a ^ b))
            == 0
}

/// The bytes of lowercase or uppercase hex text; `None` if it is not hex.
pub fn unhex(text: &str) -> Option<Vec<u8>> {
    // Digits only: `from_str_radix` would also take a sign (`+f`).
    if !text.len().is_multiple_of(2) || !text.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(text.get(i..i + 2)?, 16).ok())
        .collect()
}

pub fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut out = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        out.push(char::from(DIGITS[usize::from(b >> 4)]));
        out.push(char::from(DIGITS[usize::from(b & 0xf)]));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{SetupOptions, Timestamp};

    fn state() -> State {
        State::new_ralph(
            "Fix it".into(),
            "DONE".into(),
            SetupOptions::default(),
            None,
            Timestamp(1),
        )
    }

    #[test]
    fn a_sealed_state_verifies_and_survives_json() {
        let mut s = state();
        apply(&mut s, b"/p", b"secret");
        assert!(verify(&s, b"/p", b"secret"));
        let reread = State::from_json(s.to_json_pretty().as_bytes()).unwrap();
        assert!(verify(&reread, b"/p", b"secret"));
    }

    #[test]
    fn any_change_key_or_project_breaks_the_seal() {
        let mut s = state();
        apply(&mut s, b"/p", b"secret");
        assert!(!verify(&s, b"/p", b"other secret"));
        assert!(!verify(&s, b"/other", b"secret"));
        let mut edited = s.clone();
        edited.stages[0].prompt.push('!');
        assert!(!verify(&edited, b"/p", b"secret"));
        let mut unsealed = s.clone();
        unsealed.seal = None;
        assert!(!verify(&unsealed, b"/p", b"secret"));
        let mut forged = s;
        forged.seal = Some("00".repeat(32));
        assert!(!verify(&forged, b"/p", b"secret"));
    }

    /// A seal is compared whole: its prefix, or the seal with more after it, is not it.
    #[test]
    fn a_cut_or_lengthened_seal_does_not_verify() {
        let mut s = state();
        apply(&mut s, b"/p", b"secret");
        let seal = s.seal.clone().unwrap();
        assert_eq!(seal.len(), 64);
        for other in [&seal[..32], &format!("{seal}00"), ""] {
            let mut edited = s.clone();
            edited.seal = Some(other.to_owned());
            assert!(!verify(&edited, b"/p", b"secret"), "{other:?}");
        }
    }

    /// The comparison ORs the differences together: two differences that would cancel
    /// out under XOR (the same bit flipped in two characters) still refuse the seal.
    #[test]
    fn differences_never_cancel_out() {
        let mut s = state();
        apply(&mut s, b"/p", b"secret");
        let seal = s.seal.clone().unwrap();
        let forged: String = seal
            .bytes()
            .enumerate()
            .map(|(i, b)| char::from(if i < 2 { b ^ 1 } else { b }))
            .collect();
        assert_ne!(forged, seal);
        s.seal = Some(forged);
        assert!(!verify(&s, b"/p", b"secret"));
    }

    #[test]
    fn hex_round_trips_in_either_case() {
        assert_eq!(hex(&[0x00, 0x0a, 0xf0, 0xff]), "000af0ff");
        assert_eq!(unhex("000af0ff"), Some(vec![0x00, 0x0a, 0xf0, 0xff]));
        assert_eq!(unhex("0AfF"), Some(vec![0x0a, 0xff]));
        assert_eq!(unhex(""), Some(vec![]));
        assert_eq!(unhex("abc"), None);
        assert_eq!(unhex("zz"), None);
        // `u8::from_str_radix` reads `+f` as 15; a secret file is hex or it is not.
        assert_eq!(unhex("+f"), None);
    }

    #[test]
    fn project_keys_that_differ_only_in_non_utf8_bytes_do_not_share_seals() {
        let mut s = state();
        apply(&mut s, b"/p/proj-\xff", b"secret");
        assert!(verify(&s, b"/p/proj-\xff", b"secret"));
        assert!(!verify(&s, b"/p/proj-\xfe", b"secret"));
        assert!(!verify(&s, "/p/proj-\u{fffd}".as_bytes(), b"secret"));
    }
}
