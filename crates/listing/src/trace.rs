//! W3C trace context, typed: the trace id of one poll, the span ids of its
//! requests, and the one `traceparent` formatter. Ids are numbers from the
//! moment they are minted to the moment they are exported; hex exists only
//! where text is needed (`traceparent`, exemplar labels, JSON).

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

/// The constructors both ids share: minted at random, from their number
/// (`None` for zero, which W3C reserves as invalid), to their number, and
/// from exactly `$digits` hex digits, not all zero (ids given by people:
/// tests, a trace id to look for).
macro_rules! w3c_id {
    ($id:ident, $int:ty, $nonzero:ident, $from:ident, $to:ident, $digits:literal) => {
        impl $id {
            pub fn random() -> $id {
                until_some(|| Self::$from(rand::random()))
            }

            pub fn $from(id: $int) -> Option<$id> {
                $nonzero::new(id).map($id)
            }

            pub fn $to(self) -> $int {
                self.0.get()
            }

            pub fn from_hex(s: &str) -> Option<$id> {
                if !hex_digits(s, $digits) {
                    return None;
                }
                <$int>::from_str_radix(s, 16).ok().and_then(Self::$from)
            }
        }
    };
}

w3c_id!(TraceId, u128, NonZeroU128, from_u128, to_u128, 32);
w3c_id!(SpanId, u64, NonZeroU64, from_u64, to_u64, 16);

/// Draws until the draw is a valid id: only zero is not, so a retry is
/// rarer than one in 2^64.
fn until_some<T>(mut draw: impl FnMut() -> Option<T>) -> T {
    loop {
        if let Some(id) = draw() {
            return id;
        }
    }
}

/// Exactly `n` hex digits (and so nothing `from_str_radix` would also
/// take, such as a sign).
fn hex_digits(s: &str, n: usize) -> bool {
    s.len() == n && s.bytes().all(|b| b.is_ascii_hexdigit())
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

/// What a traced poll sends with each request: its trace and whether it is
/// sampled. Each request adds its own [`SpanId`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TraceContext {
    pub trace_id: TraceId,
    pub sampled: bool,
}

impl TraceContext {
    /// The W3C `traceparent` value (version 00) for one request of this
    /// trace. The one place it is written: the spans exported later carry
    /// the same numbers.
    pub fn traceparent(&self, span_id: SpanId) -> String {
        format!(
            "00-{}-{}-{}",
            self.trace_id,
            span_id,
            if self.sampled { "01" } else { "00" }
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
        let ctx = TraceContext {
            trace_id: TraceId::from_hex("4BF92F3577B34DA6A3CE929D0E0E4736").unwrap(),
            sampled: true,
        };
        let span = SpanId::from_hex("00f067aa0ba902b7").unwrap();
        assert_eq!(
            ctx.traceparent(span),
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
        );
        let unsampled = TraceContext {
            sampled: false,
            ..ctx
        };
        assert!(unsampled.traceparent(span).ends_with("-00"));
    }
}
