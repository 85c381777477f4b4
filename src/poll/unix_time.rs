//! Wall-clock time as Unix seconds: the one conversion every sink uses.

use std::time::SystemTime;

/// Seconds since the Unix epoch; 0 for a clock before 1970.
pub fn unix_seconds(t: SystemTime) -> f64 {
    t.duration_since(SystemTime::UNIX_EPOCH)
        .map(|d| d.as_secs_f64())
        .unwrap_or(0.0)
}

/// `unix_seconds` of now.
pub fn unix_now() -> f64 {
    unix_seconds(SystemTime::now())
}
