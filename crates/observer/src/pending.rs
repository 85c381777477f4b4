//! A request awaiting its answer, as the observer keeps it: what was asked
//! (`initialize`, or a list request with where its answer goes).

use crate::fact::{CursorUse, SessionTag};
use crate::route::RouteId;
use crate::session::SessionKey;
use mcp_listing::Kind;
use mcp_tap_contract::ExchangeId;
use std::time::Instant;

/// A request awaiting its answer.
#[derive(Debug)]
pub(crate) struct Pending {
    pub exchange: ExchangeId,
    pub requested: Instant,
    pub asked: Asked,
}

#[derive(Debug)]
pub(crate) enum Asked {
    Initialize,
    List(AskedList),
}

/// A list request, with where its answer goes.
#[derive(Debug, Clone)]
pub(crate) struct AskedList {
    pub kind: Kind,
    pub session: SessionKey,
    pub session_serial: u64,
    pub tag: SessionTag,
    /// The listing it starts or continues, if any.
    pub listing: Option<u64>,
    pub cursor_sent: bool,
    pub client: crate::client::ClientId,
    /// The route it is told under.
    pub route: RouteId,
    /// The route whose catalogue its items are compared with.
    pub own_route: RouteId,
    pub modern: bool,
}

impl AskedList {
    /// This request's cursor, sent `at`, as a fact tells it.
    pub fn cursor_use(&self, at: Instant) -> CursorUse {
        CursorUse {
            client: self.client.clone(),
            route: self.route.clone(),
            kind: self.kind,
            session: self.tag.clone(),
            at,
        }
    }
}
