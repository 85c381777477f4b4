//! The upstream's answers to list and `initialize` requests: each paired
//! with its request (on its own exchange first, then anywhere in its
//! session), read the way the walker reads a page, and turned into pages,
//! cursors handed out, and listings that end.

use crate::fact::{Fact, Failure, PageAnswered};
use crate::followed_exchange::{MergeNote, PendingKey, Scope};
use crate::listing::End;
use crate::observer::Observer;
use crate::parse::{Answer, Body, CursorField, Items, RpcId};
use crate::pending::{AskedList, Pending};
use mcp_listing::cursor::CursorDigest;
use mcp_listing::walk::INVALID_PARAMS;
use mcp_listing::Era;
use mcp_tap_contract::ExchangeId;
use std::borrow::Cow;
use std::time::Instant;

/// A page as the walker accepts it.
struct Page<'p, 'a> {
    /// The identity keys of the page's items that have one, in order.
    keys: &'p [Cow<'a, str>],
    /// Items on the page, keyed or not.
    count: u64,
    /// `None` ends the listing.
    next: Option<CursorDigest>,
}

impl Observer {
    pub(crate) fn upstream_answer(
        &mut self,
        exchange: ExchangeId,
        id: RpcId,
        answer: Answer<'_>,
        at: Instant,
        facts: &mut Vec<Fact>,
    ) {
        let Some(ex) = self.exchanges.peek(&exchange) else {
            return;
        };
        let merged = ex.merged;
        let session = ex.session.clone();
        let own = PendingKey {
            scope: Scope::Exchange(exchange),
            id,
        };
        let pending = self.pending.remove(&own).or_else(|| {
            let serial = session.as_ref().and_then(|k| self.sessions.peek(k))?.serial;
            let scope = Scope::Session(serial);
            self.pending.remove(&PendingKey { scope, id })
        });
        let Some(Pending {
            asked, requested, ..
        }) = pending
        else {
            return;
        };
        let merged = match &asked {
            crate::pending::Asked::List(list) => self.merge_note(exchange, merged, list),
            crate::pending::Asked::Initialize => None,
        };
        match asked {
            crate::pending::Asked::Initialize => {
                let version = match &answer {
                    Answer::Result(body) => body.protocol_version.as_deref(),
                    Answer::Error { .. } => None,
                };
                let era = version.map(|v| Era::of_label(v.as_bytes()));
                let session = session.as_ref().and_then(|k| self.sessions.peek_mut(k));
                if let (Some(session), Some(era)) = (session, era) {
                    session.introduced.era = Some(era);
                }
            }
            crate::pending::Asked::List(asked) => match answer {
                Answer::Error { code } => self.list_error(&asked, code, at, facts),
                Answer::Result(body) => match page(&asked, &body) {
                    Some(page) => self.list_page(&asked, page, merged, requested, at, facts),
                    None => self.end_asked(&asked, End::Failed(Failure::Malformed), at, facts),
                },
            },
        }
    }

    fn list_error(
        &mut self,
        asked: &AskedList,
        code: Option<i64>,
        at: Instant,
        facts: &mut Vec<Fact>,
    ) {
        if asked.cursor_sent && code == Some(INVALID_PARAMS) {
            self.tallies
                .invalid_cursor(&asked.client, &asked.route, asked.kind, at);
            facts.push(Fact::InvalidCursor(asked.cursor_use(at)));
            if let Some(listing) = self.listing_mut(asked) {
                listing.invalid_cursor = true;
            }
        }
        self.end_asked(asked, End::Failed(Failure::Rpc(code)), at, facts);
    }

    fn list_page(
        &mut self,
        asked: &AskedList,
        page: Page<'_, '_>,
        merged: Option<MergeNote>,
        requested: Instant,
        at: Instant,
        facts: &mut Vec<Fact>,
    ) {
        let cap = self.limits.max_cursors_per_session;
        let catalogue = self.catalogues.get(&asked.own_route, asked.kind);
        let session = self
            .sessions
            .peek_mut(&asked.session)
            .filter(|s| s.serial == asked.session_serial);
        let mut number = None;
        if let Some(session) = session {
            let listing = asked.listing.and_then(|serial| session.listing_mut(serial));
            let alive = listing.as_ref().map(|l| l.serial);
            if let Some(listing) = listing {
                listing.pages += 1;
                listing.waiting = listing.waiting.saturating_sub(1);
                listing.last = at;
                listing.blind = false;
                listing.expected = page.next;
                listing
                    .received
                    .add(page.keys, page.count, catalogue, &mut self.budget);
                if let Some(note) = merged {
                    listing.merged = Some(note.outcome);
                    listing.walk_pages = (note.pages > 0).then_some(note.pages);
                }
                number = Some(listing.pages);
            }
            if let Some(next) = page.next {
                session.hand_out(next, asked.kind, alive, cap);
                self.origins.insert(next, asked.session_serial);
            }
        }
        self.tallies
            .page(&asked.client, &asked.route, asked.kind, at);
        facts.push(Fact::Page(PageAnswered {
            client: asked.client.clone(),
            route: asked.route.clone(),
            kind: asked.kind,
            session: asked.tag.clone(),
            page: number,
            cursor_sent: asked.cursor_sent,
            items: u32::try_from(page.count).unwrap_or(u32::MAX),
            next_cursor: page.next.is_some(),
            requested,
            answered: at,
        }));
        if page.next.is_none() && number.is_some() {
            self.end_asked(asked, End::Complete, at, facts);
        }
    }

    /// The tap's note that it merged this answer: for a first page of its
    /// kind, used once (the stdio tap's one exchange carries many).
    fn merge_note(
        &mut self,
        exchange: ExchangeId,
        note: Option<MergeNote>,
        asked: &AskedList,
    ) -> Option<MergeNote> {
        let note = note.filter(|m| m.kind == asked.kind && !asked.cursor_sent)?;
        if let Some(ex) = self.exchanges.peek_mut(&exchange) {
            ex.merged = None;
        }
        Some(note)
    }

    fn listing_mut(&mut self, asked: &AskedList) -> Option<&mut crate::listing::Listing> {
        self.sessions
            .peek_mut(&asked.session)
            .filter(|s| s.serial == asked.session_serial)?
            .listing_mut(asked.listing?)
    }

    /// End the listing a request belongs to, if it is still in progress.
    pub(crate) fn end_asked(
        &mut self,
        asked: &AskedList,
        end: End,
        at: Instant,
        facts: &mut Vec<Fact>,
    ) {
        let Some(serial) = asked.listing else {
            return;
        };
        let session = self
            .sessions
            .peek_mut(&asked.session)
            .filter(|s| s.serial == asked.session_serial);
        let Some(listing) = session.and_then(|s| s.take_listing(serial)) else {
            return;
        };
        self.report(listing, end, asked.tag.clone(), at, facts);
    }

    /// A request of the listing will get no answer (seen): it waits for
    /// one less; `blind` when the answer passed unread.
    pub(crate) fn unwait(&mut self, asked: &AskedList, blind: bool) {
        if let Some(listing) = self.listing_mut(asked) {
            listing.waiting = listing.waiting.saturating_sub(1);
            listing.blind |= blind;
        }
    }
}

/// The page an answer is, by the walker's rules (docs/guards.md): a
/// result object, `resultType` absent or `complete`, the kind's array, and
/// `nextCursor` absent, null or a string — `""` ending the listing before
/// 2026-07-28 and continuing it after. `None`: malformed.
fn page<'p, 'a>(asked: &AskedList, body: &'p Body<'a>) -> Option<Page<'p, 'a>> {
    if !body.object || !body.result_type_ok {
        return None;
    }
    let Some(Items::Array { keys, count }) = &body.arrays[asked.kind as usize] else {
        return None;
    };
    let next = match body.next_cursor {
        CursorField::Absent | CursorField::Null => None,
        CursorField::Text(digest) if digest.is_blank() && !asked.modern => None,
        CursorField::Text(digest) => Some(digest),
        CursorField::Other => return None,
    };
    Some(Page {
        keys,
        count: *count,
        next,
    })
}
