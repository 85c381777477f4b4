//! Per client and route, per kind: what its listings came to, since the
//! start and over its last `tally_window` listings — the numbers a
//! client's verdict reads ("read page 1 of 2 in 37 of 40 tools listings:
//! sees 8 of 14 tools"). One identity can hold both behaviours (every
//! Python-SDK app says `mcp 0.1.0`), so these are counts to take ratios
//! of, not a flag. A last abandoned listing told before its catalogue was
//! known keeps what it received until the catalogue is, then says what it
//! missed.

use crate::catalogue::Catalogue;
use crate::client::ClientId;
use crate::fact::{ClientListing, CursorOrigin, ListingOutcome, MissedItems, MissedKnown};
use crate::route::RouteId;
use mcp_listing::{text, Kind};
use std::collections::{HashMap, HashSet, VecDeque};
use std::sync::Arc;
use std::time::Instant;

/// Listings by outcome, indexed by `ListingOutcome as usize`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct OutcomeCounts(pub [u64; 4]);

impl OutcomeCounts {
    pub fn get(&self, outcome: ListingOutcome) -> u64 {
        self.0[outcome as usize]
    }

    pub fn total(&self) -> u64 {
        self.0.iter().sum()
    }
}

/// The last listing of an outcome, summed up.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LastListing {
    pub pages: u32,
    pub items: u64,
    pub missed: Option<MissedItems>,
    pub version: Option<Arc<str>>,
    pub merged: bool,
    pub ended: Instant,
}

/// One client's listings of one kind.
#[derive(Debug, Clone, Default)]
pub struct KindTally {
    pub since_start: OutcomeCounts,
    recent: VecDeque<ListingOutcome>,
    /// Pages answered, within listings or not.
    pub pages: u64,
    pub invalid_cursor: u64,
    /// Foreign cursors by `CursorOrigin as usize`.
    pub foreign_cursor: [u64; 2],
    pub last_abandoned: Option<LastListing>,
    pub last_complete: Option<LastListing>,
    /// Known items the last finished listing did not receive: 0 after a
    /// complete one, `None` when its catalogue was not known.
    pub items_missed: Option<u64>,
    /// The last abandoned listing's items, kept while its catalogue is not
    /// known.
    awaiting: Option<Unresolved>,
}

/// What an abandoned listing received, kept until its route's catalogue is
/// known: the item hashes (when the byte budget had room) and their count.
#[derive(Debug, Clone)]
pub(crate) struct Unresolved {
    /// Its own route's (the tally's may be `other`).
    pub route: RouteId,
    pub digests: Option<HashSet<u64>>,
    pub items: u64,
    /// Bytes charged to the observer's tracked-bytes budget.
    pub charged: usize,
}

/// Whose tally: a client on a route, as told.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ClientRoute {
    pub client: ClientId,
    pub route: RouteId,
}

impl KindTally {
    /// Outcomes of the last `tally_window` listings.
    pub fn recent(&self) -> OutcomeCounts {
        let mut counts = OutcomeCounts::default();
        for outcome in &self.recent {
            counts.0[*outcome as usize] += 1;
        }
        counts
    }

    /// Take a finished listing; the items kept for the one it replaces
    /// as the last, to give back.
    fn listing(&mut self, listing: &ClientListing, window: usize) -> Option<Unresolved> {
        self.since_start.0[listing.outcome as usize] += 1;
        if self.recent.len() >= window.max(1) {
            self.recent.pop_front();
        }
        self.recent.push_back(listing.outcome);
        let last = || LastListing {
            pages: listing.pages,
            items: listing.items,
            missed: listing.missed.clone(),
            version: listing.version.clone(),
            merged: listing.merged.is_some(),
            ended: listing.ended,
        };
        match listing.outcome {
            ListingOutcome::Complete => {
                self.last_complete = Some(last());
                self.items_missed = Some(0);
                self.awaiting.take()
            }
            ListingOutcome::Abandoned => {
                self.last_abandoned = Some(last());
                self.items_missed = listing.missed.as_ref().map(|m| m.count);
                self.awaiting.take()
            }
            ListingOutcome::Restarted | ListingOutcome::Failed => None,
        }
    }

    /// The kept listing compared with its catalogue, now known: what it
    /// missed, and its items to give back.
    fn resolve(
        &mut self,
        route: &RouteId,
        catalogue: &Catalogue,
        max_names: usize,
    ) -> Option<(MissedItems, Unresolved)> {
        if self.awaiting.as_ref()?.route != *route {
            return None;
        }
        let kept = self.awaiting.take()?;
        let missed = catalogue.missed(kept.digests.as_ref(), kept.items, max_names);
        self.items_missed = Some(missed.count);
        if let Some(last) = &mut self.last_abandoned {
            last.missed = Some(missed.clone());
        }
        Some((missed, kept))
    }
}

/// One client's tally.
#[derive(Debug, Clone)]
pub struct ClientTally {
    /// Versions it gave, cut and escaped, at most `max_versions`.
    pub versions: Vec<Arc<str>>,
    pub first_seen: Instant,
    pub last_seen: Instant,
    kinds: [KindTally; 4],
}

impl ClientTally {
    fn new(at: Instant) -> ClientTally {
        ClientTally {
            versions: Vec::new(),
            first_seen: at,
            last_seen: at,
            kinds: Default::default(),
        }
    }

    pub fn kind(&self, kind: Kind) -> &KindTally {
        &self.kinds[kind as usize]
    }
}

/// Every tally: at most one per client label and route it is told under
/// (`max_client_routes` pairs, and `other` per client).
#[derive(Debug)]
pub(crate) struct Tallies {
    by_pair: HashMap<ClientRoute, ClientTally>,
    /// The tallies whose last abandoned listing of a kind waits for a
    /// route's catalogue.
    awaiting: HashMap<(RouteId, Kind), HashSet<ClientRoute>>,
    window: usize,
    max_versions: usize,
}

impl Tallies {
    pub(crate) fn new(window: usize, max_versions: usize) -> Tallies {
        Tallies {
            by_pair: HashMap::new(),
            awaiting: HashMap::new(),
            window,
            max_versions,
        }
    }

    fn of(&mut self, client: &ClientId, route: &RouteId, at: Instant) -> &mut ClientTally {
        let key = ClientRoute {
            client: client.clone(),
            route: route.clone(),
        };
        let tally = self
            .by_pair
            .entry(key)
            .or_insert_with(|| ClientTally::new(at));
        tally.last_seen = tally.last_seen.max(at);
        tally
    }

    pub(crate) fn page(&mut self, client: &ClientId, route: &RouteId, kind: Kind, at: Instant) {
        self.of(client, route, at).kinds[kind as usize].pages += 1;
    }

    pub(crate) fn invalid_cursor(
        &mut self,
        client: &ClientId,
        route: &RouteId,
        kind: Kind,
        at: Instant,
    ) {
        self.of(client, route, at).kinds[kind as usize].invalid_cursor += 1;
    }

    pub(crate) fn foreign(&mut self, use_: &crate::fact::CursorUse, origin: CursorOrigin) {
        let tally = self.of(&use_.client, &use_.route, use_.at);
        tally.kinds[use_.kind as usize].foreign_cursor[origin as usize] += 1;
    }

    /// Take a finished listing; `awaiting`: what it received, when it was
    /// abandoned before its catalogue was known. The items kept for the
    /// listing it replaces come back, to give back their bytes.
    pub(crate) fn listing(
        &mut self,
        listing: &ClientListing,
        awaiting: Option<Unresolved>,
    ) -> Option<Unresolved> {
        let (window, max_versions) = (self.window, self.max_versions);
        let tally = self.of(&listing.client, &listing.route, listing.ended);
        let kind = &mut tally.kinds[listing.kind as usize];
        let replaced = kind.listing(listing, window);
        if let Some(version) = &listing.version {
            if tally.versions.len() < max_versions && !tally.versions.contains(version) {
                tally.versions.push(version.clone());
            }
        }
        if let Some(awaiting) = awaiting {
            let key = ClientRoute {
                client: listing.client.clone(),
                route: listing.route.clone(),
            };
            self.awaiting
                .entry((awaiting.route.clone(), listing.kind))
                .or_default()
                .insert(key.clone());
            if let Some(tally) = self.by_pair.get_mut(&key) {
                tally.kinds[listing.kind as usize].awaiting = Some(awaiting);
            }
        }
        replaced
    }

    /// `route`'s catalogue of `kind` became known: every last abandoned
    /// listing that waited for it says what it missed. Their kept items
    /// come back too.
    pub(crate) fn resolve(
        &mut self,
        route: &RouteId,
        kind: Kind,
        catalogue: &Catalogue,
        max_names: usize,
    ) -> (Vec<MissedKnown>, Vec<Unresolved>) {
        let mut told = Vec::new();
        let mut freed = Vec::new();
        let waiting = self
            .awaiting
            .remove(&(route.clone(), kind))
            .unwrap_or_default();
        for key in waiting {
            let Some(tally) = self.by_pair.get_mut(&key) else {
                continue;
            };
            let Some((missed, kept)) =
                tally.kinds[kind as usize].resolve(route, catalogue, max_names)
            else {
                continue;
            };
            freed.push(kept);
            told.push(MissedKnown {
                client: key.client,
                route: key.route,
                kind,
                missed,
            });
        }
        (told, freed)
    }

    pub(crate) fn iter(&self) -> impl Iterator<Item = (&ClientRoute, &ClientTally)> {
        self.by_pair.iter()
    }

    /// A client forgotten: its tallies go, and the items they kept for a
    /// catalogue not yet known come back (to give back their bytes).
    pub(crate) fn forget(&mut self, client: &ClientId) -> Vec<Unresolved> {
        let mut freed = Vec::new();
        self.by_pair.retain(|key, tally| {
            if &key.client != client {
                return true;
            }
            let kept = tally.kinds.iter_mut().filter_map(|k| k.awaiting.take());
            freed.extend(kept);
            false
        });
        for waiting in self.awaiting.values_mut() {
            waiting.retain(|key| &key.client != client);
        }
        self.awaiting.retain(|_, waiting| !waiting.is_empty());
        freed
    }

    pub(crate) fn get(&self, key: &ClientRoute) -> Option<&ClientTally> {
        self.by_pair.get(key)
    }
}

/// A client's version as kept: cut (already, at read) and escaped.
pub(crate) fn shown_version(version: &str) -> Arc<str> {
    Arc::from(text::escape(version).as_ref())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fact::{AbandonCause, SessionTag};
    use mcp_tap_contract::identity::IdentitySource;

    /// The client `mcp` and its tally's key on route `/mcp`, the route
    /// of every [`listing`].
    fn client_on_mcp() -> (ClientId, ClientRoute) {
        let client = crate::client::Clients::new(4)
            .resolve("mcp", Instant::now())
            .0;
        let key = ClientRoute {
            client: client.clone(),
            route: RouteId::new("/mcp", false),
        };
        (client, key)
    }

    fn listing(client: &ClientId, outcome: ListingOutcome, version: &str) -> ClientListing {
        let now = Instant::now();
        ClientListing {
            client: client.clone(),
            route: RouteId::new("/mcp", false),
            version: Some(shown_version(version)),
            source: IdentitySource::ClientInfo,
            kind: Kind::Tools,
            outcome,
            abandoned: (outcome == ListingOutcome::Abandoned).then_some(AbandonCause::Timeout),
            failure: None,
            pages: 1,
            items: 8,
            missed: None,
            invalid_cursor: false,
            merged: None,
            modern: false,
            session: SessionTag(Arc::from("00000000")),
            started: now,
            ended: now,
        }
    }

    #[test]
    fn counts_since_start_and_over_the_window() {
        let (client, key) = client_on_mcp();
        let mut tallies = Tallies::new(3, 2);
        for outcome in [
            ListingOutcome::Complete,
            ListingOutcome::Abandoned,
            ListingOutcome::Abandoned,
            ListingOutcome::Abandoned,
        ] {
            tallies.listing(&listing(&client, outcome, "0.1.0"), None);
        }
        tallies.listing(
            &listing(&client, ListingOutcome::Abandoned, "0.2\x07"),
            None,
        );
        tallies.listing(&listing(&client, ListingOutcome::Abandoned, "0.3"), None);
        let tally = tallies.get(&key).unwrap();
        let tools = tally.kind(Kind::Tools);
        assert_eq!(tools.since_start.total(), 6);
        assert_eq!(tools.since_start.get(ListingOutcome::Abandoned), 5);
        assert_eq!(tools.recent().get(ListingOutcome::Abandoned), 3);
        assert_eq!(tools.recent().total(), 3);
        assert_eq!(tools.last_abandoned.as_ref().unwrap().pages, 1);
        let versions: Vec<&str> = tally.versions.iter().map(|v| &**v).collect();
        assert_eq!(versions, ["0.1.0", "0.2\\x07"], "bounded, escaped");
        assert_eq!(tools.items_missed, None, "no catalogue known");
        tallies.listing(&listing(&client, ListingOutcome::Complete, "0.1.0"), None);
        let tools = tallies.get(&key).unwrap().kind(Kind::Tools);
        assert_eq!(tools.items_missed, Some(0));
    }

    #[test]
    fn a_listing_told_before_its_catalogue_says_what_it_missed_once_it_is_known() {
        let (client, key) = client_on_mcp();
        let mut tallies = Tallies::new(3, 2);
        let alpha = key.route.clone();
        let digest = crate::catalogue::item_digest;
        let awaiting = Unresolved {
            route: alpha.clone(),
            digests: Some((1..=7).map(|i| digest(&format!("t{i:02}"))).collect()),
            items: 7,
            charged: 112,
        };
        let page_one = listing(&client, ListingOutcome::Abandoned, "0.1.0");
        assert!(tallies.listing(&page_one, Some(awaiting)).is_none());
        assert_eq!(
            tallies.get(&key).unwrap().kind(Kind::Tools).items_missed,
            None
        );
        let mut known = crate::catalogue::Catalogues::new(100, 1 << 20);
        let names: Vec<String> = (1..=37).map(|i| format!("t{i:02}")).collect();
        known.set_reference(&alpha, Kind::Tools, &names, Some(6), Instant::now());
        let catalogue = known.get(&alpha, Kind::Tools).unwrap();
        let (told, freed) = tallies.resolve(&alpha, Kind::Tools, catalogue, 8);
        assert_eq!(freed.iter().map(|u| u.charged).sum::<usize>(), 112);
        assert_eq!(told.len(), 1);
        assert_eq!(told[0].missed.count, 30);
        assert_eq!(told[0].missed.names[0].as_ref(), "t08");
        let tools = tallies.get(&key).unwrap().kind(Kind::Tools);
        assert_eq!(tools.items_missed, Some(30));
        let last = tools.last_abandoned.as_ref().unwrap();
        assert_eq!(last.missed.as_ref().unwrap().catalogue_items, 37);
        let again = tallies.resolve(&alpha, Kind::Tools, catalogue, 8);
        assert!(again.0.is_empty(), "told once");
    }
}
