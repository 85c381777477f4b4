//! The exporter's own families (`mcp_exporter_*`).

use super::families::CounterFamily;
use super::labels::{BuildLabels, TargetLabels};
use prometheus_client::collector::Collector;
use prometheus_client::encoding::{DescriptorEncoder, EncodeMetric};
use prometheus_client::metrics::counter::ConstCounter;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::registry::{Registry, Unit};
use std::sync::atomic::AtomicU64;

/// The exporter's health: build, configuration reloads, load, dropped spans.
#[derive(Debug)]
pub struct ExporterMetrics {
    reload_successful: Gauge,
    reload_success_timestamp: Gauge<f64, AtomicU64>,
    targets: Gauge,
    polls_in_flight: Gauge,
    skipped_polls: CounterFamily<TargetLabels>,
    spans_dropped: Counter,
}

impl ExporterMetrics {
    pub fn new(registry: &mut Registry, version: &str, revision: &str) -> Self {
        let build_info: Family<BuildLabels, Gauge> = Family::default();
        build_info
            .get_or_create(&BuildLabels {
                version: version.to_string(),
                revision: revision.to_string(),
            })
            .set(1);
        let m = ExporterMetrics {
            reload_successful: Gauge::default(),
            reload_success_timestamp: Gauge::default(),
            targets: Gauge::default(),
            polls_in_flight: Gauge::default(),
            skipped_polls: Family::default(),
            spans_dropped: Counter::default(),
        };
        registry.register(
            "mcp_exporter_build_info",
            "Constant 1; labels are the exporter's version and source revision",
            build_info,
        );
        registry.register(
            "mcp_exporter_config_last_reload_successful",
            "1 if the last configuration load or reload succeeded, else 0",
            m.reload_successful.clone(),
        );
        registry.register_with_unit(
            "mcp_exporter_config_last_reload_success_timestamp",
            "Unix time of the last successful configuration load or reload",
            Unit::Seconds,
            m.reload_success_timestamp.clone(),
        );
        registry.register(
            "mcp_exporter_targets",
            "Targets this instance polls (after sharding)",
            m.targets.clone(),
        );
        registry.register(
            "mcp_exporter_polls_in_flight",
            "Polls running now",
            m.polls_in_flight.clone(),
        );
        registry.register(
            "mcp_exporter_skipped_polls",
            "Scheduled polls skipped because the previous poll of the target was still running or the concurrency cap was reached",
            m.skipped_polls.clone(),
        );
        registry.register(
            "mcp_exporter_spans_dropped",
            "Spans dropped because the export queue was full or the export failed",
            m.spans_dropped.clone(),
        );
        m
    }

    /// Register `mcp_exporter_stdio_orphans_killed_total`, read from `read`
    /// at each scrape (the orphan sweeper's count lives in the transport
    /// layer, which this one does not import).
    pub fn register_stdio_orphans_killed(registry: &mut Registry, read: fn() -> u64) {
        registry.register_collector(Box::new(StdioOrphansKilled { read }));
    }

    /// A configuration load or reload finished; the timestamp moves only on
    /// success.
    pub fn config_reloaded(&self, success: bool, unix_seconds: f64) {
        self.reload_successful.set(i64::from(success));
        if success {
            self.reload_success_timestamp.set(unix_seconds);
        }
    }

    pub fn set_targets(&self, n: i64) {
        self.targets.set(n);
    }

    pub fn poll_started(&self) {
        self.polls_in_flight.inc();
    }

    pub fn poll_finished(&self) {
        self.polls_in_flight.dec();
    }

    /// Counts one poll in flight until the returned guard is dropped, so an
    /// early return or a cancelled task cannot leak the count.
    pub fn poll_in_flight(&self) -> PollInFlight {
        self.polls_in_flight.inc();
        PollInFlight {
            gauge: self.polls_in_flight.clone(),
        }
    }

    pub fn poll_skipped(&self, target: &str) {
        self.skipped_polls
            .get_or_create(&TargetLabels::new(target))
            .inc();
    }

    /// `n` more spans were dropped (a delta).
    pub fn spans_dropped(&self, n: u64) {
        self.spans_dropped.inc_by(n);
    }

    /// Raise the dropped-spans counter to `total`, a running total since
    /// start (what the trace sink reports). Never lowers it, and concurrent
    /// callers cannot add the same drops twice.
    pub fn set_spans_dropped_total(&self, total: u64) {
        self.spans_dropped
            .inner()
            .fetch_max(total, std::sync::atomic::Ordering::Relaxed);
    }

    /// Pre-create `mcp_exporter_skipped_polls_total{target}` at 0.
    pub fn register_target(&self, target: &str) {
        // Create at 0; the guard is released at once.
        drop(self.skipped_polls.get_or_create(&TargetLabels::new(target)));
    }

    /// Drop the series of a target removed by a config reload.
    pub fn forget_target(&self, target: &str) {
        self.skipped_polls.remove(&TargetLabels::new(target));
    }
}

/// `mcp_exporter_stdio_orphans_killed_total`: the orphan sweeper's count,
/// read at each scrape.
#[derive(Debug)]
struct StdioOrphansKilled {
    read: fn() -> u64,
}

impl Collector for StdioOrphansKilled {
    fn encode(&self, mut encoder: DescriptorEncoder) -> Result<(), std::fmt::Error> {
        let counter = ConstCounter::new((self.read)());
        let metric = encoder.encode_descriptor(
            "mcp_exporter_stdio_orphans_killed",
            "Processes of closed stdio servers' trees killed by the orphan sweeper: descendants their server's close did not find",
            None,
            counter.metric_type(),
        )?;
        counter.encode(metric)
    }
}

/// Decrements `mcp_exporter_polls_in_flight` when dropped. Owns its handle
/// (not a borrow) so it can move into a spawned task.
#[derive(Debug)]
#[must_use = "the poll counts as in flight only while this guard lives"]
pub struct PollInFlight {
    gauge: Gauge,
}

impl Drop for PollInFlight {
    fn drop(&mut self) {
        self.gauge.dec();
    }
}

/// `mcp_exporter_external_url_info{external_url="..."} 1`: where people
/// reach this exporter (`--web.external-url`), so alert annotations can link
/// to `/targets/NAME` (alerts/mcp-exporter.rules.yaml, `status_url`).
pub fn register_external_url(registry: &mut Registry, external_url: &str) {
    let info: Family<Vec<(String, String)>, Gauge> = Family::default();
    info.get_or_create(&vec![(
        "external_url".to_string(),
        external_url.to_string(),
    )])
    .set(1);
    registry.register(
        "mcp_exporter_external_url_info",
        "Constant 1; the label is the URL under which people reach this exporter (--web.external-url)",
        info,
    );
}
