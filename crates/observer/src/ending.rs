//! A listing's end told: the fact, the client's tally, the budget given
//! back — and a complete listing's items kept as the known catalogue.

use crate::fact::{Fact, SessionTag};
use crate::listing::{End, Listing};
use crate::observer::Observer;
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
        if matches!(end, End::Complete) && !listing.received.overflow {
            // A merged answer is one page to the client; the catalogue's
            // pages are the upstream's (unknown when the merge was reused).
            let pages = match listing.merged {
                Some(_) => listing.walk_pages,
                None => Some(listing.pages),
            };
            self.catalogues.learn(
                listing.kind,
                &listing.received.digests,
                &listing.received.extra,
                pages,
                self.limits.max_catalogue_items,
                at,
            );
        }
        let catalogue = self.catalogues.get(listing.kind);
        let max_names = self.limits.max_missed_names;
        let told = listing.finish(end, session, catalogue, max_names, at);
        self.tallies.listing(&told);
        facts.push(Fact::Listing(Box::new(told)));
    }
}
