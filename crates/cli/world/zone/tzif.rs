//! A time zone's rules read from the system's zone database: a TZif file (RFC 8536) and
//! the POSIX `TZ` rule in its footer (or in `$TZ` itself), enough to tell a zone's UTC
//! offset at any instant.
//!
//! Only what the offset needs is read: the transition times and the offset of each type
//! (64-bit data of version 2 and later, else version 1's 32-bit data), then the footer's
//! rule for instants after the last transition (current tzdata files are "slim": they
//! list few transitions and leave the rest to the rule). Leap seconds, abbreviations and
//! the standard/UT indicators are skipped. A file that is short, odd or too large yields
//! `None`, never a panic; it is the system's, yet still bytes from disk.

/// A zone's offsets: transitions (UTC seconds, offset after), the offset before the
/// first, and the rule after the last.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rules {
    pub transitions: Vec<(i64, i32)>,
    pub initial: i32,
    pub footer: Option<Posix>,
}

/// A POSIX `TZ` rule: standard offset, and daylight time with its start and end.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Posix {
    /// Seconds east of UTC (the string says west: `CET-1` is +3600).
    pub std: i32,
    pub dst: Option<(i32, Day, i32, Day, i32)>,
}

/// The day of a daylight-time change: `Jn` (1-365, no Feb 29), `n` (0-365), `Mm.w.d`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Day {
    Julian1(u16),
    Julian0(u16),
    Month { month: u8, week: u8, weekday: u8 },
}

impl Rules {
    /// The UTC offset (seconds east) at the UTC instant `t`.
    pub fn offset_at(&self, t: i64) -> i32 {
        let after = self.transitions.partition_point(|(at, _)| *at <= t);
        match (after, &self.footer) {
            (0, _) if !self.transitions.is_empty() => self.initial,
            (n, Some(rule)) if n == self.transitions.len() => rule.offset_at(t),
            (0, None) => self.initial,
            (n, _) => self.transitions[n - 1].1,
        }
    }

    /// Rules of a fixed offset.
    pub fn fixed(offset: i32) -> Rules {
        Rules {
            transitions: Vec::new(),
            initial: offset,
            footer: None,
        }
    }
}

fn be32(b: &[u8], at: usize) -> Option<i32> {
    Some(i32::from_be_bytes(b.get(at..at + 4)?.try_into().ok()?))
}

fn be64(b: &[u8], at: usize) -> Option<i64> {
    Some(i64::from_be_bytes(b.get(at..at + 8)?.try_into().ok()?))
}

fn count(b: &[u8], at: usize) -> Option<usize> {
    usize::try_from(be32(b, at)?).ok().filter(|n| *n <= 100_000)
}

/// The rules of a TZif file.
pub fn parse(bytes: &[u8]) -> Option<Rules> {
    if bytes.get(..4)? != b"TZif" {
        return None;
    }
    let version = *bytes.get(4)?;
    let header = |at: usize| -> Option<[usize; 6]> {
        let mut counts = [0; 6];
        for (i, c) in counts.iter_mut().enumerate() {
            *c = count(bytes, at + 20 + 4 * i)?;
        }
        Some(counts)
    };
    let [isut, isstd, leap, time, types, chars] = header(0)?;
    let v1_len = time * 5 + types * 6 + chars + leap * 8 + isstd + isut;
    let (at, wide) = if version >= b'2' {
        (44 + v1_len, true)
    } else {
        (0, false)
    };
    if wide && bytes.get(at..at + 4)? != b"TZif" {
        return None;
    }
    let [isut, isstd, leap, time, types, chars] = header(at)?;
    if types == 0 {
        return None;
    }
    let size = if wide { 8 } else { 4 };
    let times_at = at + 44;
    let index_at = times_at + time * size;
    let types_at = index_at + time;
    let offset_of = |index: usize| be32(bytes, types_at + 6 * index);
    let mut transitions = Vec::with_capacity(time);
    for i in 0..time {
        let t = if wide {
            be64(bytes, times_at + 8 * i)?
        } else {
            i64::from(be32(bytes, times_at + 4 * i)?)
        };
        let index = usize::from(*bytes.get(index_at + i)?);
        if index >= types {
            return None;
        }
        transitions.push((t, offset_of(index)?));
    }
    // The type of instants before the first transition: the first standard-time type, as
    // RFC 8536 3.2 advises readers, else type 0.
    let initial = (0..types)
        .find(|i| bytes.get(types_at + 6 * i + 4) == Some(&0))
        .map_or_else(|| offset_of(0), offset_of)?;
    let end = types_at + types * 6 + chars + leap * (size + 4) + isstd + isut;
    let footer = if wide {
        let rest = bytes.get(end..)?;
        let text = rest.strip_prefix(b"\n")?;
        let line = &text[..text.iter().position(|b| *b == b'\n')?];
        std::str::from_utf8(line).ok().and_then(parse_posix)
    } else {
        None
    };
    Some(Rules {
        transitions,
        initial,
        footer,
    })
}

/// A POSIX `TZ` string such as `CET-1CEST,M3.5.0,M10.5.0/3`, `UTC0`, `<+0330>-3:30`.
pub fn parse_posix(text: &str) -> Option<Posix> {
    let mut rest = text;
    name(&mut rest)?;
    let std = -hms(&mut rest)?;
    if rest.is_empty() {
        return Some(Posix { std, dst: None });
    }
    name(&mut rest)?;
    let dst_offset = if rest.starts_with(',') || rest.is_empty() {
        std + 3600
    } else {
        -hms(&mut rest)?
    };
    // A daylight name with no rule: the US rule is the POSIX default.
    let (start, start_time, end, end_time) = if rest.is_empty() {
        (
            Day::Month {
                month: 3,
                week: 2,
                weekday: 0,
            },
            7200,
            Day::Month {
                month: 11,
                week: 1,
                weekday: 0,
            },
            7200,
        )
    } else {
        rest = rest.strip_prefix(',')?;
        let (start, start_time) = change(&mut rest)?;
        rest = rest.strip_prefix(',')?;
        let (end, end_time) = change(&mut rest)?;
        (start, start_time, end, end_time)
    };
    if !rest.is_empty() {
        return None;
    }
    Some(Posix {
        std,
        dst: Some((dst_offset, start, start_time, end, end_time)),
    })
}

fn name(rest: &mut &str) -> Option<()> {
    if let Some(quoted) = rest.strip_prefix('<') {
        let close = quoted.find('>')?;
        *rest = &quoted[close + 1..];
        return Some(());
    }
    let len = rest.chars().take_while(char::is_ascii_alphabetic).count();
    (len >= 3).then(|| *rest = &rest[len..])
}

/// `[+-]hh[:mm[:ss]]` in seconds (hours up to 167, as version 3 allows for times).
fn hms(rest: &mut &str) -> Option<i32> {
    let sign = if let Some(r) = rest.strip_prefix('-') {
        *rest = r;
        -1
    } else {
        *rest = rest.strip_prefix('+').unwrap_or(rest);
        1
    };
    let mut total = 0;
    for (i, unit) in [3600, 60, 1].into_iter().enumerate() {
        if i > 0 {
            let Some(r) = rest.strip_prefix(':') else {
                break;
            };
            *rest = r;
        }
        let len = rest.chars().take_while(char::is_ascii_digit).count();
        let n: i32 = rest.get(..len)?.parse().ok()?;
        *rest = &rest[len..];
        if (i == 0 && n > 167) || (i > 0 && n > 59) {
            return None;
        }
        total += n * unit;
    }
    Some(sign * total)
}

fn change(rest: &mut &str) -> Option<(Day, i32)> {
    let day = if let Some(r) = rest.strip_prefix('M') {
        let mut parts = [0u8; 3];
        let mut r = r;
        for (i, part) in parts.iter_mut().enumerate() {
            if i > 0 {
                r = r.strip_prefix('.')?;
            }
            let len = r.chars().take_while(char::is_ascii_digit).count();
            *part = r.get(..len)?.parse().ok()?;
            r = &r[len..];
        }
        *rest = r;
        let [month, week, weekday] = parts;
        if !(1..=12).contains(&month) || !(1..=5).contains(&week) || weekday > 6 {
            return None;
        }
        Day::Month {
            month,
            week,
            weekday,
        }
    } else {
        let julian = rest.starts_with('J');
        let r = rest.strip_prefix('J').unwrap_or(rest);
        let len = r.chars().take_while(char::is_ascii_digit).count();
        let n: u16 = r.get(..len)?.parse().ok()?;
        *rest = &r[len..];
        match julian {
            true if (1..=365).contains(&n) => Day::Julian1(n),
            false if n <= 365 => Day::Julian0(n),
            _ => return None,
        }
    };
    let time = match rest.strip_prefix('/') {
        Some(r) => {
            *rest = r;
            hms(rest)?
        }
        None => 7200,
    };
    Some((day, time))
}

impl Posix {
    /// The offset at the UTC instant `t`.
    pub fn offset_at(&self, t: i64) -> i32 {
        let Some((dst, start, start_time, end, end_time)) = self.dst else {
            return self.std;
        };
        let year = super::civil_from_days((t + i64::from(self.std)).div_euclid(86_400)).0;
        // Changes happen at local time: the start in standard time, the end in daylight.
        let begins = day_of(start, year) * 86_400 + i64::from(start_time) - i64::from(self.std);
        let ends = day_of(end, year) * 86_400 + i64::from(end_time) - i64::from(dst);
        let in_dst = if begins < ends {
            begins <= t && t < ends
        } else {
            !(ends <= t && t < begins)
        };
        if in_dst { dst } else { self.std }
    }
}

/// The day (days since the epoch) a change falls on in `year`.
fn day_of(day: Day, year: i64) -> i64 {
    let jan1 = super::days_from_civil(year, 1, 1);
    let leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
    match day {
        Day::Julian0(n) => jan1 + i64::from(n),
        // Feb 29 is never counted: day 60 is always March 1.
        Day::Julian1(n) => jan1 + i64::from(n) - 1 + i64::from(leap && n >= 60),
        Day::Month {
            month,
            week,
            weekday,
        } => {
            let first = super::days_from_civil(year, month, 1);
            // 1970-01-01 was a Thursday (4).
            let first_weekday = (first + 4).rem_euclid(7);
            let mut day = first
                + (i64::from(weekday) - first_weekday).rem_euclid(7)
                + 7 * (i64::from(week) - 1);
            let next_month = if month == 12 {
                super::days_from_civil(year + 1, 1, 1)
            } else {
                super::days_from_civil(year, month + 1, 1)
            };
            while day >= next_month {
                day -= 7;
            }
            day
        }
    }
}
