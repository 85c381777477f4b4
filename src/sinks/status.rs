//! Recent polls per target for `/api/targets` and the status page. Bounded:
//! the latest poll keeps its names, older ones only their summaries.

use crate::baseline::{KindDiff, PolledTarget};
use crate::poll::{unix_now, unix_seconds, TraceId};
use crate::verdict::history::Observation;
use crate::verdict::{CatalogueHistory, ConformanceResult, TargetVerdict};
use mcp_listing::{EndReason, Kind, TransportKind};
use serde::Serialize;
use std::collections::{BTreeMap, HashMap, VecDeque};
use std::sync::{Arc, RwLock};
use std::time::Duration;

/// Per kind, what a person asks first about one poll.
#[derive(Debug, Clone, Serialize)]
pub struct KindSummary {
    pub kind: Kind,
    pub outcome: &'static str,
    pub reason: Option<EndReason>,
    pub detail: Option<String>,
    pub pages: u32,
    pub requests: u32,
    pub raw_items: u64,
    pub unique_items: u64,
    pub duplicate_items: u64,
    pub invalid_cursor_errors: u32,
    pub restarts: usize,
    pub added: Vec<String>,
    pub removed: Vec<String>,
    pub silent_shrink: bool,
    /// Items whose content changed since the previous complete listing
    /// (all counted; the first few named, each classified).
    pub changed_items: u64,
    pub changed: Vec<mcp_listing::fingerprint::ItemChange>,
    /// Against the union of two or more references' renamed names.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reference_union: Option<crate::baseline::ReferenceUnion>,
    /// Per page: items, milliseconds, next cursor state or error.
    pub page_detail: Vec<PageSummary>,
}

#[derive(Debug, Clone, Serialize)]
pub struct PageSummary {
    pub index: u32,
    pub attempt: u32,
    pub items: u32,
    pub new_items: u32,
    pub ms: f64,
    pub next: String,
}

/// Names removed/added are capped so one churny poll cannot bloat memory.
const MAX_NAMES_KEPT: usize = 200;

#[derive(Debug, Clone, Serialize)]
pub struct PollSummary {
    pub started_unix_seconds: f64,
    pub duration_seconds: f64,
    pub up: bool,
    pub protocol_version: Option<String>,
    pub transport: TransportKind,
    pub time_to_ready_seconds: Option<f64>,
    pub session_error: Option<String>,
    pub trace_id: Option<TraceId>,
    /// The longest `Retry-After` an HTTP 429 asked for in this poll; the
    /// scheduler waits at least this long (capped at `backoff_max`).
    pub retry_after_seconds: Option<f64>,
    /// With `protocols:`, every version's catalogue and what it lacks.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub protocols: Vec<crate::poll::ProtocolCatalogue>,
    pub kinds: Vec<KindSummary>,
}

impl PollSummary {
    /// `up` is the target's state after this poll: for a poll its own
    /// completeness, for a watch re-list that of every kind.
    pub fn from_polled(p: &PolledTarget, up: bool) -> PollSummary {
        let r = &p.report;
        let empty = KindDiff::default();
        PollSummary {
            started_unix_seconds: unix_seconds(r.started),
            duration_seconds: r.duration.as_secs_f64(),
            up,
            protocol_version: r.protocol_version.clone(),
            transport: r.transport,
            time_to_ready_seconds: r.time_to_ready.map(|d| d.as_secs_f64()),
            session_error: r.session_error.as_ref().map(ToString::to_string),
            trace_id: r.trace_id,
            retry_after_seconds: r.retry_after().map(|d| d.as_secs_f64()),
            protocols: r.protocol_catalogues.clone(),
            kinds: r
                .listings
                .iter()
                .map(|l| {
                    let diff = p.diffs.get(&l.kind).unwrap_or(&empty);
                    KindSummary {
                        kind: l.kind,
                        outcome: l.outcome.label(),
                        reason: l.reason,
                        detail: l.detail.clone(),
                        pages: l.final_pages,
                        requests: l.requests(),
                        raw_items: l.raw_items,
                        unique_items: l.unique_items,
                        duplicate_items: l.duplicate_items,
                        invalid_cursor_errors: l.invalid_cursor_errors,
                        restarts: l.restarts.len(),
                        added: diff.added.iter().take(MAX_NAMES_KEPT).cloned().collect(),
                        removed: diff.removed.iter().take(MAX_NAMES_KEPT).cloned().collect(),
                        silent_shrink: diff.silent_shrink,
                        changed_items: diff.changed_items,
                        changed: diff.changed.clone(),
                        reference_union: p.reference_union.get(&l.kind).cloned(),
                        page_detail: l
                            .pages
                            .iter()
                            .take(1000)
                            .map(|pg| PageSummary {
                                index: pg.index,
                                attempt: pg.attempt,
                                items: pg.items,
                                new_items: pg.new_items,
                                ms: pg.duration.as_secs_f64() * 1000.0,
                                next: pg.error.map_or_else(
                                    || pg.next_cursor.display(),
                                    |e| e.label().to_string(),
                                ),
                            })
                            .collect(),
                    }
                })
                .collect(),
        }
    }
}

/// A configured or discovered target as the status store lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TargetDescription {
    pub name: String,
    /// Host (never path, query or credentials) and transport, or the command.
    pub endpoint: String,
    pub schedule: String,
    /// The discovery source that yields it; `None` for `targets:` entries.
    pub source: Option<String>,
}

/// What the status page shows for one target.
#[derive(Debug, Clone, Serialize)]
pub struct TargetStatus {
    pub name: String,
    pub endpoint: String,
    pub schedule: String,
    /// The discovery source that yields it; `null` for `targets:` entries.
    pub source: Option<String>,
    pub server_name: Option<String>,
    pub server_version: Option<String>,
    pub polls: u64,
    pub skipped_polls: u64,
    pub consecutive_failures: u32,
    pub next_poll_unix_seconds: Option<f64>,
    /// Newest first.
    pub history: VecDeque<PollSummary>,
    /// Unique items per kind over recent polls (oldest first), for trends.
    pub trend: BTreeMap<Kind, VecDeque<u64>>,
    /// The stdio server's stderr tail from the latest poll (redacted).
    pub stderr_tail: Option<String>,
    /// Chart points, change log, failures and the verdict (bounded; the
    /// API shows them in its own shape, docs/api.md).
    #[serde(skip)]
    pub catalogue: CatalogueHistory,
}

/// Shared between the poller (writer) and the web server (reader).
#[derive(Debug, Clone, Default)]
pub struct StatusStore {
    inner: Arc<RwLock<HashMap<String, TargetStatus>>>,
    history: usize,
}

impl StatusStore {
    pub fn new(history: usize) -> StatusStore {
        StatusStore {
            inner: Arc::default(),
            history: history.max(1),
        }
    }

    /// Make the set of targets match a (re)loaded config and what the
    /// discovery sources yield now.
    pub fn set_targets(&self, targets: &[TargetDescription]) {
        let mut map = self.write();
        let names: std::collections::HashSet<&str> =
            targets.iter().map(|t| t.name.as_str()).collect();
        map.retain(|name, _| names.contains(name.as_str()));
        for t in targets {
            let entry = map.entry(t.name.clone()).or_insert_with(|| TargetStatus {
                name: t.name.clone(),
                endpoint: String::new(),
                schedule: String::new(),
                source: None,
                server_name: None,
                server_version: None,
                polls: 0,
                skipped_polls: 0,
                consecutive_failures: 0,
                next_poll_unix_seconds: None,
                history: VecDeque::new(),
                trend: BTreeMap::new(),
                stderr_tail: None,
                catalogue: CatalogueHistory::default(),
            });
            entry.endpoint = t.endpoint.clone();
            entry.schedule = t.schedule.clone();
            entry.source = t.source.clone();
        }
    }

    /// Judge a poll (or, `partial`, a watch re-list) against the target's
    /// kept history and keep the result; `None` for an unknown target.
    pub fn judge(
        &self,
        observation: &Observation<'_>,
        target: &str,
        event_window: Duration,
        partial: bool,
    ) -> Option<TargetVerdict> {
        let mut map = self.write();
        let status = map.get_mut(target)?;
        Some(
            status
                .catalogue
                .observe(observation, event_window, partial)
                .clone(),
        )
    }

    /// A scheduled poll; `consecutive_failures` includes it.
    pub fn record(&self, polled: &PolledTarget, consecutive_failures: u32) {
        let summary = PollSummary::from_polled(polled, polled.report.all_complete());
        let mut map = self.write();
        let Some(status) = map.get_mut(&polled.report.target) else {
            return;
        };
        status.consecutive_failures = consecutive_failures;
        status.stderr_tail = polled.report.stderr_tail.clone();
        self.push(status, polled, summary);
    }

    /// A watch-mode re-list: a history entry and the re-listed kinds'
    /// trends; the failure count and stderr tail belong to the last poll.
    pub fn record_relist(&self, polled: &PolledTarget, up: bool) {
        let summary = PollSummary::from_polled(polled, up);
        let mut map = self.write();
        if let Some(status) = map.get_mut(&polled.report.target) {
            self.push(status, polled, summary);
        }
    }

    fn push(&self, status: &mut TargetStatus, polled: &PolledTarget, summary: PollSummary) {
        status.polls += 1;
        if let Some(s) = &polled.report.server {
            status.server_name = Some(s.name.clone());
            status.server_version = Some(s.version.clone());
        }
        for l in &polled.report.listings {
            if l.outcome.is_complete() {
                let t = status.trend.entry(l.kind).or_default();
                t.push_back(l.unique_items);
                while t.len() > 60 {
                    t.pop_front();
                }
            }
        }
        status.history.push_front(summary);
        status.history.truncate(self.history);
    }

    /// Keep a conformance run's result (`None`: forget it); it is judged at
    /// once and with every poll that follows. Returns the target's verdict
    /// re-judged with it, if the target has one yet.
    pub fn set_conformance(
        &self,
        target: &str,
        result: Option<ConformanceResult>,
    ) -> Option<TargetVerdict> {
        self.write()
            .get_mut(target)?
            .catalogue
            .set_conformance(result, unix_now())
    }

    pub fn skipped(&self, target: &str, n: u64) {
        if let Some(s) = self.write().get_mut(target) {
            s.skipped_polls += n;
        }
    }

    /// When the target is polled next; `None` when its schedule never
    /// fires again (the API shows `null`, not a time gone by).
    pub fn next_poll(&self, target: &str, unix_seconds: Option<f64>) {
        if let Some(s) = self.write().get_mut(target) {
            s.next_poll_unix_seconds = unix_seconds;
        }
    }

    pub fn get(&self, target: &str) -> Option<TargetStatus> {
        self.read().get(target).cloned()
    }

    /// Every target, sorted by name.
    pub fn all(&self) -> Vec<TargetStatus> {
        let mut v: Vec<TargetStatus> = self.read().values().cloned().collect();
        v.sort_by(|a, b| a.name.cmp(&b.name));
        v
    }

    fn write(&self) -> std::sync::RwLockWriteGuard<'_, HashMap<String, TargetStatus>> {
        match self.inner.write() {
            Ok(g) => g,
            Err(p) => p.into_inner(),
        }
    }

    fn read(&self) -> std::sync::RwLockReadGuard<'_, HashMap<String, TargetStatus>> {
        match self.inner.read() {
            Ok(g) => g,
            Err(p) => p.into_inner(),
        }
    }
}
