//! The observer's bounds. Everything it keeps is sized by something a
//! client or server chooses (sessions, cursors, names, message bytes), so
//! each kind of state has a cap here; docs/reliability.md ("Byte budgets")
//! gives the bytes each cap stands for.

use std::time::Duration;

/// How much the observer may keep, and when a listing is given up on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ObserverLimits {
    /// Bytes of one message read; a longer one is skipped (`too_large`).
    /// The tap's own `inspect_bytes` stops copies there first.
    pub inspect_bytes: usize,
    /// Bytes of unfinished messages held across all exchanges; a message
    /// that would pass it is skipped (`observer_full`).
    pub max_buffered_bytes: usize,
    /// Exchanges followed at once; past it the one quiet longest is
    /// forgotten (`observer_full`).
    pub max_exchanges: usize,
    /// Sessions (and sessionless clients) followed at once; past it the
    /// one quiet longest is forgotten with its listings (`observer_full`).
    /// A gateway holds thousands: the default is 10,000, about 2 KB each
    /// (docs/reliability.md, "Byte budgets").
    pub max_sessions: usize,
    /// List and initialize requests awaiting their answer, all sessions.
    pub max_pending: usize,
    /// Cursors a session handed out that are remembered (as digests), per
    /// session; the oldest are forgotten first.
    pub max_cursors_per_session: usize,
    /// Cursors remembered across sessions, to tell `other_session` from
    /// `unknown` (digests, oldest forgotten first).
    pub max_cursors: usize,
    /// Listings of one kind in progress for one sessionless client (where
    /// two processes cannot be told apart, page 1 again is not a restart).
    pub max_sessionless_listings: usize,
    /// Bytes of item keys (digests, and names not in the known catalogue)
    /// held by all listings in progress; a listing past it goes on
    /// counting items but can no longer name what it missed.
    pub max_tracked_bytes: usize,
    /// Items of a known catalogue, per route and kind; a larger walk is
    /// not kept as the catalogue (then nothing is known missed).
    pub max_catalogue_items: usize,
    /// Bytes of every route's known catalogues together (names, hashes);
    /// one that does not fit is not kept.
    pub max_catalogue_bytes: usize,
    /// Distinct client label values per tap; past it `other`.
    pub max_clients: usize,
    /// Routes made on the fly (a pattern's match, a path learned) per tap,
    /// besides the named ones; past it `other`.
    pub max_routes: usize,
    /// (client, route) pairs told under their own route per tap; past it a
    /// client's further routes are `other`.
    pub max_client_routes: usize,
    /// Versions remembered per client.
    pub max_versions: usize,
    /// Names of missed items a finished listing carries.
    pub max_missed_names: usize,
    /// Listings per client and kind in a tally's recent window.
    pub tally_window: usize,
    /// A handed-out `nextCursor` not sent back within this ends its
    /// listing `abandoned`; a request unanswered this long is forgotten.
    pub abandon_after: Duration,
    /// A session with no request for this long is forgotten.
    pub session_idle: Duration,
    /// A client label with no list request for this long is forgotten
    /// with its tallies ([`crate::Fact::ClientGone`]): a dead client
    /// frees its `max_clients` slot and its series go.
    pub client_idle: Duration,
}

/// Sessions followed at once by default: what a gateway holds.
pub const DEFAULT_MAX_SESSIONS: usize = 10_000;

/// How long a client may be quiet before it is forgotten, by default.
pub const DEFAULT_CLIENT_IDLE: Duration = Duration::from_secs(24 * 60 * 60);

/// The tap's default `inspect_bytes` (4 MiB).
pub const DEFAULT_INSPECT_BYTES: usize = 4 << 20;

impl Default for ObserverLimits {
    fn default() -> Self {
        ObserverLimits {
            inspect_bytes: DEFAULT_INSPECT_BYTES,
            max_buffered_bytes: 32 << 20,
            max_exchanges: 16_384,
            max_sessions: DEFAULT_MAX_SESSIONS,
            max_pending: 4_096,
            max_cursors_per_session: 32,
            max_cursors: 65_536,
            max_sessionless_listings: 8,
            max_tracked_bytes: 16 << 20,
            max_catalogue_items: 10_000,
            max_catalogue_bytes: 32 << 20,
            max_clients: 64,
            max_routes: 64,
            max_client_routes: 256,
            max_versions: 8,
            max_missed_names: 8,
            tally_window: 100,
            abandon_after: Duration::from_secs(30),
            session_idle: Duration::from_secs(600),
            client_idle: DEFAULT_CLIENT_IDLE,
        }
    }
}
