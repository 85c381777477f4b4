//! What the observer tells: plain facts, each carrying what a metric, a
//! span, a log line or a verdict needs, so the application turns them into
//! those without asking back. Every string in them is bounded and shown
//! safely (client labels cut and escaped, item names cut and escaped,
//! sessions as short hashes).

use crate::client::ClientId;
use crate::route::{OtherRoute, RouteId};
use mcp_listing::Kind;
use mcp_tap_contract::identity::IdentitySource;
use mcp_tap_contract::{MergeOutcome, NotObserved, UpstreamFailure};
use std::fmt;
use std::sync::Arc;
use std::time::Instant;

mcp_listing::labelled_enum! {
    /// How a client listing ended; the label is the `outcome` label of
    /// `mcp_client_listings_total`.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
    pub enum ListingOutcome as "outcome" {
        /// The client received a page without `nextCursor`.
        Complete => "complete",
        /// A `nextCursor` it was handed never came back: the client saw a
        /// prefix.
        Abandoned => "abandoned",
        /// It asked for page 1 again before finishing.
        Restarted => "restarted",
        /// An error answer (or no answer: the upstream failed).
        Failed => "failed",
    }
}

mcp_listing::labelled_enum! {
    /// Where a cursor a client sent came from, when not from its own
    /// session; the `origin` label of `mcp_client_foreign_cursor_total`.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
    pub enum CursorOrigin as "origin" {
        /// Handed out in another session (or to another sessionless client).
        OtherSession => "other_session",
        /// Never handed out through this tap (or forgotten: see the bounds).
        Unknown => "unknown",
    }
}

mcp_listing::labelled_enum! {
    /// What ended an abandoned listing.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
    pub enum AbandonCause as "cause" {
        /// The session ended: DELETE, a 404 for it, its stream closed (legacy
        /// HTTP+SSE), the client closed its GET stream, stdio's server exited.
        SessionEnded => "session_ended",
        /// `abandon_after` passed without the cursor coming back.
        Timeout => "timeout",
        /// The observer's bounds made it forget the session.
        Evicted => "evicted",
    }
}

mcp_listing::labelled_enum! {
    /// Where a known catalogue came from.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
    pub enum CatalogueSource as "source" {
        /// A complete listing through this tap (any client).
        Walk => "walk",
        /// Handed in by the application (`Observer::set_reference`).
        Reference => "reference",
    }
}

/// Why a failed listing failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Failure {
    /// A JSON-RPC error answer, with its code when it had an integer one.
    Rpc(Option<i64>),
    /// An HTTP error status and no JSON-RPC answer.
    Http(u16),
    /// The upstream failed before or during the answer.
    Upstream(UpstreamFailure),
    /// An answer the walker refuses: no array for the kind, `nextCursor`
    /// not a string, `resultType` not `complete`, a result not an object.
    Malformed,
}

impl Failure {
    /// The JSON-RPC error code, if the failure was an error answer with one.
    pub fn error_code(self) -> Option<i64> {
        match self {
            Failure::Rpc(code) => code,
            _ => None,
        }
    }
}

/// A session as shown in spans and logs: 8 hex digits of a hash of its id
/// (or of what stands for one), never the id.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct SessionTag(pub(crate) Arc<str>);

impl SessionTag {
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for SessionTag {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// Items of the known catalogue a listing never received.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MissedItems {
    pub count: u64,
    /// Items in the catalogue compared against.
    pub catalogue_items: u64,
    /// Pages a complete walk of it took, when it came from one.
    pub catalogue_pages: Option<u32>,
    pub source: CatalogueSource,
    /// The first missed names in name order, cut and escaped; at most
    /// `max_missed_names`. Empty when the listing could not keep its item
    /// keys (`max_tracked_bytes`): then `count` is catalogue less received.
    pub names: Vec<Arc<str>>,
    /// The last missed name, when `names` does not hold every one.
    pub last: Option<Arc<str>>,
}

/// One list page answered to a client.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PageAnswered {
    pub client: ClientId,
    /// The route it is told under (see [`ClientListing::route`]).
    pub route: RouteId,
    pub kind: Kind,
    pub session: SessionTag,
    /// The page's number in its listing (1 = the first page); `None` for a
    /// page outside any listing (a foreign or stale cursor).
    pub page: Option<u32>,
    pub cursor_sent: bool,
    /// Items on the page, as sent (duplicates and keyless items included).
    pub items: u32,
    pub next_cursor: bool,
    pub requested: Instant,
    pub answered: Instant,
}

/// A cursor a client sent that was refused (-32602) or not its own.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CursorUse {
    pub client: ClientId,
    pub route: RouteId,
    pub kind: Kind,
    pub session: SessionTag,
    pub at: Instant,
}

/// One finished client listing: a walk from a request without a cursor to
/// its end.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClientListing {
    pub client: ClientId,
    /// The route the listing was for, as told: its own, or `other` past
    /// `max_routes` or the client's `max_client_routes`. What it missed is
    /// of its own route's catalogue either way.
    pub route: RouteId,
    /// The version the client gave, cut and escaped.
    pub version: Option<Arc<str>>,
    pub source: IdentitySource,
    pub kind: Kind,
    pub outcome: ListingOutcome,
    /// Set when `outcome` is `abandoned`.
    pub abandoned: Option<AbandonCause>,
    /// Set when `outcome` is `failed`.
    pub failure: Option<Failure>,
    /// Pages answered (a merged answer is one page).
    pub pages: u32,
    /// Unique items received (items as sent when keys could not be kept).
    pub items: u64,
    /// Known catalogue items never received; `None` for a complete
    /// listing or when no catalogue of the kind is known.
    pub missed: Option<MissedItems>,
    /// A -32602 answered to one of its cursors.
    pub invalid_cursor: bool,
    /// The tap answered its first page itself (issue 33's merging).
    pub merged: Option<MergeOutcome>,
    /// Protocol 2026-07-28 or later (`""` was a cursor, not the end).
    pub modern: bool,
    pub session: SessionTag,
    pub started: Instant,
    pub ended: Instant,
}

impl ClientListing {
    /// The JSON-RPC error code that failed it, if any.
    pub fn error_code(&self) -> Option<i64> {
        self.failure.and_then(Failure::error_code)
    }
}

/// A listing told before its route's catalogue was known, now compared
/// with it: the client's last abandoned listing of the kind missed this.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MissedKnown {
    pub client: ClientId,
    pub route: RouteId,
    pub kind: Kind,
    pub missed: MissedItems,
}

/// What the observer found, in the order it found it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Fact {
    /// A client label seen for the first time (at most `max_clients`,
    /// then `other` once).
    NewClient(ClientId),
    /// A client label that sent no list request for `client_idle`,
    /// forgotten with its tallies: its series go and its slot is free.
    ClientGone(ClientId),
    /// A route used for the first time (at most `max_routes` made on the
    /// fly, then `other` once); `path`: the normalised path it was first
    /// used at (the upstream's own for the stdio tap's; none for `other`).
    NewRoute {
        route: RouteId,
        path: Option<Arc<str>>,
    },
    /// A list request counted under the route `other`, and why
    /// (`mcp_tap_other_route_total`).
    OtherRoute(OtherRoute),
    /// A configured route (as written) matched none of the first requests
    /// the tap routed: likely a typo, or not where clients go. Once.
    RouteUnmatched { written: Arc<str>, requests: u64 },
    /// A route's catalogue became known after a client's listing of it
    /// ended (`mcp_client_items_missed` brought up to date).
    MissedKnown(Box<MissedKnown>),
    /// A list page answered (`mcp_client_list_pages_total`).
    Page(PageAnswered),
    /// -32602 answered to a request that carried a cursor
    /// (`mcp_client_invalid_cursor_total`).
    InvalidCursor(CursorUse),
    /// A cursor not handed out in the sender's session
    /// (`mcp_client_foreign_cursor_total`).
    ForeignCursor {
        cursor: CursorUse,
        origin: CursorOrigin,
    },
    /// A client listing ended (`mcp_client_listings_total`,
    /// `mcp_client_items_missed`, a span, a log line).
    Listing(Box<ClientListing>),
    /// A message the observer could not read or keep, for its own reasons
    /// (`unparsable`, `batch`, `too_large`, `observer_full`); the data path
    /// counts its own in `TapStats`.
    NotObserved(NotObserved),
}
