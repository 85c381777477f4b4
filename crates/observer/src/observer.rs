//! The observer itself: one per tap, fed every event the tap offers, in
//! order, and ticked now and then. What it keeps is bounded by
//! [`ObserverLimits`]; what it finds comes out as [`Fact`]s.

use crate::bounded::Lru;
use crate::catalogue::{CatalogueInfo, Catalogues};
use crate::client::Clients;
use crate::fact::Fact;
use crate::followed_exchange::{Caller, Exchange, MergeNote, PendingKey};
use crate::listing::{Budget, End};
use crate::pending::Pending;
use crate::route::{RouteId, Routing};
use crate::routes::{ClientRoutes, Resolved, Routes};
use crate::session::{Session, SessionKey};
use crate::settings::ObserverLimits;
use crate::tally::{ClientRoute, ClientTally, Tallies};
use mcp_listing::cursor::CursorDigest;
use mcp_listing::Kind;
use mcp_tap_contract::apps::Apps;
use mcp_tap_contract::identity::ClientInfo;
use mcp_tap_contract::{NotObserved, TapEvent};
use std::time::Instant;

/// What clients do with one tap's paginated catalogue.
#[derive(Debug)]
pub struct Observer {
    pub(crate) limits: ObserverLimits,
    /// The latest time an event or tick carried (time never goes back
    /// here, whatever order the data path's clocks were read in).
    now: Option<Instant>,
    pub(crate) exchanges: Lru<mcp_tap_contract::ExchangeId, Exchange>,
    pub(crate) sessions: Lru<SessionKey, Session>,
    pub(crate) pending: Lru<PendingKey, Pending>,
    /// Which session (serial) was last handed each cursor.
    pub(crate) origins: Lru<CursorDigest, u64>,
    pub(crate) clients: Clients,
    /// The client info a stateless server's callers gave on `initialize`,
    /// by their operator header and User-Agent product (no session to
    /// bind it to).
    pub(crate) sessionless_info: Lru<Caller, ClientInfo>,
    pub(crate) tallies: Tallies,
    pub(crate) catalogues: Catalogues,
    pub(crate) routes: Routes,
    pub(crate) client_routes: ClientRoutes,
    /// Bytes of unfinished messages held.
    pub(crate) buffered: usize,
    pub(crate) budget: Budget,
    /// The operator's apps, which name clients by address and User-Agent.
    pub(crate) apps: Apps,
    serial: u64,
}

/// How much the observer holds now, against its limits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ObserverUsage {
    pub exchanges: usize,
    pub sessions: usize,
    pub listings: usize,
    pub pending: usize,
    /// Cursor digests remembered across sessions.
    pub cursors: usize,
    pub buffered_bytes: usize,
    pub tracked_bytes: usize,
    pub clients: usize,
    /// Routes used (`other` included once used).
    pub routes: usize,
    /// (client, route) pairs with a tally of their own.
    pub client_routes: usize,
    pub catalogue_bytes: usize,
}

/// Where a session made now gets its route.
pub(crate) enum RouteOf<'a> {
    /// From the path (normalised) of the request that makes it.
    Path(Option<&'a str>),
    /// Already resolved (a sessionless client's, keyed by its route).
    Known(Resolved),
}

impl Observer {
    /// An observer that learns its routes from the paths clients use
    /// (requests without a path, as the stdio tap's, are one route).
    pub fn new(limits: ObserverLimits) -> Observer {
        Observer::with_routing(limits, Routing::learning(None))
    }

    /// An observer whose requests become routes as `routing` says.
    pub fn with_routing(limits: ObserverLimits, routing: Routing) -> Observer {
        Observer {
            exchanges: Lru::new(limits.max_exchanges),
            sessions: Lru::new(limits.max_sessions),
            pending: Lru::new(limits.max_pending),
            origins: Lru::new(limits.max_cursors),
            clients: Clients::new(limits.max_clients),
            sessionless_info: Lru::new(limits.max_clients),
            tallies: Tallies::new(limits.tally_window, limits.max_versions),
            catalogues: Catalogues::new(limits.max_catalogue_items, limits.max_catalogue_bytes),
            routes: Routes::new(routing, limits.max_routes),
            client_routes: ClientRoutes::new(limits.max_client_routes),
            buffered: 0,
            budget: Budget {
                used: 0,
                max: limits.max_tracked_bytes,
            },
            apps: Apps::default(),
            serial: 0,
            now: None,
            limits,
        }
    }

    /// This observer names clients by the operator's `apps`, as the tap's
    /// merging does.
    pub fn with_apps(mut self, apps: Apps) -> Observer {
        self.apps = apps;
        self
    }

    pub fn limits(&self) -> &ObserverLimits {
        &self.limits
    }

    /// Take the tap's next event; what it settles is pushed to `facts`.
    pub fn observe(&mut self, event: TapEvent, facts: &mut Vec<Fact>) {
        match event {
            TapEvent::Opened { exchange, at, head } => {
                let at = self.stamp(at);
                self.opened(exchange, at, &head, facts);
            }
            TapEvent::Answered { exchange, at, head } => {
                let at = self.stamp(at);
                self.answered(exchange, at, &head, facts);
            }
            TapEvent::Chunk {
                exchange,
                direction,
                bytes,
            } => self.chunk(exchange, direction, bytes),
            TapEvent::MessageEnd {
                exchange,
                direction,
                at,
                copy,
            } => {
                let at = self.stamp(at);
                self.message_end(exchange, direction, copy, at, facts);
            }
            TapEvent::LegacySession { exchange, session } => {
                // Its GET was opened first, so there is a time.
                if let Some(at) = self.now {
                    self.legacy_session(exchange, session.as_bytes(), at, facts);
                }
            }
            TapEvent::Merged {
                exchange,
                kind,
                outcome,
                pages,
                ..
            } => {
                if let Some(ex) = self.exchanges.peek_mut(&exchange) {
                    ex.merged = Some(MergeNote {
                        kind,
                        outcome,
                        pages,
                    });
                }
            }
            TapEvent::Closed { exchange, at, end } => {
                let at = self.stamp(at);
                self.closed(exchange, end, at, facts);
            }
        }
    }

    /// Let time pass: listings whose cursor did not come back within
    /// `abandon_after` end `abandoned`, unanswered requests and idle
    /// sessions are forgotten.
    pub fn tick(&mut self, now: Instant, facts: &mut Vec<Fact>) {
        let now = self.stamp(now);
        self.expire(now, facts);
    }

    /// The application's reference for `route`'s `kind` (a configured
    /// target's last complete poll, or the tap's own walk of the route):
    /// names as the walker keeps them, and the pages its walk took when
    /// known. Listings told before it was known say now what they missed.
    pub fn set_reference<I, S>(
        &mut self,
        route: &RouteId,
        kind: Kind,
        names: I,
        pages: Option<u32>,
        now: Instant,
        facts: &mut Vec<Fact>,
    ) where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        if self
            .catalogues
            .set_reference(route, kind, names, pages, now)
        {
            self.catalogue_known(route, kind, facts);
        }
    }

    /// What is known of `route`'s catalogue of `kind`.
    pub fn catalogue(&self, route: &RouteId, kind: Kind) -> Option<&CatalogueInfo> {
        self.catalogues.info(route, kind)
    }

    /// Every known catalogue, by route and kind.
    pub fn catalogues(&self) -> impl Iterator<Item = (&RouteId, Kind, &CatalogueInfo)> {
        self.catalogues.all()
    }

    /// The route of the upstream's own path (the only one of a tap in front
    /// of one server, and of the stdio tap).
    pub fn default_route(&self) -> &RouteId {
        self.routes.default_route()
    }

    /// A route by its name (an operator's, or a path the tap learned).
    pub fn route_named(&self, name: &str) -> Option<RouteId> {
        self.routes.named(name)
    }

    /// Each configured route as written, with the requests it matched.
    pub fn route_rules(&self) -> impl Iterator<Item = (&str, u64)> {
        self.routes.rules()
    }

    /// Every tally: per client and route (at most `max_client_routes`
    /// pairs, and `other`).
    pub fn tallies(&self) -> impl Iterator<Item = (&ClientRoute, &ClientTally)> {
        self.tallies.iter()
    }

    pub fn tally(&self, key: &ClientRoute) -> Option<&ClientTally> {
        self.tallies.get(key)
    }

    pub fn usage(&self) -> ObserverUsage {
        ObserverUsage {
            exchanges: self.exchanges.len(),
            sessions: self.sessions.len(),
            listings: self.sessions.values().map(|s| s.listings.len()).sum(),
            pending: self.pending.len(),
            cursors: self.origins.len(),
            buffered_bytes: self.buffered,
            tracked_bytes: self.budget.used,
            clients: self.clients.len(),
            routes: self.routes.len(),
            client_routes: self.client_routes.len(),
            catalogue_bytes: self.catalogues.bytes(),
        }
    }

    pub(crate) fn stamp(&mut self, at: Instant) -> Instant {
        let now = self.now.map_or(at, |now| now.max(at));
        self.now = Some(now);
        now
    }

    pub(crate) fn next_serial(&mut self) -> u64 {
        self.serial += 1;
        self.serial
    }

    /// The session of `key`, touched (created when new): its serial. A
    /// session forgotten to make room has its listings told as abandoned.
    pub(crate) fn ensure_session(
        &mut self,
        key: &SessionKey,
        route: RouteOf<'_>,
        at: Instant,
        facts: &mut Vec<Fact>,
    ) -> u64 {
        let fresh = self.serial + 1;
        let route = match (self.sessions.contains(key), route) {
            (true, _) => None,
            (false, RouteOf::Known(resolved)) => Some(resolved),
            (false, RouteOf::Path(path)) => Some(self.routes.resolve(path, facts)),
        };
        let default = self.routes.default_route().clone();
        let (session, evicted) = self.sessions.get_or_insert_with(key.clone(), || {
            let route = route.unwrap_or(Resolved {
                route: default,
                other: None,
            });
            Session::new(key, fresh, at, route)
        });
        session.last = at;
        let serial = session.serial;
        if serial == fresh {
            self.serial = fresh;
        }
        if let Some((_, evicted)) = evicted {
            facts.push(Fact::NotObserved(NotObserved::ObserverFull));
            self.end_listings(
                evicted,
                End::Abandoned(crate::fact::AbandonCause::Evicted),
                at,
                facts,
            );
        }
        serial
    }
}
