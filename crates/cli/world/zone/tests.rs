//! Reset times resolved against zone rules: a TZif file built here (read through the
//! door and jiff on every machine), the system's database where it has the zone, and
//! POSIX rules from `$TZ`. Expected instants were computed with Python's `zoneinfo`.

use super::*;

/// The rules of a zone file's bytes, as [`read_tzif`] reads them.
fn parse(bytes: &[u8]) -> Option<TimeZone> {
    TimeZone::tzif("Test/Zone", bytes).ok()
}

/// The UTC offset in seconds `zone` has at `at`.
fn offset_at(zone: &TimeZone, at: i64) -> i32 {
    zone.to_offset(jiff::Timestamp::from_second(at).unwrap())
        .seconds()
}

/// A version 2 TZif file with no transitions, one type (`offset`) and a footer rule.
fn tzif(offset: i32, footer: &str) -> Vec<u8> {
    let block = |wide: bool| {
        let mut b = b"TZif2".to_vec();
        b.extend([0; 15]);
        for n in [0u32, 0, 0, 0, 1, 4] {
            b.extend(n.to_be_bytes());
        }
        b.extend(offset.to_be_bytes());
        b.extend([0, 0]);
        b.extend(b"ABC\0");
        let _ = wide;
        b
    };
    let mut bytes = block(false);
    bytes.extend(block(true));
    bytes.extend(format!("\n{footer}\n").as_bytes());
    bytes
}

fn at(hour: u8, minute: u8, zone: Option<&str>) -> LocalTime {
    LocalTime {
        year: None,
        month: None,
        day: None,
        hour,
        minute,
        zone: zone.map(str::to_owned),
    }
}

fn paris() -> TimeZone {
    parse(&tzif(3600, "CET-1CEST,M3.5.0,M10.5.0/3")).unwrap()
}

/// 2026-11-24 06:00 UTC (07:00 in Paris), when the captures were made.
const MORNING: i64 = 1_795_500_000;

#[test]
fn issue_21_a_claude_reset_time_is_the_instant_claude_meant() {
    // `resets 10:19am (Europe/Paris)` with `resetsAt` 1795511974 (10:19:34).
    let reset = resolve(&at(10, 19, Some("Europe/Paris")), &paris(), MORNING).unwrap();
    assert_eq!(reset, 1_795_511_940 + 60);
    // `resets Nov 27, 10:19am (Europe/Paris)`: resetsAt 1795771174.
    let weekly = LocalTime {
        month: Some(11),
        day: Some(27),
        ..at(10, 19, Some("Europe/Paris"))
    };
    assert_eq!(
        resolve(&weekly, &paris(), MORNING),
        Some(1_795_771_140 + 60)
    );
    // A time already past today is tomorrow's.
    let early = resolve(&at(3, 0, None), &paris(), MORNING).unwrap();
    assert_eq!(early, MORNING - 6 * 3600 + 86_400 + 2 * 3600 + 60);
}

/// Found by the end-to-end test: at 8:34:42 in Paris, `resets 8:34am (Europe/Paris)`
/// (the reset at 8:34:47, rounded down) was read as tomorrow's 8:34, a day's wait.
#[test]
fn issue_21_a_reset_in_the_minute_under_way_is_this_minute() {
    let now = 1_795_511_882; // 10:18:02 in Paris
    let reset = resolve(&at(10, 18, Some("Europe/Paris")), &paris(), now).unwrap();
    assert_eq!(reset, now - 2 + 60);
    let passed = resolve(&at(10, 17, Some("Europe/Paris")), &paris(), now).unwrap();
    assert_eq!(
        passed,
        now - 62 + 60 + 86_400,
        "a minute over is tomorrow's"
    );
}

#[test]
fn issue_21_daylight_time_gaps_and_overlaps() {
    let rules = paris();
    let day = |y, m, d, h: u8, min: u8| LocalTime {
        year: Some(y),
        month: Some(m),
        day: Some(d),
        ..at(h, min, None)
    };
    // 02:30 on 2026-03-29 does not exist in Paris; 02:30 on 2026-10-25 happens twice.
    assert_eq!(
        resolve(&day(2026, 3, 29, 2, 30), &rules, MORNING),
        Some(1_774_747_800 + 60)
    );
    assert_eq!(
        resolve(&day(2026, 10, 25, 2, 30), &rules, MORNING),
        Some(1_792_888_200 + 60)
    );
    // Southern hemisphere: Sydney's summer is January.
    let sydney = parse(&tzif(36_000, "AEST-10AEDT,M10.1.0,M4.1.0/3")).unwrap();
    assert_eq!(
        resolve(&day(2026, 7, 1, 12, 0), &sydney, MORNING),
        Some(1_782_871_200 + 60)
    );
    assert_eq!(
        resolve(&day(2026, 1, 15, 3, 0), &sydney, MORNING),
        Some(1_768_406_400 + 60)
    );
    // A date with no year that passed more than a day ago is next year's.
    let past = LocalTime {
        month: Some(1),
        day: Some(2),
        ..at(8, 0, None)
    };
    assert!(resolve(&past, &rules, MORNING).unwrap() > MORNING + 30 * 86_400);
    assert_eq!(resolve(&day(2026, 2, 30, 8, 0), &rules, MORNING), None);
}

#[test]
fn issue_21_the_systems_database_where_it_has_the_zone() {
    let zones = Zones::default();
    let Some(new_york) = zones.named("America/New_York") else {
        // A machine with no zone database: the fallback is tested below.
        assert!(!Path::new("/usr/share/zoneinfo/America/New_York").exists());
        return;
    };
    let summer = LocalTime {
        year: Some(2040),
        month: Some(7),
        day: Some(1),
        ..at(12, 0, None)
    };
    // 2040 is past the file's transitions: the footer rule answers.
    assert_eq!(
        resolve(&summer, &new_york, MORNING),
        Some(2_224_771_200 + 60)
    );
    let kolkata = zones.named("Asia/Kolkata").unwrap();
    assert_eq!(
        resolve(&at(10, 19, None), &kolkata, MORNING),
        Some(1_795_495_740 + 86_400 + 60)
    );
    assert!(zones.named("../../etc/passwd").is_none());
    assert!(zones.named("/etc/localtime").is_none());
    assert!(zones.named("No/Such_Zone").is_none());
}

#[test]
fn issue_21_tz_as_a_name_a_rule_or_empty() {
    let zones = |tz: &'static str| Zones {
        tz: Some(OsStr::new(tz)),
        tzdir: None,
    };
    assert_eq!(offset_at(&zones("").local(), MORNING), 0);
    assert_eq!(offset_at(&zones("UTC0").local(), MORNING), 0);
    assert_eq!(offset_at(&zones("<+0530>-5:30").local(), MORNING), 19_800);
    let cet = zones("CET-1CEST,M3.5.0,M10.5.0/3").local();
    assert_eq!(offset_at(&cet, MORNING), 3600);
    assert_eq!(offset_at(&cet, 1_782_871_200), 7200);
    // A folder of zones named by $TZDIR.
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("Test")).unwrap();
    std::fs::write(
        dir.path().join("Test/Zone"),
        tzif(-18_000, "EST5EDT,M3.2.0,M11.1.0"),
    )
    .unwrap();
    let named = Zones {
        tz: Some(OsStr::new(":Test/Zone")),
        tzdir: Some(dir.path().as_os_str()),
    };
    assert_eq!(offset_at(&named.local(), MORNING), -18_000);
    assert_eq!(offset_at(&named.local(), 2_224_771_200), -14_400);
}

#[test]
fn broken_zone_files_are_refused_not_trusted() {
    let good = tzif(3600, "CET-1CEST,M3.5.0,M10.5.0/3");
    for cut in [0, 3, 10, 44, 50, good.len() - 30] {
        let _ = parse(&good[..cut]);
    }
    assert!(parse(b"TZif2").is_none());
    assert!(parse(b"NOPE").is_none());
    for rule in [
        "",
        "C-1",
        "CET",
        "CET-1CEST,M13.5.0,M10.5.0",
        "CET-1CEST,M3.6.0,M10.5.0",
        "CET-200",
    ] {
        assert!(TimeZone::posix(rule).is_err(), "{rule:?}");
    }
}

/// A zone file that cannot be read falls back: a FIFO is refused, never waited on.
#[cfg(unix)]
#[test]
fn a_fifo_named_as_a_zone_is_refused_without_a_wait() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("Test")).unwrap();
    pagent_door::testing::make_fifo(&dir.path().join("Test/Fifo"), 0o644).unwrap();
    let zones = Zones {
        tz: Some(OsStr::new("Test/Fifo")),
        tzdir: Some(dir.path().as_os_str()),
    };
    assert!(zones.named("Test/Fifo").is_none());
    assert_eq!(offset_at(&zones.local(), MORNING), 0);
}

#[test]
fn the_countdowns_clock_is_the_machines() {
    let zones = Zones {
        tz: Some(OsStr::new("CET-1CEST,M3.5.0,M10.5.0/3")),
        tzdir: None,
    };
    assert_eq!(clock_text(&zones, 1_795_511_974, MORNING), "10:19");
    assert_eq!(clock_text(&zones, 1_795_771_174, MORNING), "Nov 27 10:19");
}

/// Windows has no zone folder: a named zone is the built-in database's, and the machine's
/// zone is the system's (under Wine, the Linux host's).
#[cfg(windows)]
#[test]
fn windows_reads_named_zones_from_the_built_in_database() {
    let zones = Zones::default();
    let paris = zones.named("Europe/Paris").unwrap();
    assert_eq!(
        resolve(&at(10, 19, Some("Europe/Paris")), &paris, MORNING),
        Some(1_795_511_940 + 60)
    );
    assert!(zones.named("No/Such_Zone").is_none());
    let _ = zones.local();
}
