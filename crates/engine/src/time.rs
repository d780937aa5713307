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
        // Digits only: `u64::from_str` would also take a sign (`2026-+1-01...`).
        let num = |range: std::ops::Range<usize>| -> Option<u64> {
            let field = text.get(range)?;
            if !field.bytes().all(|c| c.is_ascii_digit()) {
                return None;
            }
            field.parse().ok()
        };
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
        // Known instants (checked against Python's calendar.timegm): leap days, the
        // century that is not a leap year (2100) and the one that is (2000, 2400), the
        // last second a four-digit year can show.
        for (secs, text) in [
            (0, "1970-01-01T00:00:00Z"),
            (68_255_999, "1972-02-29T23:59:59Z"),
            (946_641_600, "1999-12-31T12:00:00Z"),
            (951_782_400, "2000-02-29T00:00:00Z"),
            (951_868_801, "2000-03-01T00:00:01Z"),
            (1_709_186_828, "2024-02-29T06:07:08Z"),
            (1_795_311_242, "2026-11-22T01:34:02Z"),
            (4_107_542_399, "2100-02-28T23:59:59Z"),
            (4_107_542_400, "2100-03-01T00:00:00Z"),
            (13_574_600_430, "2400-02-29T10:20:30Z"),
            (253_402_300_799, "9999-12-31T23:59:59Z"),
        ] {
            assert_eq!(Timestamp(secs).to_string(), text);
            assert_eq!(Timestamp::parse(text), Some(Timestamp(secs)));
        }
    }

    /// Every day from 1970 to 2400, each at a different time of day: printing then
    /// parsing gives the same instant back, and the printed form sorts like the number
    /// (the event log compares timestamps; a wrong month or day length breaks both).
    #[test]
    fn every_day_round_trips_and_sorts() {
        let mut previous = String::new();
        for day in 0..157_000u64 {
            let secs = day * 86_400 + (day * 7_919) % 86_400;
            let text = Timestamp(secs).to_string();
            assert_eq!(Timestamp::parse(&text), Some(Timestamp(secs)), "{text}");
            assert!(text > previous, "{text} after {previous}");
            previous = text;
        }
    }

    #[test]
    fn rejects_other_forms() {
        for text in [
            "",
            "2026-11-22",
            "2026-11-22T01:34:02+00:00",
            "2026-11-22T01:34:02Zx",
            "2026-13-01T00:00:00Z",
            "2026-00-01T00:00:00Z",
            "2026-01-00T00:00:00Z",
            "2026-01-32T00:00:00Z",
            "2026-01-01T24:00:00Z",
            "2026-01-01T00:60:00Z",
            "2026-01-01T00:00:61Z",
            "1969-12-31T23:59:59Z",
            "abcd-11-22T01:34:02Z",
            "+026-11-22T01:34:02Z",
            // A sign is not a digit, though `u64::from_str` takes one.
            "2026-+1-22T01:34:02Z",
            "2026-11-22T+1:34:02Z",
            // Each separator in turn replaced by another character.
            "2026x11-22T01:34:02Z",
            "2026-11x22T01:34:02Z",
            "2026-11-22x01:34:02Z",
            "2026-11-22T01x34:02Z",
            "2026-11-22T01:34x02Z",
            "2026-11-22T01:34:02x",
        ] {
            assert_eq!(Timestamp::parse(text), None, "{text}");
        }
    }

    /// The largest value of every field is accepted, and a leap second (`:60`, which
    /// RFC 3339 allows) is read as the first second of the next minute.
    #[test]
    fn accepts_each_field_at_its_largest() {
        assert_eq!(
            Timestamp::parse("1970-12-31T23:59:59Z"),
            Some(Timestamp(31_535_999))
        );
        assert_eq!(
            Timestamp::parse("1970-01-01T00:00:60Z"),
            Some(Timestamp(60))
        );
    }

    #[test]
    fn since_saturates_when_the_clock_went_backwards() {
        assert_eq!(Timestamp(100).since(Timestamp(40)), 60);
        assert_eq!(Timestamp(40).since(Timestamp(100)), 0);
    }

    #[test]
    fn durations_read_well() {
        for (secs, text) in [
            (0, "0s"),
            (45, "45s"),
            (59, "59s"),
            (60, "1m00s"),
            (252, "4m12s"),
            (3599, "59m59s"),
            (3600, "1h00m"),
            (7380, "2h03m"),
            (90_061, "25h01m"),
        ] {
            assert_eq!(format_duration(secs), text, "{secs}");
        }
    }
}
