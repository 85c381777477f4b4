//! A listing's end told: the fact, the client's tally, the budget given
//! back — and a complete listing's items kept as its route's known
//! catalogue. A listing abandoned before its route's catalogue is known
//! keeps what it received (within the tracked-bytes budget) until it is;
//! then it says what it missed.

use crate::fact::{Fact, ListingOutcome, SessionTag};
use crate::listing::{End, Listing, DIGEST_BYTES};
use crate::observer::Observer;
use crate::route::RouteId;
use crate::tally::Unresolved;
use mcp_listing::Kind;
use std::time::Instant;

impl Observer {
    /// Tell how `listing` ended. A listing that was never answered and
    /// did not fail (a first page asked again before its answer, a session
    /// gone before it) ends untold: the client was handed nothing.
    pub(crate) fn report(
        &mut self,
        listing: Listing,
        end: End,
        session: SessionTag,
        at: Instant,
        facts: &mut Vec<Fact>,
    ) {
        self.budget.give_back(listing.received.charged);
        let told = match end {
            End::Complete | End::Failed(_) => true,
            End::Abandoned(_) | End::Restarted => listing.handed_anything(),
        };
        if !told {
            return;
        }
        let mut learned = false;
        if matches!(end, End::Complete) && !listing.received.overflow {
            // A merged answer is one page to the client; the catalogue's
            // pages are the upstream's (unknown when the merge was reused).
            let pages = match listing.merged {
                Some(_) => listing.walk_pages,
                None => Some(listing.pages),
            };
            learned = self.catalogues.learn(
                &listing.route,
                listing.kind,
                &listing.received.digests,
                &listing.received.extra,
                pages,
                at,
            );
        }
        let (route, kind) = (listing.route.clone(), listing.kind);
        let catalogue = self.catalogues.get(&route, kind);
        let max_names = self.limits.max_missed_names;
        let told = listing.finish(end, session, catalogue, max_names, at);
        let unknown = catalogue.is_none() && !route.is_other();
        let awaiting = (told.outcome == ListingOutcome::Abandoned && unknown)
            .then(|| self.keep_received(listing));
        if let Some(replaced) = self.tallies.listing(&told, awaiting) {
            self.budget.give_back(replaced.charged);
        }
        facts.push(Fact::Listing(Box::new(told)));
        if learned {
            self.catalogue_known(&route, kind, facts);
        }
    }

    /// What an abandoned listing received, kept for when its catalogue is
    /// known: its item hashes while the budget has room, else the count.
    fn keep_received(&mut self, listing: Listing) -> Unresolved {
        let received = listing.received;
        let items = received.count();
        let cost = received.digests.len() * DIGEST_BYTES;
        let keep = !received.overflow && self.budget.take(cost);
        Unresolved {
            route: listing.route,
            digests: keep.then_some(received.digests),
            items,
            charged: if keep { cost } else { 0 },
        }
    }

    /// `route`'s catalogue of `kind` is known now: the listings told
    /// before it was say what they missed.
    pub(crate) fn catalogue_known(&mut self, route: &RouteId, kind: Kind, facts: &mut Vec<Fact>) {
        let Some(catalogue) = self.catalogues.get(route, kind) else {
            return;
        };
        let max_names = self.limits.max_missed_names;
        let (told, freed) = self.tallies.resolve(route, kind, catalogue, max_names);
        for kept in freed {
            self.budget.give_back(kept.charged);
        }
        facts.extend(told.into_iter().map(|m| Fact::MissedKnown(Box::new(m))));
    }
}
