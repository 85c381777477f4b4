//! The one fan-out: baseline diff first (so every sink sees the same diff),
//! then metrics, spans and the status store. The scheduler runs every stage;
//! `/probe` runs the same code with only a fresh registry's metrics.

use super::status::StatusStore;
use crate::baseline::{self, BaselineStore, PolledTarget};
use crate::config::TargetConfig;
use crate::poll::{unix_now, PollReport, RelistReport};
use crate::telemetry::metrics::{ExporterMetrics, TargetMetrics};
use crate::telemetry::tracing::TraceSink;
use std::sync::Mutex;

/// The scheduler's sinks, shared by every target task.
pub struct Sinks {
    pub baselines: Mutex<BaselineStore>,
    pub metrics: TargetMetrics,
    pub exporter: ExporterMetrics,
    pub traces: TraceSink,
    pub status: StatusStore,
}

impl Sinks {
    /// Every stage.
    pub fn fanout(&self) -> Fanout<'_> {
        Fanout {
            baselines: Some(&self.baselines),
            metrics: &self.metrics,
            traces: Some((&self.traces, &self.exporter)),
            status: Some(&self.status),
        }
    }
}

/// The stages one report passes, in order; a missing stage is skipped.
pub struct Fanout<'a> {
    /// `None`: compare with nothing (no diffs, no reference gaps).
    pub baselines: Option<&'a Mutex<BaselineStore>>,
    pub metrics: &'a TargetMetrics,
    /// Spans, and the counter their drops are reported in.
    pub traces: Option<(&'a TraceSink, &'a ExporterMetrics)>,
    pub status: Option<&'a StatusStore>,
}

impl Fanout<'_> {
    /// Only metrics: what `/probe` answers from.
    pub fn metrics_only(metrics: &TargetMetrics) -> Fanout<'_> {
        Fanout {
            baselines: None,
            metrics,
            traces: None,
            status: None,
        }
    }

    /// A scheduled poll (or a `/probe` poll). `consecutive_failures`
    /// includes this poll.
    pub fn poll(&self, report: PollReport, target: &TargetConfig, consecutive_failures: u32) {
        let polled = self.compare(report, target);
        self.metrics.observe(&polled, &target.expect);
        if let Some((traces, exporter)) = self.traces {
            traces.export_poll(&polled);
            exporter.set_spans_dropped_total(traces.dropped_spans());
        }
        if let Some(status) = self.status {
            status.record(&polled, consecutive_failures);
        }
    }

    /// A watch-mode re-list: only the re-listed kinds change; no poll
    /// duration, `up` from every kind, the failure count untouched. Not
    /// traced (it belongs to no scheduled poll's trace).
    pub fn relist(&self, relist: RelistReport, target: &TargetConfig) {
        let up = relist.up;
        let polled = self.compare(relist.report, target);
        self.metrics.observe_relist(&polled, up);
        if let Some(status) = self.status {
            status.record_relist(&polled, up);
        }
    }

    fn compare(&self, report: PollReport, target: &TargetConfig) -> PolledTarget {
        let Some(baselines) = self.baselines else {
            return PolledTarget::without_baseline(report);
        };
        // A panic elsewhere while holding the lock leaves the store usable
        // (each update is a whole insert), so recover.
        let mut store = baselines.lock().unwrap_or_else(|p| p.into_inner());
        baseline::compare(&mut store, report, &target.reference, unix_now())
    }
}
