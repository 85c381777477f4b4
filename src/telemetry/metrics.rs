//! Prometheus metric families (being built on the `metrics` branch).
