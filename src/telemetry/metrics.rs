//! The Prometheus sink: turns [`PolledTarget`](crate::baseline::PolledTarget)
//! reports into prometheus-client families and encodes them as OpenMetrics
//! text (with exemplars) or the Prometheus text format 0.0.4
//! ([`Exposition`]). Every series is listed in docs/metrics.md, whose names
//! are the contract dashboards and alerts rely on.
//!
//! prometheus-client appends `_total` to counters and the unit to families
//! registered with one, so families are registered without those suffixes.

mod buckets;
mod clients;
mod discovery;
mod exporter;
mod exposition;
mod families;
mod group;
mod labels;
mod observer_health;
mod process;
mod render;
mod series;
mod tap;
mod target;
#[cfg(test)]
mod tests;
mod values;
mod web;

pub use buckets::{DURATION_BUCKETS_SECONDS, PAGES_BUCKETS, PAGE_ITEMS_BUCKETS};
pub use clients::ClientMetrics;
pub use discovery::DiscoveryMetrics;
pub use exporter::{register_external_url, ExporterMetrics, InFlight};
pub use exposition::{Exposition, OPENMETRICS_CONTENT_TYPE, PROMETHEUS_TEXT_CONTENT_TYPE};
pub use group::conformance::ConformanceMetrics;
pub use labels::{ReportDrop, MAX_SERVER_LABEL_CHARS};
pub use observer_health::ObserverHealth;
pub use process::register_process_metrics;
pub use render::RenderMetrics;
pub use tap::TapHealth;
pub use target::TargetMetrics;
pub use web::{ProbeRefused, ReloadResult, WebMetrics};

use prometheus_client::registry::Registry;

/// The whole registry as OpenMetrics text, ending with `# EOF`.
pub fn encode(registry: &Registry) -> Result<String, std::fmt::Error> {
    Exposition::OpenMetrics.encode(registry)
}
