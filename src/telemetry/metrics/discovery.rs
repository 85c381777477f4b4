//! The discovery sources themselves (`mcp_discovery_*`) and the one series
//! per discovered target that carries its group's labels,
//! `mcp_target_info{target,source,...labels}` (so `group_left` joins work
//! without an extra label on every other series). Registered on its own:
//! sources refresh on their own schedule, not with polls.

use super::families::{saturating_i64, CounterFamily, FloatGaugeFamily, GaugeFamily, Source};
use super::labels::{AttemptOutcome, EnumLabel, ValueLabels};
use super::series::{lock, KeptLabels, Registrar, Series};
use crate::discovery::{Refresh, RefreshFailure, RefreshOutcome, SkipList, SkipReason};
use prometheus_client::encoding::{EncodeLabel, EncodeLabelSet, LabelSetEncoder};
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::registry::{Registry, Unit};
use std::collections::BTreeMap;
use std::sync::{Mutex, MutexGuard};

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub(crate) struct SourceLabels {
    pub source: String,
}

/// A source and a refresh's `outcome`.
pub(crate) type SourceOutcomeLabels = ValueLabels<SourceLabels, AttemptOutcome>;

/// A source and why: a refresh failure's reason or an entry's skip reason.
#[derive(Clone, Debug, Hash, PartialEq, Eq)]
pub(crate) struct SourceReasonLabels<R> {
    pub source: String,
    pub reason: R,
}

impl<R: std::fmt::Display + Copy> EncodeLabelSet for SourceReasonLabels<R> {
    fn encode(&self, encoder: &mut LabelSetEncoder<'_>) -> std::fmt::Result {
        ("source", self.source.as_str()).encode(encoder.encode_label())?;
        ("reason", EnumLabel(self.reason)).encode(encoder.encode_label())
    }
}

/// `target`, `source`, then the target's labels by name.
type InfoLabels = Vec<(String, String)>;

#[derive(Debug)]
pub struct DiscoveryMetrics {
    targets: GaugeFamily<SourceLabels>,
    refreshes: CounterFamily<SourceOutcomeLabels>,
    failures: CounterFamily<SourceReasonLabels<RefreshFailure>>,
    skipped: GaugeFamily<SourceReasonLabels<SkipReason>>,
    last_success: FloatGaugeFamily<SourceLabels>,
    duration: FloatGaugeFamily<SourceLabels>,
    consecutive_failures: GaugeFamily<SourceLabels>,
    registry_pages: GaugeFamily<SourceLabels>,
    registry_items: GaugeFamily<SourceLabels>,
    target_info: Family<InfoLabels, Gauge>,
    /// Series with a reason (skips, failures) per source, and each
    /// target's info labels: what `forget_*` must remove. Updates run
    /// under this lock.
    kept: Mutex<Kept>,
}

#[derive(Debug, Default)]
struct Kept {
    skipped: KeptLabels<String, SourceReasonLabels<SkipReason>>,
    failures: KeptLabels<String, SourceReasonLabels<RefreshFailure>>,
    info: KeptLabels<String, InfoLabels>,
}

impl DiscoveryMetrics {
    pub fn register(registry: &mut Registry) -> Self {
        let mut r = Registrar::new(registry, Source::Scheduled);
        DiscoveryMetrics {
            targets: r.family(
                "mcp_discovery_targets",
                "Targets the discovery source yields now (its last good list, names checked against static targets and earlier sources)",
            )
            .new_plain(),
            refreshes: r.family(
                "mcp_discovery_refreshes",
                "Refreshes of the discovery source by outcome: complete, aborted (a guard stopped a registry walk) or error",
            )
            .new_plain(),
            failures: r.family(
                "mcp_discovery_refresh_failures",
                "Refreshes of the discovery source that did not complete, by reason: the walk's guard (cursor_cycle, page_cap, ...) or error (timeout, malformed_result, unreadable, too_many_targets, ...)",
            )
            .new_plain(),
            skipped: r.family(
                "mcp_discovery_skipped_entries",
                "Entries of the discovery source's list in force that are not targets, by reason",
            )
            .new_plain(),
            last_success: r.family(
                "mcp_discovery_last_success_timestamp",
                "Unix time of the discovery source's last complete refresh; absent before the first",
            )
            .unit(Unit::Seconds)
            .new_plain(),
            duration: r.family(
                "mcp_discovery_refresh_duration",
                "How long the discovery source's last refresh took (a registry: its whole walk)",
            )
            .unit(Unit::Seconds)
            .new_plain(),
            consecutive_failures: r.family(
                "mcp_discovery_consecutive_failures",
                "Refreshes of the discovery source that failed in a row (0 after a complete one); its last good list stays in force meanwhile",
            )
            .new_plain(),
            registry_pages: r.family(
                "mcp_discovery_registry_pages",
                "Pages of the registry source's last walk (its final attempt)",
            )
            .new_plain(),
            registry_items: r.family(
                "mcp_discovery_registry_items",
                "Unique entries the registry source's last walk listed, targets or not",
            )
            .new_plain(),
            target_info: r.family(
                "mcp_target_info",
                "Constant 1 per discovered target: its source and its labels (the source's labels, then its group's), for group_left joins",
            )
            .new_plain(),
            kept: Mutex::default(),
        }
    }

    /// Pre-create a source's series at 0: its targets, its refreshes by
    /// outcome and its failure streak.
    pub fn register_source(&self, source: &str) {
        let _kept = self.lock();
        let s = labels(source);
        self.targets.create(&s);
        self.consecutive_failures.create(&s);
        self.refreshes.create(&s);
    }

    /// Drop every series of a source removed by a reload.
    pub fn forget_source(&self, source: &str) {
        let mut kept = self.lock();
        let s = labels(source);
        for family in [
            &self.targets,
            &self.consecutive_failures,
            &self.registry_pages,
            &self.registry_items,
        ] {
            family.remove(&s);
        }
        self.last_success.remove(&s);
        self.duration.remove(&s);
        Series::remove(&self.refreshes, &s);
        kept.skipped.forget(source, &self.skipped);
        kept.failures.forget(source, &self.failures);
    }

    /// One refresh; `consecutive_failures` counts it.
    pub fn record(&self, source: &str, refresh: &Refresh, consecutive_failures: u32) {
        let mut kept = self.lock();
        let s = labels(source);
        self.refreshes
            .get_or_create(&ValueLabels::new(&s, attempt_outcome(refresh.outcome)))
            .inc();
        self.duration
            .get_or_create(&s)
            .set(refresh.duration.as_secs_f64());
        self.consecutive_failures
            .get_or_create(&s)
            .set(i64::from(consecutive_failures));
        match refresh.outcome.failure() {
            None => {
                let now = crate::poll::unix_now();
                self.last_success.get_or_create(&s).set(now);
            }
            Some(reason) => {
                let l = SourceReasonLabels {
                    source: source.to_string(),
                    reason,
                };
                self.failures.get_or_create(&l).inc();
                kept.failures.add(source.to_string(), l);
            }
        }
        if let Some(walk) = refresh.walk {
            self.registry_pages
                .get_or_create(&s)
                .set(i64::from(walk.pages));
            self.registry_items
                .get_or_create(&s)
                .set(saturating_i64(walk.items));
        }
    }

    /// Targets the source yields now and the entries it leaves out.
    pub fn set_yield(&self, source: &str, targets: usize, skipped: &SkipList) {
        let mut kept = self.lock();
        self.targets
            .get_or_create(&labels(source))
            .set(saturating_i64(targets as u64));
        let now = skipped
            .counts
            .iter()
            .map(|(reason, n)| {
                let l = SourceReasonLabels {
                    source: source.to_string(),
                    reason: *reason,
                };
                self.skipped.get_or_create(&l).set(saturating_i64(*n));
                l
            })
            .collect();
        kept.skipped.replace(source.to_string(), now, &self.skipped);
    }

    /// `mcp_target_info` of a discovered target (replacing an earlier one).
    pub fn set_target_info(&self, target: &str, source: &str, extra: &BTreeMap<String, String>) {
        let mut kept = self.lock();
        let mut info: InfoLabels = vec![
            ("target".to_string(), target.to_string()),
            ("source".to_string(), source.to_string()),
        ];
        info.extend(extra.iter().map(|(k, v)| (k.clone(), v.clone())));
        self.target_info.get_or_create(&info).set(1);
        kept.info
            .replace(target.to_string(), vec![info], &self.target_info);
    }

    /// Drop the target's `mcp_target_info` (it left, or is static now).
    pub fn forget_target(&self, target: &str) {
        self.lock().info.forget(target, &self.target_info);
    }

    fn lock(&self) -> MutexGuard<'_, Kept> {
        lock(&self.kept)
    }
}

fn labels(source: &str) -> SourceLabels {
    SourceLabels {
        source: source.to_string(),
    }
}

/// A refresh ends as a listing attempt does: a guard's stop is `aborted`.
fn attempt_outcome(outcome: RefreshOutcome) -> AttemptOutcome {
    match outcome {
        RefreshOutcome::Complete => AttemptOutcome::Complete,
        RefreshOutcome::Failed(RefreshFailure::Guard(_)) => AttemptOutcome::Aborted,
        RefreshOutcome::Failed(_) => AttemptOutcome::Error,
    }
}
