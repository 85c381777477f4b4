//! One client listing in progress: from a request without a cursor to a
//! page without `nextCursor`, an error, page 1 again, or a cursor that
//! never comes back. It keeps the items it received as 64-bit digests (and
//! the names of those the known catalogue lacks, so a complete walk can
//! become the catalogue), charged to one byte budget shared by all
//! listings of a tap.

use crate::catalogue::{item_digest, shown_name, Catalogue};
use crate::client::ClientId;
use crate::fact::{AbandonCause, ClientListing, Failure, ListingOutcome, SessionTag};
use crate::route::RouteId;
use mcp_listing::cursor::CursorDigest;
use mcp_listing::Kind;
use mcp_tap_contract::identity::IdentitySource;
use mcp_tap_contract::MergeOutcome;
use std::borrow::Cow;
use std::collections::HashSet;
use std::sync::Arc;
use std::time::Instant;

/// Bytes one kept digest is charged (the set's entry and its slack).
pub(crate) const DIGEST_BYTES: usize = 16;
/// Bytes one kept name is charged on top of its text.
const NAME_OVERHEAD: usize = 40;

/// Bytes of item keys kept by all listings in progress.
#[derive(Debug)]
pub(crate) struct Budget {
    pub used: usize,
    pub max: usize,
}

impl Budget {
    pub(crate) fn take(&mut self, bytes: usize) -> bool {
        if self.used + bytes > self.max {
            return false;
        }
        self.used += bytes;
        true
    }

    pub(crate) fn give_back(&mut self, bytes: usize) {
        self.used = self.used.saturating_sub(bytes);
    }
}

/// The items a listing received.
#[derive(Debug, Default)]
pub(crate) struct Received {
    pub digests: HashSet<u64>,
    /// Names of items the known catalogue lacked when they arrived.
    pub extra: Vec<(u64, Arc<str>)>,
    /// Items as sent, keyless and repeated ones included.
    pub raw: u64,
    /// The budget ran out: `digests` is not the whole of it.
    pub overflow: bool,
    /// Bytes charged to the budget.
    pub charged: usize,
}

impl Received {
    /// Take one page's items.
    pub(crate) fn add(
        &mut self,
        keys: &[Cow<'_, str>],
        count: u64,
        catalogue: Option<&Catalogue>,
        budget: &mut Budget,
    ) {
        self.raw += count;
        if self.overflow {
            return;
        }
        for key in keys.iter().map(|k| k.as_ref()) {
            let digest = item_digest(key);
            if self.digests.contains(&digest) {
                continue;
            }
            let known = catalogue.is_some_and(|c| c.contains(digest));
            let cost = DIGEST_BYTES + if known { 0 } else { NAME_OVERHEAD + key.len() };
            if !budget.take(cost) {
                self.overflow = true;
                return;
            }
            self.charged += cost;
            self.digests.insert(digest);
            if !known {
                self.extra.push((digest, shown_name(key)));
            }
        }
    }

    /// Unique items received (items as sent when the keys overflowed).
    pub(crate) fn count(&self) -> u64 {
        if self.overflow {
            self.raw
        } else {
            self.digests.len() as u64
        }
    }
}

/// Who asked, as the listing's first page said.
#[derive(Debug, Clone)]
pub(crate) struct Asker {
    pub client: ClientId,
    /// The route it is told under: the request's own, or `other` past the
    /// bounds.
    pub route: RouteId,
    pub version: Option<Arc<str>>,
    pub source: IdentitySource,
}

#[derive(Debug)]
pub(crate) struct Listing {
    pub serial: u64,
    pub kind: Kind,
    /// The route whose catalogue it is compared with (its own, even when
    /// told under `other`).
    pub route: RouteId,
    pub asker: Asker,
    pub modern: bool,
    pub started: Instant,
    /// The last request or answer of this listing.
    pub last: Instant,
    pub pages: u32,
    pub received: Received,
    /// The last `nextCursor` handed out.
    pub expected: Option<CursorDigest>,
    /// Requests of this listing awaiting their answer.
    pub waiting: u32,
    /// An answer to it passed unread: its next cursor is not known, so an
    /// unrecognised cursor in its session continues it.
    pub blind: bool,
    pub invalid_cursor: bool,
    pub merged: Option<MergeOutcome>,
    /// Upstream pages the tap walked to merge it (its catalogue's pages).
    pub walk_pages: Option<u32>,
}

/// How a listing ends.
#[derive(Debug, Clone, Copy)]
pub(crate) enum End {
    Complete,
    Abandoned(AbandonCause),
    Restarted,
    Failed(Failure),
}

impl Listing {
    pub(crate) fn new(
        serial: u64,
        kind: Kind,
        route: RouteId,
        asker: Asker,
        modern: bool,
        at: Instant,
    ) -> Listing {
        Listing {
            serial,
            kind,
            route,
            asker,
            modern,
            started: at,
            last: at,
            pages: 0,
            received: Received::default(),
            expected: None,
            waiting: 0,
            blind: false,
            invalid_cursor: false,
            merged: None,
            walk_pages: None,
        }
    }

    /// Whether the client was handed anything a later request could
    /// continue: a listing that never got an answer ends unreported.
    pub(crate) fn handed_anything(&self) -> bool {
        self.pages > 0 || self.blind
    }

    /// The finished listing, as told.
    pub(crate) fn finish(
        &self,
        end: End,
        session: SessionTag,
        catalogue: Option<&Catalogue>,
        max_names: usize,
        at: Instant,
    ) -> ClientListing {
        let (outcome, abandoned, failure) = match end {
            End::Complete => (ListingOutcome::Complete, None, None),
            End::Abandoned(cause) => (ListingOutcome::Abandoned, Some(cause), None),
            End::Restarted => (ListingOutcome::Restarted, None, None),
            End::Failed(failure) => (ListingOutcome::Failed, None, Some(failure)),
        };
        let received = &self.received;
        let missed = match outcome {
            ListingOutcome::Complete => None,
            _ => catalogue.map(|c| {
                let keys = (!received.overflow).then_some(&received.digests);
                c.missed(keys, received.count(), max_names)
            }),
        };
        ClientListing {
            client: self.asker.client.clone(),
            route: self.asker.route.clone(),
            version: self.asker.version.clone(),
            source: self.asker.source,
            kind: self.kind,
            outcome,
            abandoned,
            failure,
            pages: self.pages,
            items: received.count(),
            missed,
            invalid_cursor: self.invalid_cursor,
            merged: self.merged,
            modern: self.modern,
            session,
            started: self.started,
            ended: at,
        }
    }
}
