//! A session as the observer follows it: who the client said it was on
//! `initialize`, the protocol it negotiated, its listings in progress and
//! the cursors it was handed (digests, the newest `max_cursors_per_session`).
//!
//! Sessions are keyed by a digest of `Mcp-Session-Id` (or a legacy
//! `sessionId`), by the stdio tap's one exchange, or — for sessionless
//! servers — by the client's label and route: there, requests of one label
//! to one route share a session and cursors tell their walks apart. A
//! session belongs to the route of the request that made it (a legacy
//! session to its stream's, whatever path its POSTs use).

use crate::client::ClientId;
use crate::fact::SessionTag;
use crate::listing::Listing;
use crate::route::RouteId;
use crate::routes::Resolved;
use mcp_listing::cursor::CursorDigest;
use mcp_listing::{Era, Kind};
use mcp_tap_contract::identity::ClientInfo;
use mcp_tap_contract::ExchangeId;
use std::collections::VecDeque;
use std::sync::Arc;
use std::time::Instant;

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) enum SessionKey {
    /// `Mcp-Session-Id` or a legacy `sessionId`, digested.
    Id(CursorDigest),
    /// The stdio tap's exchange (one server process, one session).
    Stdio(ExchangeId),
    /// Sessionless requests of one client label to one route.
    Client(ClientId, RouteId),
}

impl SessionKey {
    /// The key of a session id as the client or upstream wrote it.
    pub(crate) fn of_id(bytes: &[u8]) -> SessionKey {
        SessionKey::Id(CursorDigest::of(&String::from_utf8_lossy(bytes)))
    }

    fn tag(&self) -> SessionTag {
        let shown = match self {
            SessionKey::Id(digest) => digest.short(),
            SessionKey::Stdio(exchange) => {
                CursorDigest::of(&format!("stdio {}", exchange.0)).short()
            }
            SessionKey::Client(client, route) => {
                CursorDigest::of(&format!("{} {}", client.label(), route.name())).short()
            }
        };
        SessionTag(Arc::from(shown))
    }
}

/// A cursor the session was handed, and by which listing.
#[derive(Debug, Clone, Copy)]
struct Handed {
    cursor: CursorDigest,
    kind: Kind,
    listing: Option<u64>,
}

/// Whose a cursor a client sent is, seen from its own session.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Owner {
    /// It continues this listing in progress.
    Listing(u64),
    /// This session was handed it, but its listing is over.
    Stale,
    /// Not this session's.
    NotOurs,
}

/// What a client's `initialize` said: who it is and the era of the
/// protocol version it asked for (the answer's version replaces it; a
/// version we do not know is placed by `Era::of_label`, as the tap's
/// merging and the walker place it).
#[derive(Debug, Clone, Default)]
pub(crate) struct Introduction {
    pub client_info: Option<ClientInfo>,
    pub era: Option<Era>,
}

#[derive(Debug)]
pub(crate) struct Session {
    pub serial: u64,
    pub tag: SessionTag,
    pub sessionless: bool,
    /// The route of the request that made it, and why it is `other`
    /// when it is.
    pub route: Resolved,
    pub introduced: Introduction,
    pub last: Instant,
    pub listings: Vec<Listing>,
    handed: VecDeque<Handed>,
}

impl Session {
    pub(crate) fn new(key: &SessionKey, serial: u64, at: Instant, route: Resolved) -> Session {
        Session {
            serial,
            tag: key.tag(),
            sessionless: matches!(key, SessionKey::Client(..)),
            route,
            introduced: Introduction::default(),
            last: at,
            listings: Vec::new(),
            handed: VecDeque::new(),
        }
    }

    pub(crate) fn modern(&self) -> bool {
        self.introduced.era.is_some_and(Era::is_modern)
    }

    pub(crate) fn listing_mut(&mut self, serial: u64) -> Option<&mut Listing> {
        self.listings.iter_mut().find(|l| l.serial == serial)
    }

    pub(crate) fn take_listing(&mut self, serial: u64) -> Option<Listing> {
        let at = self.listings.iter().position(|l| l.serial == serial)?;
        Some(self.listings.remove(at))
    }

    /// Remember that `cursor` was handed out, forgetting the oldest past
    /// `cap`.
    pub(crate) fn hand_out(
        &mut self,
        cursor: CursorDigest,
        kind: Kind,
        listing: Option<u64>,
        cap: usize,
    ) {
        self.handed.retain(|h| h.cursor != cursor || h.kind != kind);
        if self.handed.len() >= cap.max(1) {
            self.handed.pop_front();
        }
        self.handed.push_back(Handed {
            cursor,
            kind,
            listing,
        });
    }

    /// Whose `cursor` is, for a `kind` request in this session.
    pub(crate) fn owner(&self, kind: Kind, cursor: CursorDigest) -> Owner {
        let of_kind = || self.listings.iter().filter(|l| l.kind == kind);
        if let Some(listing) = of_kind().find(|l| l.expected == Some(cursor)) {
            return Owner::Listing(listing.serial);
        }
        let handed = self
            .handed
            .iter()
            .rev()
            .find(|h| h.cursor == cursor && h.kind == kind);
        if let Some(handed) = handed {
            return match handed.listing {
                Some(serial) if of_kind().any(|l| l.serial == serial) => Owner::Listing(serial),
                _ => Owner::Stale,
            };
        }
        match of_kind().find(|l| l.blind) {
            Some(listing) => Owner::Listing(listing.serial),
            None => Owner::NotOurs,
        }
    }

    #[cfg(test)]
    fn cursors_held(&self) -> usize {
        self.handed.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::listing::Asker;
    use mcp_tap_contract::identity::IdentitySource;

    fn route() -> RouteId {
        RouteId::new("/mcp", false)
    }

    fn resolved() -> Resolved {
        Resolved {
            route: route(),
            other: None,
        }
    }

    fn asker() -> Asker {
        let mut clients = crate::client::Clients::new(4);
        Asker {
            client: clients.resolve("c", Instant::now()).0,
            route: route(),
            version: None,
            source: IdentitySource::Unknown,
        }
    }

    #[test]
    fn a_cursor_is_the_listings_it_was_handed_to_else_stale_else_not_ours() {
        let now = Instant::now();
        let key = SessionKey::of_id(b"s-1");
        let mut session = Session::new(&key, 1, now, resolved());
        let c1 = CursorDigest::of("c1");
        let c2 = CursorDigest::of("c2");
        let mut listing = Listing::new(7, Kind::Tools, route(), asker(), false, now);
        listing.expected = Some(c2);
        session.listings.push(listing);
        session.hand_out(c1, Kind::Tools, Some(7), 4);
        session.hand_out(c2, Kind::Tools, Some(7), 4);
        assert_eq!(session.owner(Kind::Tools, c2), Owner::Listing(7));
        assert_eq!(session.owner(Kind::Tools, c1), Owner::Listing(7));
        assert_eq!(session.owner(Kind::Prompts, c1), Owner::NotOurs);
        session.take_listing(7);
        assert_eq!(session.owner(Kind::Tools, c1), Owner::Stale);
        assert_eq!(
            session.owner(Kind::Tools, CursorDigest::of("x")),
            Owner::NotOurs
        );
    }

    #[test]
    fn handed_cursors_are_bounded_per_session() {
        let mut session = Session::new(&SessionKey::of_id(b"s"), 1, Instant::now(), resolved());
        for i in 0..100 {
            session.hand_out(CursorDigest::of(&i.to_string()), Kind::Tools, None, 8);
        }
        assert_eq!(session.cursors_held(), 8);
        assert_eq!(
            session.owner(Kind::Tools, CursorDigest::of("99")),
            Owner::Stale
        );
        assert_eq!(
            session.owner(Kind::Tools, CursorDigest::of("0")),
            Owner::NotOurs
        );
        assert_eq!(session.tag.as_str().len(), 8);
    }
}
