//! The one fan-out: baseline diff first (so every sink sees the same diff),
//! then the verdict (judged once, against the status store's kept history),
//! then metrics, spans and the status store. The scheduler runs every stage;
//! a `/probe` answer runs the same code with only a fresh registry's
//! metrics, and a verdict shown alone (`/probe?debug`, `probe`) with none.

use super::level_watch::LevelWatch;
use super::status::StatusStore;
use super::verdict::{judge_alone, observation, reference_sizes, ReferenceSizes};
use crate::baseline::{self, BaselineStore, PendingWrite, PolledTarget};
use crate::config::TargetConfig;
use crate::poll::{unix_now, PollReport, RelistReport};
use crate::telemetry::events::BaselineWriteFailed;
use crate::telemetry::metrics::{
    ConformanceMetrics, DiscoveryMetrics, ExporterMetrics, TargetMetrics,
};
use crate::telemetry::spans::TraceSink;
use crate::verdict::TargetVerdict;
use mcp_conformance::ConformanceReport;
use std::sync::{Mutex, MutexGuard};
use std::time::Duration;

/// The scheduler's sinks, shared by every target task.
pub struct Sinks {
    pub baselines: Mutex<BaselineStore>,
    pub metrics: TargetMetrics,
    pub exporter: ExporterMetrics,
    pub traces: TraceSink,
    pub status: StatusStore,
    /// How long a silent shrink keeps its kind degraded.
    pub event_window: Duration,
    /// Failing rules of serve-mode conformance runs.
    pub conformance: ConformanceMetrics,
    /// The discovery sources' refreshes and discovered targets' labels.
    pub discovery: DiscoveryMetrics,
    /// Each target's last verdict level: a change is logged once.
    pub levels: LevelWatch,
}

impl Sinks {
    /// A scheduled target's conformance run: its failing rules exported,
    /// its result kept and judged at once (the verdict and `mcp_verdict`
    /// change now) and with every poll that follows.
    pub fn conformance(&self, target: &str, report: &ConformanceReport, started_unix_seconds: f64) {
        let result = super::conformance::result_of(report, started_unix_seconds);
        self.conformance.record(target, &result);
        if let Some(verdict) = self.status.set_conformance(target, Some(result)) {
            self.metrics.set_verdict(target, &verdict);
            self.levels.observe(target, &verdict);
        }
    }

    /// Forget a target's conformance results (conformance turned off, the
    /// target changed or was removed).
    pub fn forget_conformance(&self, target: &str) {
        self.conformance.forget_target(target);
        if let Some(verdict) = self.status.set_conformance(target, None) {
            self.metrics.set_verdict(target, &verdict);
            self.levels.observe(target, &verdict);
        }
    }

    /// Every stage.
    pub fn fanout(&self) -> Fanout<'_> {
        Fanout {
            kept: Some(self),
            metrics: Some(&self.metrics),
        }
    }
}

/// The stages one report passes, in order; a missing stage is skipped.
pub struct Fanout<'a> {
    /// The scheduler's sinks: baselines, spans, the status store (and the
    /// kept history the verdict is judged against), verdict levels, the
    /// exporter's own counters. `None` for `/probe` and the command line:
    /// a probe keeps nothing and is not the target's scheduled state.
    kept: Option<&'a Sinks>,
    /// The report's metrics: the scheduler's, a `/probe` answer's fresh
    /// registry, or none (a verdict alone).
    metrics: Option<&'a TargetMetrics>,
}

impl Fanout<'_> {
    /// Only metrics, into `metrics`: what `/probe` answers from.
    pub fn metrics_only(metrics: &TargetMetrics) -> Fanout<'_> {
        Fanout {
            kept: None,
            metrics: Some(metrics),
        }
    }

    /// No stage at all: the verdict of the report alone, as `/probe?debug`
    /// and `mcp-exporter probe` show it.
    pub fn verdict_only() -> Fanout<'static> {
        Fanout {
            kept: None,
            metrics: None,
        }
    }

    /// A scheduled poll (or a `/probe` poll). `consecutive_failures`
    /// includes this poll.
    /// Returns the verdict, for callers that show it (`/probe?debug=true`).
    pub fn poll(
        &self,
        report: PollReport,
        target: &TargetConfig,
        consecutive_failures: u32,
    ) -> (PolledTarget, TargetVerdict) {
        let polled = self.compare(report, target);
        let verdict = self.judge(&polled, target, false);
        if let Some(metrics) = self.metrics {
            metrics.observe(&polled, &target.expect.items);
            metrics.set_verdict(&polled.report.target, &verdict);
        }
        if let Some(sinks) = self.kept {
            sinks.levels.observe(&polled.report.target, &verdict);
            sinks.traces.export_poll(&polled);
            sinks
                .exporter
                .set_spans_dropped_total(sinks.traces.dropped_spans());
            sinks.status.record(&polled, consecutive_failures);
        }
        (polled, verdict)
    }

    /// A watch-mode re-list: only the re-listed kinds change; no poll
    /// duration, `up` from every kind, the failure count untouched. Not
    /// traced (it belongs to no scheduled poll's trace).
    pub fn relist(&self, relist: RelistReport, target: &TargetConfig) {
        let up = relist.up;
        let polled = self.compare(relist.report, target);
        let verdict = self.judge(&polled, target, true);
        if let Some(metrics) = self.metrics {
            metrics.observe_relist(&polled, up);
            metrics.set_verdict(&polled.report.target, &verdict);
        }
        if let Some(sinks) = self.kept {
            sinks.levels.observe(&polled.report.target, &verdict);
            sinks.status.record_relist(&polled, up);
        }
    }

    /// The verdict, judged once per report: against the target's kept
    /// history when there is a status store, else on this report alone
    /// (without a history, events count only in the poll that saw them).
    fn judge(&self, polled: &PolledTarget, target: &TargetConfig, partial: bool) -> TargetVerdict {
        let sizes = match self.kept {
            Some(s) => reference_sizes(&lock(&s.baselines), polled),
            None => ReferenceSizes::new(),
        };
        let obs = observation(
            polled,
            &target.expect.items,
            target.expect.page_latency,
            &sizes,
        );
        let kept = self.kept.and_then(|s| {
            s.status
                .judge(&obs, &polled.report.target, s.event_window, partial)
        });
        kept.unwrap_or_else(|| judge_alone(&obs))
    }

    fn compare(&self, report: PollReport, target: &TargetConfig) -> PolledTarget {
        let Some(sinks) = self.kept else {
            return PolledTarget::without_baseline(report);
        };
        let (polled, write) = {
            let mut store = lock(&sinks.baselines);
            baseline::compare(&mut store, report, &target.reference, unix_now())
        };
        // Written after the lock is released: other targets' polls need not
        // wait for this disk sync.
        if let Some(write) = write {
            if let Err(error) = write.and_then(PendingWrite::run) {
                BaselineWriteFailed {
                    target: &polled.report.target,
                    error: &error,
                }
                .emit(&sinks.exporter);
            }
        }
        polled
    }
}

/// The baselines. A panic elsewhere while holding the lock leaves the store
/// usable (each update is a whole insert), so recover.
fn lock(baselines: &Mutex<BaselineStore>) -> MutexGuard<'_, BaselineStore> {
    baselines.lock().unwrap_or_else(|p| p.into_inner())
}
