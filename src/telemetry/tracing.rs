//! OTLP spans (being built on the `otlp` branch).
