//! What people and scripts read about each tap — its clients, their
//! verdicts and their recent listings — as plain, serialisable views that
//! each tap's observer task publishes (about once a second) and `/`,
//! `/api/clients` and `mcp-exporter tap`'s summary read. Every string in
//! them was cut and escaped by the observer; nothing is a secret (the
//! upstream is shown without credentials or query).

use crate::verdict::client::{ForeignCursors, Missed, Outcomes};
use crate::verdict::Verdict;
use serde::Serialize;
use std::collections::BTreeMap;
use std::sync::{Arc, RwLock};

/// One tap as last published.
#[derive(Debug, Clone, Serialize)]
pub struct TapView {
    pub name: Arc<str>,
    /// Where clients connect.
    pub listen: String,
    /// The upstream: scheme, host, port and path (no credentials, no query).
    pub upstream: String,
    /// Client identities the tap merges pages for (`all`, or names).
    pub merge_pages: Vec<String>,
    /// Per kind, the catalogue the tap knows of the upstream's own path
    /// (the one route of a tap in front of one server).
    pub catalogue: BTreeMap<&'static str, CatalogueView>,
    /// Every route the tap knows a catalogue of or has clients on, by name
    /// (at most `max_routes` besides the named ones, and `other`).
    pub routes: Vec<RouteView>,
    /// The configured routes (`routes:`, `--route`) as written, with the
    /// requests each matched.
    pub route_rules: Vec<RouteRuleView>,
    /// First-page list requests the tap was asked to merge, by what it did
    /// (`merged`, `reused`, or page 1 unchanged: `incomplete`,
    /// `scope_change`, `too_large`, `busy`, `throttled`); empty without
    /// `merge_pages`.
    pub merges: BTreeMap<&'static str, u64>,
    /// Every client identity on every route, worst verdict first, then by
    /// name and route.
    pub clients: Vec<ClientView>,
    /// Whether an observer reads the tap's copies now: `false` between an
    /// observer's end and the fresh one's start (forwarding goes on; what
    /// is above is as last published).
    pub observing: bool,
    /// Times the tap's observer ended and a fresh one was started.
    pub observer_restarts: u64,
    pub at_unix_seconds: f64,
}

/// One route behind a tap: a gateway's server.
#[derive(Debug, Clone, Serialize)]
pub struct RouteView {
    /// Its name: the operator's, the path normalised, or `other`.
    pub route: String,
    /// The `route` label of its series; `null` for the upstream's own path
    /// on a tap with no routes configured (whose series carry none).
    pub label: Option<String>,
    /// Per kind, the catalogue the tap knows of it.
    pub catalogue: BTreeMap<&'static str, CatalogueView>,
}

#[derive(Debug, Clone, Serialize)]
pub struct RouteRuleView {
    /// The path or pattern as configured.
    pub path: String,
    /// Requests whose route it decided.
    pub matched: u64,
}

#[derive(Debug, Clone, Serialize)]
pub struct CatalogueView {
    pub items: u64,
    /// Pages a complete walk took; `null` for a reference target's.
    pub pages: Option<u32>,
    /// `walk` (a complete listing through the tap) or `reference` (the
    /// tap's `target:`).
    pub source: &'static str,
    pub learned_unix_seconds: f64,
}

/// One client identity on one route behind a tap.
#[derive(Debug, Clone, Serialize)]
pub struct ClientView {
    pub client: String,
    /// The route its listings were for (see [`RouteView::route`]).
    pub route: String,
    /// Versions it announced, oldest first (at most 8).
    pub versions: Vec<String>,
    pub first_seen_unix_seconds: f64,
    pub last_seen_unix_seconds: f64,
    pub verdict: ClientVerdictView,
    /// Per kind it listed.
    pub kinds: BTreeMap<&'static str, ClientKindView>,
}

#[derive(Debug, Clone, Serialize)]
pub struct ClientVerdictView {
    #[serde(flatten)]
    pub verdict: Verdict,
    /// When the client's level became what it is.
    pub since_unix_seconds: f64,
}

#[derive(Debug, Clone, Serialize)]
pub struct ClientKindView {
    pub verdict: Verdict,
    /// Its last listings (at most the observer's tally window), by outcome.
    pub recent: Outcomes,
    pub since_start: Outcomes,
    /// List pages answered to it.
    pub pages: u64,
    pub invalid_cursors: u64,
    pub foreign_cursors: ForeignCursors,
    /// Items of the known catalogue its last finished listing missed; `null`
    /// when the catalogue was not known.
    pub items_missed: Option<u64>,
    pub last_abandoned: Option<ListingView>,
    pub last_complete: Option<ListingView>,
    /// What the tap did with the last of its listings it was to merge.
    pub last_merge: Option<MergeView>,
}

#[derive(Debug, Clone, Serialize)]
pub struct MergeView {
    /// `merged`, `reused` or `first_page`.
    pub outcome: &'static str,
    /// Why page 1 went unchanged: the walk's guard or error
    /// (`cursor_cycle`, `page_cap`, `invalid_cursor`, …), `scope_change`,
    /// `too_large`, `busy` or `throttled`.
    pub fallback: Option<&'static str>,
}

/// One listing, summed up.
#[derive(Debug, Clone, Serialize)]
pub struct ListingView {
    pub pages: u32,
    pub items: u64,
    pub version: Option<String>,
    /// The tap answered it itself (merging).
    pub merged: bool,
    pub missed: Option<Missed>,
    pub ended_unix_seconds: f64,
}

/// Every running tap's latest view.
#[derive(Debug, Default)]
pub struct ClientBook {
    taps: RwLock<BTreeMap<Arc<str>, Arc<TapView>>>,
}

impl ClientBook {
    pub fn publish(&self, view: TapView) {
        let mut taps = self.taps.write().unwrap_or_else(|e| e.into_inner());
        taps.insert(view.name.clone(), Arc::new(view));
    }

    /// `tap`'s observer ended: its last view says so until a fresh one
    /// publishes.
    pub fn not_observing(&self, tap: &str, restarts: u64) {
        let mut taps = self.taps.write().unwrap_or_else(|e| e.into_inner());
        if let Some(view) = taps.get_mut(tap) {
            let view = Arc::make_mut(view);
            view.observing = false;
            view.observer_restarts = restarts;
        }
    }

    pub fn remove(&self, tap: &str) {
        let mut taps = self.taps.write().unwrap_or_else(|e| e.into_inner());
        taps.remove(tap);
    }

    /// Every tap, by name.
    pub fn taps(&self) -> Vec<Arc<TapView>> {
        let taps = self.taps.read().unwrap_or_else(|e| e.into_inner());
        taps.values().cloned().collect()
    }
}
