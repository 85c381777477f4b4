//! Sinks that turn poll reports into Prometheus metrics and OTLP spans.

pub mod events;
pub mod metrics;
pub mod spans;
