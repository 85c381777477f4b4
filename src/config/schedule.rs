//! When a target is polled: a cron expression (UTC) or a fixed period.

use chrono::{DateTime, Utc};
use croner::parser::{CronParser, Seconds, Year};
use std::time::Duration;

/// A poll schedule. Cron expressions are evaluated in UTC.
// One per target, so the size gap between variants costs nothing worth a Box.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Schedule {
    /// `expr` as written in the file, kept for display.
    Cron {
        expr: String,
        cron: croner::Cron,
    },
    Every(Duration),
}

/// The shortest period `every:` accepts; anything faster hammers servers.
pub const MIN_EVERY: Duration = Duration::from_secs(1);

impl Schedule {
    /// Parse a cron expression: standard 5 fields (minute hour day-of-month
    /// month day-of-week, Sunday = 0 or 7), or 6 with a leading seconds field,
    /// or an `@hourly`-style nickname. A year field is not accepted.
    pub fn cron(expr: &str) -> Result<Schedule, String> {
        let fields = expr.split_whitespace().count();
        if !expr.trim_start().starts_with('@') && !(5..=6).contains(&fields) {
            return Err(format!(
                "cron expression {expr:?} has {fields} fields; expected 5 (minute hour day-of-month month day-of-week) or 6 (with seconds first)"
            ));
        }
        let parser = CronParser::builder()
            .seconds(Seconds::Optional)
            .year(Year::Disallowed)
            .build();
        let cron = parser
            .parse(expr)
            .map_err(|e| format!("invalid cron expression {expr:?}: {e}"))?;
        Ok(Schedule::Cron {
            expr: expr.trim().to_string(),
            cron,
        })
    }

    /// The first tick strictly after `t`, or None if the expression never
    /// fires again (e.g. `0 0 30 2 *`, February 30th).
    pub fn next_after(&self, t: DateTime<Utc>) -> Option<DateTime<Utc>> {
        match self {
            Schedule::Cron { cron, .. } => cron.find_next_occurrence(&t, false).ok(),
            Schedule::Every(period) => {
                let step = chrono::Duration::from_std(*period).ok()?;
                t.checked_add_signed(step)
            }
        }
    }

    /// For logs and the status page: `cron "*/5 * * * *" (UTC)` or `every 30s`.
    pub fn describe(&self) -> String {
        match self {
            Schedule::Cron { expr, .. } => format!("cron {expr:?} (UTC)"),
            Schedule::Every(period) => format!("every {}", humantime::format_duration(*period)),
        }
    }

    /// The fixed period, for `every:` schedules.
    pub fn period(&self) -> Option<Duration> {
        match self {
            Schedule::Every(period) => Some(*period),
            Schedule::Cron { .. } => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;

    fn at(y: i32, mo: u32, d: u32, h: u32, mi: u32, s: u32) -> DateTime<Utc> {
        Utc.with_ymd_and_hms(y, mo, d, h, mi, s).unwrap()
    }

    #[test]
    fn five_field_cron_fires_on_the_minute() {
        let s = Schedule::cron("*/5 * * * *").unwrap();
        assert_eq!(
            s.next_after(at(2026, 12, 2, 10, 3, 17)),
            Some(at(2026, 12, 2, 10, 5, 0))
        );
        // Strictly after: a tick exactly at t is not returned again.
        assert_eq!(
            s.next_after(at(2026, 12, 2, 10, 5, 0)),
            Some(at(2026, 12, 2, 10, 10, 0))
        );
    }

    #[test]
    fn five_field_day_of_week_counts_sunday_as_zero() {
        // 2026-12-02 is a Wednesday; the next Sunday is 2026-12-06.
        let s = Schedule::cron("30 4 * * 0").unwrap();
        assert_eq!(
            s.next_after(at(2026, 12, 2, 10, 0, 0)),
            Some(at(2026, 12, 6, 4, 30, 0))
        );
        let monday = Schedule::cron("0 0 * * 1").unwrap();
        assert_eq!(
            monday.next_after(at(2026, 12, 2, 10, 0, 0)),
            Some(at(2026, 12, 7, 0, 0, 0))
        );
    }

    #[test]
    fn six_field_cron_has_seconds_first() {
        let s = Schedule::cron("*/15 * * * * *").unwrap();
        assert_eq!(
            s.next_after(at(2026, 12, 2, 10, 0, 1)),
            Some(at(2026, 12, 2, 10, 0, 15))
        );
        let s = Schedule::cron("10 0 * * * *").unwrap();
        assert_eq!(
            s.next_after(at(2026, 12, 2, 10, 0, 10)),
            Some(at(2026, 12, 2, 11, 0, 10))
        );
    }

    #[test]
    fn every_adds_the_period() {
        let s = Schedule::Every(Duration::from_secs(30));
        assert_eq!(
            s.next_after(at(2026, 12, 2, 10, 0, 45)),
            Some(at(2026, 12, 2, 10, 1, 15))
        );
        assert_eq!(s.describe(), "every 30s");
    }

    #[test]
    fn nth_weekday_and_last_day() {
        // Second Friday of December 2026 is the 11th.
        let s = Schedule::cron("0 9 * * 5#2").unwrap();
        assert_eq!(
            s.next_after(at(2026, 12, 2, 10, 0, 0)),
            Some(at(2026, 12, 11, 9, 0, 0))
        );
        let s = Schedule::cron("0 0 L * *").unwrap();
        assert_eq!(
            s.next_after(at(2026, 12, 2, 10, 0, 0)),
            Some(at(2026, 12, 31, 0, 0, 0))
        );
    }

    #[test]
    fn bad_expressions_are_rejected() {
        assert!(Schedule::cron("* * * *").is_err());
        assert!(Schedule::cron("* * * * * * 2027").is_err());
        assert!(Schedule::cron("61 * * * *").is_err());
        assert!(Schedule::cron("not a cron").is_err());
        assert!(Schedule::cron("@hourly").is_ok());
    }
}
