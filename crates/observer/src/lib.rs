//! The tap's observer: from the copies a tap hands over
//! ([`mcp_tap_contract::TapEvent`]) to what each client did with a paginated
//! catalogue. It reads the tap's contract (crates/tap-contract), never the
//! tap itself.
//!
//! Like the walker, this is logic over plain data: events in (each with its
//! time), facts out ([`Fact`]), no runtime and no clock of its own. Per
//! session it keeps the cursors it saw handed out (as digests) and each
//! client listing in progress; a listing ends `complete`, `abandoned`,
//! `restarted` or `failed`. Everything belongs to a route (the upstream
//! endpoint a request was for: a gateway serves many servers at many
//! paths). When a route's whole catalogue of a kind is known (a complete
//! listing of it through the tap, or [`Observer::set_reference`]), a
//! listing that stopped early says which items the client never saw.
//!
//! Layout: [`observer`] holds the state and takes events; `lifecycle`
//! follows exchanges and sessions (`followed_exchange`: one exchange and
//! the message in progress each way), `messages` puts messages together and
//! reads them (`parse`), `request` and `answer` handle the two sides of a
//! list call, `ending` tells a finished listing. `session`, `listing`,
//! `catalogue`, `client` and `tally` are the kept state, `bounded` the
//! capped map all of it lives in. `route` says what a route is (a path
//! normalised, an operator's pattern), `routes` which routes a tap keeps.

mod answer;
mod bounded;
pub mod catalogue;
pub mod client;
mod ending;
pub mod fact;
mod followed_exchange;
mod lifecycle;
mod listing;
mod messages;
pub mod observer;
mod parse;
mod pending;
mod request;
pub mod route;
mod routes;
mod session;
pub mod settings;
pub mod tally;

pub use catalogue::CatalogueInfo;
pub use client::{ClientId, OTHER};
pub use fact::{
    AbandonCause, CatalogueSource, ClientListing, CursorOrigin, CursorUse, Fact, Failure,
    ListingOutcome, MissedItems, MissedKnown, PageAnswered, SessionTag,
};
pub use observer::{Observer, ObserverUsage};
pub use route::{normalise, OtherRoute, RouteId, RouteRule, RouteRuleError, Routing, OTHER_ROUTE};
pub use routes::UNMATCHED_AFTER;
pub use settings::{
    ObserverLimits, DEFAULT_CLIENT_IDLE, DEFAULT_INSPECT_BYTES, DEFAULT_MAX_SESSIONS,
};
pub use tally::{ClientRoute, ClientTally, KindTally, LastListing, OutcomeCounts};
