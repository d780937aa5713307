//! The instant a reset time stands for: `resets 3am (Europe/Paris)` (Claude Code) or `try
//! again at 10:38 AM` (Codex, the machine's zone), read with the system's zone database.
//!
//! The zone rules and the civil dates are jiff's (a maintained crate: TZif files, POSIX
//! rules, a date's next day, a local time in a daylight-saving gap). The files are read
//! here, through the file door (regular files only, non-blocking, capped: `$TZ` and
//! `$TZDIR` are environment a project's settings can set): a zone is a TZif file under
//! `$TZDIR` or `/usr/share/zoneinfo`, and the machine's zone is `$TZ` (a zone name, a
//! zone file's path or a POSIX rule) or `/etc/localtime`. Windows has no zone folder: a
//! named zone comes from jiff's copy of the database built into pagent, and the machine's
//! zone from the system (its zone's name, mapped to the database's). Where nothing
//! answers (a minimal container), UTC: an agent names its own zone, which is the
//! machine's, and a wait that ends early only meets the limit once more, to be waited
//! again. This runs only when an agent hit a usage limit, never on a hook's usual path.
//!
//! A time with no date means its next occurrence after now; a date with no year, its next
//! occurrence unless it is at most a day past (a limit that just reset).

use std::ffi::OsStr;
use std::path::Path;

use jiff::civil::Date;
use jiff::tz::TimeZone;
use pagent_engine::Timestamp;
use pagent_engine::limit::{LimitKind, LimitSeen};
use pagent_protocol::stream::{self, LimitHit, LocalTime, Reset};

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
    /// The rules of the zone called `name` (an IANA name, checked here to stay inside a
    /// zone folder), `None` when the database has no such zone.
    pub fn named(&self, name: &str) -> Option<TimeZone> {
        if name.split('/').any(|part| part.is_empty() || part == "..") || name.starts_with('/') {
            return None;
        }
        match self.tzdir {
            Some(dir) => read_tzif(name, &Path::new(dir).join(name)),
            None => system_named(name),
        }
    }

    /// The machine's zone: `$TZ` (`:Area/City`, `Area/City`, an absolute path to a zone
    /// file, a POSIX rule, empty for UTC), else the system's (`/etc/localtime`), else UTC.
    pub fn local(&self) -> TimeZone {
        let Some(tz) = self.tz else {
            return system_local().unwrap_or(TimeZone::UTC);
        };
        let tz = tz.to_str().unwrap_or_default();
        let tz = tz.strip_prefix(':').unwrap_or(tz);
        if tz.is_empty() {
            return TimeZone::UTC;
        }
        if Path::new(tz).is_absolute() {
            return read_tzif(tz, Path::new(tz)).unwrap_or(TimeZone::UTC);
        }
        self.named(tz)
            .or_else(|| TimeZone::posix(tz).ok())
            .unwrap_or(TimeZone::UTC)
    }

    /// The rules for a time the agent wrote: its named zone, else the machine's.
    pub fn for_time(&self, time: &LocalTime) -> TimeZone {
        time.zone
            .as_deref()
            .and_then(|name| self.named(name))
            .unwrap_or_else(|| self.local())
    }
}

/// The zone file at `path`, read through the file door and parsed by jiff.
fn read_tzif(name: &str, path: &Path) -> Option<TimeZone> {
    let bytes = pagent_door::files::read_outside(path, TZIF_CAP).ok()?;
    TimeZone::tzif(name, &bytes).ok()
}

/// A named zone from the system's database: its folder on Unix (unless `$TZDIR` names
/// another).
#[cfg(unix)]
fn system_named(name: &str) -> Option<TimeZone> {
    read_tzif(name, &Path::new("/usr/share/zoneinfo").join(name))
}

/// Windows: from the database built into pagent (Windows has no zone folder).
#[cfg(windows)]
fn system_named(name: &str) -> Option<TimeZone> {
    jiff::tz::db().get(name).ok()
}

/// The machine's zone with `$TZ` unset: `/etc/localtime` on Unix.
#[cfg(unix)]
fn system_local() -> Option<TimeZone> {
    read_tzif("localtime", Path::new("/etc/localtime"))
}

/// Windows: the zone the system is set to, by its name (`$TZ` is unset, so jiff asks
/// Windows, and reads no file).
#[cfg(windows)]
fn system_local() -> Option<TimeZone> {
    TimeZone::try_system().ok()
}

/// The instant (seconds since the epoch) `time` stands for in `zone`, seen at `now`: the
/// end of the minute it names. Agents write a reset to the minute, rounded down (Claude
/// Code's `resets 8:34am` for 8:34:47), so the named minute itself may be under way: it is
/// this one, not tomorrow's, and the reset is over when the minute is. A local time in a
/// daylight-saving gap is read with the offset before the gap; one that happens twice, as
/// the earlier.
pub fn resolve(time: &LocalTime, zone: &TimeZone, now: i64) -> Option<i64> {
    let today = jiff::Timestamp::from_second(now)
        .ok()?
        .to_zoned(zone.clone())
        .date();
    let at = |date: Date| -> Option<i64> {
        let local = date.at(
            i8::try_from(time.hour).ok()?,
            i8::try_from(time.minute).ok()?,
            0,
            0,
        );
        let instant = zone.to_ambiguous_timestamp(local).compatible().ok()?;
        Some(instant.as_second() + 60)
    };
    let on = |year: i32, month: u8, day: u8| -> Option<Date> {
        Date::new(
            i16::try_from(year).ok()?,
            i8::try_from(month).ok()?,
            i8::try_from(day).ok()?,
        )
        .ok()
    };
    match (time.year, time.month, time.day) {
        (_, None, _) | (_, _, None) => {
            let first = at(today)?;
            if first > now {
                Some(first)
            } else {
                at(today.tomorrow().ok()?)
            }
        }
        (Some(year), Some(month), Some(day)) => at(on(year, month, day)?),
        (None, Some(month), Some(day)) => {
            let year = i32::from(today.year());
            let this_year = on(year, month, day).and_then(at);
            match this_year {
                Some(t) if t > now - 86_400 => Some(t),
                _ => on(year + 1, month, day).and_then(at),
            }
        }
    }
}

/// `10:23` (today), `Nov 27 10:23` (another day): an instant as the machine's clock
/// shows it, for the countdown.
pub fn clock_text(zones: &Zones<'_>, at: i64, now: i64) -> String {
    let zone = zones.local();
    let shown = |secs: i64| {
        jiff::Timestamp::from_second(secs)
            .unwrap_or(jiff::Timestamp::UNIX_EPOCH)
            .to_zoned(zone.clone())
    };
    let (then, today) = (shown(at), shown(now));
    let hm = format!("{:02}:{:02}", then.hour(), then.minute());
    if (today.month(), today.day()) == (then.month(), then.day()) {
        hm
    } else {
        const MONTHS: [&str; 12] = [
            "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
        ];
        let month = usize::try_from(then.month()).unwrap_or(1).clamp(1, 12);
        format!("{} {} {hm}", MONTHS[month - 1], then.day())
    }
}

/// The engine's view of a limit an agent printed: its kind, its words, and its reset as
/// an instant (a local clock time resolved in its zone, a delay added to its start).
pub fn limit_seen(hit: &LimitHit, zones: &Zones<'_>, now: Timestamp) -> LimitSeen {
    let now_secs = i64::try_from(now.0).unwrap_or(i64::MAX);
    let resets_at = match &hit.reset {
        Reset::At(at) => Some(*at),
        Reset::After { from, secs } => Some(from.saturating_add(*secs)),
        Reset::Local(time) => {
            resolve(time, &zones.for_time(time), now_secs).and_then(|at| u64::try_from(at).ok())
        }
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
