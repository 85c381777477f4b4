//! What clients do behind each tap (`mcp_client_*`, `mcp_tap_clients`),
//! moved by the observer's facts. A client identity is a label a client
//! chooses: the observer cuts and escapes it and keeps at most
//! `max_clients` per tap (then `other`), so these families hold at most
//! 9 series per client identity and kind it listed, per tap
//! (docs/metrics.md, "Series per tap and per client"). Registered on its
//! own; a tap's series go when the tap stops.

use super::families::{CounterFamily, GaugeFamily, Source};
use super::labels::{EnumLabel, ReportDrop, ValueLabels};
use super::series::{Registrar, Series};
use mcp_listing::Kind;
use mcp_observer::{ClientId, CursorOrigin, Fact, ListingOutcome};
use mcp_tap::MergeOutcome;
use prometheus_client::encoding::{EncodeLabelSet, EncodeLabelValue, LabelValueEncoder};
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

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub(crate) struct ClientLabels {
    pub tap: TapName,
    pub client: ClientLabel,
    pub kind: EnumLabel<Kind>,
}

/// A tap client's (tap, client, kind) and an `outcome` or `origin`.
pub(crate) type ClientValueLabels<E> = ValueLabels<ClientLabels, E>;

/// Per tap, the (client, kind) pairs whose series exist.
type Seen = HashMap<Arc<str>, HashSet<(ClientId, Kind)>>;

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
            report_dropped: r.family(
                "mcp_tap_report_lines_dropped",
                "Client listings the tap did not write to its report file, by reason: full (the file reached its byte bound) or write_failed; the log says why",
            )
            .new_plain(),
            seen: Mutex::new(HashMap::new()),
        })
    }

    /// A tap started: its identity count exists at 0.
    pub fn tap_started(&self, tap: &Arc<str>) {
        let mut seen = self.lock();
        seen.entry(tap.clone()).or_default();
        self.clients.create(&tap_labels(tap));
    }

    /// What the tap's observer found.
    pub fn fact(&self, tap: &Arc<str>, fact: &Fact) {
        let mut seen = self.lock();
        match fact {
            Fact::NewClient(_) => {
                let known = self.clients.get_or_create(&tap_labels(tap));
                known.set(known.get().saturating_add(1));
            }
            Fact::Page(page) => {
                let l = self.first_sight(&mut seen, tap, &page.client, page.kind);
                self.pages.get_or_create(&l).inc();
            }
            Fact::InvalidCursor(c) => {
                let l = self.first_sight(&mut seen, tap, &c.client, c.kind);
                self.invalid_cursor.get_or_create(&l).inc();
            }
            Fact::ForeignCursor { cursor, origin } => {
                let l = self.first_sight(&mut seen, tap, &cursor.client, cursor.kind);
                let l = ValueLabels::new(&l, *origin);
                self.foreign_cursor.get_or_create(&l).inc();
            }
            Fact::Listing(listing) => {
                let l = self.first_sight(&mut seen, tap, &listing.client, listing.kind);
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
            Fact::NotObserved(_) => {}
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
        for (client, kind) in seen.remove(tap).unwrap_or_default() {
            let l = client_labels(tap, &client, kind);
            Series::remove(&self.listings, &l);
            Series::remove(&self.foreign_cursor, &l);
            self.pages.remove(&l);
            self.invalid_cursor.remove(&l);
            self.items_missed.remove(&l);
            self.merged.remove(&l);
        }
        let l = tap_labels(tap);
        Series::remove(&self.report_dropped, &l);
        self.clients.remove(&l);
    }

    /// The labels of `client` and `kind` on `tap`; the first time, every
    /// series the alerts read is created at 0, so `increase()` sees the
    /// first event too.
    fn first_sight(
        &self,
        seen: &mut MutexGuard<'_, Seen>,
        tap: &Arc<str>,
        client: &ClientId,
        kind: Kind,
    ) -> ClientLabels {
        let l = client_labels(tap, client, kind);
        if seen
            .entry(tap.clone())
            .or_default()
            .insert((client.clone(), kind))
        {
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

fn client_labels(tap: &Arc<str>, client: &ClientId, kind: Kind) -> ClientLabels {
    ClientLabels {
        tap: TapName(tap.clone()),
        client: ClientLabel(client.clone()),
        kind: EnumLabel(kind),
    }
}
