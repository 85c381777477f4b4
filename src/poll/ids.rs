//! The ids of one traced poll. Trace and span ids are the vocabulary's
//! typed ids (`mcp_listing::trace`), minted once when a poll starts
//! (`PollTrace::new_sampled`) and carried as numbers to the spans; hex is
//! written only where text is needed (`traceparent`, exemplar labels, JSON).

pub use mcp_listing::trace::{SpanId, TraceContext, TraceId};

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

    /// What the session sends with each request of this poll.
    pub fn context(&self) -> TraceContext {
        TraceContext {
            trace_id: self.trace_id,
            sampled: self.sampled,
        }
    }

    /// `traceparent` for one request of this poll, by the one formatter
    /// the session uses, so what the server received and what we export
    /// agree.
    pub fn traceparent(&self, span_id: SpanId) -> String {
        self.context().traceparent(span_id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn traceparent_carries_the_poll_trace() {
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
