//! Where a finished poll goes: baselines first (they produce the diffs),
//! then metrics, spans and the status store. No sink calls back into the
//! walker or transports.

use super::report::{PollReport, PolledTarget};
use super::status::StatusStore;
use crate::baseline::{self, BaselineStore};
use crate::config::TargetConfig;
use crate::listing::Outcome;
use crate::telemetry::metrics::{ExporterMetrics, TargetMetrics};
use crate::telemetry::tracing::TraceSink;
use std::collections::BTreeMap;
use std::sync::Mutex;

pub struct Sinks {
    pub baselines: Mutex<BaselineStore>,
    pub metrics: TargetMetrics,
    pub exporter: ExporterMetrics,
    pub traces: TraceSink,
    pub status: StatusStore,
}

impl Sinks {
    /// Diff against the baselines, persist them, then feed every sink.
    pub fn consume(&self, report: PollReport, target: &TargetConfig, consecutive_failures: u32) {
        let polled = self.diff_and_store(report, target);
        self.metrics.observe(&polled, &target.expect);
        for probe in &polled.report.invalid_cursor_probes {
            self.metrics
                .set_invalid_cursor_probe(&polled.report.target, probe.kind, probe.result);
        }
        self.traces.export_poll(&polled);
        self.exporter
            .set_spans_dropped_total(self.traces.dropped_spans());
        self.status.record(&polled, consecutive_failures);
    }

    fn diff_and_store(&self, report: PollReport, target: &TargetConfig) -> PolledTarget {
        let mut store = match self.baselines.lock() {
            Ok(s) => s,
            Err(p) => p.into_inner(),
        };
        let now = unix_now();
        let mut diffs = BTreeMap::new();
        let mut changed = false;
        for listing in &report.listings {
            let previous = store.names(&report.target, listing.kind);
            if let Some(d) = baseline::diff(previous, listing) {
                diffs.insert(listing.kind, d);
            }
            if listing.outcome == Outcome::Complete {
                store.set(&report.target, listing.kind, listing.names.clone(), now);
                changed = true;
            }
        }
        if changed {
            if let Err(e) = store.persist(&report.target) {
                tracing::warn!(target_name = %report.target, error = %e, "could not persist baselines");
            }
        }
        let mut reference_missing: BTreeMap<_, BTreeMap<String, Vec<String>>> = BTreeMap::new();
        for reference in &target.reference {
            for &kind in &reference.kinds {
                let Some(listing) = report.listing(kind) else {
                    continue;
                };
                if listing.outcome != Outcome::Complete {
                    continue;
                }
                let Some(origin) = store.names(&reference.target, kind) else {
                    continue;
                };
                let missing =
                    baseline::missing_from(&listing.names, origin, reference.prefix.as_deref());
                reference_missing
                    .entry(kind)
                    .or_default()
                    .insert(reference.target.clone(), missing);
            }
        }
        PolledTarget {
            report,
            diffs,
            reference_missing,
        }
    }
}

pub fn unix_now() -> f64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs_f64())
        .unwrap_or(0.0)
}
