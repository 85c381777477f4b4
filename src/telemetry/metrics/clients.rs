//! What clients do behind each tap (`mcp_client_*`, `mcp_tap_clients`,
//! `mcp_tap_routes`, `mcp_tap_other_route_total`), moved by the observer's
//! facts. A client identity is a label a client chooses, and a route the
//! path it asks for: the observer cuts and escapes both and keeps at most
//! `max_clients` identities and `max_routes` routes per tap (then
//! `other`), and at most `max_client_routes` (client, route) pairs, so
//! these families hold at most 9 series per pair and kind it listed, per
//! tap (docs/metrics.md, "Series per tap, route and client"). The route
//! of a tap in front of one server (the upstream's own path, no routes
//! configured) carries no `route` label. Registered on its own; a tap's
//! series go when the tap stops.

use super::families::{CounterFamily, GaugeFamily, Source};
use super::labels::{EnumLabel, ReportDrop, ValueLabels};
use super::series::{Registrar, Series};
use mcp_listing::Kind;
use mcp_observer::{ClientId, CursorOrigin, Fact, ListingOutcome, OtherRoute, RouteId};
use mcp_tap::MergeOutcome;
use prometheus_client::encoding::{
    EncodeLabel, EncodeLabelSet, EncodeLabelValue, LabelSetEncoder, LabelValueEncoder,
};
use prometheus_client::registry::Registry;
use std::collections::{HashMap, HashSet};
use std::fmt::Write as _;
use std::sync::{Arc, Mutex, MutexGuard};

/// A tap's name as a label value (shared, not copied per series).
#[derive(Clone, Debug, Hash, PartialEq, Eq)]
pub(crate) struct TapName(pub Arc<str>);

impl EncodeLabelValue for TapName {
    fn encode(&self, encoder: &mut LabelValueEncoder<'_>) -> std::fmt::Result {
        encoder.write_str(&self.0)
    }
}

/// A client identity as a label value.
#[derive(Clone, Debug, Hash, PartialEq, Eq)]
pub(crate) struct ClientLabel(pub ClientId);

impl EncodeLabelValue for ClientLabel {
    fn encode(&self, encoder: &mut LabelValueEncoder<'_>) -> std::fmt::Result {
        encoder.write_str(self.0.label())
    }
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub(crate) struct TapLabels {
    pub tap: TapName,
}

/// A tap client's series: (tap, client, route, kind), the `route` label
/// left out for a route that has none ([`RouteId::label`]).
#[derive(Clone, Debug, Hash, PartialEq, Eq)]
pub(crate) struct ClientLabels {
    pub tap: TapName,
    pub client: ClientLabel,
    pub route: RouteId,
    pub kind: EnumLabel<Kind>,
}

impl EncodeLabelSet for ClientLabels {
    fn encode(&self, encoder: &mut LabelSetEncoder<'_>) -> std::fmt::Result {
        ("tap", &*self.tap.0).encode(encoder.encode_label())?;
        ("client", self.client.0.label()).encode(encoder.encode_label())?;
        if let Some(route) = self.route.label() {
            ("route", route).encode(encoder.encode_label())?;
        }
        ("kind", self.kind).encode(encoder.encode_label())
    }
}

/// A tap client's (tap, client, route, kind) and an `outcome` or `origin`.
pub(crate) type ClientValueLabels<E> = ValueLabels<ClientLabels, E>;

/// One client's series on a tap: its identity, route and kind.
type Pair = (ClientId, RouteId, Kind);

/// Per tap, the (client, route, kind) whose series exist.
type Seen = HashMap<Arc<str>, HashSet<Pair>>;

#[derive(Debug)]
pub struct ClientMetrics {
    listings: CounterFamily<ClientValueLabels<ListingOutcome>>,
    pages: CounterFamily<ClientLabels>,
    invalid_cursor: CounterFamily<ClientLabels>,
    foreign_cursor: CounterFamily<ClientValueLabels<CursorOrigin>>,
    items_missed: GaugeFamily<ClientLabels>,
    /// Listings the tap answered itself (merging, opt-in): created with the
    /// first one.
    merged: CounterFamily<ClientLabels>,
    clients: GaugeFamily<TapLabels>,
    routes: GaugeFamily<TapLabels>,
    other_route: CounterFamily<ValueLabels<TapLabels, OtherRoute>>,
    /// Listings left out of a tap's report file: created with the first.
    report_dropped: CounterFamily<ValueLabels<TapLabels, ReportDrop>>,
    /// Per tap, the (client, kind) pairs whose series exist: what a stopped
    /// tap must remove. Updates run under this lock.
    seen: Mutex<Seen>,
}

impl ClientMetrics {
    pub fn register(registry: &mut Registry) -> Arc<ClientMetrics> {
        let mut r = Registrar::new(registry, Source::Scheduled);
        Arc::new(ClientMetrics {
            listings: r.family(
                "mcp_client_listings",
                "Client listings through the tap that ended, by outcome: complete, abandoned (a handed-out nextCursor never came back: the client saw a prefix), restarted, failed",
            )
            .new_plain(),
            pages: r.family(
                "mcp_client_list_pages",
                "List pages the upstream answered to the client through the tap",
            )
            .new_plain(),
            invalid_cursor: r.family(
                "mcp_client_invalid_cursor",
                "Answers -32602 (invalid params) to a list request of the client that carried a cursor",
            )
            .new_plain(),
            foreign_cursor: r.family(
                "mcp_client_foreign_cursor",
                "Cursors the client sent that the tap handed out in another session (other_session) or never handed out (unknown)",
            )
            .new_plain(),
            items_missed: r.family(
                "mcp_client_items_missed",
                "Items of the known catalogue the client's last abandoned listing never received (0 after a complete one)",
            )
            .new_plain(),
            merged: r.family(
                "mcp_client_merged_listings",
                "Client listings the tap answered itself with the whole catalogue (merge_pages), whatever page 1 said; also counted in mcp_client_listings_total",
            )
            .new_plain(),
            clients: r.family(
                "mcp_tap_clients",
                "Client identities the tap has seen (at most max_clients, then other)",
            )
            .new_plain(),
            routes: r.family(
                "mcp_tap_routes",
                "Routes (upstream paths, or the operator's named routes) the tap has seen requests for (at most max_routes made from paths besides the named ones, then other)",
            )
            .new_plain(),
            other_route: r.family(
                "mcp_tap_other_route",
                "List requests the tap told under the route other, by reason: max_routes (no room for their path's route), unmatched (no configured route matched and the tap learns no paths), max_client_routes (the client already has max_client_routes routes of its own)",
            )
            .new_plain(),
            report_dropped: r.family(
                "mcp_tap_report_lines_dropped",
                "Client listings the tap did not write to its report file, by reason: full (the file reached its byte bound) or write_failed; the log says why",
            )
            .new_plain(),
            seen: Mutex::new(HashMap::new()),
        })
    }

    /// A tap's observer started (with the tap, or afresh after one
    /// ended): its identity and route counts are 0 until it sees them.
    pub fn tap_started(&self, tap: &Arc<str>) {
        let mut seen = self.lock();
        seen.entry(tap.clone()).or_default();
        let l = tap_labels(tap);
        self.clients.get_or_create(&l).set(0);
        self.routes.get_or_create(&l).set(0);
        for reason in OtherRoute::ALL {
            self.other_route.create(&ValueLabels::new(&l, reason));
        }
    }

    /// What the tap's observer found.
    pub fn fact(&self, tap: &Arc<str>, fact: &Fact) {
        let mut seen = self.lock();
        match fact {
            Fact::NewClient(_) => {
                let known = self.clients.get_or_create(&tap_labels(tap));
                known.set(known.get().saturating_add(1));
            }
            Fact::ClientGone(client) => {
                let known = self.clients.get_or_create(&tap_labels(tap));
                known.set(known.get().saturating_sub(1).max(0));
                let pairs = seen.get_mut(tap.as_ref());
                let gone: Vec<Pair> = pairs
                    .map(|pairs| {
                        let gone = pairs
                            .iter()
                            .filter(|(c, _, _)| c == client)
                            .cloned()
                            .collect();
                        pairs.retain(|(c, _, _)| c != client);
                        gone
                    })
                    .unwrap_or_default();
                for pair in gone {
                    self.remove_pair(tap, pair);
                }
            }
            Fact::NewRoute { .. } => {
                let known = self.routes.get_or_create(&tap_labels(tap));
                known.set(known.get().saturating_add(1));
            }
            Fact::OtherRoute(reason) => {
                let l = ValueLabels::new(&tap_labels(tap), *reason);
                self.other_route.get_or_create(&l).inc();
            }
            Fact::MissedKnown(m) => {
                let pair = (m.client.clone(), m.route.clone(), m.kind);
                let l = self.first_sight(&mut seen, tap, pair);
                let n = i64::try_from(m.missed.count).unwrap_or(i64::MAX);
                self.items_missed.get_or_create(&l).set(n);
            }
            Fact::Page(page) => {
                let pair = (page.client.clone(), page.route.clone(), page.kind);
                let l = self.first_sight(&mut seen, tap, pair);
                self.pages.get_or_create(&l).inc();
            }
            Fact::InvalidCursor(c) => {
                let l =
                    self.first_sight(&mut seen, tap, (c.client.clone(), c.route.clone(), c.kind));
                self.invalid_cursor.get_or_create(&l).inc();
            }
            Fact::ForeignCursor { cursor, origin } => {
                let pair = (cursor.client.clone(), cursor.route.clone(), cursor.kind);
                let l = self.first_sight(&mut seen, tap, pair);
                let l = ValueLabels::new(&l, *origin);
                self.foreign_cursor.get_or_create(&l).inc();
            }
            Fact::Listing(listing) => {
                let pair = (listing.client.clone(), listing.route.clone(), listing.kind);
                let l = self.first_sight(&mut seen, tap, pair);
                let outcome = ValueLabels::new(&l, listing.outcome);
                self.listings.get_or_create(&outcome).inc();
                if matches!(
                    listing.merged,
                    Some(MergeOutcome::Merged | MergeOutcome::Reused)
                ) {
                    self.merged.get_or_create(&l).inc();
                }
                let missed = match listing.outcome {
                    ListingOutcome::Complete => Some(0),
                    ListingOutcome::Abandoned => listing.missed.as_ref().map(|m| m.count),
                    ListingOutcome::Restarted | ListingOutcome::Failed => None,
                };
                if let Some(n) = missed {
                    let n = i64::try_from(n).unwrap_or(i64::MAX);
                    self.items_missed.get_or_create(&l).set(n);
                }
            }
            Fact::NotObserved(_) | Fact::RouteUnmatched { .. } => {}
        }
    }

    /// A client listing was not written to `tap`'s report file (see
    /// `ReportLineDropped`).
    pub fn report_dropped(&self, tap: &Arc<str>, reason: ReportDrop) {
        let l = ValueLabels::new(&tap_labels(tap), reason);
        self.report_dropped.get_or_create(&l).inc();
    }

    /// A tap stopped: every series of it goes.
    pub fn forget_tap(&self, tap: &Arc<str>) {
        let mut seen = self.lock();
        for pair in seen.remove(tap).unwrap_or_default() {
            self.remove_pair(tap, pair);
        }
        let l = tap_labels(tap);
        Series::remove(&self.report_dropped, &l);
        Series::remove(&self.other_route, &l);
        self.clients.remove(&l);
        self.routes.remove(&l);
    }

    /// Every series of one (client, route, kind) on `tap`.
    fn remove_pair(&self, tap: &Arc<str>, pair: Pair) {
        let l = client_labels(tap, pair);
        Series::remove(&self.listings, &l);
        Series::remove(&self.foreign_cursor, &l);
        self.pages.remove(&l);
        self.invalid_cursor.remove(&l);
        self.items_missed.remove(&l);
        self.merged.remove(&l);
    }

    /// The labels of a (client, route, kind) on `tap`; the first time,
    /// every series the alerts read is created at 0, so `increase()` sees
    /// the first event too.
    fn first_sight(
        &self,
        seen: &mut MutexGuard<'_, Seen>,
        tap: &Arc<str>,
        pair: Pair,
    ) -> ClientLabels {
        let l = client_labels(tap, pair.clone());
        if seen.entry(tap.clone()).or_default().insert(pair) {
            self.listings.create(&l);
            self.foreign_cursor.create(&l);
            self.pages.create(&l);
            self.invalid_cursor.create(&l);
            self.items_missed.create(&l);
        }
        l
    }

    fn lock(&self) -> MutexGuard<'_, Seen> {
        self.seen.lock().unwrap_or_else(|e| e.into_inner())
    }
}

fn tap_labels(tap: &Arc<str>) -> TapLabels {
    TapLabels {
        tap: TapName(tap.clone()),
    }
}

fn client_labels(tap: &Arc<str>, (client, route, kind): Pair) -> ClientLabels {
    ClientLabels {
        tap: TapName(tap.clone()),
        client: ClientLabel(client),
        route,
        kind: EnumLabel(kind),
    }
}
