//! Page requests of a merged walk over HTTP: the client's request line and
//! end-to-end headers (its session, its credentials) with each page's
//! body, on the tap's upstream connections. The first answer is kept as it
//! came — status, headers, body — for the client to get unchanged when the
//! walk does not end complete. Interim 1xx heads are read past (the answer
//! is the final head, within the pool's head timeout), and a connection
//! goes back to the pool only after an exchange that ended cleanly.

use crate::event::BodyFraming;
use crate::headers;
use crate::http1::emit;
use crate::http1::framing::{self, Framing};
use crate::http1::head::{Request, Response};
use crate::merge::pager::{AnswerFinder, Exchanged, PageRequest, PageTransport};
use crate::peer::HeadRead;
use crate::pool::{Pool, Upstream};
use crate::relay::{read_whole, BodyReader, Unread};
use bytes::Bytes;
use mcp_listing::{ExchangeFailure, PageError};

/// An answer as read during a walk.
pub(crate) struct RawPage {
    pub(crate) head: Response,
    pub(crate) body: Bytes,
    /// In an event stream, where the answer's event began: the events
    /// before it are the upstream's messages to the client.
    pub(crate) answer_at: Option<usize>,
}

pub(crate) struct HttpTransport<'a> {
    pub(crate) pool: &'a Pool,
    pub(crate) request: &'a Request,
    pub(crate) path: &'a [u8],
    pub(crate) host: &'a [u8],
    pub(crate) max_head_bytes: usize,
    pub(crate) max_page_bytes: usize,
    /// The answer to the first request, as it came.
    pub(crate) first: Option<RawPage>,
}

impl PageTransport for HttpTransport<'_> {
    async fn exchange(&mut self, request: PageRequest<'_>) -> Result<Exchanged, PageError> {
        let raw = self.fetch(&request).await?;
        let (page, found) = raw;
        let status = page.head.status;
        let bytes = page.body.len() as u64;
        if self.first.is_none() {
            self.first = Some(page);
        }
        let failed = |message: String| {
            PageError::Failed(ExchangeFailure::Transport {
                message,
                http_status: Some(status),
            })
        };
        match status {
            200 => {}
            401 | 403 => return Err(PageError::Failed(ExchangeFailure::Unauthorized { status })),
            429 => {
                return Err(PageError::Failed(ExchangeFailure::RateLimited {
                    retry_after: None,
                }))
            }
            _ => return Err(failed(format!("HTTP {status}"))),
        }
        let answer = found.answer.ok_or_else(|| {
            PageError::Failed(ExchangeFailure::Malformed(
                "no answer to the page request".into(),
            ))
        })?;
        Ok(Exchanged {
            answer,
            list_changed: found.list_changed,
            bytes,
        })
    }
}

/// What was found in an answer's body.
struct Found {
    answer: Option<Bytes>,
    list_changed: u32,
}

impl HttpTransport<'_> {
    /// One request and its answer: the body read whole, or an event stream
    /// read until the answer to `id`.
    async fn fetch(&self, request: &PageRequest<'_>) -> Result<(RawPage, Found), PageError> {
        let body = &request.body[..];
        let transport = |message: &str| {
            PageError::Failed(ExchangeFailure::Transport {
                message: message.into(),
                http_status: None,
            })
        };
        let (mut upstream, _) = self
            .pool
            .checkout()
            .await
            .map_err(|cause| transport(&format!("upstream {}", cause.label())))?;
        let length = Framing::Length(body.len() as u64);
        let head = emit::request_head(self.request, self.path, self.host, length);
        upstream
            .write_parts(&[&head, body])
            .await
            .map_err(|_| transport("the upstream connection broke"))?;
        let head_timeout = self.pool.head_timeout();
        let resp =
            tokio::time::timeout(head_timeout, final_head(&mut upstream, self.max_head_bytes))
                .await
                .map_err(|_| PageError::Failed(ExchangeFailure::Timeout(head_timeout)))?
                .ok_or_else(|| transport("no valid answer head from the upstream"))?;
        let body_framing = framing::response(resp.status, false, &resp.fields).map_err(|_| {
            PageError::Failed(ExchangeFailure::Malformed(
                "ambiguous answer framing".into(),
            ))
        })?;
        let stream = headers::framing(&resp.fields) == BodyFraming::EventStream;
        let mut finder = AnswerFinder::new(&request.id, request.kind, stream);
        let mut reader = BodyReader::new(body_framing);
        let room = request.room;
        let (body, whole) = read_whole(&mut upstream, &mut reader, self.max_page_bytes, |b| {
            // Past merging's bytes the read stops (and the walk with it).
            !room.take(b.len()) || finder.push(b)
        })
        .await
        .map_err(|e| match e {
            Unread::TooLarge => PageError::Failed(ExchangeFailure::TooLarge {
                limit: self.max_page_bytes as u64,
            }),
            Unread::Broken | Unread::Late => transport("the upstream broke off the answer"),
            Unread::BadFraming => transport("the upstream's chunked coding was broken"),
        })?;
        if room.refused() {
            return Err(transport("merging's bytes are spent"));
        }
        if !stream {
            finder.whole(body.clone());
        }
        // Clean: read to its framed end (not cut short once the answer was
        // found), a body that does not last until the close, no close asked.
        if whole
            && !matches!(body_framing, Framing::UntilClose)
            && !emit::wants_close(&resp.fields, resp.minor)
        {
            self.pool.checkin(upstream);
        }
        let found = Found {
            answer: finder.answer,
            list_changed: finder.list_changed,
        };
        let page = RawPage {
            head: resp,
            body,
            answer_at: finder.answer_at,
        };
        Ok((page, found))
    }
}

/// The final answer head, past interim 1xx ones; `None` for a switch of
/// protocols (never asked for) or no valid head.
async fn final_head(upstream: &mut Upstream, max_head_bytes: usize) -> Option<Response> {
    loop {
        let HeadRead::Head(resp) = upstream.read_head::<Response>(max_head_bytes).await else {
            return None;
        };
        match resp.status {
            101 => return None,
            100..=199 => continue,
            _ => return Some(resp),
        }
    }
}
