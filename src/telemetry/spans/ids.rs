//! The poll's typed ids as OpenTelemetry ids. Trace and poll span ids are
//! numbers from the start (`poll::PollTrace`); only request span ids, which
//! the session minted as the hex it sent in `traceparent`, are read back
//! from text, once, here.

use crate::poll;
use opentelemetry::trace::{SpanId, TraceId};

pub fn trace_id(id: poll::TraceId) -> TraceId {
    TraceId::from(id.to_u128())
}

pub fn span_id(id: poll::SpanId) -> SpanId {
    SpanId::from(id.to_u64())
}

/// A span id for a span the server never saw (listing spans).
pub fn fresh_span_id() -> SpanId {
    span_id(poll::SpanId::random())
}

/// A request span id as sent on the wire: exactly 16 hex digits, not zero.
pub fn parse_span_id(s: &str) -> Option<SpanId> {
    poll::SpanId::from_hex(s).map(span_id)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sdk_hex_matches_the_wire() {
        for _ in 0..100 {
            let t = poll::TraceId::random();
            let s = poll::SpanId::random();
            // What the server got in traceparent is what we export.
            assert_eq!(trace_id(t).to_string(), t.to_string());
            assert_eq!(span_id(s).to_string(), s.to_string());
            assert_eq!(parse_span_id(&s.to_string()), Some(span_id(s)));
        }
    }

    #[test]
    fn invalid_wire_span_ids_are_rejected() {
        assert!(parse_span_id(&"0".repeat(16)).is_none());
        assert!(parse_span_id("00f067aa0ba902b7aa").is_none());
        assert!(parse_span_id("+0f067aa0ba902b7").is_none());
    }
}
