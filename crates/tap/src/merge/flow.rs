//! A merged exchange on the HTTP tap: the client's first-page list request
//! is walked — reusing a merged answer of its session and kind when one
//! stands, one walk per session and kind at a time, `max_concurrent` walks
//! per tap (past that the request passes as any other) — and answered with
//! one page, or with page 1 as the upstream gave it when the walk was not
//! complete, was too large, or its pages' scopes differed. The observer is
//! told which, then sees what the client got.

use crate::copy::Copier;
use crate::event::{Direction, ExchangeEnd, MergeFallback, MergeOutcome, ResponseHead, TapEvent};
use crate::exchange::Exchange;
use crate::forward::{After, Forwarder};
use crate::headers;
use crate::http1::emit;
use crate::http1::head::{self, Request, Response};
use crate::merge::ask::ListRequest;
use crate::merge::http::{HttpTransport, RawPage};
use crate::merge::pager::WalkPager;
use crate::merge::result::{self, Merged};
use crate::merge::{Key, Merges};
use crate::peer::Peer;
use bytes::Bytes;
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

/// A walk for a client: the request, the merges it is one of, and the
/// key a complete result is kept under (none: not kept).
struct Walk<'a, 'b> {
    merges: &'a Merges,
    ask: &'a MergeAsk<'b>,
    key: Option<Key>,
}

/// What a walk brought: page 1 as it came, the merge or why page 1 goes,
/// and how many pages were asked for.
struct Walked {
    first: RawPage,
    merged: Result<(Merged, Vec<u8>), MergeFallback>,
    pages: u32,
}

/// An answer the tap holds whole, to send.
struct Held<'a> {
    head: &'a Response,
    body: Vec<u8>,
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
        let credentials = head::value(&ask.req.fields, "authorization");
        let key = Key::new(
            ask.session.as_ref(),
            credentials.map(|c| &c[..]),
            ask.list.kind,
        );
        let _turn = merges.turn(key.as_ref()).await;
        if let Some(reused) = key.as_ref().and_then(|k| merges.reused(k)) {
            self.copy_request(client, &ask);
            let body = result::envelope(ask.list.id(), &reused.result);
            let held = Held {
                head: &reused.head,
                body: shaped(&reused.head, body),
                outcome: MergeOutcome::Reused,
                pages: 0,
                items: reused.items,
            };
            return MergeStep::Answered(self.send_held(client, &ask, held).await);
        }
        let Ok(_walking) = merges.walks.try_acquire() else {
            self.merged(
                ask.exchange,
                &ask,
                MergeOutcome::FirstPage(MergeFallback::Busy),
                0,
                0,
            );
            return MergeStep::PassThrough;
        };
        let original = self.copy_request(client, &ask);
        let walk = Walk {
            merges,
            ask: &ask,
            key,
        };
        MergeStep::Answered(self.walk(walk, client, original).await)
    }

    /// Walk, then answer with the merge or page 1.
    async fn walk<C>(&self, walk: Walk<'_, '_>, client: &mut Peer<C>, original: Bytes) -> After
    where
        C: AsyncRead + AsyncWrite + Unpin,
    {
        let ask = walk.ask;
        let settings = &walk.merges.settings;
        let transport = HttpTransport {
            pool: &self.pool,
            request: ask.req,
            path: ask.path,
            host: self.target.host(),
            max_head_bytes: self.limits.max_head_bytes,
            max_page_bytes: settings.max_page_bytes,
            first: None,
        };
        let mut pager = WalkPager::new(transport, &ask.list, original, settings.max_merged_bytes);
        let walked = mcp_listing::walk(&mut pager, ask.list.kind, &settings.walk, ask.list.era);
        let report = tokio::select! {
            report = walked => report,
            () = client.closed(self.limits.max_head_bytes) => {
                ask.exchange.ended(ExchangeEnd::ClientGone);
                return After::Close;
            }
        };
        let merged = pager.merged(report.outcome, settings.max_merged_bytes);
        let Some(first) = pager.transport.first.take() else {
            // Not even page 1 came: what a proxy answers.
            let cause = crate::event::UpstreamFailure::Reset;
            return self.failed(client, ask.exchange, cause).await;
        };
        let walked = Walked {
            first,
            merged,
            pages: report.pages.len() as u32,
        };
        self.answer_walk(walk, client, walked).await
    }

    async fn answer_walk<C>(
        &self,
        walk: Walk<'_, '_>,
        client: &mut Peer<C>,
        walked: Walked,
    ) -> After
    where
        C: AsyncRead + AsyncWrite + Unpin,
    {
        let Walked {
            first,
            merged,
            pages,
        } = walked;
        let ask = walk.ask;
        let held = match merged {
            Ok((m, body)) => {
                let body = shaped(&first.head, body);
                let held = Held {
                    head: &first.head,
                    body,
                    outcome: MergeOutcome::Merged,
                    pages,
                    items: m.items,
                };
                let after = self.send_held(client, ask, held).await;
                if let Some(key) = walk.key {
                    walk.merges
                        .keep(key, first.head, m.result, m.items, m.ttl_ms);
                }
                return after;
            }
            Err(fallback) => Held {
                head: &first.head,
                body: first.body.to_vec(),
                outcome: MergeOutcome::FirstPage(fallback),
                pages,
                items: 0,
            },
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
        let head = emit::held_response_head(held.head, held.body.len(), ask.close);
        let body = Bytes::from(held.body);
        let mut copier = Copier::new(framing, Direction::FromUpstream, self.limits.inspect_bytes);
        copier.data(exchange, &body);
        copier.finish(exchange, false);
        if client.write_parts(&[&head, &body]).await.is_err() {
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

/// A merged answer in the form page 1 came in: an event stream's one
/// event, or the JSON body.
fn shaped(head: &Response, message: Vec<u8>) -> Vec<u8> {
    if headers::framing(&head.fields) == crate::event::BodyFraming::EventStream {
        result::as_event(&message)
    } else {
        message
    }
}
