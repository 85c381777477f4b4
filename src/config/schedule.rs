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

    /// A UTC moment written `YYYY-MM-DD HH:MM:SS`.
    fn at(text: &str) -> DateTime<Utc> {
        chrono::NaiveDateTime::parse_from_str(text, "%Y-%m-%d %H:%M:%S")
            .unwrap()
            .and_utc()
    }

    /// The next tick strictly after a moment (a tick exactly at it is not
    /// returned again).
    #[test]
    fn cron_fires_at_the_next_matching_moment() {
        let cases = [
            // Five fields fire on the minute.
            ("*/5 * * * *", "2026-12-02 10:03:17", "2026-12-02 10:05:00"),
            ("*/5 * * * *", "2026-12-02 10:05:00", "2026-12-02 10:10:00"),
            // Day of week counts Sunday as 0: 2026-12-02 is a Wednesday, the
            // next Sunday is the 6th.
            ("30 4 * * 0", "2026-12-02 10:00:00", "2026-12-06 04:30:00"),
            ("0 0 * * 1", "2026-12-02 10:00:00", "2026-12-07 00:00:00"),
            // Six fields have seconds first.
            (
                "*/15 * * * * *",
                "2026-12-02 10:00:01",
                "2026-12-02 10:00:15",
            ),
            ("10 0 * * * *", "2026-12-02 10:00:10", "2026-12-02 11:00:10"),
            // The second Friday of December 2026 is the 11th.
            ("0 9 * * 5#2", "2026-12-02 10:00:00", "2026-12-11 09:00:00"),
            // `L`: the month's last day.
            ("0 0 L * *", "2026-12-02 10:00:00", "2026-12-31 00:00:00"),
        ];
        for (expr, after, next) in cases {
            let s = Schedule::cron(expr).unwrap();
            assert_eq!(
                s.next_after(at(after)),
                Some(at(next)),
                "{expr} after {after}"
            );
        }
    }

    #[test]
    fn every_adds_the_period() {
        let s = Schedule::Every(Duration::from_secs(30));
        assert_eq!(
            s.next_after(at("2026-12-02 10:00:45")),
            Some(at("2026-12-02 10:01:15"))
        );
        assert_eq!(s.describe(), "every 30s");
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
