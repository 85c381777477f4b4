//! The Prometheus sink: turns [`PolledTarget`](crate::baseline::PolledTarget)
//! reports into prometheus-client families and encodes them as OpenMetrics
//! text (with exemplars). Every series is listed in docs/metrics.md, whose
//! names are the contract dashboards and alerts rely on.
//!
//! prometheus-client appends `_total` to counters and the unit to families
//! registered with one, so families are registered without those suffixes.

mod buckets;
mod discovery;
mod exporter;
mod families;
mod group;
mod labels;
mod target;
#[cfg(test)]
mod tests;

pub use buckets::{DURATION_BUCKETS_SECONDS, PAGES_BUCKETS, PAGE_ITEMS_BUCKETS};
pub use discovery::DiscoveryMetrics;
pub use exporter::{register_external_url, ExporterMetrics, PollInFlight};
pub use group::conformance::ConformanceMetrics;
pub use labels::MAX_SERVER_LABEL_CHARS;
pub use target::TargetMetrics;

use prometheus_client::registry::Registry;

/// The Content-Type of [`encode`]'s output; prometheus-client sets none.
pub const OPENMETRICS_CONTENT_TYPE: &str =
    "application/openmetrics-text; version=1.0.0; charset=utf-8";

/// The whole registry as OpenMetrics text, ending with `# EOF`.
pub fn encode(registry: &Registry) -> Result<String, std::fmt::Error> {
    let mut out = String::with_capacity(16 * 1024);
    prometheus_client::encoding::text::encode(&mut out, registry)?;
    Ok(out)
}
