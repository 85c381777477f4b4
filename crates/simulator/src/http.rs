//! HTTP transports: Streamable HTTP at `/mcp` (or `/mcp/<name>` for many
//! virtual servers), and the legacy HTTP+SSE transport at `/sse` +
//! `/messages` (see sse.rs). Sessions, auth and header checks live here;
//! what to answer comes from the engine.

use super::behaviour::scenarios;
use super::config::{ResponseMode, ServerConfig};
use super::engine::{SessionState, VirtualServer, META_VERSION};
use super::reply::{
    error, Body as ReplyBody, Reply, HEADER_MISMATCH, INVALID_REQUEST, METHOD_NOT_FOUND,
    PARSE_ERROR,
};
use super::sse;
use super::subscriptions;
use super::wire::{self, Step, HANG_FOR};
use axum::body::{Body, Bytes};
use axum::extract::{Path, Query, State};
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::Router;
use futures_util::StreamExt;
use mcp_listing::kind::Kind;
use serde_json::{json, Value};
use sha2::{Digest, Sha256};
use std::collections::HashMap;
use std::process::ExitCode;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};
use tokio::sync::mpsc;

pub const SESSION_HEADER: &str = "mcp-session-id";

#[derive(Debug, Clone)]
pub struct HttpOptions {
    pub listen: String,
    pub tcp_nodelay: bool,
    /// Serve the legacy HTTP+SSE transport instead of Streamable HTTP.
    pub legacy_sse: bool,
    pub session_idle: Duration,
    pub max_sessions: usize,
    pub seed: u64,
}

struct HttpSession {
    server: String,
    state: SessionState,
    last_used: Instant,
    /// The standing GET stream, if the client opened one: where JSON-mode
    /// answers put their notifications.
    stream: Option<mpsc::Sender<Bytes>>,
}

/// Notifications queued per standing stream before new ones are dropped.
const STREAM_QUEUE: usize = 64;

pub struct App {
    /// Keyed by name; the single-server mode uses "" (served at `/mcp`).
    pub(super) servers: HashMap<String, Arc<VirtualServer>>,
    sessions: Mutex<HashMap<String, HttpSession>>,
    pub(super) sse_sessions: Mutex<HashMap<String, sse::SseSession>>,
    counter: AtomicU64,
    opts: HttpOptions,
}

pub(super) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // Maps of sessions stay usable after a panicking handler: the worst
    // case is one half-updated session, which the client sees as data.
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl App {
    /// Deterministic under the seed: the n-th session of a run always gets
    /// the same id.
    pub(super) fn new_session_id(&self) -> String {
        let n = self.counter.fetch_add(1, Ordering::Relaxed);
        let mut h = Sha256::new();
        h.update(b"mcp-exporter-simulator session\0");
        h.update(self.opts.seed.to_be_bytes());
        h.update(n.to_be_bytes());
        hex::encode(&h.finalize()[..16])
    }

    pub(super) fn next_event_id(&self) -> u64 {
        self.counter.fetch_add(1, Ordering::Relaxed)
    }

    pub(super) fn max_sessions(&self) -> usize {
        self.opts.max_sessions
    }

    fn insert_session(&self, id: String, s: HttpSession) {
        let mut sessions = lock(&self.sessions);
        if sessions.len() >= self.opts.max_sessions {
            // Evict the least recently used: bounded memory beats keeping
            // a client that went away.
            if let Some(oldest) = sessions
                .iter()
                .min_by_key(|(_, s)| s.last_used)
                .map(|(k, _)| k.clone())
            {
                sessions.remove(&oldest);
            }
        }
        sessions.insert(id, s);
    }

    fn sweep(&self) {
        let idle = self.opts.session_idle;
        lock(&self.sessions).retain(|_, s| s.last_used.elapsed() < idle);
    }
}

pub async fn serve(configs: Vec<ServerConfig>, single: bool, opts: HttpOptions) -> ExitCode {
    let listener = match tokio::net::TcpListener::bind(&opts.listen).await {
        Ok(l) => l,
        Err(e) => {
            eprintln!("simulate: cannot listen on {}: {e}", opts.listen);
            return ExitCode::from(2);
        }
    };
    let addr = match listener.local_addr() {
        Ok(a) => a,
        Err(e) => {
            eprintln!("simulate: cannot read the bound address: {e}");
            return ExitCode::from(2);
        }
    };
    let servers = configs
        .into_iter()
        .map(|c| {
            let key = if single {
                String::new()
            } else {
                c.name.clone()
            };
            (key, Arc::new(VirtualServer::new(c)))
        })
        .collect();
    let app = Arc::new(App {
        servers,
        sessions: Mutex::new(HashMap::new()),
        sse_sessions: Mutex::new(HashMap::new()),
        counter: AtomicU64::new(0),
        opts: opts.clone(),
    });
    let sweeper = {
        let app = Arc::clone(&app);
        tokio::spawn(async move {
            let mut tick = tokio::time::interval(Duration::from_secs(10));
            loop {
                tick.tick().await;
                app.sweep();
            }
        })
    };
    let mut router = Router::new().route(
        "/.well-known/oauth-protected-resource",
        get(protected_resource),
    );
    router = if opts.legacy_sse {
        router
            .route("/sse", get(sse::open_default))
            .route("/sse/{name}", get(sse::open_named))
            .route("/messages", post(sse::message_default))
            .route("/messages/{name}", post(sse::message_named))
    } else {
        router
            .route(
                "/mcp",
                post(post_default).get(get_default).delete(delete_default),
            )
            .route(
                "/mcp/{name}",
                post(post_named).get(get_named).delete(delete_named),
            )
    };
    let router = router.with_state(Arc::clone(&app));
    eprintln!("listening on http://{addr}");
    let served = if opts.tcp_nodelay {
        use axum::serve::ListenerExt;
        let listener = listener.tap_io(|tcp| {
            if let Err(e) = tcp.set_nodelay(true) {
                eprintln!("simulate: TCP_NODELAY: {e}");
            }
        });
        axum::serve(listener, router).await
    } else {
        // Deliberately no TCP_NODELAY: split SSE writes then meet the
        // client's delayed ACK, as with real SDK servers.
        axum::serve(listener, router).await
    };
    sweeper.abort();
    match served {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("simulate: HTTP server failed: {e}");
            ExitCode::FAILURE
        }
    }
}

type AppState = State<Arc<App>>;

async fn post_default(State(app): AppState, headers: HeaderMap, body: Bytes) -> Response {
    post_mcp(app, String::new(), headers, body).await
}

async fn post_named(
    State(app): AppState,
    Path(name): Path<String>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    post_mcp(app, name, headers, body).await
}

async fn delete_default(State(app): AppState, headers: HeaderMap) -> Response {
    delete_mcp(app, String::new(), headers)
}

async fn delete_named(
    State(app): AppState,
    Path(name): Path<String>,
    headers: HeaderMap,
) -> Response {
    delete_mcp(app, name, headers)
}

async fn get_default(State(app): AppState, headers: HeaderMap) -> Response {
    get_mcp(app, String::new(), headers)
}

async fn get_named(State(app): AppState, Path(name): Path<String>, headers: HeaderMap) -> Response {
    get_mcp(app, name, headers)
}

/// The standing notification stream of a legacy session (405 in modern
/// mode, which has none). It carries the notifications JSON-mode answers
/// cannot; it ends when the session does.
fn get_mcp(app: Arc<App>, name: String, headers: HeaderMap) -> Response {
    let Some(server) = app.servers.get(&name).cloned() else {
        return no_server(&name);
    };
    if let Some(denied) = check_auth(&server, &headers) {
        return denied;
    }
    if server.cfg.modern {
        return (StatusCode::METHOD_NOT_ALLOWED, [(header::ALLOW, "POST")]).into_response();
    }
    let Some(sid) = headers.get(SESSION_HEADER).and_then(|v| v.to_str().ok()) else {
        return (StatusCode::BAD_REQUEST, "Mcp-Session-Id required").into_response();
    };
    let (tx, mut rx) = mpsc::channel::<Bytes>(STREAM_QUEUE);
    {
        let mut sessions = lock(&app.sessions);
        let Some(session) = sessions.get_mut(sid).filter(|s| s.server == name) else {
            return session_not_found(None);
        };
        // A new stream replaces the old one, which then ends.
        session.stream = Some(tx);
    }
    let first = wire::priming_event(app.next_event_id());
    let stream = futures_util::stream::once(async move { Ok::<_, std::io::Error>(first) }).chain(
        futures_util::stream::poll_fn(move |cx| rx.poll_recv(cx).map(|b| b.map(Ok))),
    );
    (
        StatusCode::OK,
        [
            (header::CONTENT_TYPE, "text/event-stream"),
            (header::CACHE_CONTROL, "no-cache"),
        ],
        Body::from_stream(stream),
    )
        .into_response()
}

async fn protected_resource(headers: HeaderMap) -> Response {
    let base = format!("http://{}", host(&headers));
    axum::Json(json!({
        "resource": base,
        "authorization_servers": [],
        "bearer_methods_supported": ["header"],
    }))
    .into_response()
}

pub(super) fn host(headers: &HeaderMap) -> String {
    headers
        .get(header::HOST)
        .and_then(|h| h.to_str().ok())
        .unwrap_or("127.0.0.1")
        .to_string()
}

pub(super) fn json_response(status: u16, v: &Value) -> Response {
    let status = StatusCode::from_u16(status).unwrap_or(StatusCode::OK);
    (
        status,
        [(header::CONTENT_TYPE, "application/json")],
        v.to_string(),
    )
        .into_response()
}

pub(super) fn no_server(name: &str) -> Response {
    (
        StatusCode::NOT_FOUND,
        format!("no simulated server named {name:?}"),
    )
        .into_response()
}

/// `Some(401)` unless the request carries the configured bearer token.
pub(super) fn check_auth(server: &VirtualServer, headers: &HeaderMap) -> Option<Response> {
    let token = server.cfg.token.as_ref()?;
    let presented = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "));
    if presented == Some(token.as_str()) {
        return None;
    }
    let challenge = format!(
        "Bearer realm=\"mcp-exporter-simulator\", resource_metadata=\"http://{}/.well-known/oauth-protected-resource\"",
        host(headers)
    );
    let mut resp = json_response(
        401,
        &json!({"error": "invalid_token", "error_description": "missing or wrong bearer token"}),
    );
    if let Ok(v) = HeaderValue::from_str(&challenge) {
        resp.headers_mut().insert(header::WWW_AUTHENTICATE, v);
    }
    Some(resp)
}

fn is_list_method(method: &str) -> bool {
    Kind::ALL.iter().any(|k| k.method() == method)
}

fn known_legacy_method(method: &str) -> bool {
    method == "initialize" || method == "ping" || is_list_method(method)
}

async fn post_mcp(app: Arc<App>, name: String, headers: HeaderMap, body: Bytes) -> Response {
    let Some(server) = app.servers.get(&name).cloned() else {
        return no_server(&name);
    };
    if let Some(denied) = check_auth(&server, &headers) {
        return denied;
    }
    let msg: Value = match serde_json::from_slice(&body) {
        Ok(v) => v,
        Err(_) => return json_response(400, &error(&Value::Null, PARSE_ERROR, "Parse error")),
    };
    if !msg.is_object() {
        return json_response(
            400,
            &error(
                &Value::Null,
                INVALID_REQUEST,
                "one JSON-RPC message per POST (no batches)",
            ),
        );
    }
    let method = msg
        .get("method")
        .and_then(Value::as_str)
        .map(str::to_string);
    let id = msg.get("id").cloned();
    let mode = server.cfg.response;

    if server.cfg.modern {
        let (Some(method), Some(id)) = (method, id) else {
            return render(&app, Reply::none(), mode, None).await;
        };
        if method != "initialize" {
            let header_method = headers.get("mcp-method").and_then(|v| v.to_str().ok());
            if header_method != Some(method.as_str()) {
                return json_response(
                    400,
                    &error(
                        &id,
                        HEADER_MISMATCH,
                        &format!("Header mismatch: Mcp-Method must be {method:?}"),
                    ),
                );
            }
            if let Err(reply) = VirtualServer::check_modern_meta(&id, msg.get("params")) {
                return render(&app, reply, mode, None).await;
            }
            let meta_version = msg
                .pointer("/params/_meta")
                .and_then(|m| m.get(META_VERSION))
                .and_then(Value::as_str);
            let header_version = headers
                .get("mcp-protocol-version")
                .and_then(|v| v.to_str().ok());
            if header_version != meta_version {
                return json_response(
                    400,
                    &error(
                        &id,
                        HEADER_MISMATCH,
                        "Header mismatch: MCP-Protocol-Version must match params._meta",
                    ),
                );
            }
        }
        if method == subscriptions::METHOD {
            return listen_stream(&app, server, id, msg.get("params"));
        }
        let mut stateless = SessionState::default();
        let reply = answer(&server, &msg, &mut stateless, &headers);
        return render(&app, reply, mode, None).await;
    }

    // Legacy: initialize opens a session; everything else needs one.
    if method.as_deref() == Some("initialize") && id.is_some() {
        let sid = app.new_session_id();
        let mut state = SessionState::default();
        let reply = answer(&server, &msg, &mut state, &headers);
        app.insert_session(
            sid.clone(),
            HttpSession {
                server: name,
                state,
                last_used: Instant::now(),
                stream: None,
            },
        );
        return render(&app, reply, mode, Some(&sid)).await;
    }
    let Some(sid) = headers
        .get(SESSION_HEADER)
        .and_then(|v| v.to_str().ok())
        .map(str::to_string)
    else {
        let id = id.unwrap_or(Value::Null);
        return match method.as_deref() {
            Some(m) if !m.starts_with("notifications/") && !known_legacy_method(m) => {
                // As Python `mcp` 1.x stateful servers do: a session is
                // made for the unknown request, closed at once, and its id
                // still sent back with the 400.
                let mut resp =
                    json_response(400, &error(&id, METHOD_NOT_FOUND, "Method not found"));
                if let Ok(v) = HeaderValue::from_str(&app.new_session_id()) {
                    resp.headers_mut().insert(SESSION_HEADER, v);
                }
                resp
            }
            _ => json_response(
                400,
                &error(
                    &id,
                    -32000,
                    "Bad Request: no Mcp-Session-Id; send initialize first",
                ),
            ),
        };
    };
    let mut state = {
        let mut sessions = lock(&app.sessions);
        let Some(session) = sessions.get_mut(&sid).filter(|s| s.server == name) else {
            return session_not_found(id.as_ref());
        };
        session.last_used = Instant::now();
        let expiring = method.as_deref().is_some_and(is_list_method)
            && scenarios::of(server.cfg.scenario)
                .session_expired(&server.cfg, session.state.list_requests);
        if expiring {
            sessions.remove(&sid);
            return session_not_found(id.as_ref());
        }
        session.state.clone()
    };
    let reply = answer(&server, &msg, &mut state, &headers);
    let stream = lock(&app.sessions).get_mut(&sid).and_then(|session| {
        session.state = state;
        session.stream.clone()
    });
    // A JSON answer has no room for notifications: the standing stream,
    // when open, gets them (dropped when its queue is full).
    if let (ResponseMode::Json, Some(stream)) = (mode, stream) {
        for n in &reply.notifications {
            let _ = stream.try_send(wire::sse_event(&n.to_string()));
        }
    }
    render(&app, reply, mode, Some(&sid)).await
}

/// The engine's answer to `msg`, with `--echo-header` applied.
fn answer(
    server: &VirtualServer,
    msg: &Value,
    state: &mut SessionState,
    headers: &HeaderMap,
) -> Reply {
    let mut reply = server.handle(msg, state);
    if let Some(name) = &server.cfg.echo_header {
        if let Some(v) = headers.get(name.as_str()).and_then(|v| v.to_str().ok()) {
            super::echo::splice(&mut reply, v);
        }
    }
    reply
}

/// A `subscriptions/listen` answer: an SSE stream that stays open (priming
/// event, acknowledgement, notifications) until the client closes it or the
/// server ends it with the completion result. `--listen-fault die` cuts the
/// connection instead.
fn listen_stream(
    app: &App,
    server: Arc<VirtualServer>,
    id: Value,
    params: Option<&Value>,
) -> Response {
    let sub = subscriptions::Subscription::open(server, id, params);
    let priming = wire::priming_event(app.next_event_id());
    let head = futures_util::stream::once(async move { Ok::<_, std::io::Error>(priming) });
    let events = futures_util::stream::unfold(sub, |mut sub| async move {
        match sub.next().await? {
            subscriptions::Message::Json(v) => Some((Ok(wire::sse_event(&v.to_string())), sub)),
            subscriptions::Message::Die => Some((
                Err(std::io::Error::new(
                    std::io::ErrorKind::ConnectionReset,
                    "simulated subscription stream death",
                )),
                sub,
            )),
        }
    });
    (
        StatusCode::OK,
        [
            (header::CONTENT_TYPE, "text/event-stream"),
            (header::CACHE_CONTROL, "no-cache"),
            (header::HeaderName::from_static("x-accel-buffering"), "no"),
        ],
        Body::from_stream(head.chain(events)),
    )
        .into_response()
}

fn session_not_found(id: Option<&Value>) -> Response {
    json_response(
        404,
        &error(id.unwrap_or(&Value::Null), -32001, "Session not found"),
    )
}

fn delete_mcp(app: Arc<App>, name: String, headers: HeaderMap) -> Response {
    let Some(server) = app.servers.get(&name).cloned() else {
        return no_server(&name);
    };
    if let Some(denied) = check_auth(&server, &headers) {
        return denied;
    }
    if server.cfg.modern {
        return StatusCode::METHOD_NOT_ALLOWED.into_response();
    }
    let Some(sid) = headers.get(SESSION_HEADER).and_then(|v| v.to_str().ok()) else {
        return StatusCode::BAD_REQUEST.into_response();
    };
    let mut sessions = lock(&app.sessions);
    match sessions.get(sid) {
        Some(s) if s.server == name => {
            sessions.remove(sid);
            StatusCode::OK.into_response()
        }
        _ => StatusCode::NOT_FOUND.into_response(),
    }
}

/// Write a reply as Streamable HTTP: 202 for accepted notifications, a JSON
/// body, or an SSE stream (priming event, flush, then the messages).
async fn render(app: &App, reply: Reply, mode: ResponseMode, session: Option<&str>) -> Response {
    let mut resp = match reply.body {
        ReplyBody::None => StatusCode::ACCEPTED.into_response(),
        _ if mode == ResponseMode::Json || reply.http_status != 200 => {
            let status = StatusCode::from_u16(reply.http_status).unwrap_or(StatusCode::OK);
            if !reply.delay.is_zero() {
                tokio::time::sleep(reply.delay).await;
            }
            let body = match reply.body {
                ReplyBody::Json(v) => Body::from(v.to_string()),
                ReplyBody::Raw(b) => Body::from(b),
                ReplyBody::Hang => {
                    // A hung server sends nothing, not even headers.
                    tokio::time::sleep(HANG_FOR).await;
                    return StatusCode::GATEWAY_TIMEOUT.into_response();
                }
                other => Body::from_stream(wire::play(wire::json_steps(other))),
            };
            (status, [(header::CONTENT_TYPE, "application/json")], body).into_response()
        }
        _ => {
            let mut steps = vec![
                Step::Chunk(wire::priming_event(app.next_event_id())),
                Step::Flush,
            ];
            steps.extend(wire::sse_steps(reply));
            (
                StatusCode::OK,
                [
                    (header::CONTENT_TYPE, "text/event-stream"),
                    (header::CACHE_CONTROL, "no-cache"),
                    (header::HeaderName::from_static("x-accel-buffering"), "no"),
                ],
                Body::from_stream(wire::play(steps)),
            )
                .into_response()
        }
    };
    if let Some(sid) = session {
        if let Ok(v) = HeaderValue::from_str(sid) {
            resp.headers_mut().insert(SESSION_HEADER, v);
        }
    }
    resp
}

/// Query of the legacy `/messages` endpoint.
pub(super) type SessionQuery = Query<HashMap<String, String>>;
