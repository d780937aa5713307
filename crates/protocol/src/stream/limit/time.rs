//! Reset times as agents write them, to the minute, in local time: Claude Code's
//! `10:22am (Europe/Paris)`, `3am (Europe/Paris)`, `Nov 27, 10:22am (Europe/Paris)` (its
//! `toLocaleString("en-US")` with the `AM`/`PM` lowercased and glued, and the zone in
//! parentheses), and Codex's `10:38 AM` or `Nov 27th, 2026 8:21 AM` (the machine's zone).
//! Only the fields are read here; which instant they name is the binary's business (it
//! has the zone database).

use super::LocalTime;

const MONTHS: [&str; 12] = [
    "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
];

fn month(word: &str) -> Option<u8> {
    let word = word.get(..3)?;
    MONTHS
        .iter()
        .position(|m| m.eq_ignore_ascii_case(word))
        .and_then(|i| u8::try_from(i + 1).ok())
}

/// `10:22am`, `3am`, `10:22 AM`: (hour 0-23, minute).
fn clock(text: &str) -> Option<(u8, u8)> {
    let text = text
        .trim()
        .to_ascii_lowercase()
        .replace(['\u{202f}', ' '], "");
    let (digits, pm) = if let Some(d) = text.strip_suffix("pm") {
        (d, true)
    } else {
        (text.strip_suffix("am")?, false)
    };
    let (h, m) = digits.split_once(':').unwrap_or((digits, "0"));
    let (h, m): (u8, u8) = (h.parse().ok()?, m.parse().ok()?);
    if !(1..=12).contains(&h) || m > 59 {
        return None;
    }
    Some(((h % 12) + if pm { 12 } else { 0 }, m))
}

/// Claude Code's reset time: `10:22am (Europe/Paris)`, `3am (Europe/Paris)`, `Nov 27,
/// 10:22am (Europe/Paris)`, `Nov 27, 2027, 3am (UTC)`, `Aug 8` (a date alone: its
/// midnight).
pub fn parse_claude_time(text: &str) -> Option<LocalTime> {
    let text = text.trim().trim_end_matches('.');
    let (when, zone) = match text.rsplit_once(" (") {
        Some((when, zone)) => {
            let zone = zone.strip_suffix(')')?;
            (when, zone_name(zone).map(str::to_owned))
        }
        None => (text, None),
    };
    let parts: Vec<&str> = when.split(", ").map(str::trim).collect();
    let (date, year, time) = match parts.as_slice() {
        [time] if clock(time).is_some() => (None, None, Some(*time)),
        [date] => (Some(*date), None, None),
        [date, time] if clock(time).is_some() => (Some(*date), None, Some(*time)),
        [date, year] => (Some(*date), Some(*year), None),
        [date, year, time] => (Some(*date), Some(*year), Some(*time)),
        _ => return None,
    };
    let (month, day) = match date {
        Some(date) => {
            let (m, d) = date.split_once(' ')?;
            (Some(month(m)?), Some(d.trim().parse::<u8>().ok()?))
        }
        None => (None, None),
    };
    let (hour, minute) = match time {
        Some(time) => clock(time)?,
        None => (0, 0),
    };
    Some(LocalTime {
        year: year.map(|y| y.parse().ok()).unwrap_or(None),
        month,
        day: day.filter(|d| (1..=31).contains(d)),
        hour,
        minute,
        zone,
    })
    .filter(|t| t.month.is_some() == t.day.is_some())
}

/// Codex's `10:38 AM` or `Nov 27th, 2026 8:21 AM`, in the machine's zone.
pub(super) fn parse_codex_time(text: &str) -> Option<LocalTime> {
    let text = text.trim();
    if let Some((hour, minute)) = clock(text) {
        return Some(LocalTime {
            year: None,
            month: None,
            day: None,
            hour,
            minute,
            zone: None,
        });
    }
    let (date, rest) = text.split_once(", ")?;
    let (m, d) = date.split_once(' ')?;
    let day: String = d.chars().take_while(char::is_ascii_digit).collect();
    let (year, time) = rest.split_once(' ')?;
    let (hour, minute) = clock(time)?;
    Some(LocalTime {
        year: Some(year.parse().ok()?),
        month: Some(month(m)?),
        day: Some(day.parse().ok().filter(|d| (1..=31).contains(d))?),
        hour,
        minute,
        zone: None,
    })
}

/// A zone name as a file under a zoneinfo folder may be called: `Area/City`, `UTC`,
/// `Etc/GMT+5`; nothing that climbs out (`..`) or is absolute.
fn zone_name(name: &str) -> Option<&str> {
    let safe = !name.is_empty()
        && name.len() <= 64
        && !name.starts_with('/')
        && !name
            .split('/')
            .any(|part| part.is_empty() || part == "." || part == "..")
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '/' | '_' | '-' | '+'));
    safe.then_some(name)
}
