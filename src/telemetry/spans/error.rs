//! Why tracing could not be set up.

#[derive(Debug, thiserror::Error)]
pub enum TracingError {
    /// The URL itself is never repeated: it may carry credentials.
    #[error("invalid OTLP endpoint in {setting}: {reason}")]
    InvalidEndpoint {
        setting: &'static str,
        reason: String,
    },
    #[error("unsupported OTLP protocol {value:?} in {setting} (expected grpc or http/protobuf)")]
    UnsupportedProtocol {
        setting: &'static str,
        value: String,
    },
    #[error("unsupported OTEL_TRACES_SAMPLER {0:?} (expected always_on, always_off, traceidratio or their parentbased_ forms)")]
    UnsupportedSampler(String),
    #[error("invalid number {value:?} in {setting}")]
    InvalidNumber {
        setting: &'static str,
        value: String,
    },
    /// Only the header name: values are secrets.
    #[error("invalid OTLP header {0:?}")]
    InvalidHeader(String),
    #[error("cannot build the OTLP exporter: {0}")]
    Exporter(String),
    #[error("cannot start the OTLP export thread: {0}")]
    Worker(String),
}
