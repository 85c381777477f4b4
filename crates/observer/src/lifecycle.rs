//! Exchanges and sessions coming and going: which session an exchange
//! belongs to (the client's header, the upstream's on `initialize`, a
//! legacy stream's `sessionId`, the stdio process), and what ends a
//! session — DELETE, a 404 for it, its legacy stream or stdio process
//! ending, the client closing its GET stream — or lets time run out.

use crate::fact::{AbandonCause, Fact, Failure};
use crate::followed_exchange::{Exchange, Scope};
use crate::listing::{End, Listing};
use crate::observer::{Observer, RouteOf};
use crate::pending::Asked;
use crate::session::{Introduction, Session, SessionKey};
use mcp_tap_contract::{
    ExchangeEnd, ExchangeId, NotObserved, RequestHead, RequestMethod, ResponseHead,
};
use std::time::{Duration, Instant};

/// Whether `wait` has passed since `since` (never overflowing, whatever
/// the configured duration).
fn passed(since: Instant, wait: Duration, now: Instant) -> bool {
    now.saturating_duration_since(since) >= wait
}

impl Observer {
    pub(crate) fn opened(
        &mut self,
        id: ExchangeId,
        at: Instant,
        head: &RequestHead,
        facts: &mut Vec<Fact>,
    ) {
        let mut exchange = Exchange::new(head, &self.apps);
        let path = exchange.path.clone();
        if let Some(session) = &head.session {
            let key = SessionKey::of_id(session.as_bytes());
            if head.method == RequestMethod::Delete {
                self.end_session(&key, AbandonCause::SessionEnded, at, facts);
            } else {
                self.ensure_session(&key, RouteOf::Path(path.as_deref()), at, facts);
            }
            exchange.session = Some(key);
            exchange.session_from_client = true;
        } else if head.method == RequestMethod::Stdio {
            let key = SessionKey::Stdio(id);
            self.ensure_session(&key, RouteOf::Path(path.as_deref()), at, facts);
            exchange.session = Some(key);
        }
        if let Some(mut old) = self.exchanges.remove(&id) {
            old.release(&mut self.buffered);
        }
        if let Some((_, mut evicted)) = self.exchanges.insert(id, exchange) {
            evicted.release(&mut self.buffered);
            facts.push(Fact::NotObserved(NotObserved::ObserverFull));
        }
    }

    pub(crate) fn answered(
        &mut self,
        id: ExchangeId,
        at: Instant,
        head: &ResponseHead,
        facts: &mut Vec<Fact>,
    ) {
        let Some(exchange) = self.exchanges.peek_mut(&id) else {
            return;
        };
        exchange.status = Some(head.status);
        exchange.response_framing = Some(head.framing);
        let gone = head.status == 404 && exchange.session_from_client;
        let assigned = match (&head.session, &exchange.session) {
            (Some(session), None) => Some(SessionKey::of_id(session.as_bytes())),
            _ => None,
        };
        if let Some(key) = &assigned {
            exchange.session = Some(key.clone());
        }
        let initialize = exchange.initialize.take();
        let session = exchange.session.clone();
        let caller = exchange.caller.clone();
        let path = exchange.path.clone();
        match (&assigned, initialize) {
            (Some(key), Some(introduced)) => {
                self.ensure_session(key, RouteOf::Path(path.as_deref()), at, facts);
                if let Some(session) = self.sessions.peek_mut(key) {
                    session.introduced = introduced;
                }
            }
            // A stateless server: no session to bind the client's info
            // to; its later requests from the same caller get it.
            (
                None,
                Some(Introduction {
                    client_info: Some(info),
                    ..
                }),
            ) if session.is_none() => {
                self.sessionless_info.insert(caller, info);
            }
            _ => {}
        }
        if let (true, Some(key)) = (gone, session) {
            self.end_session(&key, AbandonCause::SessionEnded, at, facts);
        }
    }

    pub(crate) fn legacy_session(
        &mut self,
        id: ExchangeId,
        session: &[u8],
        at: Instant,
        facts: &mut Vec<Fact>,
    ) {
        let Some(path) = self.exchanges.peek(&id).map(|ex| ex.path.clone()) else {
            return;
        };
        let key = SessionKey::of_id(session);
        self.ensure_session(&key, RouteOf::Path(path.as_deref()), at, facts);
        if let Some(exchange) = self.exchanges.peek_mut(&id) {
            exchange.session = Some(key);
            exchange.legacy_stream = true;
        }
    }

    pub(crate) fn closed(
        &mut self,
        id: ExchangeId,
        end: ExchangeEnd,
        at: Instant,
        facts: &mut Vec<Fact>,
    ) {
        let Some(mut exchange) = self.exchanges.remove(&id) else {
            return;
        };
        exchange.release(&mut self.buffered);
        self.unanswered(id, &exchange, end, at, facts);
        let Some(key) = &exchange.session else {
            return;
        };
        if exchange.legacy_stream || exchange.method == RequestMethod::Stdio {
            self.end_session(key, AbandonCause::SessionEnded, at, facts);
        } else if exchange.method == RequestMethod::Get && end == ExchangeEnd::ClientGone {
            // The client let go of its stream: it is leaving (the
            // TypeScript SDK's close() sends no DELETE).
            self.abandon_listings(key, at, facts);
        }
    }

    /// Requests this exchange carried whose answer did not come on it.
    fn unanswered(
        &mut self,
        id: ExchangeId,
        exchange: &Exchange,
        end: ExchangeEnd,
        at: Instant,
        facts: &mut Vec<Fact>,
    ) {
        for key in &exchange.sent {
            if self.pending.peek(key).is_none_or(|p| p.exchange != id) {
                continue;
            }
            let failure = match (end, exchange.status) {
                (ExchangeEnd::UpstreamFailed(cause), _) => Some(Failure::Upstream(cause)),
                (_, Some(status)) if status >= 400 => Some(Failure::Http(status)),
                _ => None,
            };
            let keep = failure.is_none()
                && !exchange.unobserved_answer
                && end == ExchangeEnd::Completed
                && matches!(key.scope, Scope::Session(_));
            if keep {
                // The answer may still come on the session's stream.
                continue;
            }
            let Some(pending) = self.pending.remove(key) else {
                continue;
            };
            let Asked::List(asked) = pending.asked else {
                continue;
            };
            match failure {
                Some(failure) => self.end_asked(&asked, End::Failed(failure), at, facts),
                None => self.unwait(&asked, exchange.unobserved_answer),
            }
        }
    }

    /// The session is over: its listings end `abandoned` (those that had
    /// no answer yet end untold).
    pub(crate) fn end_session(
        &mut self,
        key: &SessionKey,
        cause: AbandonCause,
        at: Instant,
        facts: &mut Vec<Fact>,
    ) {
        if let Some(session) = self.sessions.remove(key) {
            self.end_listings(session, End::Abandoned(cause), at, facts);
        }
    }

    pub(crate) fn end_listings(
        &mut self,
        session: Session,
        end: End,
        at: Instant,
        facts: &mut Vec<Fact>,
    ) {
        for listing in session.listings {
            self.report(listing, end, session.tag.clone(), at, facts);
        }
    }

    /// The client is leaving but its session may be used again: its
    /// listings end, the session and who it is stay.
    fn abandon_listings(&mut self, key: &SessionKey, at: Instant, facts: &mut Vec<Fact>) {
        let Some(session) = self.sessions.peek_mut(key) else {
            return;
        };
        let listings = std::mem::take(&mut session.listings);
        let tag = session.tag.clone();
        for listing in listings {
            let end = End::Abandoned(AbandonCause::SessionEnded);
            self.report(listing, end, tag.clone(), at, facts);
        }
    }

    /// Time passed: requests unanswered for `abandon_after` are forgotten,
    /// listings quiet that long end `abandoned`, sessions idle for
    /// `session_idle` are forgotten.
    pub(crate) fn expire(&mut self, now: Instant, facts: &mut Vec<Fact>) {
        let abandon_after = self.limits.abandon_after;
        while let Some((_, pending)) = self.pending.oldest() {
            if !passed(pending.requested, abandon_after, now) {
                break;
            }
            if let Some((_, pending)) = self.pending.pop_oldest() {
                if let Asked::List(asked) = pending.asked {
                    self.unwait(&asked, false);
                }
            }
        }
        let mut quiet = Vec::new();
        let over = |l: &Listing| l.waiting == 0 && passed(l.last, abandon_after, now);
        for session in self.sessions.values_mut() {
            if !session.listings.iter().any(over) {
                continue;
            }
            let (done, going): (Vec<_>, Vec<_>) = std::mem::take(&mut session.listings)
                .into_iter()
                .partition(over);
            session.listings = going;
            quiet.extend(done.into_iter().map(|l| (l, session.tag.clone())));
        }
        for (listing, tag) in quiet {
            let end = End::Abandoned(AbandonCause::Timeout);
            self.report(listing, end, tag, now, facts);
        }
        let idle = self.limits.session_idle;
        while let Some((_, session)) = self.sessions.oldest() {
            if !passed(session.last, idle, now) {
                break;
            }
            if let Some((_, session)) = self.sessions.pop_oldest() {
                self.end_listings(session, End::Abandoned(AbandonCause::Timeout), now, facts);
            }
        }
        self.forget_idle_clients(now, facts);
    }

    /// Clients that asked for no list in `client_idle` are forgotten with
    /// their tallies: their series go and their slots are free.
    fn forget_idle_clients(&mut self, now: Instant, facts: &mut Vec<Fact>) {
        for client in self.clients.forget_idle(now, self.limits.client_idle) {
            for kept in self.tallies.forget(&client) {
                self.budget.give_back(kept.charged);
            }
            self.client_routes.forget(&client);
            facts.push(Fact::ClientGone(client));
        }
    }
}
