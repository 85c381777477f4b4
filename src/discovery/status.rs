//! What is kept of each source between refreshes: its last good list (in
//! force until a refresh completes again — never drop a fleet because the
//! inventory hiccuped), how its last refresh went, and what it left out.
//! `/api/sources` and the status page show it as it is here.

use super::entry::Entry;
use super::entry::SkipList;
use super::fleet::DiscoveredFleet;
use super::refresh::{Refresh, SourceList, WalkStats};
use crate::config::{Config, SourceConfig};
use serde::Serialize;
use std::collections::HashMap;

/// How one refresh went, for people.
#[derive(Debug, Clone, Serialize)]
pub struct RefreshSummary {
    pub outcome: &'static str,
    /// The guard or error of a refresh that did not complete.
    pub reason: Option<&'static str>,
    pub detail: Option<String>,
    pub started_unix_seconds: f64,
    pub duration_seconds: f64,
    /// Entries the list held (before names and modules were checked
    /// against other sources).
    pub entries: usize,
    /// A registry walk's pages, requests and items.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub walk: Option<WalkStats>,
}

/// One source as `/api/sources` shows it.
#[derive(Debug, Clone, Serialize)]
pub struct SourceStatus {
    pub name: String,
    /// `file_sd`, `http_sd` or `registry`.
    pub kind: &'static str,
    pub module: String,
    pub refresh_interval_seconds: f64,
    pub refreshes: u64,
    /// `null` until the first refresh finished.
    pub last_refresh: Option<RefreshSummary>,
    pub last_success_unix_seconds: Option<f64>,
    pub consecutive_failures: u32,
    #[serde(flatten)]
    pub in_force: ListInForce,
}

/// A source's list in force: its last complete refresh's (kept while later
/// refreshes fail), and what the fleet step made of it.
#[derive(Debug, Clone, Default, Serialize)]
pub struct ListInForce {
    /// The last refresh failed and the list of an earlier one is in force.
    pub keeps_last_good_list: bool,
    /// Targets the source yields now (after names were checked against
    /// static targets and earlier sources).
    pub targets: usize,
    /// Entries left out of the list in force (by its refresh, then by
    /// the fleet step), each with its reason.
    pub skipped: SkipList,
    /// The list as its refresh made it.
    #[serde(skip)]
    pub list: SourceList,
}

impl SourceStatus {
    fn new(source: &SourceConfig) -> SourceStatus {
        SourceStatus {
            name: source.name.clone(),
            kind: source.kind.label(),
            module: source.module.clone(),
            refresh_interval_seconds: source.refresh_interval.as_secs_f64(),
            refreshes: 0,
            last_refresh: None,
            last_success_unix_seconds: None,
            consecutive_failures: 0,
            in_force: ListInForce::default(),
        }
    }
}

/// Every configured source, in `discovery:` order.
#[derive(Debug, Default)]
pub struct Sources {
    sources: Vec<SourceStatus>,
}

impl Sources {
    /// Match a (re)loaded configuration: new sources start empty, removed
    /// ones are forgotten, and a source that stays keeps its list in force
    /// until its first complete refresh under the new configuration (the
    /// list is bound to the new module at once).
    pub fn configure(&mut self, config: &Config) {
        let mut old: HashMap<String, SourceStatus> = self
            .sources
            .drain(..)
            .map(|s| (s.name.clone(), s))
            .collect();
        for source in &config.discovery {
            let mut status = old
                .remove(&source.name)
                .unwrap_or_else(|| SourceStatus::new(source));
            status.kind = source.kind.label();
            status.module = source.module.clone();
            status.refresh_interval_seconds = source.refresh_interval.as_secs_f64();
            self.sources.push(status);
        }
    }

    /// Take a refresh of `name`: a complete one replaces the list, any
    /// other leaves the list in force and says so. Returns whether the
    /// refresh left out other entries (by reason) than the list before.
    pub fn apply(&mut self, name: &str, refresh: &Refresh, now_unix_seconds: f64) -> bool {
        let Some(s) = self.sources.iter_mut().find(|s| s.name == name) else {
            return false;
        };
        s.refreshes += 1;
        s.last_refresh = Some(RefreshSummary {
            outcome: refresh.outcome.label(),
            reason: refresh.outcome.failure().map(|f| f.label()),
            detail: refresh.detail.clone(),
            started_unix_seconds: crate::poll::unix_seconds(refresh.started),
            duration_seconds: refresh.duration.as_secs_f64(),
            entries: refresh.list.entries.len() + refresh.list.skipped.total() as usize,
            walk: refresh.walk,
        });
        if refresh.outcome.failure().is_none() {
            let changed = s.in_force.list.skipped.counts != refresh.list.skipped.counts;
            s.in_force.list = refresh.list.clone();
            s.last_success_unix_seconds = Some(now_unix_seconds);
            s.consecutive_failures = 0;
            s.in_force.keeps_last_good_list = false;
            changed
        } else {
            s.consecutive_failures = s.consecutive_failures.saturating_add(1);
            s.in_force.keeps_last_good_list = s.last_success_unix_seconds.is_some();
            false
        }
    }

    /// Every source's list in force.
    pub fn lists(&self) -> HashMap<String, Vec<Entry>> {
        self.sources
            .iter()
            .map(|s| (s.name.clone(), s.in_force.list.entries.clone()))
            .collect()
    }

    /// What the fleet step made of the lists: targets per source and the
    /// entries it left out.
    pub fn set_fleet(&mut self, fleet: &DiscoveredFleet) {
        for s in &mut self.sources {
            let in_force = &mut s.in_force;
            in_force.targets = fleet.yielded.get(&s.name).copied().unwrap_or(0);
            let mut skipped = in_force.list.skipped.clone();
            if let Some(more) = fleet.skipped.get(&s.name) {
                skipped.extend(more);
            }
            in_force.skipped = skipped;
        }
    }

    pub fn get(&self, name: &str) -> Option<&SourceStatus> {
        self.sources.iter().find(|s| s.name == name)
    }

    /// Every source, in `discovery:` order.
    pub fn all(&self) -> &[SourceStatus] {
        &self.sources
    }
}
