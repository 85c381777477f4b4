//! The one fan-out: baseline diff first (so every sink sees the same diff),
//! then the verdict (judged once, against the status store's kept history),
//! then metrics, spans and the status store. The scheduler runs every stage;
//! `/probe` runs the same code with only a fresh registry's metrics.

use super::level_watch::LevelWatch;
use super::status::StatusStore;
use super::verdict::{observation, reference_sizes, ReferenceSizes};
use crate::baseline::{self, BaselineStore, PendingWrite, PolledTarget};
use crate::config::TargetConfig;
use crate::poll::{unix_now, PollReport, RelistReport};
use crate::telemetry::metrics::{
    ConformanceMetrics, DiscoveryMetrics, ExporterMetrics, TargetMetrics,
};
use crate::telemetry::spans::TraceSink;
use crate::verdict::{CatalogueHistory, TargetVerdict};
use mcp_conformance::ConformanceReport;
use std::sync::Mutex;
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
            baselines: Some(&self.baselines),
            metrics: &self.metrics,
            traces: Some((&self.traces, &self.exporter)),
            status: Some(&self.status),
            levels: Some(&self.levels),
            event_window: self.event_window,
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
    /// Verdict levels of scheduled polls, to log their changes; `None` for
    /// `/probe` (a probe is not the target's scheduled state).
    pub levels: Option<&'a LevelWatch>,
    /// Without a status store a verdict has no history: events count only
    /// in the poll that saw them.
    pub event_window: Duration,
}

impl Fanout<'_> {
    /// Only metrics: what `/probe` answers from.
    pub fn metrics_only(metrics: &TargetMetrics) -> Fanout<'_> {
        Fanout {
            baselines: None,
            metrics,
            traces: None,
            status: None,
            levels: None,
            event_window: crate::verdict::DEFAULT_EVENT_WINDOW,
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
        self.metrics.observe(&polled, &target.expect);
        self.metrics.set_verdict(&polled.report.target, &verdict);
        if let Some(levels) = self.levels {
            levels.observe(&polled.report.target, &verdict);
        }
        if let Some((traces, exporter)) = self.traces {
            traces.export_poll(&polled);
            exporter.set_spans_dropped_total(traces.dropped_spans());
        }
        if let Some(status) = self.status {
            status.record(&polled, consecutive_failures);
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
        self.metrics.observe_relist(&polled, up);
        self.metrics.set_verdict(&polled.report.target, &verdict);
        if let Some(levels) = self.levels {
            levels.observe(&polled.report.target, &verdict);
        }
        if let Some(status) = self.status {
            status.record_relist(&polled, up);
        }
    }

    /// The verdict, judged once per report: against the target's kept
    /// history when there is a status store, else on this report alone.
    fn judge(&self, polled: &PolledTarget, target: &TargetConfig, partial: bool) -> TargetVerdict {
        let sizes = match self.baselines {
            Some(b) => reference_sizes(&b.lock().unwrap_or_else(|p| p.into_inner()), polled),
            None => ReferenceSizes::new(),
        };
        let obs = observation(polled, &target.expect, target.expect_page_latency, &sizes);
        let kept = self
            .status
            .and_then(|s| s.judge(&obs, &polled.report.target, self.event_window, partial));
        match kept {
            Some(v) => v,
            None => CatalogueHistory::default()
                .observe(&obs, self.event_window, false)
                .clone(),
        }
    }

    fn compare(&self, report: PollReport, target: &TargetConfig) -> PolledTarget {
        let Some(baselines) = self.baselines else {
            return PolledTarget::without_baseline(report);
        };
        // A panic elsewhere while holding the lock leaves the store usable
        // (each update is a whole insert), so recover.
        let (polled, write) = {
            let mut store = baselines.lock().unwrap_or_else(|p| p.into_inner());
            baseline::compare(&mut store, report, &target.reference, unix_now())
        };
        // Written after the lock is released: other targets' polls need not
        // wait for this disk sync.
        if let Some(write) = write {
            if let Err(e) = write.and_then(PendingWrite::run) {
                tracing::warn!(target_name = %polled.report.target, error = %e, "could not persist baselines");
            }
        }
        polled
    }
}
