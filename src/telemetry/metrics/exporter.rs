//! The exporter's own families (`mcp_exporter_*`) but those of its
//! endpoints (`web.rs`) and its `/metrics` renders (`render.rs`).

use super::families::{CounterFamily, Source};
use super::labels::{BuildLabels, TargetLabels};
use super::series::{Registrar, Series};
use prometheus_client::collector::Collector;
use prometheus_client::encoding::{DescriptorEncoder, EncodeMetric};
use prometheus_client::metrics::counter::ConstCounter;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::registry::{Registry, Unit};
use std::sync::atomic::AtomicU64;

/// The exporter's health: build, configuration reloads, load, dropped
/// spans, baselines it could not write.
#[derive(Debug)]
pub struct ExporterMetrics {
    reload_successful: Gauge,
    reload_success_timestamp: Gauge<f64, AtomicU64>,
    targets: Gauge,
    polls_in_flight: Gauge,
    skipped_polls: CounterFamily<TargetLabels>,
    spans_dropped: Counter,
    baseline_write_failures: Counter,
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
        let mut r = Registrar::new(registry, Source::Scheduled);
        r.family(
            "mcp_exporter_build_info",
            "Constant 1; labels are the exporter's version and source revision",
        )
        .plain(&build_info);
        ExporterMetrics {
            reload_successful: r.family(
                "mcp_exporter_config_last_reload_successful",
                "1 if the last configuration load or reload succeeded, else 0",
            )
            .new_plain(),
            reload_success_timestamp: r.family(
                "mcp_exporter_config_last_reload_success_timestamp",
                "Unix time of the last successful configuration load or reload",
            )
            .unit(Unit::Seconds)
            .new_plain(),
            targets: r.family(
                "mcp_exporter_targets",
                "Targets this instance polls (after sharding)",
            )
            .new_plain(),
            polls_in_flight: r.family(
                "mcp_exporter_polls_in_flight",
                "Polls running now",
            )
            .new_plain(),
            skipped_polls: r.family(
                "mcp_exporter_skipped_polls",
                "Scheduled polls skipped because the previous poll of the target was still running or the concurrency cap was reached",
            )
            .new_plain(),
            spans_dropped: r.family(
                "mcp_exporter_spans_dropped",
                "Spans dropped because the export queue was full or the export failed",
            )
            .new_plain(),
            baseline_write_failures: r.family(
                "mcp_exporter_baseline_write_failures",
                "Baseline files that could not be written to the state directory; the baselines in memory stay in use",
            )
            .new_plain(),
        }
    }

    /// Register `mcp_exporter_stdio_orphans_killed_total`, read from `read`
    /// at each scrape (the orphan sweeper's count lives in the transport
    /// layer, which this one does not import).
    pub fn register_stdio_orphans_killed(registry: &mut Registry, read: fn() -> u64) {
        registry.register_collector(Box::new(StdioOrphansKilled { read }));
    }

    /// A configuration load or reload finished; the timestamp moves only on
    /// success (a reload is logged with it: `events.rs`).
    pub fn config_reloaded(&self, success: bool, unix_seconds: f64) {
        self.reload_successful.set(i64::from(success));
        if success {
            self.reload_success_timestamp.set(unix_seconds);
        }
    }

    pub fn set_targets(&self, n: i64) {
        self.targets.set(n);
    }

    /// Counts one poll in flight until the returned guard is dropped, so an
    /// early return or a cancelled task cannot leak the count.
    pub fn poll_in_flight(&self) -> InFlight {
        InFlight::new(&self.polls_in_flight)
    }

    /// `n` scheduled polls of `target` were skipped (logged with it:
    /// `events.rs`).
    pub(in crate::telemetry) fn polls_skipped(&self, target: &str, n: u64) {
        self.skipped_polls
            .get_or_create(&TargetLabels::new(target))
            .inc_by(n);
    }

    /// A baseline file could not be written (logged with it: `events.rs`).
    pub(in crate::telemetry) fn baseline_write_failed(&self) {
        self.baseline_write_failures.inc();
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
        self.skipped_polls.create(&TargetLabels::new(target));
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

/// Counts one thing in a gauge (a poll in flight, a probe running or
/// queued) until dropped. Owns its handle (not a borrow) so it can move
/// into a spawned task.
#[derive(Debug)]
#[must_use = "the count holds only while this guard lives"]
pub struct InFlight {
    gauge: Gauge,
}

impl InFlight {
    pub(super) fn new(gauge: &Gauge) -> InFlight {
        gauge.inc();
        InFlight {
            gauge: gauge.clone(),
        }
    }
}

impl Drop for InFlight {
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
