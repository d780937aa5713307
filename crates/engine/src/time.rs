//! Timestamps without a clock: the shell passes `now` in, the engine only does arithmetic
//! and formats RFC 3339 (UTC, whole seconds) so the state file stays readable by people.

use std::fmt;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// Seconds since the Unix epoch, serialised as `2026-11-22T01:34:02Z`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Timestamp(pub u64);

impl Timestamp {
    /// Seconds from `earlier` to `self`, zero if the clock went backwards.
    pub fn since(self, earlier: Timestamp) -> u64 {
        self.0.saturating_sub(earlier.0)
    }

    /// Parses exactly the form [`Timestamp`] prints.
    pub fn parse(text: &str) -> Option<Timestamp> {
        let b = text.as_bytes();
        if b.len() != 20
            || b[4] != b'-'
            || b[7] != b'-'
            || b[10] != b'T'
            || b[13] != b':'
            || b[16] != b':'
            || b[19] != b'Z'
        {
            return None;
        }
        let num = |range: std::ops::Range<usize>| -> Option<u64> { text.get(range)?.parse().ok() };
        let (y, mo, d) = (num(0..4)?, num(5..7)?, num(8..10)?);
        let (h, mi, s) = (num(11..13)?, num(14..16)?, num(17..19)?);
        if !(1..=12).contains(&mo)
            || !(1..=31).contains(&d)
            || h > 23
            || mi > 59
            || s > 60
            || y < 1970
        {
            return None;
        }
        let days = days_from_civil(y, mo, d);
        Some(Timestamp(days * 86_400 + h * 3600 + mi * 60 + s))
    }
}

impl fmt::Display for Timestamp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let days = self.0 / 86_400;
        let secs = self.0 % 86_400;
        let (y, m, d) = civil_from_days(days);
        write!(
            f,
            "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z",
            secs / 3600,
            secs / 60 % 60,
            secs % 60
        )
    }
}

impl Serialize for Timestamp {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for Timestamp {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        Timestamp::parse(&text).ok_or_else(|| {
            serde::de::Error::custom(format!(
                "invalid timestamp {text:?}, expected YYYY-MM-DDTHH:MM:SSZ"
            ))
        })
    }
}

/// Howard Hinnant's `civil_from_days`, restricted to dates after 1970.
fn civil_from_days(days: u64) -> (u64, u64, u64) {
    let z = days + 719_468;
    let era = z / 146_097;
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + u64::from(m <= 2);
    (y, m, d)
}

fn days_from_civil(y: u64, m: u64, d: u64) -> u64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y / 400;
    let yoe = y - era * 400;
    let mp = if m > 2 { m - 3 } else { m + 9 };
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// `4m12s`, `2h03m`, `45s`: short enough for a status line.
pub fn format_duration(secs: u64) -> String {
    match secs {
        0..=59 => format!("{secs}s"),
        60..=3599 => format!("{}m{:02}s", secs / 60, secs % 60),
        _ => format!("{}h{:02}m", secs / 3600, secs / 60 % 60),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_and_parses_round_trip() {
        for (secs, text) in [
            (0, "1970-01-01T00:00:00Z"),
            (951_782_400, "2000-02-29T00:00:00Z"),
            (1_795_311_242, "2026-11-22T01:34:02Z"),
        ] {
            assert_eq!(Timestamp(secs).to_string(), text);
            assert_eq!(Timestamp::parse(text), Some(Timestamp(secs)));
        }
    }

    #[test]
    fn rejects_other_forms() {
        for text in [
            "",
            "2026-11-22",
            "2026-11-22T01:34:02+00:00",
            "2026-13-01T00:00:00Z",
            "abcd-11-22T01:34:02Z",
        ] {
            assert_eq!(Timestamp::parse(text), None, "{text}");
        }
    }

    #[test]
    fn durations_read_well() {
        assert_eq!(format_duration(45), "45s");
        assert_eq!(format_duration(252), "4m12s");
        assert_eq!(format_duration(7380), "2h03m");
    }
}
