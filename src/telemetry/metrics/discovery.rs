//! The discovery sources themselves (`mcp_discovery_*`) and the one series
//! per discovered target that carries its group's labels,
//! `mcp_target_info{target,source,...labels}` (so `group_left` joins work
//! without an extra label on every other series). Registered on its own:
//! sources refresh on their own schedule, not with polls.

use super::families::{saturating_i64, CounterFamily, FloatGaugeFamily, GaugeFamily};
use crate::discovery::{Refresh, SkipList};
use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::registry::{Registry, Unit};
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::{Mutex, MutexGuard};

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub(crate) struct SourceLabels {
    pub source: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub(crate) struct SourceOutcomeLabels {
    pub source: String,
    pub outcome: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, PartialOrd, Ord, EncodeLabelSet)]
pub(crate) struct SourceReasonLabels {
    pub source: String,
    pub reason: &'static str,
}

/// `target`, `source`, then the target's labels by name.
type InfoLabels = Vec<(String, String)>;

#[derive(Debug)]
pub struct DiscoveryMetrics {
    targets: GaugeFamily<SourceLabels>,
    refreshes: CounterFamily<SourceOutcomeLabels>,
    failures: CounterFamily<SourceReasonLabels>,
    skipped: GaugeFamily<SourceReasonLabels>,
    last_success: FloatGaugeFamily<SourceLabels>,
    duration: FloatGaugeFamily<SourceLabels>,
    consecutive_failures: GaugeFamily<SourceLabels>,
    registry_pages: GaugeFamily<SourceLabels>,
    registry_items: GaugeFamily<SourceLabels>,
    target_info: Family<InfoLabels, Gauge>,
    /// Series with a reason (skips, failures) per source, and each
    /// target's info labels: what `forget_*` must remove. Updates run
    /// under this lock.
    kept: Mutex<KeptSeries>,
}

#[derive(Debug, Default)]
struct KeptSeries {
    skipped: HashMap<String, BTreeSet<SourceReasonLabels>>,
    failures: HashMap<String, BTreeSet<SourceReasonLabels>>,
    info: HashMap<String, InfoLabels>,
}

impl DiscoveryMetrics {
    pub fn register(r: &mut Registry) -> Self {
        let m = DiscoveryMetrics {
            targets: Family::default(),
            refreshes: Family::default(),
            failures: Family::default(),
            skipped: Family::default(),
            last_success: Family::default(),
            duration: Family::default(),
            consecutive_failures: Family::default(),
            registry_pages: Family::default(),
            registry_items: Family::default(),
            target_info: Family::default(),
            kept: Mutex::new(KeptSeries::default()),
        };
        r.register(
            "mcp_discovery_targets",
            "Targets the discovery source yields now (its last good list, names checked against static targets and earlier sources)",
            m.targets.clone(),
        );
        r.register(
            "mcp_discovery_refreshes",
            "Refreshes of the discovery source by outcome: complete, aborted (a guard stopped a registry walk) or error",
            m.refreshes.clone(),
        );
        r.register(
            "mcp_discovery_refresh_failures",
            "Refreshes of the discovery source that did not complete, by reason: the walk's guard (cursor_cycle, page_cap, ...) or error (timeout, malformed_result, unreadable, too_many_targets, ...)",
            m.failures.clone(),
        );
        r.register(
            "mcp_discovery_skipped_entries",
            "Entries of the discovery source's list in force that are not targets, by reason",
            m.skipped.clone(),
        );
        r.register_with_unit(
            "mcp_discovery_last_success_timestamp",
            "Unix time of the discovery source's last complete refresh; absent before the first",
            Unit::Seconds,
            m.last_success.clone(),
        );
        r.register_with_unit(
            "mcp_discovery_refresh_duration",
            "How long the discovery source's last refresh took (a registry: its whole walk)",
            Unit::Seconds,
            m.duration.clone(),
        );
        r.register(
            "mcp_discovery_consecutive_failures",
            "Refreshes of the discovery source that failed in a row (0 after a complete one); its last good list stays in force meanwhile",
            m.consecutive_failures.clone(),
        );
        r.register(
            "mcp_discovery_registry_pages",
            "Pages of the registry source's last walk (its final attempt)",
            m.registry_pages.clone(),
        );
        r.register(
            "mcp_discovery_registry_items",
            "Unique entries the registry source's last walk listed, targets or not",
            m.registry_items.clone(),
        );
        r.register(
            "mcp_target_info",
            "Constant 1 per discovered target: its source and its labels (the source's labels, then its group's), for group_left joins",
            m.target_info.clone(),
        );
        m
    }

    /// Pre-create a source's series at 0: its targets, its refreshes by
    /// outcome and its failure streak.
    pub fn register_source(&self, source: &str) {
        let _kept = self.lock();
        let s = labels(source);
        drop(self.targets.get_or_create(&s));
        drop(self.consecutive_failures.get_or_create(&s));
        for outcome in crate::discovery::RefreshOutcome::LABELS {
            drop(self.refreshes.get_or_create(&SourceOutcomeLabels {
                source: source.to_string(),
                outcome,
            }));
        }
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
        for outcome in crate::discovery::RefreshOutcome::LABELS {
            self.refreshes.remove(&SourceOutcomeLabels {
                source: source.to_string(),
                outcome,
            });
        }
        for l in kept.skipped.remove(source).unwrap_or_default() {
            self.skipped.remove(&l);
        }
        for l in kept.failures.remove(source).unwrap_or_default() {
            self.failures.remove(&l);
        }
    }

    /// One refresh; `consecutive_failures` counts it.
    pub fn record(&self, source: &str, refresh: &Refresh, consecutive_failures: u32) {
        let mut kept = self.lock();
        let s = labels(source);
        self.refreshes
            .get_or_create(&SourceOutcomeLabels {
                source: source.to_string(),
                outcome: refresh.outcome.label(),
            })
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
            Some(failure) => {
                let l = SourceReasonLabels {
                    source: source.to_string(),
                    reason: failure.label(),
                };
                self.failures.get_or_create(&l).inc();
                kept.failures
                    .entry(source.to_string())
                    .or_default()
                    .insert(l);
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
        let now: BTreeSet<SourceReasonLabels> = skipped
            .counts
            .keys()
            .map(|reason| SourceReasonLabels {
                source: source.to_string(),
                reason: reason.label(),
            })
            .collect();
        let before = kept.skipped.remove(source).unwrap_or_default();
        for gone in before.difference(&now) {
            self.skipped.remove(gone);
        }
        for (reason, n) in &skipped.counts {
            self.skipped
                .get_or_create(&SourceReasonLabels {
                    source: source.to_string(),
                    reason: reason.label(),
                })
                .set(saturating_i64(*n));
        }
        kept.skipped.insert(source.to_string(), now);
    }

    /// `mcp_target_info` of a discovered target (replacing an earlier one).
    pub fn set_target_info(&self, target: &str, source: &str, extra: &BTreeMap<String, String>) {
        let mut kept = self.lock();
        let mut info: InfoLabels = vec![
            ("target".to_string(), target.to_string()),
            ("source".to_string(), source.to_string()),
        ];
        info.extend(extra.iter().map(|(k, v)| (k.clone(), v.clone())));
        if let Some(old) = kept.info.insert(target.to_string(), info.clone()) {
            if old != info {
                self.target_info.remove(&old);
            }
        }
        self.target_info.get_or_create(&info).set(1);
    }

    /// Drop the target's `mcp_target_info` (it left, or is static now).
    pub fn forget_target(&self, target: &str) {
        let mut kept = self.lock();
        if let Some(old) = kept.info.remove(target) {
            self.target_info.remove(&old);
        }
    }

    fn lock(&self) -> MutexGuard<'_, KeptSeries> {
        // Each update is a whole insert or remove: usable after a panic.
        self.kept.lock().unwrap_or_else(|p| p.into_inner())
    }
}

fn labels(source: &str) -> SourceLabels {
    SourceLabels {
        source: source.to_string(),
    }
}
