//! The exporter's telemetry: the sinks that turn poll reports into
//! Prometheus metrics and OTLP spans, its own events, and its log lines
//! (`logging`: the subscriber and `--log.format`; `logfmt`: the format).

pub mod events;
pub mod logfmt;
pub mod logging;
pub mod metrics;
pub mod spans;
