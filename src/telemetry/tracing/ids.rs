//! Trace and span ids as lowercase hex, and the W3C `traceparent` value the
//! session puts in `params._meta`. The same strings travel in the report and
//! are parsed back when the spans are built, so the server's spans (children
//! of our request spans) land in the same trace.

use opentelemetry::trace::{SpanId, TraceId};

/// A random non-zero 128-bit trace id (all-zero ids are invalid in W3C).
pub fn new_trace_id() -> u128 {
    loop {
        let id: u128 = rand::random();
        if id != 0 {
            return id;
        }
    }
}

/// A random non-zero 64-bit span id.
pub fn new_span_id() -> u64 {
    loop {
        let id: u64 = rand::random();
        if id != 0 {
            return id;
        }
    }
}

pub fn trace_id_hex(id: u128) -> String {
    format!("{id:032x}")
}

pub fn span_id_hex(id: u64) -> String {
    format!("{id:016x}")
}

/// `00-<trace id>-<span id>-<flags>`: the session's, so what the server
/// receives and what we export cannot drift apart.
pub use crate::mcp::session::traceparent;

fn is_hex(s: &str, len: usize) -> bool {
    s.len() == len && s.bytes().all(|b| b.is_ascii_hexdigit())
}

/// Exactly 32 hex digits, not all zero.
pub fn parse_trace_id(s: &str) -> Option<TraceId> {
    if !is_hex(s, 32) {
        return None;
    }
    u128::from_str_radix(s, 16)
        .ok()
        .filter(|&v| v != 0)
        .map(TraceId::from)
}

/// Exactly 16 hex digits, not all zero.
pub fn parse_span_id(s: &str) -> Option<SpanId> {
    if !is_hex(s, 16) {
        return None;
    }
    u64::from_str_radix(s, 16)
        .ok()
        .filter(|&v| v != 0)
        .map(SpanId::from)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_round_trip_through_hex() {
        for _ in 0..100 {
            let t = new_trace_id();
            let s = new_span_id();
            let th = trace_id_hex(t);
            let sh = span_id_hex(s);
            assert_eq!(th.len(), 32);
            assert_eq!(sh.len(), 16);
            assert_eq!(parse_trace_id(&th), Some(TraceId::from(t)));
            assert_eq!(parse_span_id(&sh), Some(SpanId::from(s)));
            // The SDK's own hex rendering matches ours.
            assert_eq!(TraceId::from(t).to_string(), th);
            assert_eq!(SpanId::from(s).to_string(), sh);
        }
    }

    #[test]
    fn traceparent_format() {
        assert_eq!(
            traceparent("4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7", true),
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
        );
        assert!(traceparent(
            "4BF92F3577B34DA6A3CE929D0E0E4736",
            "00F067AA0BA902B7",
            false
        )
        .ends_with("-00f067aa0ba902b7-00"));
    }

    #[test]
    fn invalid_ids_are_rejected() {
        assert!(parse_trace_id(&"0".repeat(32)).is_none());
        assert!(parse_trace_id("+bf92f3577b34da6a3ce929d0e0e4736").is_none());
        assert!(parse_trace_id("abc").is_none());
        assert!(parse_span_id(&"0".repeat(16)).is_none());
        assert!(parse_span_id("00f067aa0ba902b7aa").is_none());
    }
}
