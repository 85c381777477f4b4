//! `Retry-After` (RFC 9110 §10.2.3): delay-seconds or an HTTP date, in any
//! of the three forms recipients must accept (§5.6.7: IMF-fixdate, RFC 850,
//! asctime). Read with HTTP 429 so the scheduler can wait as long as the
//! server asked.

use std::time::{Duration, SystemTime};

/// The longest wait taken from a server; the scheduler caps it again at
/// `backoff_max`. Bounds a hostile or broken value.
pub const MAX_RETRY_AFTER: Duration = Duration::from_secs(24 * 3600);

/// The wait a `Retry-After` value asks for, seen at `now`, capped at
/// [`MAX_RETRY_AFTER`]; `None` for a value that is neither form. A date in
/// the past means "now" (zero).
pub fn parse(value: &str, now: SystemTime) -> Option<Duration> {
    let value = value.trim();
    if !value.is_empty() && value.bytes().all(|b| b.is_ascii_digit()) {
        // Digits only: seconds. More digits than u64 holds is still "long".
        let secs = value.parse::<u64>().unwrap_or(u64::MAX);
        return Some(Duration::from_secs(secs).min(MAX_RETRY_AFTER));
    }
    let at = httpdate::parse_http_date(value).ok()?;
    Some(
        at.duration_since(now)
            .unwrap_or(Duration::ZERO)
            .min(MAX_RETRY_AFTER),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 1994-11-06 08:49:37 UTC, the RFC's example instant.
    fn rfc_now() -> SystemTime {
        SystemTime::UNIX_EPOCH + Duration::from_secs(784_111_777)
    }

    /// Each value read at [`rfc_now`] gives its wait.
    fn check(cases: &[(&str, Option<Duration>)]) {
        for (value, wait) in cases {
            assert_eq!(parse(value, rfc_now()), *wait, "{value:?}");
        }
    }

    const SECS_30: Option<Duration> = Some(Duration::from_secs(30));
    const NOW: Option<Duration> = Some(Duration::ZERO);
    const CAPPED: Option<Duration> = Some(MAX_RETRY_AFTER);

    #[test]
    fn seconds_dates_and_garbage() {
        check(&[
            ("120", Some(Duration::from_secs(120))),
            (" 0 ", NOW),
            ("99999999999999999999999", CAPPED),
            ("Sun, 06 Nov 1994 08:50:07 GMT", SECS_30),
            ("Sun, 06 Nov 1994 08:00:00 GMT", NOW),
            ("Sat, 06 Nov 2094 08:00:00 GMT", CAPPED),
            ("-5", None),
            ("1.5", None),
            ("soon", None),
            ("", None),
        ]);
    }

    #[test]
    fn the_obsolete_rfc_850_form_is_honoured() {
        check(&[
            ("Sunday, 06-Nov-94 08:50:07 GMT", SECS_30),
            ("Sunday, 06-Nov-94 08:49:37 GMT", NOW),
            // A wrong weekday is not that date.
            ("Monday, 06-Nov-94 08:50:07 GMT", None),
        ]);
    }

    #[test]
    fn the_asctime_form_is_honoured() {
        check(&[
            ("Sun Nov  6 08:51:37 1994", Some(Duration::from_secs(120))),
            ("Sun Nov  6 07:49:37 1994", NOW),
            ("Sun Nov 36 08:51:37 1994", None),
        ]);
    }
}
