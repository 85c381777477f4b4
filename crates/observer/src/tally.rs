//! Per client, per kind: what its listings came to, since the start and
//! over its last `tally_window` listings — the numbers a client's verdict
//! reads ("read page 1 of 2 in 37 of 40 tools listings: sees 8 of 14
//! tools"). One identity can hold both behaviours (every Python-SDK app
//! says `mcp 0.1.0`), so these are counts to take ratios of, not a flag.

use crate::client::ClientId;
use crate::fact::{ClientListing, CursorOrigin, ListingOutcome, MissedItems};
use mcp_listing::{text, Kind};
use std::collections::{HashMap, VecDeque};
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

    fn listing(&mut self, listing: &ClientListing, window: usize) {
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
            }
            ListingOutcome::Abandoned => {
                self.last_abandoned = Some(last());
                self.items_missed = listing.missed.as_ref().map(|m| m.count);
            }
            ListingOutcome::Restarted | ListingOutcome::Failed => {}
        }
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

/// Every client's tally: at most one per client label.
#[derive(Debug)]
pub(crate) struct Tallies {
    by_client: HashMap<ClientId, ClientTally>,
    window: usize,
    max_versions: usize,
}

impl Tallies {
    pub(crate) fn new(window: usize, max_versions: usize) -> Tallies {
        Tallies {
            by_client: HashMap::new(),
            window,
            max_versions,
        }
    }

    fn of(&mut self, client: &ClientId, at: Instant) -> &mut ClientTally {
        let tally = self
            .by_client
            .entry(client.clone())
            .or_insert_with(|| ClientTally::new(at));
        tally.last_seen = tally.last_seen.max(at);
        tally
    }

    pub(crate) fn page(&mut self, client: &ClientId, kind: Kind, at: Instant) {
        self.of(client, at).kinds[kind as usize].pages += 1;
    }

    pub(crate) fn invalid_cursor(&mut self, client: &ClientId, kind: Kind, at: Instant) {
        self.of(client, at).kinds[kind as usize].invalid_cursor += 1;
    }

    pub(crate) fn foreign(
        &mut self,
        client: &ClientId,
        kind: Kind,
        origin: CursorOrigin,
        at: Instant,
    ) {
        self.of(client, at).kinds[kind as usize].foreign_cursor[origin as usize] += 1;
    }

    pub(crate) fn listing(&mut self, listing: &ClientListing) {
        let (window, max_versions) = (self.window, self.max_versions);
        let tally = self.of(&listing.client, listing.ended);
        tally.kinds[listing.kind as usize].listing(listing, window);
        if let Some(version) = &listing.version {
            if tally.versions.len() < max_versions && !tally.versions.contains(version) {
                tally.versions.push(version.clone());
            }
        }
    }

    pub(crate) fn iter(&self) -> impl Iterator<Item = (&ClientId, &ClientTally)> {
        self.by_client.iter()
    }

    pub(crate) fn get(&self, client: &ClientId) -> Option<&ClientTally> {
        self.by_client.get(client)
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
    use mcp_tap::identity::IdentitySource;

    fn listing(client: &ClientId, outcome: ListingOutcome, version: &str) -> ClientListing {
        let now = Instant::now();
        ClientListing {
            client: client.clone(),
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
        let client = crate::client::Clients::new(4).resolve("mcp", &mut Vec::new());
        let mut tallies = Tallies::new(3, 2);
        for outcome in [
            ListingOutcome::Complete,
            ListingOutcome::Abandoned,
            ListingOutcome::Abandoned,
            ListingOutcome::Abandoned,
        ] {
            tallies.listing(&listing(&client, outcome, "0.1.0"));
        }
        tallies.listing(&listing(&client, ListingOutcome::Abandoned, "0.2\x07"));
        tallies.listing(&listing(&client, ListingOutcome::Abandoned, "0.3"));
        let tally = tallies.get(&client).unwrap();
        let tools = tally.kind(Kind::Tools);
        assert_eq!(tools.since_start.total(), 6);
        assert_eq!(tools.since_start.get(ListingOutcome::Abandoned), 5);
        assert_eq!(tools.recent().get(ListingOutcome::Abandoned), 3);
        assert_eq!(tools.recent().total(), 3);
        assert_eq!(tools.last_abandoned.as_ref().unwrap().pages, 1);
        let versions: Vec<&str> = tally.versions.iter().map(|v| &**v).collect();
        assert_eq!(versions, ["0.1.0", "0.2\\x07"], "bounded, escaped");
        assert_eq!(tools.items_missed, None, "no catalogue known");
        tallies.listing(&listing(&client, ListingOutcome::Complete, "0.1.0"));
        let tools = tallies.get(&client).unwrap().kind(Kind::Tools);
        assert_eq!(tools.items_missed, Some(0));
    }
}
