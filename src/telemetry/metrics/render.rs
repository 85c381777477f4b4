//! What the last `/metrics` render cost (`mcp_exporter_metrics_render_*`,
//! `mcp_exporter_metrics_response_bytes`): the exporter's own scrape cost,
//! which grows with the fleet and is alerted on when it drifts
//! (alerts/mcp-exporter.rules.yaml, `McpExporterMetricsRenderSlow`).

use super::families::Source;
use super::series::Registrar;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::registry::{Registry, Unit};
use std::sync::atomic::AtomicU64;
use std::time::Duration;

/// Handles on the render families; clones share them.
#[derive(Debug, Clone, Default)]
pub struct RenderMetrics {
    seconds: Gauge<f64, AtomicU64>,
    bytes: Gauge,
}

impl RenderMetrics {
    pub fn register(registry: &mut Registry) -> RenderMetrics {
        let mut r = Registrar::new(registry, Source::Scheduled);
        RenderMetrics {
            seconds: r.family(
                "mcp_exporter_metrics_render",
                "Time the last fresh /metrics body took to produce: encoding, plus compression when the scraper asked for gzip",
            )
            .unit(Unit::Seconds)
            .new_plain(),
            bytes: r.family(
                "mcp_exporter_metrics_response",
                "Size of the last fresh /metrics body before compression",
            )
            .unit(Unit::Bytes)
            .new_plain(),
        }
    }

    /// A render took `took` and made `bytes` of text.
    pub fn rendered(&self, took: Duration, bytes: usize) {
        self.seconds.set(took.as_secs_f64());
        self.bytes.set(i64::try_from(bytes).unwrap_or(i64::MAX));
    }
}
