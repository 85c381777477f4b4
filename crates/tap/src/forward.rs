//! One client request through the tap: its head to the upstream with the
//! body as it arrives, the answer back the same way; the observer told what
//! passed, never waited for. The tap's own work — from the request head
//! read (or the small body held, below) to the upstream request written,
//! and from the answer head read to the client's answer head written — is
//! recorded as its added time.
//!
//! A request body of known length up to [`HELD_BODY_BYTES`] is read whole
//! before an upstream connection is taken, as nginx buffers request bodies:
//! a client that trickles its body holds its own connection and nothing
//! of the upstream's. Every body read off a client has a deadline.

use crate::answer;
pub(crate) use crate::answer::After;
use crate::apps::Apps;
use crate::copy::Copier;
use crate::event::{
    BodyFraming, Cut, Direction, ExchangeEnd, ExchangeId, RequestHead, RequestMethod, ResponseHead,
    TapEvent, Tee, UpstreamFailure,
};
use crate::exchange_tee::Exchange;
use crate::headers;
use crate::http1::emit::{self, ToClient};
use crate::http1::framing::{self, Framing};
use crate::http1::head::{self, Request, Response};
use crate::identity::{self, Claims, ClientInfo};
use crate::legacy::{self, EndpointWatch, Origins};
use crate::merge::ask;
use crate::merge::eligible::{self, Eligible, Known};
use crate::merge::flow::MergeStep;
use crate::merge::http_merge::{self, MergeAsk, UpstreamSide};
use crate::merge::{ChangeWatch, Merges};
use crate::peer::{HeadRead, Peer, WriteDeadline};
use crate::pool::{Pool, PoolSettings, Upstream};
use crate::relay::{relay, BodyDeadline, BodyReader, Coding, RelayEnd, Sink};
use crate::settings::MergeClients;
use crate::settings::{TapError, TapLimits, TapSettings};
use crate::stats::TapStats;
use crate::upstream::{forwarded_path, Target};
use bytes::Bytes;
use http::uri::PathAndQuery;
use http::{HeaderName, HeaderValue, Method};
use std::net::IpAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::sync::{Semaphore, SemaphorePermit};

/// `Mcp-Session-Id`, as MCP's Streamable HTTP names it.
const SESSION_HEADER: &str = "mcp-session-id";

/// Request bodies of known length up to this are read whole before an
/// upstream connection is taken: the bound merging reads bodies within, and
/// far above an MCP request's usual size.
pub(crate) const HELD_BODY_BYTES: usize = ask::MAX_INSPECTED_BYTES;

pub(crate) struct Forwarder {
    pub(crate) target: Target,
    pub(crate) pool: Pool,
    tee: Arc<dyn Tee>,
    pub(crate) stats: Arc<TapStats>,
    client_header: Option<HeaderName>,
    /// The operator's apps (by source address, User-Agent).
    apps: Apps,
    pub(crate) limits: TapLimits,
    /// Merging, when any client is named for it.
    merges: Option<Merges>,
    next_exchange: AtomicU64,
    /// Bytes of request bodies held before forwarding, all clients
    /// together (`TapLimits::buffered_body_bytes`).
    held_bodies: Semaphore,
}

/// A request body read whole before forwarding: its share of the budget,
/// and when it was all there.
struct HeldBody<'a> {
    _bytes: Option<SemaphorePermit<'a>>,
    at: Instant,
}

/// What the tap knows of the connection a request came on.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Via {
    pub(crate) tls: bool,
    /// The client's address.
    pub(crate) peer: Option<IpAddr>,
}

/// A request on its way: what the answer's handling needs of it.
struct Asked {
    method: Method,
    minor: u8,
    close: bool,
    /// The tap's own time before the upstream request was written.
    before: Duration,
    /// A GET's origins, to rewrite a legacy `endpoint` URL.
    origins: Option<Origins>,
    /// The request's session (its header, or a legacy POST's query).
    session: Option<Bytes>,
    /// An `initialize`'s client, for the session its answer opens.
    bind: Option<ClientInfo>,
}

impl Forwarder {
    pub(crate) fn new(
        settings: &TapSettings,
        tee: Arc<dyn Tee>,
        stats: Arc<TapStats>,
    ) -> Result<Forwarder, TapError> {
        let target = Target::new(settings)?;
        let tls = &settings.upstream_tls;
        let connector = mcp_wire::transport::http_client::connector(
            settings.limits.connect_timeout,
            tls.ca_file.as_deref(),
            tls.insecure_skip_verify,
        )
        .map_err(|e| TapError::UpstreamTls(e.to_string()))?;
        let limits = &settings.limits;
        let pool = Pool::new(
            connector,
            target.origin().clone(),
            PoolSettings {
                connect_timeout: limits.connect_timeout,
                head_timeout: limits.upstream_head_timeout,
                max_idle: limits.upstream_idle_connections,
                write_deadline: WriteDeadline {
                    after: limits.write_timeout,
                    stats: stats.clone(),
                    cut: Cut::UpstreamWrite,
                },
            },
        );
        let held_bodies = Semaphore::new(limits.buffered_body_bytes.min(Semaphore::MAX_PERMITS));
        Ok(Forwarder {
            target,
            pool,
            tee,
            stats,
            client_header: settings.client_header.clone(),
            apps: settings.apps.clone(),
            limits: settings.limits.clone(),
            merges: (settings.merge.clients != MergeClients::Nobody)
                .then(|| Merges::new(settings.merge.clone(), &settings.apps)),
            next_exchange: AtomicU64::new(1),
            held_bodies,
        })
    }

    /// Forward `req` (read at `started`) and its answer.
    pub(crate) async fn exchange<C>(
        &self,
        client: &mut Peer<C>,
        via: Via,
        req: Request,
        started: Instant,
    ) -> After
    where
        C: AsyncRead + AsyncWrite + Unpin,
    {
        let method = request_method(&req.method);
        self.stats.request(method);
        let (path, body) = match self.admissible(&req) {
            Ok(admitted) => admitted,
            Err(refusal) => return own(client, &refusal).await,
        };
        let session = session_of(&req, method);
        let exchange = self.open(&req, &path, (method, via), started, session.clone());
        if body != Framing::None && expects_continue(&req) {
            // The tap reads the body as it comes; say so, as a server would.
            let _ = client.write(b"HTTP/1.1 100 Continue\r\n\r\n").await;
        }
        let held = match self.hold_body(client, body, started, &exchange).await {
            Ok(held) => held,
            Err(after) => return after,
        };
        let origins = (req.method == Method::GET).then(|| Origins {
            upstream_request: self.target.url(&path),
            tap: tap_origin(&req, via),
        });
        let mut asked = Asked {
            method: req.method.clone(),
            minor: req.minor,
            close: emit::wants_close(&req.fields, req.minor),
            before: Duration::ZERO,
            origins,
            session: session
                .as_ref()
                .map(|s| Bytes::copy_from_slice(s.as_bytes())),
            bind: None,
        };
        if let Some(merges) = &self.merges {
            match self
                .inspect(
                    merges,
                    client,
                    (&req, via),
                    &path,
                    &exchange,
                    body,
                    &mut asked,
                )
                .await
            {
                Inspection::Go => {}
                Inspection::Done(after) => return after,
            }
        }
        let upstream = match self
            .request(client, req, &path, body, &exchange, started)
            .await
        {
            Ok((upstream, sent)) => {
                asked.before =
                    sent.map_or(Duration::ZERO, |at| at.saturating_duration_since(held.at));
                upstream
            }
            Err(after) => return after,
        };
        drop(held);
        self.answer(client, upstream, &exchange, asked).await
    }

    /// What the upstream is sent of `req`: its path and body framing; or
    /// the tap's refusal (CONNECT, no path, framing a peer behind the tap
    /// could read differently).
    fn admissible(&self, req: &Request) -> Result<(PathAndQuery, Framing), Vec<u8>> {
        if req.method == Method::CONNECT {
            return Err(answer::method_not_allowed());
        }
        let Some(path) = forwarded_path(&req.target) else {
            return Err(answer::bad_request());
        };
        match framing::request(&req.fields, req.minor) {
            Ok(body) => Ok((path, body)),
            Err(_) => {
                self.stats.cut(Cut::BadFraming);
                Err(answer::bad_request())
            }
        }
    }

    /// Read a small body of known length whole, within the body deadline,
    /// while the budget for held bodies lasts (past it, or for any other
    /// body, nothing is read here: it is forwarded as it comes).
    async fn hold_body<C>(
        &self,
        client: &mut Peer<C>,
        body: Framing,
        started: Instant,
        exchange: &Exchange,
    ) -> Result<HeldBody<'_>, After>
    where
        C: AsyncRead + AsyncWrite + Unpin,
    {
        let not_held = HeldBody {
            _bytes: None,
            at: started,
        };
        let Framing::Length(len) = body else {
            return Ok(not_held);
        };
        let len = usize::try_from(len).unwrap_or(usize::MAX);
        if len > HELD_BODY_BYTES || client.buffered().len() >= len {
            return Ok(not_held);
        }
        // At most 64 KiB: fits.
        let Ok(bytes) = self.held_bodies.try_acquire_many(len as u32) else {
            return Ok(not_held);
        };
        let deadline = self.body_deadline(started).at(0);
        match tokio::time::timeout_at(deadline, client.fill_to(len)).await {
            Ok(Ok(())) => Ok(HeldBody {
                _bytes: Some(bytes),
                at: Instant::now(),
            }),
            Ok(Err(_)) => {
                exchange.ended(ExchangeEnd::ClientGone);
                Err(After::Close)
            }
            Err(_) => Err(self.late(client, exchange).await),
        }
    }

    /// A request body read off a client must come by this.
    fn body_deadline(&self, started: Instant) -> BodyDeadline {
        BodyDeadline {
            from: tokio::time::Instant::from_std(started),
            base: self.limits.body_timeout,
        }
    }

    /// The client did not send its body in time: 408, and the connection
    /// closes.
    async fn late<C>(&self, client: &mut Peer<C>, exchange: &Exchange) -> After
    where
        C: AsyncRead + AsyncWrite + Unpin,
    {
        self.stats.cut(Cut::BodyTimeout);
        exchange.ended(ExchangeEnd::ClientGone);
        own(client, &answer::request_timeout()).await
    }

    /// The request to the upstream: its head, then its body as it comes.
    /// The connection it went on, and when its head was written.
    async fn request<C>(
        &self,
        client: &mut Peer<C>,
        req: Request,
        path: &PathAndQuery,
        body: Framing,
        exchange: &Exchange,
        started: Instant,
    ) -> Result<(Upstream, Option<Instant>), After>
    where
        C: AsyncRead + AsyncWrite + Unpin,
    {
        let framing = headers::framing(&req.fields);
        let head = emit::request_head(&req, path.as_str().as_bytes(), self.target.host(), body);
        drop(req);
        let mut upstream = match self.pool.checkout().await {
            Ok((upstream, _)) => upstream,
            Err(cause) => return Err(self.failed(client, exchange, cause).await),
        };
        let mut sink = Sink {
            exchange,
            copier: Copier::new(framing, Direction::FromClient, self.limits.inspect_bytes),
            watch: None,
            changes: None,
            coding: coding(body, false),
            first_write: None,
        };
        let mut reader = BodyReader::new(body).within(self.body_deadline(started));
        match relay(client, &mut upstream, head, &mut reader, &mut sink, None).await {
            RelayEnd::Done => Ok((upstream, sink.first_write)),
            RelayEnd::SourceBroke => {
                exchange.ended(ExchangeEnd::ClientGone);
                Err(After::Close)
            }
            RelayEnd::SourceBadFraming => {
                self.stats.cut(Cut::BadFraming);
                exchange.ended(ExchangeEnd::ClientGone);
                Err(own(client, &answer::bad_request()).await)
            }
            RelayEnd::SourceLate => Err(self.late(client, exchange).await),
            RelayEnd::SinkGone => Err(self.failed(client, exchange, UpstreamFailure::Reset).await),
        }
    }

    /// Tell the observer a request began.
    fn open(
        &self,
        req: &Request,
        path: &PathAndQuery,
        (method, via): (RequestMethod, Via),
        started: Instant,
        session: Option<HeaderValue>,
    ) -> Exchange {
        let id = ExchangeId(self.next_exchange.fetch_add(1, Ordering::Relaxed));
        Exchange::open(id, self.tee.clone(), self.stats.clone(), || {
            let f = &req.fields;
            TapEvent::Opened {
                exchange: id,
                at: started,
                head: RequestHead {
                    method,
                    session,
                    user_agent: headers::value(f, "user-agent"),
                    client_header: self
                        .client_header
                        .as_ref()
                        .and_then(|n| headers::value(f, n.as_str())),
                    framing: headers::framing(f),
                    path: Some(path.clone()),
                    peer: via.peer,
                },
            }
        })
    }

    /// The upstream's answer, to the client.
    async fn answer<C>(
        &self,
        client: &mut Peer<C>,
        mut upstream: Upstream,
        exchange: &Exchange,
        mut asked: Asked,
    ) -> After
    where
        C: AsyncRead + AsyncWrite + Unpin,
    {
        let resp = match self.answer_head(client, &mut upstream).await {
            Ok(resp) => resp,
            Err(None) => {
                exchange.ended(ExchangeEnd::ClientGone);
                return After::Close;
            }
            Err(Some(cause)) => return self.failed(client, exchange, cause).await,
        };
        let answered = Instant::now();
        let head_request = asked.method == Method::HEAD;
        let Ok(body) = framing::response(resp.status, head_request, &resp.fields) else {
            self.stats.cut(Cut::BadFraming);
            return self.failed(client, exchange, UpstreamFailure::Reset).await;
        };
        let observed = headers::framing(&resp.fields);
        self.answered(exchange, &resp, observed, &mut asked, answered);
        let dechunk = body == Framing::Chunked && asked.minor == 0;
        let to = ToClient {
            framing: body,
            dechunk,
            close: asked.close || dechunk || body == Framing::UntilClose,
        };
        let reusable = !emit::wants_close(&resp.fields, resp.minor) && body != Framing::UntilClose;
        let watch = asked
            .origins
            .filter(|_| {
                resp.status == 200
                    && observed == BodyFraming::EventStream
                    && !matches!(body, Framing::Length(_))
            })
            .map(|o| Box::new(EndpointWatch::new(o)));
        let client_head = emit::response_head(&resp, to);
        drop(resp);
        let changes = (observed == BodyFraming::EventStream)
            .then_some(self.merges.as_ref())
            .flatten()
            .map(|m| ChangeWatch::new(m, asked.session.clone()));
        let mut sink = Sink {
            exchange,
            copier: Copier::new(observed, Direction::FromUpstream, self.limits.inspect_bytes),
            watch,
            changes,
            coding: coding(body, dechunk),
            first_write: None,
        };
        let _stream = (observed == BodyFraming::EventStream).then(|| OpenStream::new(&self.stats));
        let mut reader = BodyReader::new(body);
        let keep = Some(self.limits.max_head_bytes);
        let end = relay(
            &mut upstream,
            client,
            client_head,
            &mut reader,
            &mut sink,
            keep,
        )
        .await;
        let Some(at) = sink.first_write else {
            return self.unanswered(client, exchange, end).await;
        };
        let added = asked.before + (at - answered);
        self.stats.record_added(added.as_secs_f64());
        self.finish(exchange, end, upstream, reusable, to.close)
    }

    /// Nothing of the answer reached the client: its body broke before
    /// the first write (a proxy's error, not a cut answer), or the client
    /// went away.
    async fn unanswered<C>(&self, client: &mut Peer<C>, exchange: &Exchange, end: RelayEnd) -> After
    where
        C: AsyncRead + AsyncWrite + Unpin,
    {
        match end {
            RelayEnd::SinkGone | RelayEnd::Done => {
                exchange.ended(ExchangeEnd::ClientGone);
                After::Close
            }
            RelayEnd::SourceBadFraming => {
                self.stats.cut(Cut::BadFraming);
                self.failed(client, exchange, UpstreamFailure::Reset).await
            }
            RelayEnd::SourceBroke | RelayEnd::SourceLate => {
                self.failed(client, exchange, UpstreamFailure::Reset).await
            }
        }
    }

    /// Tell the observer the answer head passed; an `initialize`'s client
    /// is bound to the session its answer opened.
    fn answered(
        &self,
        exchange: &Exchange,
        resp: &Response,
        framing: BodyFraming,
        asked: &mut Asked,
        at: Instant,
    ) {
        if let (Some(merges), Some(client_info)) = (&self.merges, asked.bind.take()) {
            let opened = headers::value(&resp.fields, SESSION_HEADER)
                .map(|s| Bytes::copy_from_slice(s.as_bytes()))
                .or_else(|| asked.session.clone());
            if let Some(session) = opened {
                merges.bind(session, client_info);
            }
        }
        exchange.offer(TapEvent::Answered {
            exchange: exchange.id,
            at,
            head: ResponseHead {
                status: resp.status,
                framing,
                session: headers::value(&resp.fields, SESSION_HEADER),
            },
        });
    }

    /// The answer head (interim 1xx ones passed on), within the upstream
    /// head timeout of the request's end. `Err(None)`: the client went
    /// away meanwhile.
    async fn answer_head<C>(
        &self,
        client: &mut Peer<C>,
        upstream: &mut Upstream,
    ) -> Result<Response, Option<UpstreamFailure>>
    where
        C: AsyncRead + AsyncWrite + Unpin,
    {
        let deadline = tokio::time::Instant::now() + self.pool.head_timeout();
        let max = self.limits.max_head_bytes;
        loop {
            let read = tokio::select! {
                read = tokio::time::timeout_at(deadline, upstream.read_head::<Response>(max)) => read,
                () = client.closed(max) => return Err(None),
            };
            let resp = match read {
                Err(_) => return Err(Some(UpstreamFailure::Timeout)),
                Ok(HeadRead::Head(resp)) => resp,
                Ok(_) => return Err(Some(UpstreamFailure::Reset)),
            };
            match resp.status {
                // No protocol switch is asked for (`Upgrade` never passes).
                101 => return Err(Some(UpstreamFailure::Reset)),
                100..=199 => {
                    let interim = emit::response_head(
                        &resp,
                        ToClient {
                            framing: Framing::None,
                            dechunk: false,
                            close: false,
                        },
                    );
                    client.write(&interim).await.map_err(|_| None)?;
                }
                _ => return Ok(resp),
            }
        }
    }

    /// With merging on, what a small JSON POST asks — read only when what
    /// is known before its body (`eligible`) says merging may need it: an
    /// `initialize`'s client is remembered for its session; a first-page
    /// list request of a client named for merging is merged.
    #[allow(clippy::too_many_arguments)]
    async fn inspect<C>(
        &self,
        merges: &Merges,
        client: &mut Peer<C>,
        (req, via): (&Request, Via),
        path: &PathAndQuery,
        exchange: &Exchange,
        body: Framing,
        asked: &mut Asked,
    ) -> Inspection
    where
        C: AsyncRead + AsyncWrite + Unpin,
    {
        let Framing::Length(len) = body else {
            return Inspection::Go;
        };
        let len = usize::try_from(len).unwrap_or(usize::MAX);
        if req.method != Method::POST
            || len > ask::MAX_INSPECTED_BYTES
            || headers::framing(&req.fields) != BodyFraming::Json
            // Not held (the budget for held bodies was spent): it passes
            // as it comes, never waited for here.
            || client.buffered().len() < len
        {
            return Inspection::Go;
        }
        let (claims, bound) = self.claims(merges, req, via, asked.session.as_ref());
        let eligible = &merges.eligible;
        if !reads(
            eligible,
            req,
            &claims,
            bound.as_ref(),
            asked.session.is_some(),
        ) {
            return Inspection::Go;
        }
        self.stats.merge_read();
        let protocol = head::value(&req.fields, "mcp-protocol-version").map(|v| &v[..]);
        let list = match ask::inspect(&client.buffered()[..len], protocol) {
            ask::Inspected::Initialize(info) => {
                asked.bind = Some(info);
                return Inspection::Go;
            }
            ask::Inspected::Other => return Inspection::Go,
            ask::Inspected::FirstPage(list) => list,
        };
        let (who, _) = identity::identify(Claims {
            client_info: list.client_info.clone().or(bound),
            ..claims
        });
        if !eligible.names(&who) {
            return Inspection::Go;
        }
        let ask = MergeAsk {
            req,
            path: path.as_str().as_bytes(),
            exchange,
            len,
            session: asked.session.clone(),
            close: asked.close,
        };
        let upstream = UpstreamSide {
            pool: &self.pool,
            host: self.target.host(),
            limits: &self.limits,
        };
        match http_merge::merge(merges, upstream, client, ask, &list).await {
            MergeStep::Answered(after) => Inspection::Done(after),
            MergeStep::Pass => Inspection::Go,
        }
    }

    /// What the request's head and session say of its client (all but
    /// what its body says), and the client its session was bound to.
    fn claims(
        &self,
        merges: &Merges,
        req: &Request,
        via: Via,
        session: Option<&Bytes>,
    ) -> (Claims, Option<ClientInfo>) {
        let f = &req.fields;
        let header = self
            .client_header
            .as_ref()
            .and_then(|n| head::value(f, n.as_str()))
            .and_then(|v| identity::from_header(v));
        let agent = head::value(f, "user-agent");
        let claims = Claims {
            header,
            app: self.apps.app_of(via.peer, agent.map(|v| &v[..])),
            client_info: None,
            user_agent: agent.and_then(|v| identity::from_user_agent(v)),
        };
        (claims, session.and_then(|s| merges.client_of(s)))
    }

    fn finish(
        &self,
        exchange: &Exchange,
        end: RelayEnd,
        upstream: Upstream,
        reusable: bool,
        close: bool,
    ) -> After {
        match end {
            RelayEnd::Done => {
                exchange.ended(ExchangeEnd::Completed);
                if reusable {
                    self.pool.checkin(upstream);
                }
                if close {
                    After::Close
                } else {
                    After::KeepAlive
                }
            }
            RelayEnd::SourceBroke | RelayEnd::SourceBadFraming | RelayEnd::SourceLate => {
                if end == RelayEnd::SourceBadFraming {
                    self.stats.cut(Cut::BadFraming);
                }
                self.stats.upstream_error(UpstreamFailure::Reset);
                exchange.ended(ExchangeEnd::UpstreamFailed(UpstreamFailure::Reset));
                After::Close
            }
            RelayEnd::SinkGone => {
                exchange.ended(ExchangeEnd::ClientGone);
                After::Close
            }
        }
    }

    /// No answer from the upstream: the client gets a proxy's error.
    async fn failed<C>(
        &self,
        client: &mut Peer<C>,
        exchange: &Exchange,
        cause: UpstreamFailure,
    ) -> After
    where
        C: AsyncRead + AsyncWrite + Unpin,
    {
        answer::fail(client, exchange, cause).await
    }
}

/// Write an answer of the tap's own; the connection closes after it.
async fn own<C: AsyncRead + AsyncWrite + Unpin>(client: &mut Peer<C>, bytes: &[u8]) -> After {
    answer::send(client, bytes).await
}

/// How a body of this framing goes out.
fn coding(body: Framing, dechunk: bool) -> Coding {
    if body == Framing::Chunked && !dechunk {
        Coding::Chunked
    } else {
        Coding::Plain
    }
}

fn expects_continue(req: &Request) -> bool {
    head::value(&req.fields, "expect").is_some_and(|v| v.eq_ignore_ascii_case(b"100-continue"))
}

fn request_method(method: &Method) -> RequestMethod {
    match *method {
        Method::POST => RequestMethod::Post,
        Method::GET => RequestMethod::Get,
        Method::DELETE => RequestMethod::Delete,
        _ => RequestMethod::Other,
    }
}

/// Whether merging reads this request's body (`Eligible::reads`).
fn reads(
    eligible: &Eligible,
    req: &Request,
    claims: &Claims,
    bound: Option<&ClientInfo>,
    has_session: bool,
) -> bool {
    let session = match (has_session, bound) {
        (false, _) => eligible::Session::None,
        (true, None) => eligible::Session::Unbound,
        (true, Some(client)) => eligible::Session::Bound(client),
    };
    eligible.reads(&Known {
        operator: claims.operator(),
        session,
        user_agent: claims.user_agent.as_ref(),
        method: head::value(&req.fields, "mcp-method").map(|v| &v[..]),
    })
}

/// What inspecting a request for merging left to do.
enum Inspection {
    /// Forward it.
    Go,
    /// It was answered (merged), or its client left.
    Done(After),
}

/// The session a request names: its `Mcp-Session-Id`, or for a legacy
/// message POST the `sessionId` of its URL.
fn session_of(req: &Request, method: RequestMethod) -> Option<HeaderValue> {
    headers::value(&req.fields, SESSION_HEADER).or_else(|| {
        let query = std::str::from_utf8(&req.target).ok()?.split_once('?')?.1;
        (method == RequestMethod::Post).then(|| legacy::query_session(query))?
    })
}

/// `scheme://authority` the client used to reach the tap: its `Host`.
/// Only ever shown back to that client, in a rewritten legacy `endpoint`.
fn tap_origin(req: &Request, via: Via) -> Option<String> {
    let host = head::value(&req.fields, "host")?;
    let authority = http::uri::Authority::from_maybe_shared(host.clone()).ok()?;
    if authority.as_str().contains('@') {
        return None;
    }
    let scheme = if via.tls { "https" } else { "http" };
    Some(format!("{scheme}://{authority}"))
}

/// An answer stream counted in `TapStats::open_streams` while it lasts.
struct OpenStream<'a>(&'a TapStats);

impl<'a> OpenStream<'a> {
    fn new(stats: &'a TapStats) -> OpenStream<'a> {
        stats.stream_opened();
        OpenStream(stats)
    }
}

impl Drop for OpenStream<'_> {
    fn drop(&mut self) {
        self.0.stream_closed();
    }
}
