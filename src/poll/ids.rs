//! Trace and span ids of one poll, typed. Minted once when a poll starts
//! (`PollTrace::new`), carried as numbers in the report, rendered as hex
//! only where text is needed (`traceparent`, exemplar labels, JSON).

use serde::Serialize;
use std::fmt;
use std::num::{NonZeroU128, NonZeroU64};

/// A W3C trace id: 128 random bits, never zero. Non-zero in its type too,
/// so an `Option<TraceId>` (one in every recent poll kept) takes no more
/// room than the id.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct TraceId(NonZeroU128);

/// A W3C span id: 64 random bits, never zero (in its type too, as
/// [`TraceId`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct SpanId(NonZeroU64);

impl TraceId {
    pub fn random() -> TraceId {
        loop {
            if let Some(id) = Self::from_u128(rand::random()) {
                return id;
            }
        }
    }

    /// `None` for zero, which W3C reserves as invalid.
    pub fn from_u128(id: u128) -> Option<TraceId> {
        NonZeroU128::new(id).map(TraceId)
    }

    pub fn to_u128(self) -> u128 {
        self.0.get()
    }

    /// Exactly 32 hex digits, not all zero.
    pub fn from_hex(s: &str) -> Option<TraceId> {
        if s.len() != 32 || !s.bytes().all(|b| b.is_ascii_hexdigit()) {
            return None;
        }
        u128::from_str_radix(s, 16).ok().and_then(Self::from_u128)
    }
}

impl SpanId {
    pub fn random() -> SpanId {
        loop {
            if let Some(id) = Self::from_u64(rand::random()) {
                return id;
            }
        }
    }

    pub fn from_u64(id: u64) -> Option<SpanId> {
        NonZeroU64::new(id).map(SpanId)
    }

    pub fn to_u64(self) -> u64 {
        self.0.get()
    }

    /// Exactly 16 hex digits, not all zero. The one place a span id comes
    /// back from text: the session (wire layer) mints request span ids as
    /// the hex it sends in `traceparent`, and the poll reads them once.
    pub fn from_hex(s: &str) -> Option<SpanId> {
        if s.len() != 16 || !s.bytes().all(|b| b.is_ascii_hexdigit()) {
            return None;
        }
        u64::from_str_radix(s, 16).ok().and_then(Self::from_u64)
    }
}

/// 32 lowercase hex digits.
impl fmt::Display for TraceId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:032x}", self.0)
    }
}

/// 16 lowercase hex digits.
impl fmt::Display for SpanId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:016x}", self.0)
    }
}

impl Serialize for TraceId {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl Serialize for SpanId {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

/// Ids of one traced poll: the trace and the `mcp.poll` span.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PollTrace {
    pub trace_id: TraceId,
    pub poll_span_id: SpanId,
    /// Always true today (unsampled polls get no `PollTrace`); kept so the
    /// decision travels in the `traceparent` flags.
    pub sampled: bool,
}

impl PollTrace {
    /// Fresh random ids for a sampled poll.
    pub fn new_sampled(trace_id: TraceId) -> PollTrace {
        PollTrace {
            trace_id,
            poll_span_id: SpanId::random(),
            sampled: true,
        }
    }

    /// `traceparent` for one request of this poll, by the session's one
    /// formatter, so what the server received and what we export agree.
    pub fn traceparent(&self, span_id: SpanId) -> String {
        mcp_wire::session::traceparent(
            &self.trace_id.to_string(),
            &span_id.to_string(),
            self.sampled,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_round_trip_through_hex() {
        for _ in 0..100 {
            let t = TraceId::random();
            let s = SpanId::random();
            assert_eq!(t.to_string().len(), 32);
            assert_eq!(s.to_string().len(), 16);
            assert_eq!(TraceId::from_hex(&t.to_string()), Some(t));
            assert_eq!(SpanId::from_hex(&s.to_string()), Some(s));
        }
    }

    #[test]
    fn invalid_ids_are_rejected() {
        assert!(TraceId::from_hex(&"0".repeat(32)).is_none());
        assert!(TraceId::from_hex("+bf92f3577b34da6a3ce929d0e0e4736").is_none());
        assert!(TraceId::from_hex("abc").is_none());
        assert!(SpanId::from_hex(&"0".repeat(16)).is_none());
        assert!(SpanId::from_hex("00f067aa0ba902b7aa").is_none());
        assert!(TraceId::from_u128(0).is_none());
        assert!(SpanId::from_u64(0).is_none());
    }

    #[test]
    fn traceparent_format() {
        let t = PollTrace {
            trace_id: TraceId::from_hex("4bf92f3577b34da6a3ce929d0e0e4736").unwrap(),
            poll_span_id: SpanId::random(),
            sampled: true,
        };
        let span = SpanId::from_hex("00f067aa0ba902b7").unwrap();
        assert_eq!(
            t.traceparent(span),
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
        );
    }
}
