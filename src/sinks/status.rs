//! Recent polls per target for `/api/targets` and the status page. Bounded:
//! the latest poll keeps its names, older ones only their summaries.

use super::trend::Trend;
use crate::baseline::{KindDiff, PolledTarget};
use crate::poll::{unix_now, unix_seconds, TraceId};
use crate::verdict::history::{capped_names, Observation};
use crate::verdict::{CatalogueHistory, ConformanceResult, TargetVerdict};
use mcp_listing::{EndReason, Kind, Outcome, TransportKind};
use serde::Serialize;
use std::collections::{BTreeMap, HashMap, VecDeque};
use std::sync::{Arc, RwLock};
use std::time::Duration;

/// Per kind, what a person asks first about one poll. Every recent poll
/// of every target keeps one per kind, so the lists (names, changed items,
/// page records) sit behind one box, absent when they are all empty; only
/// the latest poll keeps its page records ([`StatusStore`]), and older
/// polls whose kinds read the same share one copy. The API shows every
/// field whatever the box holds (docs/api.md).
#[derive(Debug, Clone, PartialEq)]
pub struct KindSummary {
    pub kind: Kind,
    pub outcome: Outcome,
    pub reason: Option<EndReason>,
    pub detail: Option<Box<str>>,
    pub pages: u32,
    pub requests: u32,
    pub raw_items: u64,
    pub unique_items: u64,
    pub duplicate_items: u64,
    pub invalid_cursor_errors: u32,
    pub restarts: u32,
    pub silent_shrink: bool,
    /// Items whose content changed since the previous complete listing
    /// (all counted; the first few named in `changed()`, each classified).
    pub changed_items: u64,
    lists: Option<Box<KindLists>>,
}

/// The lists of a [`KindSummary`]; mostly empty.
#[derive(Debug, Clone, Default, PartialEq)]
struct KindLists {
    /// Names added and removed since the previous complete listing, the
    /// first 200 within 8 KiB each (`capped_names`): one churning poll
    /// cannot bloat memory.
    added: Vec<String>,
    removed: Vec<String>,
    changed: Vec<mcp_listing::fingerprint::ItemChange>,
    /// Against the union of two or more references' renamed names.
    reference_union: Option<crate::baseline::ReferenceUnion>,
    /// Per page: items, milliseconds, next cursor state or error.
    page_detail: Vec<PageSummary>,
}

impl KindLists {
    fn is_empty(&self) -> bool {
        self.added.is_empty()
            && self.removed.is_empty()
            && self.changed.is_empty()
            && self.reference_union.is_none()
            && self.page_detail.is_empty()
    }
}

impl KindSummary {
    pub fn added(&self) -> &[String] {
        self.lists.as_ref().map_or(&[], |l| &l.added)
    }
    pub fn removed(&self) -> &[String] {
        self.lists.as_ref().map_or(&[], |l| &l.removed)
    }
    pub fn changed(&self) -> &[mcp_listing::fingerprint::ItemChange] {
        self.lists.as_ref().map_or(&[], |l| &l.changed)
    }
    pub fn reference_union(&self) -> Option<&crate::baseline::ReferenceUnion> {
        self.lists.as_ref().and_then(|l| l.reference_union.as_ref())
    }
    /// The latest poll's pages; empty for older polls.
    pub fn page_detail(&self) -> &[PageSummary] {
        self.lists.as_ref().map_or(&[], |l| &l.page_detail)
    }

    /// The counts and names without the page records, for a poll that is
    /// no longer the latest.
    fn without_pages(&self) -> KindSummary {
        let mut k = self.clone();
        if let Some(l) = &mut k.lists {
            l.page_detail = Vec::new();
            if l.is_empty() {
                k.lists = None;
            }
        }
        k
    }
}

/// `st.serialize_field("name", &self.name)?` for each field named: the
/// key is the field's name, so the two cannot drift apart.
macro_rules! serialize_fields {
    ($st:ident, $self:ident: $($field:ident),+) => {
        $($st.serialize_field(stringify!($field), &$self.$field)?;)+
    };
}

impl Serialize for KindSummary {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let union = self.reference_union();
        let mut st = s.serialize_struct("KindSummary", 17 + usize::from(union.is_some()))?;
        serialize_fields!(st, self: kind);
        st.serialize_field("outcome", self.outcome.label())?;
        serialize_fields!(st, self: reason, detail, pages, requests, raw_items, unique_items,
            duplicate_items, invalid_cursor_errors, restarts);
        st.serialize_field("added", self.added())?;
        st.serialize_field("removed", self.removed())?;
        serialize_fields!(st, self: silent_shrink, changed_items);
        st.serialize_field("changed", self.changed())?;
        if let Some(u) = union {
            st.serialize_field("reference_union", u)?;
        }
        st.serialize_field("page_detail", self.page_detail())?;
        st.end()
    }
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PageSummary {
    pub index: u32,
    pub attempt: u32,
    pub items: u32,
    pub new_items: u32,
    pub ms: f64,
    pub next: String,
}

/// Page records kept for the latest poll, per kind.
const MAX_PAGES_KEPT: usize = 1000;

/// One recent poll. Every target keeps `web.history` of them, so what few
/// polls have (a failed session, a 429's wait, `protocols:` catalogues)
/// sits behind one box, absent on an ordinary poll.
#[derive(Debug, Clone)]
pub struct PollSummary {
    pub started_unix_seconds: f64,
    pub duration_seconds: f64,
    pub up: bool,
    /// Shared with the poll before when the same.
    pub protocol_version: Option<Arc<str>>,
    pub transport: TransportKind,
    pub time_to_ready_seconds: Option<f64>,
    pub trace_id: Option<TraceId>,
    rare: Option<Box<RareParts>>,
    /// One copy shared by consecutive older polls that read the same (a
    /// stable catalogue's are all alike but for their timings).
    pub kinds: Arc<[KindSummary]>,
}

/// The parts of a [`PollSummary`] most polls do not have.
#[derive(Debug, Clone, Default)]
struct RareParts {
    session_error: Option<Box<str>>,
    /// The longest `Retry-After` an HTTP 429 asked for in this poll; the
    /// scheduler waits at least this long (capped at `backoff_max`).
    retry_after_seconds: Option<f64>,
    /// With `protocols:`, every version's catalogue and what it lacks.
    protocols: Vec<crate::poll::ProtocolCatalogue>,
}

impl PollSummary {
    /// `error_label: detail` when no session was established.
    pub fn session_error(&self) -> Option<&str> {
        self.rare.as_ref()?.session_error.as_deref()
    }

    /// The longest `Retry-After` an HTTP 429 asked for in this poll.
    pub fn retry_after_seconds(&self) -> Option<f64> {
        self.rare.as_ref()?.retry_after_seconds
    }

    /// With `protocols:`, every version's catalogue; empty without.
    pub fn protocols(&self) -> &[crate::poll::ProtocolCatalogue] {
        self.rare.as_ref().map_or(&[], |r| &r.protocols)
    }

    /// `up` is the target's state after this poll: for a poll its own
    /// completeness, for a watch re-list that of every kind.
    pub fn from_polled(p: &PolledTarget, up: bool) -> PollSummary {
        let r = &p.report;
        PollSummary {
            started_unix_seconds: unix_seconds(r.started),
            duration_seconds: r.duration.as_secs_f64(),
            up,
            protocol_version: r.protocol_version.as_deref().map(Arc::from),
            transport: r.transport,
            time_to_ready_seconds: r.time_to_ready.map(|d| d.as_secs_f64()),
            trace_id: r.trace_id,
            rare: RareParts {
                session_error: r
                    .session_error
                    .as_ref()
                    .map(|e| e.to_string().into_boxed_str()),
                retry_after_seconds: r.retry_after().map(|d| d.as_secs_f64()),
                protocols: r.protocol_catalogues.clone(),
            }
            .boxed_unless_empty(),
            kinds: r.listings.iter().map(|l| kind_summary(p, l)).collect(),
        }
    }
}

impl RareParts {
    fn boxed_unless_empty(self) -> Option<Box<RareParts>> {
        let empty = self.session_error.is_none()
            && self.retry_after_seconds.is_none()
            && self.protocols.is_empty();
        (!empty).then(|| Box::new(self))
    }
}

/// The API's shape (docs/api.md): every field at the top level, whatever
/// sits in the box; `protocols` only with `protocols:`.
impl Serialize for PollSummary {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let protocols = self.protocols();
        let mut st = s.serialize_struct("PollSummary", 10 + usize::from(!protocols.is_empty()))?;
        serialize_fields!(st, self: started_unix_seconds, duration_seconds, up, protocol_version,
            transport, time_to_ready_seconds);
        st.serialize_field("session_error", &self.session_error())?;
        serialize_fields!(st, self: trace_id);
        st.serialize_field("retry_after_seconds", &self.retry_after_seconds())?;
        if !protocols.is_empty() {
            st.serialize_field("protocols", protocols)?;
        }
        st.serialize_field("kinds", &*self.kinds)?;
        st.end()
    }
}

fn kind_summary(p: &PolledTarget, l: &mcp_listing::ListingReport) -> KindSummary {
    let empty = KindDiff::default();
    let diff = p.diffs.get(&l.kind).unwrap_or(&empty);
    let lists = KindLists {
        added: capped_names(&diff.added),
        removed: capped_names(&diff.removed),
        changed: diff.drift.changed.clone(),
        reference_union: p.reference_union.get(&l.kind).cloned(),
        page_detail: l
            .pages
            .iter()
            .take(MAX_PAGES_KEPT)
            .map(|pg| PageSummary {
                index: pg.index,
                attempt: pg.attempt,
                items: pg.items,
                new_items: pg.new_items,
                ms: pg.duration.as_secs_f64() * 1000.0,
                next: pg
                    .error
                    .map_or_else(|| pg.next_cursor.display(), |e| e.label().to_string()),
            })
            .collect(),
    };
    KindSummary {
        kind: l.kind,
        outcome: l.outcome,
        reason: l.reason,
        detail: l.detail.as_deref().map(Box::from),
        pages: l.final_pages,
        requests: l.requests(),
        raw_items: l.raw_items,
        unique_items: l.unique_items,
        duplicate_items: l.duplicate_items,
        invalid_cursor_errors: l.invalid_cursor_errors,
        restarts: u32::try_from(l.restarts.len()).unwrap_or(u32::MAX),
        silent_shrink: diff.silent_shrink,
        changed_items: diff.drift.changed_items,
        lists: (!lists.is_empty()).then(|| Box::new(lists)),
    }
}

/// A configured or discovered target as the status store lists it: what
/// the configuration says, replaced at each reload or discovery refresh.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TargetDescription {
    pub name: String,
    /// Host (never path, query or credentials) and transport, or the command.
    pub endpoint: String,
    pub schedule: String,
    /// The discovery source that yields it; `null` for `targets:` entries.
    pub source: Option<String>,
}

/// What the status page shows for one target.
#[derive(Debug, Clone, Serialize)]
pub struct TargetStatus {
    #[serde(flatten)]
    pub target: TargetDescription,
    pub server_name: Option<String>,
    pub server_version: Option<String>,
    pub polls: u64,
    pub skipped_polls: u64,
    pub consecutive_failures: u32,
    pub next_poll_unix_seconds: Option<f64>,
    /// Newest first.
    pub history: VecDeque<PollSummary>,
    /// Unique items per kind over the last [`super::trend::TREND_POINTS`] complete
    /// listings (oldest first), for the sparklines.
    pub trend: BTreeMap<Kind, Trend>,
    /// The stdio server's stderr tail from the latest poll (redacted).
    pub stderr_tail: Option<String>,
    /// Chart points, change log, failures and the verdict (bounded; the
    /// API shows them in its own shape, docs/api.md).
    #[serde(skip)]
    pub catalogue: CatalogueHistory,
}

impl TargetStatus {
    /// A target not polled yet.
    fn new(target: TargetDescription) -> TargetStatus {
        TargetStatus {
            target,
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
        }
    }
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
            match map.get_mut(&t.name) {
                Some(status) => status.target.clone_from(t),
                None => {
                    map.insert(t.name.clone(), TargetStatus::new(t.clone()));
                }
            }
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

    fn push(&self, status: &mut TargetStatus, polled: &PolledTarget, mut summary: PollSummary) {
        status.polls += 1;
        if let Some(s) = &polled.report.server {
            status.server_name = Some(s.name.clone());
            status.server_version = Some(s.version.clone());
        }
        for l in &polled.report.listings {
            if l.outcome.is_complete() {
                status
                    .trend
                    .entry(l.kind)
                    .or_default()
                    .push(u32::try_from(l.unique_items).unwrap_or(u32::MAX));
            }
        }
        status.history.truncate(self.history - 1);
        // Only the latest poll keeps its page records; older polls that
        // read alike share one copy of their kinds.
        let mut older = status.history.iter_mut();
        if let Some(previous) = older.next() {
            let kinds: Vec<KindSummary> = previous
                .kinds
                .iter()
                .map(KindSummary::without_pages)
                .collect();
            previous.kinds = match older.next() {
                Some(before) if *before.kinds == *kinds => before.kinds.clone(),
                _ => kinds.into(),
            };
        }
        if let Some(previous) = status.history.front() {
            if previous.protocol_version == summary.protocol_version {
                summary.protocol_version = previous.protocol_version.clone();
            }
        }
        // Exactly `history` entries, never a doubling deque's spare room.
        status
            .history
            .reserve_exact(self.history - status.history.len());
        status.history.push_front(summary);
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
    pub fn next_poll(&self, target: &str, at: Option<chrono::DateTime<chrono::Utc>>) {
        if let Some(s) = self.write().get_mut(target) {
            s.next_poll_unix_seconds = at.map(|t| t.timestamp_millis() as f64 / 1000.0);
        }
    }

    pub fn get(&self, target: &str) -> Option<TargetStatus> {
        self.read().get(target).cloned()
    }

    /// Every target, sorted by name.
    pub fn all(&self) -> Vec<TargetStatus> {
        let mut v: Vec<TargetStatus> = self.read().values().cloned().collect();
        v.sort_by(|a, b| a.target.name.cmp(&b.target.name));
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::poll::PollReport;

    #[test]
    fn a_poll_summary_keeps_the_api_shape() {
        let mut report = PollReport::tools_for_test("t", &["a"]);
        report.started = std::time::UNIX_EPOCH;
        let polled = PolledTarget::without_baseline(report);
        let json = serde_json::to_string(&PollSummary::from_polled(&polled, true)).unwrap();
        assert_eq!(
            json,
            r#"{"started_unix_seconds":0.0,"duration_seconds":0.0,"up":true,"protocol_version":null,"transport":"streamable_http","time_to_ready_seconds":null,"session_error":null,"trace_id":null,"retry_after_seconds":null,"kinds":[{"kind":"tools","outcome":"complete","reason":null,"detail":null,"pages":0,"requests":0,"raw_items":0,"unique_items":1,"duplicate_items":0,"invalid_cursor_errors":0,"restarts":0,"added":[],"removed":[],"silent_shrink":false,"changed_items":0,"changed":[],"page_detail":[]}]}"#
        );
    }

    #[test]
    fn a_kept_poll_summary_is_small() {
        // `web.history` of them per target (docs/performance.md): the rare
        // parts boxed, the trace id's `None` in its own spare value.
        assert!(std::mem::size_of::<PollSummary>() <= 96);
        assert_eq!(
            std::mem::size_of::<Option<TraceId>>(),
            std::mem::size_of::<TraceId>()
        );
    }
}
