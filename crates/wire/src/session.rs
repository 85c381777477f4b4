//! One conversation with a server: transport set-up, era detection and
//! version negotiation, the handshake, and requests that carry `_meta`.

use super::jsonrpc;
use super::transport::http::{self, HttpSpec, HttpTransport};
use super::transport::sse::SseTransport;
use super::transport::stdio::{StdioSpec, StdioTransport};
use super::transport::{CloseInfo, Exchange, ExchangeError, Outgoing, Transport, TransportLimits};
use mcp_listing::{
    ExchangeFailure, HttpMode, ProtocolVersion, SpanId, TraceContext, TransportKind,
};
use serde_json::{json, Map, Value};

/// 2026-07-28 list changes (`subscriptions/listen`); a child module so it
/// can reach the transport.
#[path = "subscriptions.rs"]
pub mod subscriptions;
use std::time::{Duration, SystemTime};

/// Longest we wait for `server/discover` over HTTP before deciding a server
/// is legacy. stdio servers get the whole request timeout: the wait there
/// includes the server's start-up (seconds for some SDKs), and the poller
/// remembers the era afterwards.
const DISCOVER_PROBE_TIMEOUT: Duration = Duration::from_secs(3);

#[derive(Debug, Clone)]
pub enum Endpoint {
    Stdio(StdioSpec),
    Http { spec: HttpSpec, mode: HttpMode },
}

#[derive(Debug, Clone)]
pub struct SessionOptions {
    /// Force a protocol version instead of negotiating.
    pub protocol: Option<ProtocolVersion>,
    /// Era learned from an earlier poll of the same target (true = modern),
    /// so legacy servers are not probed with `server/discover` every time.
    pub era_hint: Option<bool>,
    pub limits: TransportLimits,
    pub request_timeout: Duration,
    /// The poll's trace, sent in `_meta.traceparent` with a span id of its
    /// own for every request.
    pub trace: Option<TraceContext>,
}

/// One handshake request.
#[derive(Debug, Clone)]
pub struct Handshake {
    pub method: &'static str,
    pub started: SystemTime,
    pub duration: Duration,
    pub request_id: i64,
    pub span_id: Option<SpanId>,
}

/// Why a session could not be established, with what was learnt.
#[derive(Debug)]
pub struct ConnectFailure {
    pub error: ExchangeError,
    pub transport: TransportKind,
    pub handshakes: Vec<Handshake>,
    pub close: CloseInfo,
}

/// A single request's answer with the ids it travelled under.
pub struct Answer {
    pub exchange: Exchange,
    pub request_id: i64,
    pub span_id: Option<SpanId>,
    pub started: SystemTime,
}

pub struct Session {
    transport: Box<dyn Transport>,
    /// The version this session speaks, as the server named it: after
    /// `initialize`, the server's answer, which may be one we do not know
    /// (kept as text, shown bounded and scrubbed, never parsed back).
    pub protocol_version: String,
    /// A 2026-07-28 (stateless) session; decided by the handshake that
    /// succeeded, not by the version text.
    pub modern: bool,
    pub server_name: Option<String>,
    pub server_version: Option<String>,
    pub capabilities: Value,
    pub handshakes: Vec<Handshake>,
    pub stdout_defects: u32,
    pub server_requests: u32,
    next_id: i64,
    opts: SessionOptions,
    /// The 2026-07-28 subscription watch mode listens on, once opened.
    listener: Option<subscriptions::Listener>,
}

impl Session {
    /// The era whose listing rules this session follows.
    pub fn era(&self) -> mcp_listing::Era {
        mcp_listing::Era::modern_if(self.modern)
    }

    /// Open the transport and complete the handshake.
    pub async fn connect(
        endpoint: &Endpoint,
        opts: SessionOptions,
    ) -> Result<Session, ConnectFailure> {
        let transport = match open_transport(endpoint, &opts).await {
            Ok(t) => t,
            Err(error) => {
                return Err(ConnectFailure {
                    error,
                    transport: endpoint.first_transport(),
                    handshakes: Vec::new(),
                    close: CloseInfo::default(),
                })
            }
        };
        let mut session = Session {
            transport,
            protocol_version: String::new(),
            modern: false,
            server_name: None,
            server_version: None,
            capabilities: Value::Null,
            handshakes: Vec::new(),
            stdout_defects: 0,
            server_requests: 0,
            next_id: 1,
            opts,
            listener: None,
        };
        match session.negotiate(endpoint).await {
            Ok(()) => Ok(session),
            Err(error) => {
                let handshakes = std::mem::take(&mut session.handshakes);
                let transport = session.transport.kind();
                let close = session.transport.close().await;
                Err(ConnectFailure {
                    error,
                    transport,
                    handshakes,
                    close,
                })
            }
        }
    }

    async fn negotiate(&mut self, endpoint: &Endpoint) -> Result<(), ExchangeError> {
        let forced = self.opts.protocol;
        let try_modern = match (forced, self.opts.era_hint) {
            (Some(v), _) => v.is_modern(),
            (None, Some(modern)) => modern,
            (None, None) => true,
        };
        if try_modern {
            let v = forced.unwrap_or(ProtocolVersion::FIRST_MODERN);
            let stdio = matches!(endpoint, Endpoint::Stdio(_));
            let probe_timeout = if stdio || forced.is_some() || self.opts.era_hint == Some(true) {
                self.opts.request_timeout
            } else {
                self.opts.request_timeout.min(DISCOVER_PROBE_TIMEOUT)
            };
            match self.discover(v, probe_timeout).await {
                Ok(()) => return Ok(()),
                Err(e) if forced.is_some() || is_modern_error(&e) => return Err(e),
                Err(ExchangeError::Failed(ExchangeFailure::Unauthorized { status })) => {
                    return Err(ExchangeError::Failed(ExchangeFailure::Unauthorized {
                        status,
                    }))
                }
                // Refused for load, not for the version: asking again with
                // `initialize` would only add to the load.
                Err(e @ ExchangeError::Failed(ExchangeFailure::RateLimited { .. })) => {
                    return Err(e)
                }
                Err(e) => {
                    // A legacy server. One that exited or went silent on an
                    // unknown method before initialize is started afresh.
                    self.handshakes.pop();
                    let wedged = matches!(
                        e,
                        ExchangeError::Failed(ExchangeFailure::Timeout(_))
                            | ExchangeError::Failed(ExchangeFailure::Transport { .. })
                    );
                    if wedged && matches!(endpoint, Endpoint::Stdio(_)) {
                        let fresh = open_transport(endpoint, &self.opts).await?;
                        let old = std::mem::replace(&mut self.transport, fresh);
                        old.close().await;
                    }
                    // A refused modern request leaves nothing behind: no
                    // version header, no session id it may have handed out.
                    self.transport.clear_protocol_version();
                    self.transport.reset_session();
                }
            }
        }
        let v = forced.unwrap_or(ProtocolVersion::NEWEST_LEGACY).label();
        match self.initialize(v).await {
            Err(ExchangeError::Failed(ExchangeFailure::Transport {
                http_status: Some(400 | 404 | 405),
                ..
            })) if matches!(
                endpoint,
                Endpoint::Http {
                    mode: HttpMode::Auto,
                    ..
                }
            ) =>
            {
                // Pre-2025-03-26 server: the URL is a legacy SSE endpoint.
                let Endpoint::Http { spec, .. } = endpoint else {
                    return Err(ExchangeError::transport("unreachable"));
                };
                self.transport = open_sse(spec, &self.opts).await?;
                self.initialize(v).await
            }
            other => other,
        }
    }

    async fn discover(
        &mut self,
        v: ProtocolVersion,
        timeout: Duration,
    ) -> Result<(), ExchangeError> {
        let v = v.label();
        self.protocol_version = v.to_string();
        self.modern = true;
        self.transport.set_protocol_version(v, true);
        let answer = self.request("server/discover", Map::new(), timeout).await;
        self.record_handshake("server/discover", &answer);
        let result = answer.exchange.outcome?;
        // A DiscoverResult names the versions the server speaks; anything
        // else (servers that answer every method with `{}`) is not modern.
        let speaks = result
            .get("supportedVersions")
            .and_then(Value::as_array)
            .is_some_and(|vs| vs.iter().any(|x| x.as_str() == Some(v)));
        if !speaks {
            return Err(ExchangeError::Failed(ExchangeFailure::Malformed(format!(
                "server/discover answer does not list {v} in supportedVersions"
            ))));
        }
        self.capabilities = result.get("capabilities").cloned().unwrap_or(Value::Null);
        let info = result
            .get("serverInfo")
            .or_else(|| result.pointer("/_meta/io.modelcontextprotocol~1serverInfo"));
        self.set_server_info(info);
        Ok(())
    }

    async fn initialize(&mut self, v: &str) -> Result<(), ExchangeError> {
        self.modern = false;
        let mut params = Map::new();
        params.insert("protocolVersion".into(), json!(v));
        params.insert("capabilities".into(), json!({}));
        params.insert("clientInfo".into(), client_info());
        let answer = self
            .request("initialize", params, self.opts.request_timeout)
            .await;
        self.record_handshake("initialize", &answer);
        let result = answer.exchange.outcome?;
        let negotiated = result
            .get("protocolVersion")
            .and_then(Value::as_str)
            .unwrap_or(v)
            .to_string();
        self.capabilities = result.get("capabilities").cloned().unwrap_or(Value::Null);
        self.set_server_info(result.get("serverInfo"));
        self.protocol_version = negotiated.clone();
        // The header is required from 2025-06-18 and harmless before.
        self.transport.set_protocol_version(&negotiated, false);
        let note = jsonrpc::notification("notifications/initialized", None);
        self.transport
            .notify("notifications/initialized", note)
            .await?;
        Ok(())
    }

    /// After the server forgot our session (HTTP 404): start a new one.
    pub async fn reinitialize(&mut self) -> Result<(), ExchangeError> {
        self.transport.reset_session();
        let v = self.protocol_version.clone();
        self.initialize(&v).await
    }

    fn set_server_info(&mut self, info: Option<&Value>) {
        if let Some(info) = info {
            self.server_name = info.get("name").and_then(Value::as_str).map(bounded);
            self.server_version = info.get("version").and_then(Value::as_str).map(bounded);
        }
    }

    fn record_handshake(&mut self, method: &'static str, answer: &Answer) {
        self.handshakes.push(Handshake {
            method,
            started: answer.started,
            duration: answer.exchange.duration,
            request_id: answer.request_id,
            span_id: answer.span_id,
        });
    }

    /// Send one request; `_meta` carries the modern per-request fields and
    /// the trace context.
    pub async fn request(
        &mut self,
        method: &str,
        mut params: Map<String, Value>,
        timeout: Duration,
    ) -> Answer {
        let id = self.next_id;
        self.next_id += 1;
        let span_id = self.opts.trace.map(|_| SpanId::random());
        let mut meta = Map::new();
        if self.modern {
            meta.insert(
                "io.modelcontextprotocol/protocolVersion".into(),
                json!(self.protocol_version),
            );
            meta.insert(
                "io.modelcontextprotocol/clientCapabilities".into(),
                json!({}),
            );
            meta.insert("io.modelcontextprotocol/clientInfo".into(), client_info());
        }
        if let (Some(trace), Some(span)) = (&self.opts.trace, span_id) {
            meta.insert("traceparent".into(), json!(trace.traceparent(span)));
        }
        if !meta.is_empty() {
            params.insert("_meta".into(), Value::Object(meta));
        }
        let body = jsonrpc::request(id, method, (!params.is_empty()).then_some(params));
        let started = SystemTime::now();
        let exchange = self
            .transport
            .request(Outgoing { id, method, body }, timeout)
            .await;
        self.stdout_defects += exchange.defects;
        self.server_requests += exchange.server_requests;
        Answer {
            exchange,
            request_id: id,
            span_id,
            started,
        }
    }

    /// Whether the server advertised the capability for a list method.
    pub fn advertises(&self, capability: &str) -> bool {
        self.capabilities
            .get(capability)
            .is_some_and(|c| !c.is_null())
    }

    pub fn transport_kind(&self) -> TransportKind {
        self.transport.kind()
    }

    pub fn session_id(&self) -> Option<&str> {
        self.transport.session_id()
    }

    /// Next idle notification (watch mode); None if none can arrive.
    /// 2026-07-28 servers push only on a `subscriptions/listen` stream.
    pub async fn next_notification(&mut self) -> Option<String> {
        if self.modern {
            return self.next_subscribed_notification().await;
        }
        self.transport.next_notification().await
    }

    pub fn drain_notifications(&mut self) -> Vec<String> {
        self.transport.drain_notifications()
    }

    pub async fn close(self) -> CloseInfo {
        self.transport.close().await
    }
}

/// -32020..-32099 are the modern spec's own codes: a server that sends one
/// is modern, whatever else went wrong.
fn is_modern_error(e: &ExchangeError) -> bool {
    matches!(e, ExchangeError::Rpc { code, .. } if (-32099..=-32020).contains(code))
}

fn bounded(s: &str) -> String {
    s.chars().take(128).collect()
}

fn client_info() -> Value {
    json!({"name": "mcp-exporter", "version": env!("CARGO_PKG_VERSION")})
}

impl Endpoint {
    /// The transport a session to this endpoint opens first.
    pub fn first_transport(&self) -> TransportKind {
        match self {
            Endpoint::Stdio(_) => TransportKind::Stdio,
            Endpoint::Http { mode, .. } => mode.first_transport(),
        }
    }
}

async fn open_transport(
    endpoint: &Endpoint,
    opts: &SessionOptions,
) -> Result<Box<dyn Transport>, ExchangeError> {
    match endpoint {
        Endpoint::Stdio(spec) => Ok(Box::new(
            StdioTransport::spawn(
                spec,
                opts.limits.max_response_bytes,
                opts.limits.stderr_tail_bytes,
            )
            .await?,
        )),
        Endpoint::Http {
            spec,
            mode: HttpMode::Sse,
        } => open_sse(spec, opts).await,
        Endpoint::Http { spec, .. } => {
            let client = http::client(spec, opts.limits.connect_timeout)?;
            let url = spec
                .url
                .clone()
                .ok_or_else(|| ExchangeError::transport("no URL"))?;
            Ok(Box::new(HttpTransport::new(
                client,
                url,
                opts.limits.max_response_bytes,
            )))
        }
    }
}

async fn open_sse(
    spec: &HttpSpec,
    opts: &SessionOptions,
) -> Result<Box<dyn Transport>, ExchangeError> {
    let client = http::client(spec, opts.limits.connect_timeout)?;
    let url = spec
        .url
        .clone()
        .ok_or_else(|| ExchangeError::transport("no URL"))?;
    let t = SseTransport::connect(
        client,
        url,
        opts.limits.max_response_bytes,
        opts.request_timeout,
    )
    .await?;
    Ok(Box::new(t))
}
