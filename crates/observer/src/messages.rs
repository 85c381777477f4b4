//! Messages put back together from the tap's chunks, read, and handed to
//! the request or answer side; what cannot be read is counted by reason.

use crate::fact::Fact;
use crate::followed_exchange::payload;
use crate::observer::Observer;
use crate::parse::{self, Message, Unreadable};
use bytes::Bytes;
use mcp_tap_contract::{CopyEnd, Direction, ExchangeId, NotObserved};
use std::time::Instant;

impl From<Unreadable> for NotObserved {
    fn from(unreadable: Unreadable) -> NotObserved {
        match unreadable {
            Unreadable::Batch => NotObserved::Batch,
            Unreadable::Unparsable => NotObserved::Unparsable,
        }
    }
}

impl Observer {
    pub(crate) fn chunk(&mut self, exchange: ExchangeId, direction: Direction, bytes: Bytes) {
        let Some(ex) = self.exchanges.peek_mut(&exchange) else {
            return;
        };
        let budget = (&mut self.buffered, self.limits.max_buffered_bytes);
        ex.assembly(direction)
            .push(bytes, self.limits.inspect_bytes, budget);
    }

    pub(crate) fn message_end(
        &mut self,
        exchange: ExchangeId,
        direction: Direction,
        copy: CopyEnd,
        at: Instant,
        facts: &mut Vec<Fact>,
    ) {
        let Some(ex) = self.exchanges.peek_mut(&exchange) else {
            return;
        };
        let framing = ex.framing(direction);
        let taken = ex.assembly(direction).take(&mut self.buffered);
        let raw = match (copy, taken) {
            (CopyEnd::Whole, Ok(raw)) => raw,
            (CopyEnd::Whole, Err(reason)) => {
                facts.push(Fact::NotObserved(reason));
                self.passed_unread(exchange, direction);
                return;
            }
            // The data path counted it.
            (CopyEnd::NotObserved(_), _) => {
                self.passed_unread(exchange, direction);
                return;
            }
        };
        let Some(text) = payload(framing, &raw) else {
            return;
        };
        match parse::read(&text) {
            Err(unreadable) => {
                facts.push(Fact::NotObserved(unreadable.into()));
                self.passed_unread(exchange, direction);
            }
            // A client's requests and upstream's answers are all that
            // listings read.
            Ok(Message::Request { id, method, params }) if direction == Direction::FromClient => {
                self.client_request(exchange, id, &method, params, at, facts);
            }
            Ok(Message::Response { id, answer }) if direction == Direction::FromUpstream => {
                self.upstream_answer(exchange, id, answer, at, facts);
            }
            Ok(_) => {}
        }
    }

    /// An upstream message went by unread: an answer may have been in it.
    /// Requests of this exchange are settled at its end; on a stream, the
    /// session's listings awaiting an answer can no longer know their next
    /// cursor, so they accept the next one they are sent.
    fn passed_unread(&mut self, exchange: ExchangeId, direction: Direction) {
        if direction != Direction::FromUpstream {
            return;
        }
        let Some(ex) = self.exchanges.peek_mut(&exchange) else {
            return;
        };
        ex.unobserved_answer = true;
        let Some(key) = ex.session.clone() else {
            return;
        };
        if let Some(session) = self.sessions.peek_mut(&key) {
            for listing in session.listings.iter_mut().filter(|l| l.waiting > 0) {
                listing.blind = true;
            }
        }
    }
}
