//! Byte searches that never ask the CPU what it has.
//!
//! memchr's own entry points ask, the first time they run, whether the CPU has AVX2: std's
//! feature detection, which runs the `cpuid` instruction about eight times. In a virtual
//! machine each `cpuid` traps to the hypervisor (6-16 µs each on the machine of
//! BENCHMARKS.md), so that one question was 50 µs of every active loop's Stop. The hooks
//! search lines and blocks that SSE2, which every x86-64 CPU has, searches as fast; so on
//! x86-64 these take memchr's SSE2 searchers directly, and elsewhere its ordinary ones
//! (aarch64's need no detection). The rest of pagent searches bytes only through these
//! (memchr is a dependency of this crate alone, whose clippy.toml bans its entry points).

#![allow(
    clippy::disallowed_methods,
    reason = "the one place memchr's detecting entry points remain, as the fallback"
)]

/// Where `byte` first occurs in `haystack`.
pub fn find_byte(byte: u8, haystack: &[u8]) -> Option<usize> {
    #[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
    if let Some(one) = memchr::arch::x86_64::sse2::memchr::One::new(byte) {
        return one.find(haystack);
    }
    memchr::memchr(byte, haystack)
}

/// Where `byte` last occurs in `haystack`.
pub fn rfind_byte(byte: u8, haystack: &[u8]) -> Option<usize> {
    #[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
    if let Some(one) = memchr::arch::x86_64::sse2::memchr::One::new(byte) {
        return one.rfind(haystack);
    }
    memchr::memrchr(byte, haystack)
}

/// Whether `needle` occurs in `haystack`. The needles are the hooks' own short markers
/// (up to a few dozen bytes); SSE2's pair search checks each candidate in full, so its
/// cost stays linear in the haystack for them.
pub fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    #[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
    if let Some(finder) = memchr::arch::x86_64::sse2::packedpair::Finder::new(needle) {
        return if haystack.len() >= finder.min_haystack_len() {
            finder.find(haystack, needle).is_some()
        } else {
            memchr::arch::all::rabinkarp::Finder::new(needle)
                .find(haystack, needle)
                .is_some()
        };
    }
    if needle.len() < 2 {
        return needle
            .first()
            .is_none_or(|&b| find_byte(b, haystack).is_some());
    }
    memchr::memmem::find(haystack, needle).is_some()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every search agrees with the obvious one, at every length around the SSE2 block
    /// and the pair search's shortest haystack, with the match at every place.
    #[test]
    fn the_searches_agree_with_the_obvious_ones() {
        let needles: [&[u8]; 5] = [b"\"tool_use\"", b"ab", b"x", b"", b"aaaa\nz"];
        for len in 0..80 {
            for at in 0..=len {
                let mut hay = vec![b'a'; len];
                if at < len {
                    hay[at] = b'\n';
                }
                let naive = hay.iter().position(|&b| b == b'\n');
                assert_eq!(find_byte(b'\n', &hay), naive, "{len} {at}");
                let naive = hay.iter().rposition(|&b| b == b'\n');
                assert_eq!(rfind_byte(b'\n', &hay), naive, "{len} {at}");
                for needle in needles {
                    let mut hay = vec![b'a'; len];
                    if at + needle.len() <= len {
                        hay[at..at + needle.len()].copy_from_slice(needle);
                    }
                    let naive = hay.windows(needle.len().max(1)).any(|w| w == needle);
                    let naive = naive || needle.is_empty();
                    assert_eq!(contains(&hay, needle), naive, "{len} {at} {needle:?}");
                    assert!(!contains(&hay, b"\"tool_use\"!"));
                }
            }
        }
    }
}
