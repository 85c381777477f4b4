//! The three MCP transports behind one signature, [`Transport`].
//! Transports know nothing of listings or metrics; they move messages,
//! answer server pings, collect notifications and bound what they read.
//! stdio and legacy SSE share one message-channel core (`channel.rs`).

mod channel;
pub mod http;
pub mod http_client;
pub mod process_tree;
pub mod scope;
pub mod sse;
pub mod sse_body;
// The event-stream parser lives with the runtime-free vocabulary (the tap's
// observer reads events without the wire's transports); named here too.
pub use mcp_listing::sse_parser;
pub mod stdio;
mod tls;

use futures_util::future::BoxFuture;
use mcp_listing::{ExchangeFailure, TransportKind};
use serde_json::Value;
use std::time::{Duration, Instant};

/// A request ready to send.
pub struct Outgoing<'a> {
    pub id: i64,
    pub method: &'a str,
    /// Serialised JSON-RPC request.
    pub body: Vec<u8>,
}

/// What one request/response exchange produced.
#[derive(Debug)]
pub struct Exchange {
    pub outcome: Result<Value, ExchangeError>,
    /// Bytes of the response read (the message, or the SSE stream).
    pub bytes: u64,
    /// From the request written to the response read.
    pub duration: Duration,
    /// Methods of the notifications a poll uses (`list_changed`) that
    /// arrived while waiting; at most [`MAX_KEPT_NOTIFICATIONS`].
    pub notifications: Vec<String>,
    /// Every notification that arrived while waiting, kept or not.
    pub notifications_seen: u64,
    /// Server-to-client requests answered while waiting.
    pub server_requests: u32,
    /// Non-JSON-RPC lines or events seen while waiting.
    pub defects: u32,
}

impl Exchange {
    pub(crate) fn failed(err: ExchangeError, started: Instant) -> Exchange {
        Exchange {
            outcome: Err(err),
            bytes: 0,
            duration: started.elapsed(),
            notifications: Vec::new(),
            notifications_seen: 0,
            server_requests: 0,
            defects: 0,
        }
    }
}

/// Notifications a poll acts on; any other is only counted. A server may
/// send millions during one page: keeping each would grow without bound.
const KEPT_NOTIFICATIONS: [&str; 3] = [
    "notifications/tools/list_changed",
    "notifications/prompts/list_changed",
    "notifications/resources/list_changed",
];

/// Most notifications kept per exchange (or between two requests): a few
/// `list_changed` already say all there is to say.
pub const MAX_KEPT_NOTIFICATIONS: usize = 64;

/// Keep `method` in `kept` when a poll uses it and there is room.
pub(crate) fn keep_notification(kept: &mut Vec<String>, method: String) {
    if kept.len() < MAX_KEPT_NOTIFICATIONS && KEPT_NOTIFICATIONS.contains(&method.as_str()) {
        kept.push(method);
    }
}

/// Why an exchange failed. Mirrors the walker's error labels.
#[derive(Debug, Clone, thiserror::Error)]
pub enum ExchangeError {
    #[error("JSON-RPC error {code}: {message}")]
    Rpc {
        code: i64,
        message: String,
        data: Option<Value>,
        http_status: Option<u16>,
    },
    /// A failure every layer names alike (timeout, transport, HTTP status).
    #[error(transparent)]
    Failed(#[from] ExchangeFailure),
    /// HTTP 404 for our session id: the server forgot the session.
    #[error("session expired (HTTP 404)")]
    SessionExpired,
    /// A URL the server named is outside where this target's requests may
    /// go (`scope.rs`); nothing was sent to it.
    #[error("refused a URL named by {} outside the target's allowed URLs", named_by.describe())]
    NotAllowed { named_by: scope::NamedBy },
}

impl ExchangeError {
    pub fn transport(message: impl Into<String>) -> Self {
        ExchangeError::Failed(ExchangeFailure::transport(message))
    }
}

/// What a message that arrived while our request was outstanding means.
pub(crate) enum Routed {
    /// Our response: the exchange is over.
    Answer(Result<Value, ExchangeError>),
    /// A request from the server: send this answer, keep waiting.
    Reply(Vec<u8>),
    /// Recorded in the exchange (a notification, a defect, or a late
    /// answer to a request we gave up on); keep waiting.
    Recorded,
}

/// Sort one received message for the request `id`, recording
/// notifications, server requests and defects in `ex`.
pub(crate) fn route(value: Value, id: i64, ex: &mut Exchange) -> Routed {
    use crate::jsonrpc::{self, Incoming};
    match jsonrpc::classify(value) {
        Incoming::Response { id: rid, result } if jsonrpc::id_matches(&rid, id) => {
            Routed::Answer(result.map_err(|e| ExchangeError::Rpc {
                code: e.code,
                message: e.message,
                data: e.data,
                http_status: None,
            }))
        }
        Incoming::Response { .. } => Routed::Recorded,
        Incoming::Request { id, method, .. } => {
            ex.server_requests += 1;
            Routed::Reply(jsonrpc::answer_server_request(&id, &method))
        }
        Incoming::Notification { method, .. } => {
            ex.notifications_seen += 1;
            keep_notification(&mut ex.notifications, method);
            Routed::Recorded
        }
        Incoming::Invalid(_) => {
            ex.defects += 1;
            Routed::Recorded
        }
    }
}

/// What a message that arrived while no request was outstanding means.
pub(crate) enum Idle {
    Notification(String),
    /// A request from the server: send this answer.
    Reply(Vec<u8>),
    Nothing,
}

pub(crate) fn idle(value: Value) -> Idle {
    use crate::jsonrpc::{self, Incoming};
    match jsonrpc::classify(value) {
        Incoming::Notification { method, .. } => Idle::Notification(method),
        Incoming::Request { id, method, .. } => {
            Idle::Reply(jsonrpc::answer_server_request(&id, &method))
        }
        _ => Idle::Nothing,
    }
}

/// Bounds shared by every transport.
#[derive(Debug, Clone)]
pub struct TransportLimits {
    pub max_response_bytes: u64,
    pub connect_timeout: Duration,
    /// stderr kept from a stdio child.
    pub stderr_tail_bytes: usize,
}

impl TransportLimits {
    /// Where nobody says otherwise; the exporter's `limits:` defaults are
    /// these.
    pub const DEFAULT: TransportLimits = TransportLimits {
        max_response_bytes: 16 * 1024 * 1024,
        connect_timeout: Duration::from_secs(5),
        stderr_tail_bytes: 8 * 1024,
    };
}

impl Default for TransportLimits {
    fn default() -> Self {
        TransportLimits::DEFAULT
    }
}

/// What one transport does; the session holds one as `Box<dyn Transport>`.
/// Futures are boxed so the trait stays object-safe: one allocation per
/// request, next to a network round trip (docs/performance.md).
pub trait Transport: Send {
    fn kind(&self) -> TransportKind;

    /// Send a request and wait at most `timeout` for its answer.
    fn request<'a>(&'a mut self, req: Outgoing<'a>, timeout: Duration) -> BoxFuture<'a, Exchange>;

    /// Send a message that gets no answer (a notification, or a request
    /// whose answer is read elsewhere).
    fn notify<'a>(
        &'a mut self,
        method: &'a str,
        body: Vec<u8>,
    ) -> BoxFuture<'a, Result<(), ExchangeError>>;

    /// Notifications that arrived while no request was outstanding.
    fn drain_notifications(&mut self) -> Vec<String> {
        Vec::new()
    }

    /// Wait until the server sends a notification while idle (watch
    /// mode). None when the transport cannot deliver them or has ended.
    fn next_notification(&mut self) -> BoxFuture<'_, Option<String>>;

    /// How a 2026-07-28 `subscriptions/listen` travels on this transport.
    fn subscriptions(&self) -> SubscriptionPath;

    /// Sent on every later HTTP request once negotiated.
    fn set_protocol_version(&mut self, _version: &str, _modern: bool) {}

    /// Back to no version header (after a failed modern probe).
    fn clear_protocol_version(&mut self) {}

    fn session_id(&self) -> Option<&str> {
        None
    }

    /// Forget the session id (after a 404) so a new initialize starts afresh.
    fn reset_session(&mut self) {}

    /// End the session and release every resource; never hangs.
    fn close(self: Box<Self>) -> BoxFuture<'static, CloseInfo>;
}

/// How a `subscriptions/listen` request travels.
pub enum SubscriptionPath {
    /// Written like any message; what it yields arrives through
    /// [`Transport::next_notification`] (stdio).
    InBand,
    /// A POST of its own whose answer stays open (Streamable HTTP).
    Stream(Box<http::Poster>),
    /// Not at all (legacy HTTP+SSE predates it).
    Unsupported,
}

/// What closing left behind for diagnostics.
#[derive(Debug, Default)]
pub struct CloseInfo {
    pub stderr_tail: Option<String>,
    pub exit_status: Option<String>,
}

/// Host and port for `server.address` / `server.port`; never the path or query.
pub fn server_address(url: &url::Url) -> (Option<String>, Option<u16>) {
    (
        url.host_str().map(str::to_string),
        url.port_or_known_default(),
    )
}
