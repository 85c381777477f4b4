//! A merged exchange on the HTTP tap: the client's first-page list request
//! is walked — reusing a merged answer of the same key when one stands,
//! one walk per key at a time, within the tap's walks at once, bytes and
//! page requests (past them the request passes as any other) — and
//! answered with one page, or with page 1 as the upstream gave it when the
//! walk was not complete, was too large, or its pages' scopes differed.
//! The walk's slot and turn are let go when the walk ends; the answer is
//! then written within the write deadline. The observer is told which,
//! then sees what the client got.

use crate::copy::Copier;
use crate::event::{
    BodyFraming, Direction, ExchangeEnd, MergeFallback, MergeOutcome, ResponseHead, TapEvent,
};
use crate::exchange::Exchange;
use crate::forward::{After, Forwarder};
use crate::headers;
use crate::http1::emit;
use crate::http1::head::{Request, Response};
use crate::merge::ask::ListRequest;
use crate::merge::budget::Charge;
use crate::merge::http::{HttpTransport, RawPage};
use crate::merge::pager::{self, Spend, WalkPager};
use crate::merge::result::{self, Merged};
use crate::merge::reuse::{self, Asked, Key, Reusable};
use crate::merge::{ChangeWatch, Merges, Start};
use crate::peer::Peer;
use bytes::Bytes;
use std::sync::Arc;
use tokio::io::{AsyncRead, AsyncWrite};

/// What became of a request the tap could merge for.
pub(crate) enum MergeStep {
    /// The client was answered (merged, reused or page 1).
    Answered(After),
    /// Forward it as any other (its body is still unread).
    PassThrough,
}

/// A first-page list request the tap merges for.
pub(crate) struct MergeAsk<'a> {
    pub(crate) req: &'a Request,
    pub(crate) path: &'a [u8],
    pub(crate) exchange: &'a Exchange,
    pub(crate) list: ListRequest,
    /// Bytes of its body, still in the client's buffer.
    pub(crate) len: usize,
    pub(crate) session: Option<Bytes>,
    /// The client's connection closes after the answer.
    pub(crate) close: bool,
}

/// What a walk brought: page 1 as it came, the merge or why page 1 goes,
/// how many pages were asked for, and the walk's charge on the tap's
/// bytes (what it still holds).
struct Walked {
    first: RawPage,
    merged: Result<Merged, MergeFallback>,
    pages: u32,
    charge: Charge,
}

/// An answer the tap holds whole, to send: its pieces in order.
struct Held<'a> {
    head: &'a Response,
    parts: Vec<Bytes>,
    outcome: MergeOutcome,
    pages: u32,
    items: u64,
}

impl Forwarder {
    pub(crate) async fn merge<C>(
        &self,
        merges: &Merges,
        client: &mut Peer<C>,
        ask: MergeAsk<'_>,
    ) -> MergeStep
    where
        C: AsyncRead + AsyncWrite + Unpin,
    {
        let key = key_of(merges, &ask);
        let turn = match &key {
            Some(key) => match merges.turn(key).await {
                Some(turn) => Some(turn),
                None => return self.pass(&ask, MergeFallback::Busy),
            },
            None => None,
        };
        if let Some(reused) = key.as_ref().and_then(|k| merges.reused(k)) {
            drop(turn);
            self.copy_request(client, &ask);
            let event = is_event(&reused.head);
            let held = Held {
                head: &reused.head,
                parts: result::answer(ask.list.id(), &reused.result, event),
                outcome: MergeOutcome::Reused,
                pages: 0,
                items: reused.result.items,
            };
            let after = self.send_held(client, &ask, held).await;
            return MergeStep::Answered(after);
        }
        let Start { slot, charge } = match merges.start() {
            Ok(start) => start,
            Err(reason) => return self.pass(&ask, reason),
        };
        let original = self.copy_request(client, &ask);
        let walked = self.walk(merges, charge, client, &ask, original).await;
        // The walk is over: its slot and turn go before the answer does.
        drop(slot);
        let after = match walked {
            Ok(walked) => {
                self.answer_walk(merges, key, turn, client, &ask, walked)
                    .await
            }
            Err(after) => after,
        };
        MergeStep::Answered(after)
    }

    /// Page 1 passes as any other request, for `reason`.
    fn pass(&self, ask: &MergeAsk<'_>, reason: MergeFallback) -> MergeStep {
        let outcome = MergeOutcome::FirstPage(reason);
        self.merged(ask.exchange, ask, outcome, 0, 0);
        MergeStep::PassThrough
    }

    /// Walk for the client, unless it leaves meanwhile (`Err`: what its
    /// connection does then).
    async fn walk<C>(
        &self,
        merges: &Merges,
        charge: Charge,
        client: &mut Peer<C>,
        ask: &MergeAsk<'_>,
        original: Bytes,
    ) -> Result<Walked, After>
    where
        C: AsyncRead + AsyncWrite + Unpin,
    {
        let settings = &merges.settings;
        let transport = HttpTransport {
            pool: &self.pool,
            request: ask.req,
            path: ask.path,
            host: self.target.host(),
            max_head_bytes: self.limits.max_head_bytes,
            max_page_bytes: settings.max_page_bytes,
            first: None,
        };
        let spend = Spend {
            charge,
            pages: &merges.pages,
            page_read_bytes: merges.page_read_bytes(),
            first_page_timeout: self.limits.upstream_head_timeout,
        };
        let max_merged = settings.max_merged_bytes;
        let mut pager = WalkPager::new(
            transport,
            &ask.list,
            original,
            &settings.walk,
            max_merged,
            spend,
        );
        let (outcome, pages) = tokio::select! {
            walked = pager::walk(&mut pager, &settings.walk) => walked,
            () = client.closed(self.limits.max_head_bytes) => {
                ask.exchange.ended(ExchangeEnd::ClientGone);
                return Err(After::Close);
            }
        };
        let end = pager.end(outcome);
        let Some(first) = end.transport.first else {
            // Not even page 1 came: what a proxy answers.
            let cause = crate::event::UpstreamFailure::Reset;
            return Err(self.failed(client, ask.exchange, cause).await);
        };
        Ok(Walked {
            first,
            merged: end.merged,
            pages,
            charge: end.spend.charge,
        })
    }

    /// Answer with the merge (kept for `key`) or page 1; `turn` goes once
    /// the merge is kept, before the answer is written.
    async fn answer_walk<C>(
        &self,
        merges: &Merges,
        key: Option<Key>,
        turn: Option<tokio::sync::OwnedMutexGuard<()>>,
        client: &mut Peer<C>,
        ask: &MergeAsk<'_>,
        walked: Walked,
    ) -> After
    where
        C: AsyncRead + AsyncWrite + Unpin,
    {
        let Walked {
            first,
            merged,
            pages,
            mut charge,
        } = walked;
        let merged = match merged {
            Ok(merged) => merged,
            Err(fallback) => {
                drop(turn);
                // Its notifications pass to the session as any stream's.
                ChangeWatch::new(merges, ask.session.clone()).see(&first.body);
                // What is written stays charged until it is.
                charge.resize(first.body.len());
                let held = Held {
                    head: &first.head,
                    parts: vec![first.body.clone()],
                    outcome: MergeOutcome::FirstPage(fallback),
                    pages,
                    items: 0,
                };
                return self.send_held(client, ask, held).await;
            }
        };
        let RawPage {
            head,
            body,
            answer_at,
        } = first;
        let event = is_event(&head);
        let notes = answer_at
            .filter(|_| event)
            .map(|at| Bytes::copy_from_slice(&body[..at]))
            .unwrap_or_default();
        // Page 1 as it came is not sent: let it go before the answer is.
        drop(body);
        // The notifications that are sent pass to the session as any
        // stream's: a `list_changed` makes its kept answers stale (before
        // this one is kept: its walk already began again past one).
        ChangeWatch::new(merges, ask.session.clone()).see(&notes);
        let cost = reuse::cost(&head, &merged);
        let kept = Arc::new(Reusable {
            charge: charge.split(cost),
            head,
            result: merged,
        });
        charge.resize(notes.len());
        if let Some(key) = key {
            merges.keep(key, kept.clone());
        }
        drop(turn);
        let mut parts = vec![notes];
        parts.extend(result::answer(ask.list.id(), &kept.result, event));
        let held = Held {
            head: &kept.head,
            parts,
            outcome: MergeOutcome::Merged,
            pages,
            items: kept.result.items,
        };
        self.send_held(client, ask, held).await
    }

    /// The client's request body, taken from its buffer and copied for the
    /// observer.
    fn copy_request<C>(&self, client: &mut Peer<C>, ask: &MergeAsk<'_>) -> Bytes
    where
        C: AsyncRead + AsyncWrite + Unpin,
    {
        let body = client.take(ask.len);
        let mut copier = Copier::new(
            headers::framing(&ask.req.fields),
            Direction::FromClient,
            self.limits.inspect_bytes,
        );
        copier.data(ask.exchange, &body);
        copier.finish(ask.exchange, false);
        body
    }

    fn merged(
        &self,
        exchange: &Exchange,
        ask: &MergeAsk<'_>,
        outcome: MergeOutcome,
        pages: u32,
        items: u64,
    ) {
        self.stats.merge(outcome);
        exchange.offer(TapEvent::Merged {
            exchange: exchange.id,
            kind: ask.list.kind,
            outcome,
            pages,
            items,
        });
    }

    /// Send an answer the tap holds whole, telling the observer first.
    async fn send_held<C>(&self, client: &mut Peer<C>, ask: &MergeAsk<'_>, held: Held<'_>) -> After
    where
        C: AsyncRead + AsyncWrite + Unpin,
    {
        let exchange = ask.exchange;
        let framing = headers::framing(&held.head.fields);
        exchange.offer(TapEvent::Answered {
            exchange: exchange.id,
            at: std::time::Instant::now(),
            head: ResponseHead {
                status: held.head.status,
                framing,
                session: headers::value(&held.head.fields, "mcp-session-id"),
            },
        });
        self.merged(exchange, ask, held.outcome, held.pages, held.items);
        let length = held.parts.iter().map(Bytes::len).sum();
        let head = emit::held_response_head(held.head, length, ask.close);
        let mut copier = Copier::new(framing, Direction::FromUpstream, self.limits.inspect_bytes);
        for part in &held.parts {
            copier.data(exchange, part);
        }
        copier.finish(exchange, false);
        let mut parts: Vec<&[u8]> = vec![&head];
        parts.extend(held.parts.iter().map(|p| &p[..]));
        // Within the tap's write deadline (a client that takes none of it
        // for that long is cut, counted `client_write_timeout`).
        if client.write_parts(&parts).await.is_err() {
            exchange.ended(ExchangeEnd::ClientGone);
            return After::Close;
        }
        exchange.ended(ExchangeEnd::Completed);
        if ask.close {
            After::Close
        } else {
            After::KeepAlive
        }
    }
}

/// The key a merged answer for `ask` is kept under (none without a
/// session: nothing says two such requests are the same client's).
fn key_of(merges: &Merges, ask: &MergeAsk<'_>) -> Option<Key> {
    let asked = Asked {
        path: ask.path,
        fields: &ask.req.fields,
        credential_headers: &merges.settings.credential_headers,
        params: ask.list.message.get("params"),
    };
    Key::new(ask.session.as_ref(), ask.list.kind, &asked)
}

/// Page 1 came as an event stream: the merged answer is its one event.
fn is_event(head: &Response) -> bool {
    headers::framing(&head.fields) == BodyFraming::EventStream
}
