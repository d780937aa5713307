//! The instant a reset time stands for: `resets 3am (Europe/Paris)` (Claude Code) or `try
//! again at 10:38 AM` (Codex, the machine's zone), read with the system's zone database.
//!
//! No time-zone crate: the rules of one zone are a TZif file under `$TZDIR` or
//! `/usr/share/zoneinfo` (`tzif.rs` reads it), and the machine's zone is `$TZ` (a zone
//! name or a POSIX rule) or `/etc/localtime`. This costs the binary a few kilobytes
//! (BENCHMARKS.md) and runs only when an agent hit a usage limit, never on a hook's usual
//! path. Where no database answers (a minimal container), the offset libc gives for the
//! machine's zone now stands in, and failing that UTC: an agent names its own zone, which
//! is the machine's, so the fallback is right but for a daylight-time change before the
//! reset; and a wait that ends early only meets the limit once more, to be waited again.
//!
//! A time with no date means its next occurrence after now; a date with no year, its next
//! occurrence unless it is at most a day past (a limit that just reset).

mod tzif;

use std::ffi::OsStr;
use std::path::{Path, PathBuf};

use pagent_engine::Timestamp;
use pagent_engine::limit::{LimitKind, LimitSeen};
use pagent_protocol::stream::{self, LimitHit, LocalTime, Reset};

pub use tzif::Rules;

/// The system's zone folder unless `$TZDIR` names another.
const ZONEINFO: &str = "/usr/share/zoneinfo";
/// A zone file larger than this is not one.
const TZIF_CAP: u64 = 256 * 1024;

/// Where zones are looked up: `$TZ` and `$TZDIR` as pagent was started with them.
#[derive(Debug, Clone, Default)]
pub struct Zones<'a> {
    pub tz: Option<&'a OsStr>,
    pub tzdir: Option<&'a OsStr>,
}

/// The zones of the machine as pagent was started (`TZ`, `TZDIR`).
pub fn of_env(env: &crate::cli::env::Env) -> Zones<'_> {
    Zones {
        tz: env.tz.as_deref(),
        tzdir: env.tzdir.as_deref(),
    }
}

impl Zones<'_> {
    /// The rules of the zone called `name` (an IANA name, already checked to stay inside
    /// a zone folder), `None` when the database has no such file.
    pub fn named(&self, name: &str) -> Option<Rules> {
        if name.split('/').any(|part| part.is_empty() || part == "..") || name.starts_with('/') {
            return None;
        }
        let dir = self
            .tzdir
            .map_or_else(|| PathBuf::from(ZONEINFO), PathBuf::from);
        read_tzif(&dir.join(name))
    }

    /// The machine's zone: `$TZ` (`:Area/City`, `Area/City`, a POSIX rule, empty for
    /// UTC), else `/etc/localtime`, else libc's offset now, else UTC.
    pub fn local(&self, now: i64) -> Rules {
        if let Some(tz) = self.tz.and_then(OsStr::to_str) {
            let tz = tz.strip_prefix(':').unwrap_or(tz);
            if tz.is_empty() {
                return Rules::fixed(0);
            }
            if let Some(rules) = self.named(tz) {
                return rules;
            }
            if let Some(rule) = tzif::parse_posix(tz) {
                return Rules {
                    transitions: Vec::new(),
                    initial: rule.std,
                    footer: Some(rule),
                };
            }
        }
        read_tzif(Path::new("/etc/localtime")).unwrap_or_else(|| Rules::fixed(libc_offset(now)))
    }

    /// The rules for a time the agent wrote: its named zone, else the machine's.
    pub fn for_time(&self, time: &LocalTime, now: i64) -> Rules {
        time.zone
            .as_deref()
            .and_then(|name| self.named(name))
            .unwrap_or_else(|| self.local(now))
    }
}

fn read_tzif(path: &Path) -> Option<Rules> {
    let bytes = crate::store::door::read_outside(path, TZIF_CAP).ok()?;
    tzif::parse(&bytes)
}

/// The machine's UTC offset at `now` as libc knows it (0 when it cannot say).
#[cfg(unix)]
fn libc_offset(now: i64) -> i32 {
    // time_t is 64 bits on every platform pagent builds for.
    let t: libc::time_t = now;
    // SAFETY: localtime_r writes into a zeroed tm we own; t is a valid time_t.
    let mut tm: libc::tm = unsafe { std::mem::zeroed() };
    if unsafe { libc::localtime_r(&raw const t, &raw mut tm) }.is_null() {
        return 0;
    }
    i32::try_from(tm.tm_gmtoff).unwrap_or(0)
}

/// Windows: the machine's UTC offset now, as its time-zone setting gives it (Windows has
/// no zone database under /usr/share; a named zone there reads as unknown, and this
/// stands in, as on a Unix system without one).
#[cfg(windows)]
fn libc_offset(_now: i64) -> i32 {
    use windows_sys::Win32::System::Time as time;
    // SAFETY: all-zero is a valid TIME_ZONE_INFORMATION; the call fills it.
    let mut info: time::TIME_ZONE_INFORMATION = unsafe { std::mem::zeroed() };
    // SAFETY: a valid pointer to the struct the call writes.
    let id = unsafe { time::GetTimeZoneInformation(&raw mut info) };
    // Local = UTC - bias (minutes); the daylight bias adds in summer time (id 2).
    let bias = info.Bias
        + if id == 2 {
            info.DaylightBias
        } else {
            info.StandardBias
        };
    -bias * 60
}

/// The instant (seconds since the epoch) `time` stands for under `rules`, seen at `now`:
/// the end of the minute it names. Agents write a reset to the minute, rounded down
/// (Claude Code's `resets 8:34am` for 8:34:47), so the named minute itself may be under
/// way: it is this one, not tomorrow's, and the reset is over when the minute is.
pub fn resolve(time: &LocalTime, rules: &Rules, now: i64) -> Option<i64> {
    let today = civil_from_days((now + i64::from(rules.offset_at(now))).div_euclid(86_400));
    let clock = i64::from(time.hour) * 3600 + i64::from(time.minute) * 60;
    let at = |y: i64, m: u8, d: u8| to_utc(rules, days_from_civil(y, m, d) * 86_400 + clock) + 60;
    match (time.year, time.month, time.day) {
        (_, None, _) | (_, _, None) => {
            let (y, m, d) = today;
            let first = at(y, m, d);
            if first > now {
                Some(first)
            } else {
                let (y, m, d) = civil_from_days(days_from_civil(y, m, d) + 1);
                Some(at(y, m, d))
            }
        }
        (Some(year), Some(month), Some(day)) => {
            valid(i64::from(year), month, day).then(|| at(i64::from(year), month, day))
        }
        (None, Some(month), Some(day)) => {
            let year = today.0;
            if !valid(year, month, day) && !valid(year + 1, month, day) {
                return None;
            }
            let this_year = valid(year, month, day).then(|| at(year, month, day));
            match this_year {
                Some(t) if t > now - 86_400 => Some(t),
                _ => valid(year + 1, month, day).then(|| at(year + 1, month, day)),
            }
        }
    }
}

fn valid(year: i64, month: u8, day: u8) -> bool {
    (1..=12).contains(&month)
        && day >= 1
        && civil_from_days(days_from_civil(year, month, day)) == (year, month, day)
}

/// The UTC instant of the local time `local` (seconds since the epoch, local): in a gap
/// (clocks moved forward past it) the instant the offset before the gap gives; in an
/// overlap the earlier one.
fn to_utc(rules: &Rules, local: i64) -> i64 {
    let mut candidates: Vec<i64> = [local - 86_400, local, local + 86_400]
        .iter()
        .map(|probe| local - i64::from(rules.offset_at(*probe)))
        .collect();
    candidates.sort_unstable();
    candidates.dedup();
    candidates
        .iter()
        .copied()
        .find(|t| t + i64::from(rules.offset_at(*t)) == local)
        .unwrap_or(local - i64::from(rules.offset_at(local - 86_400)))
}

/// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm).
pub fn days_from_civil(year: i64, month: u8, day: u8) -> i64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let m = i64::from(month);
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + i64::from(day) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// The date of a day since 1970-01-01.
pub fn civil_from_days(days: i64) -> (i64, u8, u8) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    (
        year,
        u8::try_from(month).unwrap_or(1),
        u8::try_from(day).unwrap_or(1),
    )
}

/// `10:23` (today), `Nov 27 10:23` (another day): an instant as the machine's clock
/// shows it, for the countdown.
pub fn clock_text(zones: &Zones<'_>, at: i64, now: i64) -> String {
    let rules = zones.local(now);
    let local = at + i64::from(rules.offset_at(at));
    let (_, month, day) = civil_from_days(local.div_euclid(86_400));
    let today = civil_from_days((now + i64::from(rules.offset_at(now))).div_euclid(86_400));
    let secs = local.rem_euclid(86_400);
    let hm = format!("{:02}:{:02}", secs / 3600, secs / 60 % 60);
    if (today.1, today.2) == (month, day) {
        hm
    } else {
        const MONTHS: [&str; 12] = [
            "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
        ];
        format!("{} {day} {hm}", MONTHS[usize::from(month.clamp(1, 12)) - 1])
    }
}

/// The engine's view of a limit an agent printed: its kind, its words, and its reset as
/// an instant (a local clock time resolved in its zone, a delay added to its start).
pub fn limit_seen(hit: &LimitHit, zones: &Zones<'_>, now: Timestamp) -> LimitSeen {
    let now_secs = i64::try_from(now.0).unwrap_or(i64::MAX);
    let resets_at = match &hit.reset {
        Reset::At(at) => Some(*at),
        Reset::After { from, secs } => Some(from.saturating_add(*secs)),
        Reset::Local(time) => resolve(time, &zones.for_time(time, now_secs), now_secs)
            .and_then(|at| u64::try_from(at).ok()),
        Reset::Unknown => None,
    };
    LimitSeen {
        kind: match hit.kind {
            stream::LimitKind::Window => LimitKind::Window,
            stream::LimitKind::Credit => LimitKind::Credit,
            stream::LimitKind::Admin => LimitKind::Admin,
        },
        message: hit.message.clone(),
        resets_at: resets_at.map(Timestamp),
    }
}

#[cfg(test)]
#[allow(clippy::disallowed_methods)]
mod tests;
