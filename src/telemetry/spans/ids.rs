//! The poll's typed ids as OpenTelemetry ids. Every id is a number from the
//! moment it is minted (`poll::PollTrace`, the session's request span ids),
//! so nothing is read back from text here.

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
        }
    }
}
