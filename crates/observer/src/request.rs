//! A client's requests: `initialize` (who it is, the version it asks for)
//! and the four list methods — where each list request belongs (a new
//! listing, the continuation of one, a cursor that is stale or not the
//! session's) — and what is remembered until the answer comes.

use crate::fact::{AbandonCause, CursorOrigin, CursorUse, Fact, SessionTag};
use crate::followed_exchange::{Caller, PendingKey, Scope};
use crate::listing::{Asker, End, Listing};
use crate::observer::{Observer, RouteOf};
use crate::parse::{CursorField, Params, RpcId};
use crate::pending::{Asked, AskedList, Pending};
use crate::route::RouteId;
use crate::routes::Resolved;
use crate::session::{Introduction, Owner, SessionKey};
use crate::tally::shown_version;
use mcp_listing::{Era, Kind};
use mcp_tap_contract::identity::{self, ClientInfo, IdentitySource};
use mcp_tap_contract::{ExchangeId, NotObserved};
use serde_json::{Map, Value};
use std::sync::Arc;
use std::time::Instant;

/// The `_meta` key of a 2026-07-28 request's protocol version.
const META_PROTOCOL_VERSION: &str = "io.modelcontextprotocol/protocolVersion";

/// Where a list request belongs.
enum Place {
    First,
    Continues(u64),
    /// A cursor of this session whose listing is over.
    Stale,
    Foreign(CursorOrigin),
}

impl Observer {
    pub(crate) fn client_request(
        &mut self,
        exchange: ExchangeId,
        id: RpcId,
        method: &str,
        params: Params<'_>,
        at: Instant,
        facts: &mut Vec<Fact>,
    ) {
        if method == "initialize" {
            self.initialize_request(exchange, id, params, at, facts);
        } else if let Some(kind) = Kind::ALL.into_iter().find(|k| k.method() == method) {
            self.list_request(exchange, id, kind, params, at, facts);
        }
    }

    fn initialize_request(
        &mut self,
        exchange: ExchangeId,
        id: RpcId,
        mut params: Params<'_>,
        at: Instant,
        facts: &mut Vec<Fact>,
    ) {
        let introduced = Introduction {
            era: params
                .protocol_version
                .as_deref()
                .map(|v| Era::of_label(v.as_bytes())),
            client_info: client_info("initialize", &mut params),
        };
        let Some(ex) = self.exchanges.peek(&exchange) else {
            return;
        };
        let path = ex.path.clone();
        let scope = match ex.session.clone() {
            Some(key) => {
                let serial = self.ensure_session(&key, RouteOf::Path(path.as_deref()), at, facts);
                if let Some(session) = self.sessions.peek_mut(&key) {
                    session.introduced = introduced;
                }
                Scope::Session(serial)
            }
            None => {
                // Streamable HTTP: the session comes with the answer.
                if let Some(ex) = self.exchanges.peek_mut(&exchange) {
                    ex.initialize = Some(introduced);
                }
                Scope::Exchange(exchange)
            }
        };
        let pending = Pending {
            exchange,
            requested: at,
            asked: Asked::Initialize,
        };
        self.await_answer(PendingKey { scope, id }, pending, facts);
    }

    fn list_request(
        &mut self,
        exchange: ExchangeId,
        id: RpcId,
        kind: Kind,
        mut params: Params<'_>,
        at: Instant,
        facts: &mut Vec<Fact>,
    ) {
        let Some(ex) = self.exchanges.peek(&exchange) else {
            return;
        };
        let (caller, ex_session, path) = (ex.caller.clone(), ex.session.clone(), ex.path.clone());
        let meta_version = meta_protocol(&params);
        let info = client_info(kind.method(), &mut params);
        let (client, version, source) = self.who(caller, info, ex_session.as_ref(), at, facts);
        let (key, serial) =
            self.session_of(ex_session.clone(), path.as_deref(), &client, at, facts);
        let Some(session) = self.sessions.peek(&key) else {
            return;
        };
        let modern = meta_version.map_or(session.modern(), Era::is_modern);
        let tag = session.tag.clone();
        let own = session.route.clone();
        let asker = Asker {
            route: self.told_route(&client, own.clone(), facts),
            client,
            version,
            source,
        };
        let place = self.place(&key, serial, kind, params.cursor, modern);
        let cursor_sent = !matches!(place, Place::First);
        let listing = self.join(
            place,
            &key,
            kind,
            (&asker, &own.route),
            &tag,
            modern,
            at,
            facts,
        );
        let asked = AskedList {
            kind,
            session: key,
            session_serial: serial,
            tag,
            listing,
            cursor_sent,
            client: asker.client,
            route: asker.route,
            own_route: own.route,
            modern,
        };
        let scope = match ex_session {
            Some(_) => Scope::Session(serial),
            None => Scope::Exchange(exchange),
        };
        let pending = Pending {
            exchange,
            requested: at,
            asked: Asked::List(asked),
        };
        self.await_answer(PendingKey { scope, id }, pending, facts);
    }

    /// The listing a request joins: a new one, the one it continues, or
    /// none (a stale cursor; a foreign one, told).
    #[allow(clippy::too_many_arguments)]
    fn join(
        &mut self,
        place: Place,
        key: &SessionKey,
        kind: Kind,
        (asker, own_route): (&Asker, &RouteId),
        tag: &SessionTag,
        modern: bool,
        at: Instant,
        facts: &mut Vec<Fact>,
    ) -> Option<u64> {
        match place {
            Place::First => {
                let route = own_route.clone();
                let asker = asker.clone();
                Some(self.start_listing(key, kind, (route, asker), modern, at, facts))
            }
            Place::Continues(listing) => {
                let session = self.sessions.peek_mut(key);
                if let Some(l) = session.and_then(|s| s.listing_mut(listing)) {
                    l.waiting += 1;
                    l.last = at;
                }
                Some(listing)
            }
            Place::Stale => None,
            Place::Foreign(origin) => {
                let cursor = CursorUse {
                    client: asker.client.clone(),
                    route: asker.route.clone(),
                    kind,
                    session: tag.clone(),
                    at,
                };
                self.tallies.foreign(&cursor, origin);
                facts.push(Fact::ForeignCursor { cursor, origin });
                None
            }
        }
    }

    /// Who asks: the operator's header, the client's info (the request's
    /// own, else what its session's — or, with no session, its caller's —
    /// `initialize` said), its User-Agent product, by precedence; as a
    /// bounded label.
    fn who(
        &mut self,
        caller: Caller,
        info: Option<ClientInfo>,
        session: Option<&SessionKey>,
        at: Instant,
        facts: &mut Vec<Fact>,
    ) -> (crate::client::ClientId, Option<Arc<str>>, IdentitySource) {
        let bound = match session {
            Some(key) => self
                .sessions
                .peek(key)
                .and_then(|s| s.introduced.client_info.clone()),
            None => self.sessionless_info.peek(&caller).cloned(),
        };
        let (who, source) = identity::identify(caller.claims(info.or(bound)));
        let (client, new) = self.clients.resolve(&who.name, at);
        if new {
            facts.push(Fact::NewClient(client.clone()));
        }
        (client, who.version.as_deref().map(shown_version), source)
    }

    /// The session a list request belongs to (its own, or with none the
    /// client's on the request's route), made when new: its key and serial.
    fn session_of(
        &mut self,
        session: Option<SessionKey>,
        path: Option<&str>,
        client: &crate::client::ClientId,
        at: Instant,
        facts: &mut Vec<Fact>,
    ) -> (SessionKey, u64) {
        let (key, route) = match session {
            Some(key) => (key, RouteOf::Path(path)),
            None => {
                let resolved = self.routes.resolve(path, facts);
                let key = SessionKey::Client(client.clone(), resolved.route.clone());
                (key, RouteOf::Known(resolved))
            }
        };
        let serial = self.ensure_session(&key, route, at, facts);
        (key, serial)
    }

    /// The route `client`'s request to `own` is told under; a request told
    /// under `other` is counted, with why.
    fn told_route(
        &mut self,
        client: &crate::client::ClientId,
        own: Resolved,
        facts: &mut Vec<Fact>,
    ) -> RouteId {
        let shown = self.client_routes.shown(client, &own.route);
        if let Some(why) = own.other.or(shown.other) {
            facts.push(Fact::OtherRoute(why));
        }
        shown.route
    }

    /// Where a request with `cursor` belongs in the session of `key`.
    fn place(
        &self,
        key: &SessionKey,
        serial: u64,
        kind: Kind,
        cursor: CursorField,
        modern: bool,
    ) -> Place {
        let digest = match cursor {
            CursorField::Absent | CursorField::Null => return Place::First,
            // Before 2026-07-28 `""` ends a walk; a client sending it back
            // asks for the first page again.
            CursorField::Text(digest) if digest.is_blank() && !modern => return Place::First,
            CursorField::Text(digest) => digest,
            CursorField::Other => return Place::Foreign(CursorOrigin::Unknown),
        };
        let owner = self
            .sessions
            .peek(key)
            .map_or(Owner::NotOurs, |s| s.owner(kind, digest));
        match owner {
            Owner::Listing(listing) => Place::Continues(listing),
            Owner::Stale => Place::Stale,
            Owner::NotOurs => match self.origins.peek(&digest) {
                Some(origin) if *origin != serial => Place::Foreign(CursorOrigin::OtherSession),
                Some(_) => Place::Stale,
                None => Place::Foreign(CursorOrigin::Unknown),
            },
        }
    }

    /// A request without a cursor: a new listing. In a session, a listing
    /// of the kind still in progress ends `restarted`; for a sessionless
    /// client, where two processes look alike, only the oldest past
    /// `max_sessionless_listings` ends (`abandoned`, evicted).
    fn start_listing(
        &mut self,
        key: &SessionKey,
        kind: Kind,
        (route, asker): (RouteId, Asker),
        modern: bool,
        at: Instant,
        facts: &mut Vec<Fact>,
    ) -> u64 {
        let serial = self.next_serial();
        let cap = self.limits.max_sessionless_listings.max(1);
        let Some(session) = self.sessions.peek_mut(key) else {
            return serial;
        };
        let mut ended = Vec::new();
        if session.sessionless {
            let of_kind = session.listings.iter().filter(|l| l.kind == kind).count();
            if of_kind >= cap {
                if let Some(oldest) = session.listings.iter().position(|l| l.kind == kind) {
                    let end = End::Abandoned(AbandonCause::Evicted);
                    ended.push((session.listings.remove(oldest), end));
                }
            }
        } else {
            let (restarted, kept) = std::mem::take(&mut session.listings)
                .into_iter()
                .partition(|l| l.kind == kind);
            session.listings = kept;
            ended.extend(restarted.into_iter().map(|l: Listing| (l, End::Restarted)));
        }
        let mut listing = Listing::new(serial, kind, route, asker, modern, at);
        listing.waiting = 1;
        session.listings.push(listing);
        let tag = session.tag.clone();
        for (listing, end) in ended {
            self.report(listing, end, tag.clone(), at, facts);
        }
        serial
    }

    /// Remember a request until its answer (or `abandon_after`); the
    /// oldest is forgotten past `max_pending`.
    fn await_answer(&mut self, key: PendingKey, pending: Pending, facts: &mut Vec<Fact>) {
        if let Some(ex) = self.exchanges.peek_mut(&pending.exchange) {
            ex.remember_sent(key);
        }
        // An id sent again before its answer: the earlier request will not
        // be paired any more.
        if let Some(Pending {
            asked: Asked::List(asked),
            ..
        }) = self.pending.remove(&key)
        {
            self.unwait(&asked, false);
        }
        if let Some((_, evicted)) = self.pending.insert(key, pending) {
            facts.push(Fact::NotObserved(NotObserved::ObserverFull));
            if let Asked::List(asked) = evicted.asked {
                self.unwait(&asked, false);
            }
        }
    }
}

/// The client info a request carries (`initialize`'s `clientInfo`, or
/// `_meta`'s), read by the tap's one reader of it.
fn client_info(method: &str, params: &mut Params<'_>) -> Option<ClientInfo> {
    if params.client_info.is_none() && params.meta.is_none() {
        return None;
    }
    let mut fields = Map::new();
    if let Some(info) = params.client_info.take() {
        fields.insert("clientInfo".into(), info);
    }
    if let Some(meta) = params.meta.take() {
        fields.insert("_meta".into(), meta);
    }
    let mut message = Map::new();
    message.insert("method".into(), Value::String(method.into()));
    message.insert("params".into(), Value::Object(fields));
    identity::from_request(&Value::Object(message))
}

/// The era of the protocol version a 2026-07-28 request names in its
/// `_meta` (`Era::of_label`: a later revision we do not know is modern).
fn meta_protocol(params: &Params<'_>) -> Option<Era> {
    let version = params.meta.as_ref()?.get(META_PROTOCOL_VERSION)?.as_str()?;
    Some(Era::of_label(version.as_bytes()))
}
