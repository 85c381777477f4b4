//! One client request through the tap: the request goes to the upstream as
//! it arrives (end-to-end headers unchanged, `Host` the upstream's, the
//! body streamed), the answer comes back the same way; the observer is
//! told what passed and never waited for. The tap's own work on the way —
//! from the request head to the upstream request, and from the answer head
//! to the client's answer head — is recorded as its added time.

use crate::answer;
use crate::body::ObservedBody;
use crate::event::{
    BodyFraming, Direction, ExchangeEnd, ExchangeId, RequestHead, RequestMethod, ResponseHead,
    TapEvent, Tee, UpstreamFailure,
};
use crate::exchange::Exchange;
use crate::headers;
use crate::legacy::{self, EndpointWatch, Origins};
use crate::settings::{TapError, TapLimits, TapSettings};
use crate::stats::TapStats;
use crate::tap_body::TapBody;
use crate::upstream::{self, Upstream};
use http::header::{HeaderName, HOST};
use http::request::Parts;
use http::uri::Authority;
use http::{Method, Request, Response, StatusCode, Version};
use hyper::body::Incoming;
use std::convert::Infallible;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// `Mcp-Session-Id`, as MCP's Streamable HTTP names it.
pub(crate) const SESSION_HEADER: &str = "mcp-session-id";

pub(crate) struct Forwarder {
    upstream: Upstream<TapBody>,
    tee: Arc<dyn Tee>,
    pub(crate) stats: Arc<TapStats>,
    client_header: Option<HeaderName>,
    inspect_bytes: usize,
    head_timeout: Duration,
    next_exchange: AtomicU64,
}

/// What the tap knows of the connection a request came on.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Via {
    pub(crate) tls: bool,
}

impl Forwarder {
    pub(crate) fn new(
        settings: &TapSettings,
        tee: Arc<dyn Tee>,
        stats: Arc<TapStats>,
    ) -> Result<Forwarder, TapError> {
        let TapLimits {
            inspect_bytes,
            upstream_head_timeout,
            ..
        } = settings.limits;
        Ok(Forwarder {
            upstream: Upstream::new(settings)?,
            tee,
            stats,
            client_header: settings.client_header.clone(),
            inspect_bytes,
            head_timeout: upstream_head_timeout,
            next_exchange: AtomicU64::new(1),
        })
    }

    pub(crate) async fn handle(
        self: Arc<Self>,
        via: Via,
        req: Request<Incoming>,
    ) -> Result<Response<TapBody>, Infallible> {
        let started = Instant::now();
        let method = request_method(req.method());
        self.stats.request(method);
        if req.method() == Method::CONNECT {
            return Ok(answer::method_not_allowed());
        }
        let Some(path) = req.uri().path_and_query().cloned() else {
            return Ok(answer::bad_request());
        };
        let Ok(uri) = self.upstream.uri(&path) else {
            return Ok(answer::bad_request());
        };
        let (parts, body) = req.into_parts();
        let id = ExchangeId(self.next_exchange.fetch_add(1, Ordering::Relaxed));
        let framing = headers::framing(&parts.headers);
        let exchange = Exchange::open(id, self.tee.clone(), self.stats.clone(), || {
            TapEvent::Opened {
                exchange: id,
                at: started,
                head: self.request_head(method, &parts, framing),
            }
        });
        let watch = (parts.method == Method::GET).then(|| Origins {
            upstream_request: self.upstream.url(&path),
            tap: tap_origin(&parts, via),
        });
        let mut headers = headers::end_to_end(&parts.headers);
        headers.insert(HOST, self.upstream.host());
        let body = ObservedBody::new(
            body,
            exchange.clone(),
            framing,
            Direction::FromClient,
            self.inspect_bytes,
        );
        let mut up = Request::new(TapBody::Forwarded(body));
        *up.method_mut() = parts.method;
        *up.uri_mut() = uri;
        *up.version_mut() = Version::HTTP_11;
        *up.headers_mut() = headers;
        let before = started.elapsed();
        let sent = tokio::time::timeout(self.head_timeout, self.upstream.client().request(up));
        let answer = match sent.await {
            Err(_) => return Ok(self.failed(&exchange, UpstreamFailure::Timeout)),
            Ok(Err(e)) => return Ok(self.failed(&exchange, upstream::failure(&e))),
            Ok(Ok(answer)) => answer,
        };
        let answered = Instant::now();
        let response = self.answer(exchange, answer, watch, answered);
        self.stats
            .record_added((before + answered.elapsed()).as_secs_f64());
        Ok(response)
    }

    /// The upstream's answer as the client gets it.
    fn answer(
        &self,
        exchange: Arc<Exchange>,
        answer: Response<Incoming>,
        watch: Option<Origins>,
        at: Instant,
    ) -> Response<TapBody> {
        let (parts, body) = answer.into_parts();
        let framing = headers::framing(&parts.headers);
        exchange.offer(TapEvent::Answered {
            exchange: exchange.id,
            at,
            head: ResponseHead {
                status: parts.status.as_u16(),
                framing,
                session: headers::value(&parts.headers, SESSION_HEADER),
            },
        });
        let mut body = ObservedBody::new(
            body,
            exchange,
            framing,
            Direction::FromUpstream,
            self.inspect_bytes,
        );
        // A legacy stream's `endpoint` event; a stream of fixed length is
        // not one (and its length must stay true).
        if let Some(origins) = watch.filter(|_| {
            parts.status == StatusCode::OK
                && framing == BodyFraming::EventStream
                && !headers::has_length(&parts.headers)
        }) {
            body = body.watching(EndpointWatch::new(origins));
        }
        let mut response = Response::new(TapBody::Forwarded(body));
        *response.status_mut() = parts.status;
        *response.headers_mut() = headers::end_to_end(&parts.headers);
        response
    }

    fn failed(&self, exchange: &Exchange, cause: UpstreamFailure) -> Response<TapBody> {
        self.stats.upstream_error(cause);
        exchange.ended(ExchangeEnd::UpstreamFailed(cause));
        answer::upstream_failed(cause)
    }

    fn request_head(
        &self,
        method: RequestMethod,
        parts: &Parts,
        framing: BodyFraming,
    ) -> RequestHead {
        let h = &parts.headers;
        let session = headers::value(h, SESSION_HEADER).or_else(|| {
            // A legacy message POST names its stream's session in the query.
            (method == RequestMethod::Post)
                .then(|| parts.uri.query().and_then(legacy::query_session))
                .flatten()
        });
        RequestHead {
            method,
            session,
            user_agent: headers::value(h, http::header::USER_AGENT),
            client_header: self
                .client_header
                .as_ref()
                .and_then(|n| headers::value(h, n)),
            framing,
        }
    }
}

fn request_method(method: &Method) -> RequestMethod {
    match *method {
        Method::POST => RequestMethod::Post,
        Method::GET => RequestMethod::Get,
        Method::DELETE => RequestMethod::Delete,
        _ => RequestMethod::Other,
    }
}

/// `scheme://authority` the client used to reach the tap: its `Host` (or
/// an absolute-form target's authority). Only ever shown back to that
/// client, in a rewritten legacy `endpoint` URL.
fn tap_origin(parts: &Parts, via: Via) -> Option<String> {
    let authority = parts
        .headers
        .get(HOST)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<Authority>().ok())
        .or_else(|| parts.uri.authority().cloned())
        .filter(|a| !a.as_str().contains('@'))?;
    let scheme = if via.tls { "https" } else { "http" };
    Some(format!("{scheme}://{authority}"))
}
