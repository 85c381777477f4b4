//! OTLP spans of every poll, listing and page: a sink built from the
//! finished `PolledTarget` (see docs/tracing.md).
//!
//! A poll asks `start_poll` for its typed trace id and poll span id (a
//! `poll::PollTrace`), the session gives each request a span id and sends
//! `traceparent` in `params._meta`, and the finished report comes back to
//! `export_poll`, which rebuilds the span tree with exactly those ids so the
//! server's own spans join the same trace.

mod build;
mod client;
mod error;
mod export;
mod ids;
pub mod names;
mod redact;
mod sampler;
mod settings;

pub use build::MAX_NAMES_PER_EVENT;
pub use error::TracingError;
pub use sampler::Sampler;

use crate::baseline::PolledTarget;
use crate::config::TracingConfig;
use crate::poll::{PollTrace, SpanId, TraceId};
use export::ExportQueue;
use opentelemetry::InstrumentationScope;
use std::sync::Arc;
use std::time::Duration;

/// How long `shutdown` waits for queued spans to go out.
const SHUTDOWN_TIMEOUT: Duration = Duration::from_secs(3);

/// Sends poll spans to an OTLP collector, or does nothing when disabled.
/// Cheap to clone; every clone feeds the same queue.
#[derive(Clone, Default)]
pub struct TraceSink {
    inner: Option<Arc<Inner>>,
}

struct Inner {
    queue: ExportQueue,
    sampler: Sampler,
    scope: InstrumentationScope,
}

impl std::fmt::Debug for TraceSink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TraceSink")
            .field("enabled", &self.enabled())
            .finish()
    }
}

impl TraceSink {
    /// From the config's tracing section plus the standard OpenTelemetry
    /// env vars (config wins). Disabled, without error or log, when no
    /// endpoint is configured anywhere. Must run where no tokio runtime is
    /// required: it starts its own export thread.
    pub fn from_settings(cfg: &TracingConfig) -> Result<TraceSink, TracingError> {
        Self::from_settings_with_env(cfg, &|name| std::env::var(name).ok())
    }

    /// Like `from_settings` with an explicit environment, for tests.
    pub fn from_settings_with_env(
        cfg: &TracingConfig,
        env: &dyn Fn(&str) -> Option<String>,
    ) -> Result<TraceSink, TracingError> {
        let Some(resolved) = settings::resolve(cfg, env)? else {
            return Ok(TraceSink::disabled());
        };
        let queue = ExportQueue::start(&resolved)?;
        let scope = InstrumentationScope::builder(env!("CARGO_PKG_NAME"))
            .with_version(env!("CARGO_PKG_VERSION"))
            .build();
        Ok(TraceSink {
            inner: Some(Arc::new(Inner {
                queue,
                sampler: resolved.sampler,
                scope,
            })),
        })
    }

    pub fn disabled() -> TraceSink {
        TraceSink { inner: None }
    }

    pub fn enabled(&self) -> bool {
        self.inner.is_some()
    }

    /// Ids for a new poll; `None` when disabled or the sampler skips it (the
    /// poll then sends no `traceparent` and carries no trace id).
    pub fn start_poll(&self) -> Option<PollTrace> {
        let inner = self.inner.as_ref()?;
        let trace_id = TraceId::random();
        if !inner.sampler.samples(trace_id.to_u128()) {
            return None;
        }
        Some(PollTrace::new_sampled(trace_id))
    }

    /// A fresh span id for one request.
    pub fn new_span_id() -> SpanId {
        SpanId::random()
    }

    /// Queue the finished poll's spans; returns at once. Polls without a
    /// valid `trace_id`/`poll_span_id` (not traced) are skipped.
    pub fn export_poll(&self, polled: &PolledTarget) {
        let Some(inner) = &self.inner else { return };
        if let Some(spans) = build::poll_spans(polled, &inner.scope) {
            inner.queue.submit(spans);
        }
    }

    /// Queue the span of one client listing a tap observed (a trace of its
    /// own, sampled like polls); returns at once.
    pub fn export_client_listing(
        &self,
        tap: &str,
        listing: &mcp_observer::ClientListing,
        start: std::time::SystemTime,
        end: std::time::SystemTime,
    ) {
        let Some(inner) = &self.inner else { return };
        let trace_id = TraceId::random();
        if !inner.sampler.samples(trace_id.to_u128()) {
            return;
        }
        let span = client::client_listing_span(
            tap,
            listing,
            start,
            end,
            ids::trace_id(trace_id),
            &inner.scope,
        );
        inner.queue.submit(vec![span]);
    }

    /// Spans lost since start: queue full, collector failing, or after
    /// shutdown.
    pub fn dropped_spans(&self) -> u64 {
        self.inner.as_ref().map_or(0, |i| i.queue.dropped())
    }

    /// Spans the collector accepted since start.
    pub fn exported_spans(&self) -> u64 {
        self.inner.as_ref().map_or(0, |i| i.queue.exported())
    }

    /// Wait (at most `timeout`) until spans queued so far were sent or
    /// dropped. For the probe CLI and tests; polling never needs it.
    pub async fn flush(&self, timeout: Duration) {
        if let Some(inner) = &self.inner {
            inner.queue.flush(timeout).await;
        }
    }

    /// Send what is queued (waiting at most a few seconds) and stop.
    pub async fn shutdown(&self) {
        if let Some(inner) = &self.inner {
            inner.queue.shutdown(SHUTDOWN_TIMEOUT).await;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::OtlpProtocol;

    #[test]
    fn disabled_sink_does_nothing() {
        let sink = TraceSink::from_settings_with_env(&TracingConfig::default(), &|_| None).unwrap();
        assert!(!sink.enabled());
        assert!(sink.start_poll().is_none());
        assert_eq!(sink.dropped_spans(), 0);
    }

    #[test]
    fn always_off_sampler_yields_no_poll_trace() {
        let cfg = TracingConfig {
            endpoint: Some("http://127.0.0.1:9".into()),
            sample_ratio: Some(0.0),
            ..Default::default()
        };
        let sink = TraceSink::from_settings_with_env(&cfg, &|_| None).unwrap();
        assert!(sink.enabled());
        assert!(sink.start_poll().is_none());
    }

    #[test]
    fn start_poll_gives_well_formed_ids() {
        let cfg = TracingConfig {
            endpoint: Some("http://127.0.0.1:9".into()),
            ..Default::default()
        };
        let sink = TraceSink::from_settings_with_env(&cfg, &|_| None).unwrap();
        let t = sink.start_poll().unwrap();
        assert_eq!(t.trace_id.to_string().len(), 32);
        assert_eq!(t.poll_span_id.to_string().len(), 16);
        assert!(t.sampled);
        let span = TraceSink::new_span_id();
        assert_eq!(t.traceparent(span), format!("00-{}-{span}-01", t.trace_id));
    }

    #[test]
    fn https_endpoints_build_for_both_protocols() {
        for protocol in OtlpProtocol::ALL {
            let cfg = TracingConfig {
                endpoint: Some("https://127.0.0.1:9".into()),
                protocol: Some(protocol),
                ..Default::default()
            };
            let sink = TraceSink::from_settings_with_env(&cfg, &|_| None);
            assert!(sink.is_ok(), "{protocol}: {:?}", sink.err());
        }
    }
}
