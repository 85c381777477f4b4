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

    #[test]
    fn seconds_dates_and_garbage() {
        let now = rfc_now();
        assert_eq!(parse("120", now), Some(Duration::from_secs(120)));
        assert_eq!(parse(" 0 ", now), Some(Duration::ZERO));
        assert_eq!(parse("99999999999999999999999", now), Some(MAX_RETRY_AFTER));
        assert_eq!(
            parse("Sun, 06 Nov 1994 08:50:07 GMT", now),
            Some(Duration::from_secs(30))
        );
        assert_eq!(
            parse("Sun, 06 Nov 1994 08:00:00 GMT", now),
            Some(Duration::ZERO)
        );
        assert_eq!(
            parse("Sat, 06 Nov 2094 08:00:00 GMT", now),
            Some(MAX_RETRY_AFTER)
        );
        assert_eq!(parse("-5", now), None);
        assert_eq!(parse("1.5", now), None);
        assert_eq!(parse("soon", now), None);
        assert_eq!(parse("", now), None);
    }

    #[test]
    fn the_obsolete_rfc_850_form_is_honoured() {
        let now = rfc_now();
        assert_eq!(
            parse("Sunday, 06-Nov-94 08:50:07 GMT", now),
            Some(Duration::from_secs(30))
        );
        assert_eq!(
            parse("Sunday, 06-Nov-94 08:49:37 GMT", now),
            Some(Duration::ZERO)
        );
        // A wrong weekday is not that date.
        assert_eq!(parse("Monday, 06-Nov-94 08:50:07 GMT", now), None);
    }

    #[test]
    fn the_asctime_form_is_honoured() {
        let now = rfc_now();
        assert_eq!(
            parse("Sun Nov  6 08:51:37 1994", now),
            Some(Duration::from_secs(120))
        );
        assert_eq!(parse("Sun Nov  6 07:49:37 1994", now), Some(Duration::ZERO));
        assert_eq!(parse("Sun Nov 36 08:51:37 1994", now), None);
    }
}
