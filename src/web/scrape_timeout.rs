//! The time budget of one `/probe` request, from Prometheus'
//! `X-Prometheus-Scrape-Timeout-Seconds` header. The header is client input:
//! any value (garbage, NaN, negative, `inf`, `1e30`) gives a usable budget,
//! never a panic.

use std::time::Duration;

/// Seconds left for the scrape's own overhead.
const TIMEOUT_OFFSET: f64 = 0.5;
/// Budget when the header is absent or unreadable.
pub const DEFAULT_PROBE_TIMEOUT: Duration = Duration::from_secs(10);
/// Shortest budget: a scrape timeout at or under the offset still gets a try.
const MIN_PROBE_TIMEOUT: f64 = 0.1;
/// Longest budget. Prometheus caps a scrape timeout at its interval; nothing
/// sane is longer than this, and a longer one would only hold a slot.
const MAX_PROBE_TIMEOUT: f64 = 300.0;

/// The budget for a probe whose request carried `header` (the header's text).
pub fn probe_budget(header: Option<&str>) -> Duration {
    let Some(seconds) = header.and_then(|v| v.trim().parse::<f64>().ok()) else {
        return DEFAULT_PROBE_TIMEOUT;
    };
    if seconds.is_nan() {
        return DEFAULT_PROBE_TIMEOUT;
    }
    // `clamp` on a finite range maps ±inf to its ends, so the result always
    // fits a Duration.
    Duration::from_secs_f64((seconds - TIMEOUT_OFFSET).clamp(MIN_PROBE_TIMEOUT, MAX_PROBE_TIMEOUT))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hostile_values_give_a_bounded_budget() {
        for v in [
            "inf", "+inf", "-inf", "infinity", "1e30", "1e308", "NaN", "-5", "-0", "0", "garbage",
            "", " 3 ",
        ] {
            let b = probe_budget(Some(v));
            assert!(
                b >= Duration::from_millis(100) && b <= Duration::from_secs(300),
                "{v}: {b:?}"
            );
        }
        assert_eq!(probe_budget(None), DEFAULT_PROBE_TIMEOUT);
        assert_eq!(probe_budget(Some("NaN")), DEFAULT_PROBE_TIMEOUT);
        assert_eq!(probe_budget(Some("10.5")), Duration::from_secs(10));
        assert_eq!(probe_budget(Some("1e30")), Duration::from_secs(300));
    }
}
