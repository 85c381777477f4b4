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
use crate::http1::head::{value, Request, Response};
use crate::merge::pager::{AnswerFinder, Exchanged, PageRequest, PageTransport};
use crate::peer::HeadRead;
use crate::pool::{Pool, Upstream};
use crate::relay::{read_whole, BodyReader, Unread};
use bytes::Bytes;
use mcp_listing::{ExchangeFailure, PageError};
use std::time::SystemTime;

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
        let (page, found) = self.fetch(&request).await?;
        let bytes = page.body.len() as u64;
        let refused = (page.head.status != 200).then(|| refused(&page.head));
        if self.first.is_none() {
            self.first = Some(page);
        }
        if let Some(failure) = refused {
            return Err(PageError::Failed(failure));
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

/// A page request the upstream did not answer with 200, read as every
/// refused request of ours is (`ExchangeFailure::from_http_status`, its
/// `Retry-After` included).
fn refused(head: &Response) -> ExchangeFailure {
    let retry_after = value(&head.fields, "retry-after").map(|v| &v[..]);
    match http::StatusCode::from_u16(head.status) {
        Ok(status) => ExchangeFailure::from_http_status(status, retry_after, SystemTime::now()),
        // The head parser reads three digits; anything else is not HTTP.
        Err(_) => ExchangeFailure::Transport {
            message: format!("HTTP {}", head.status),
            http_status: Some(head.status),
        },
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::http1::head::Field;
    use std::time::Duration;

    fn head(status: u16, fields: &[(&'static str, &'static str)]) -> Response {
        Response {
            status,
            reason: Bytes::new(),
            minor: 1,
            fields: (fields.iter())
                .map(|&(name, value)| Field {
                    name: Bytes::from_static(name.as_bytes()),
                    value: Bytes::from_static(value.as_bytes()),
                })
                .collect(),
        }
    }

    #[test]
    fn a_refused_page_is_read_as_every_refused_request_is() {
        assert!(matches!(
            refused(&head(429, &[("Retry-After", "7")])),
            ExchangeFailure::RateLimited { retry_after: Some(d) } if d == Duration::from_secs(7)
        ));
        assert!(matches!(
            refused(&head(429, &[])),
            ExchangeFailure::RateLimited { retry_after: None }
        ));
        assert!(matches!(
            refused(&head(403, &[])),
            ExchangeFailure::Unauthorized { status: 403 }
        ));
        let failed = refused(&head(502, &[]));
        assert_eq!(failed.http_status(), Some(502));
        assert_eq!(failed.to_string(), "HTTP 502 Bad Gateway");
    }
}
