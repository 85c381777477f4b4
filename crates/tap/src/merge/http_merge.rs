//! The HTTP tap's side of a merge (`flow`): the walk's page requests go
//! on the tap's upstream connections (`http`), the client's request body
//! is taken from its buffer once the walk (or a reused answer) is sure,
//! and the answer — merged, reused or page 1 — is held whole and written
//! within the tap's write deadline, the observer told first. Page 1 that
//! never came is a proxy's error, as without the tap; a client that leaves
//! during the walk ends it.

use crate::answer::{self, After};
use crate::copy::Copier;
use crate::event::{BodyFraming, Direction, ExchangeEnd, MergeOutcome, ResponseHead, TapEvent};
use crate::exchange_tee::Exchange;
use crate::headers;
use crate::http1::emit;
use crate::http1::head::{Request, Response};
use crate::merge::ask::ListRequest;
use crate::merge::flow::{self, Answer, FirstPage, MergeSite, MergeStep};
use crate::merge::http::{HttpTransport, RawPage};
use crate::merge::result;
use crate::merge::reuse::{self, Asked, Key};
use crate::merge::{ChangeWatch, Merges};
use crate::peer::Peer;
use crate::pool::Pool;
use crate::settings::TapLimits;
use bytes::Bytes;
use std::future::Future;
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite};

/// What a merge needs of the tap's upstream side.
pub(crate) struct UpstreamSide<'a> {
    pub(crate) pool: &'a Pool,
    /// The upstream's `Host`.
    pub(crate) host: &'a [u8],
    pub(crate) limits: &'a TapLimits,
}

/// A first-page list request the tap merges for.
pub(crate) struct MergeAsk<'a> {
    pub(crate) req: &'a Request,
    pub(crate) path: &'a [u8],
    pub(crate) exchange: &'a Exchange,
    /// Bytes of its body, still in the client's buffer.
    pub(crate) len: usize,
    pub(crate) session: Option<Bytes>,
    /// The client's connection closes after the answer.
    pub(crate) close: bool,
}

/// Merge for `list` on this client's connection: `Pass` leaves its body
/// unread in the client's buffer, to be forwarded as any other.
pub(crate) async fn merge<C>(
    merges: &Merges,
    upstream: UpstreamSide<'_>,
    client: &mut Peer<C>,
    ask: MergeAsk<'_>,
    list: &ListRequest,
) -> MergeStep<After>
where
    C: AsyncRead + AsyncWrite + Unpin,
{
    let key = key_of(merges, &ask, list);
    let mut site = HttpMerge {
        merges,
        upstream,
        client,
        ask,
    };
    flow::merge(merges, &mut site, list, key).await
}

struct HttpMerge<'a, 'c, C> {
    merges: &'a Merges,
    upstream: UpstreamSide<'a>,
    client: &'c mut Peer<C>,
    ask: MergeAsk<'a>,
}

impl FirstPage for HttpTransport<'_> {
    type Page = RawPage;

    fn into_first(self) -> Option<RawPage> {
        self.first
    }
}

impl<'a, C> MergeSite for HttpMerge<'a, '_, C>
where
    C: AsyncRead + AsyncWrite + Unpin,
{
    type Transport = HttpTransport<'a>;
    type Done = After;

    fn exchange(&self) -> &Exchange {
        self.ask.exchange
    }

    fn first_page_timeout(&self) -> Duration {
        self.upstream.limits.upstream_head_timeout
    }

    fn begin(&mut self) -> (HttpTransport<'a>, Bytes) {
        let original = self.copy_request();
        let transport = HttpTransport {
            pool: self.upstream.pool,
            request: self.ask.req,
            path: self.ask.path,
            host: self.upstream.host,
            max_head_bytes: self.upstream.limits.max_head_bytes,
            max_page_bytes: self.merges.settings.max_page_bytes,
            first: None,
        };
        (transport, original)
    }

    async fn walking<F: Future>(&mut self, walk: F) -> Result<F::Output, After> {
        tokio::select! {
            walked = walk => Ok(walked),
            () = self.client.closed(self.upstream.limits.max_head_bytes) => {
                self.ask.exchange.ended(ExchangeEnd::ClientGone);
                Err(After::Close)
            }
        }
    }

    fn changes(&self) -> u64 {
        // What passes to the session is watched as it passes (the walk's
        // notifications below, streams by `ChangeWatch`): nothing to count.
        0
    }

    fn keep_unless_changed(&self, _seen: u64, keep: impl FnOnce()) {
        keep();
    }

    fn merged_head(&mut self, first: Option<RawPage>) -> (Response, Bytes) {
        let Some(RawPage {
            head,
            body,
            answer_at,
        }) = first
        else {
            return (reuse::no_head(), Bytes::new());
        };
        let notes = answer_at
            .filter(|_| is_event(&head))
            .map(|at| Bytes::copy_from_slice(&body[..at]))
            .unwrap_or_default();
        // Page 1 as it came is not sent: let it go before the answer is.
        drop(body);
        // The notifications that are sent pass to the session as any
        // stream's: a `list_changed` makes its kept answers stale (before
        // this one is kept: its walk already began again past one).
        ChangeWatch::new(self.merges, self.ask.session.clone()).see(&notes);
        (head, notes)
    }

    async fn answer(&mut self, list: &ListRequest, answer: Answer<RawPage>) -> After {
        match answer {
            Answer::Reused(reused) => {
                self.copy_request();
                let event = is_event(&reused.head);
                let held = Held {
                    head: &reused.head,
                    parts: result::answer(list.id(), &reused.result, event),
                    outcome: MergeOutcome::Reused,
                    pages: 0,
                    items: reused.result.items,
                };
                self.send_held(list, held).await
            }
            Answer::Merged {
                kept,
                notes,
                pages,
                charge: _charge,
            } => {
                let mut parts = vec![notes];
                parts.extend(result::answer(
                    list.id(),
                    &kept.result,
                    is_event(&kept.head),
                ));
                let held = Held {
                    head: &kept.head,
                    parts,
                    outcome: MergeOutcome::Merged,
                    pages,
                    items: kept.result.items,
                };
                self.send_held(list, held).await
            }
            Answer::FirstPage { first: None, .. } => {
                // Not even page 1 came: what a proxy answers.
                let cause = crate::event::UpstreamFailure::Reset;
                answer::fail(self.client, self.ask.exchange, cause).await
            }
            Answer::FirstPage {
                first: Some(first),
                fallback,
                pages,
                mut charge,
            } => {
                // Its notifications pass to the session as any stream's.
                ChangeWatch::new(self.merges, self.ask.session.clone()).see(&first.body);
                // What is written stays charged until it is.
                charge.resize(first.body.len());
                let held = Held {
                    head: &first.head,
                    parts: vec![first.body.clone()],
                    outcome: MergeOutcome::FirstPage(fallback),
                    pages,
                    items: 0,
                };
                self.send_held(list, held).await
            }
        }
    }
}

/// An answer the tap holds whole, to send: its pieces in order.
struct Held<'h> {
    head: &'h Response,
    parts: Vec<Bytes>,
    outcome: MergeOutcome,
    pages: u32,
    items: u64,
}

impl<C> HttpMerge<'_, '_, C>
where
    C: AsyncRead + AsyncWrite + Unpin,
{
    /// The client's request body, taken from its buffer and copied for the
    /// observer.
    fn copy_request(&mut self) -> Bytes {
        let body = self.client.take(self.ask.len);
        let mut copier = Copier::new(
            headers::framing(&self.ask.req.fields),
            Direction::FromClient,
            self.upstream.limits.inspect_bytes,
        );
        copier.data(self.ask.exchange, &body);
        copier.finish(self.ask.exchange, false);
        body
    }

    /// Send an answer the tap holds whole, telling the observer first.
    async fn send_held(&mut self, list: &ListRequest, held: Held<'_>) -> After {
        let exchange = self.ask.exchange;
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
        flow::tell(exchange, list, held.outcome, held.pages, held.items);
        let length = held.parts.iter().map(Bytes::len).sum();
        let head = emit::held_response_head(held.head, length, self.ask.close);
        let inspect = self.upstream.limits.inspect_bytes;
        let mut copier = Copier::new(framing, Direction::FromUpstream, inspect);
        for part in &held.parts {
            copier.data(exchange, part);
        }
        copier.finish(exchange, false);
        let mut parts: Vec<&[u8]> = vec![&head];
        parts.extend(held.parts.iter().map(|p| &p[..]));
        // Within the tap's write deadline (a client that takes none of it
        // for that long is cut, counted `client_write_timeout`).
        if self.client.write_parts(&parts).await.is_err() {
            exchange.ended(ExchangeEnd::ClientGone);
            return After::Close;
        }
        exchange.ended(ExchangeEnd::Completed);
        if self.ask.close {
            After::Close
        } else {
            After::KeepAlive
        }
    }
}

/// The key a merged answer for `ask` is kept under (none without a
/// session: nothing says two such requests are the same client's).
fn key_of(merges: &Merges, ask: &MergeAsk<'_>, list: &ListRequest) -> Option<Key> {
    let asked = Asked {
        path: ask.path,
        fields: &ask.req.fields,
        credential_headers: &merges.settings.credential_headers,
        params: list.message.get("params"),
    };
    Key::new(ask.session.as_ref(), list.kind, &asked)
}

/// Page 1 came as an event stream: the merged answer is its one event.
fn is_event(head: &Response) -> bool {
    headers::framing(&head.fields) == BodyFraming::EventStream
}
