//! HTTP transports: Streamable HTTP at `/mcp` (or `/mcp/<name>` for many
//! virtual servers), and the legacy HTTP+SSE transport at `/sse` +
//! `/messages` (see sse.rs). The server, Streamable HTTP's sessions and its
//! header checks live here; what both transports share (the servers, the
//! session tables, auth) in app.rs; what to answer comes from the engine.

use super::app::{authorised, host, json_response, lock, App, HttpOptions, HttpSession};
use super::behaviour::scenarios;
use super::config::{ResponseMode, ServerConfig};
use super::engine::{SessionState, VirtualServer, META_VERSION};
use super::registry::config::SimulatedRegistryConfig;
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
use std::collections::HashMap;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::mpsc;

pub const SESSION_HEADER: &str = "mcp-session-id";

/// Notifications queued per standing stream before new ones are dropped.
const STREAM_QUEUE: usize = 64;

pub async fn serve(
    configs: Vec<ServerConfig>,
    registry: SimulatedRegistryConfig,
    single: bool,
    opts: HttpOptions,
) -> ExitCode {
    let Some((listener, addr)) = bind(&opts.listen).await else {
        return ExitCode::from(2);
    };
    eprintln!("listening on http://{addr}");
    let served = serve_on(
        listener,
        configs,
        registry,
        single,
        opts,
        std::future::pending(),
    )
    .await;
    match served {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("simulate: HTTP server failed: {e}");
            ExitCode::FAILURE
        }
    }
}

/// Serve the virtual servers on `listener` until `shutdown` completes.
pub async fn serve_on(
    listener: tokio::net::TcpListener,
    configs: Vec<ServerConfig>,
    registry: SimulatedRegistryConfig,
    single: bool,
    opts: HttpOptions,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let app = Arc::new(App::new(configs, registry, single, opts.clone()));
    let sweeper = spawn_sweeper(Arc::clone(&app));
    let router = routes(opts.legacy_sse).with_state(app);
    let served = if opts.tcp_nodelay {
        use axum::serve::ListenerExt;
        let listener = listener.tap_io(|tcp| {
            if let Err(e) = tcp.set_nodelay(true) {
                eprintln!("simulate: TCP_NODELAY: {e}");
            }
        });
        axum::serve(listener, router)
            .with_graceful_shutdown(shutdown)
            .await
    } else {
        // Deliberately no TCP_NODELAY: split SSE writes then meet the
        // client's delayed ACK, as with real SDK servers.
        axum::serve(listener, router)
            .with_graceful_shutdown(shutdown)
            .await
    };
    sweeper.abort();
    served
}

/// The listener and its bound address; `None` (said on stderr) when either fails.
async fn bind(listen: &str) -> Option<(tokio::net::TcpListener, std::net::SocketAddr)> {
    let listener = match tokio::net::TcpListener::bind(listen).await {
        Ok(l) => l,
        Err(e) => {
            eprintln!("simulate: cannot listen on {listen}: {e}");
            return None;
        }
    };
    match listener.local_addr() {
        Ok(addr) => Some((listener, addr)),
        Err(e) => {
            eprintln!("simulate: cannot read the bound address: {e}");
            None
        }
    }
}

/// Forgets idle sessions every 10 seconds.
fn spawn_sweeper(app: Arc<App>) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        let mut tick = tokio::time::interval(Duration::from_secs(10));
        loop {
            tick.tick().await;
            app.sweep();
        }
    })
}

/// The endpoints of one transport, beside the protected-resource document
/// and the registry.
fn routes(legacy_sse: bool) -> Router<Arc<App>> {
    let router = Router::new()
        .route(
            "/.well-known/oauth-protected-resource",
            get(protected_resource),
        )
        .route("/v0.1/servers", get(registry_list))
        .route("/v0/servers", get(registry_list));
    if legacy_sse {
        router
            .route("/sse", get(sse::open_default))
            .route("/sse/{name}", get(sse::open_named))
            .route("/messages", post(sse::message_default))
            // Under the stream's own path, as SDKs lay it out: a client
            // holds the endpoint to the stream URL's directory.
            .route("/sse/{name}/messages", post(sse::message_named))
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
    let server = match authorised(&app, &name, &headers) {
        Ok(server) => server,
        Err(denied) => return *denied,
    };
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

/// The registry's server list (both API paths answer alike).
async fn registry_list(
    State(app): AppState,
    Query(query): Query<HashMap<String, String>>,
    headers: HeaderMap,
) -> Response {
    let base = format!("http://{}", host(&headers));
    let answer = app
        .registry
        .list(&query, &base, headers.keys().map(|k| k.as_str()));
    if !answer.delay.is_zero() {
        tokio::time::sleep(answer.delay).await;
    }
    json_response(answer.status, &answer.body)
}

fn is_list_method(method: &str) -> bool {
    Kind::ALL.iter().any(|k| k.method() == method)
}

fn known_legacy_method(method: &str) -> bool {
    method == "initialize" || method == "ping" || is_list_method(method)
}

async fn post_mcp(app: Arc<App>, name: String, headers: HeaderMap, body: Bytes) -> Response {
    let server = match authorised(&app, &name, &headers) {
        Ok(server) => server,
        Err(denied) => return *denied,
    };
    let msg = match one_message(&body) {
        Ok(msg) => msg,
        Err(rejected) => return *rejected,
    };
    if server.cfg.modern {
        post_modern(&app, server, &msg, &headers).await
    } else {
        post_legacy(&app, server, name, &msg, &headers).await
    }
}

/// The one JSON-RPC message a POST carries; `Err` is the 400.
fn one_message(body: &[u8]) -> Result<Value, Box<Response>> {
    let msg: Value = match serde_json::from_slice(body) {
        Ok(v) => v,
        Err(_) => {
            return Err(Box::new(json_response(
                400,
                &error(&Value::Null, PARSE_ERROR, "Parse error"),
            )))
        }
    };
    if !msg.is_object() {
        return Err(Box::new(json_response(
            400,
            &error(
                &Value::Null,
                INVALID_REQUEST,
                "one JSON-RPC message per POST (no batches)",
            ),
        )));
    }
    Ok(msg)
}

fn method_of(msg: &Value) -> Option<String> {
    msg.get("method")
        .and_then(Value::as_str)
        .map(str::to_string)
}

/// 2026-07-28: no sessions; every request is checked and answered alone.
async fn post_modern(
    app: &App,
    server: Arc<VirtualServer>,
    msg: &Value,
    headers: &HeaderMap,
) -> Response {
    let mode = server.cfg.response;
    let (Some(method), Some(id)) = (method_of(msg), msg.get("id").cloned()) else {
        return render(app, Reply::none(), mode, None).await;
    };
    if method != "initialize" {
        if let Err(rejected) = check_modern_request(app, &method, &id, msg, headers, mode).await {
            return rejected;
        }
    }
    if method == subscriptions::METHOD {
        return listen_stream(app, server, id, msg.get("params"));
    }
    let mut stateless = SessionState::default();
    let reply = answer(&server, msg, &mut stateless, headers);
    render(app, reply, mode, None).await
}

/// The checks of a modern request, in docs/simulator.md's order: the
/// `Mcp-Method` header, `_meta`, the `MCP-Protocol-Version` header.
async fn check_modern_request(
    app: &App,
    method: &str,
    id: &Value,
    msg: &Value,
    headers: &HeaderMap,
    mode: ResponseMode,
) -> Result<(), Response> {
    let header_method = headers.get("mcp-method").and_then(|v| v.to_str().ok());
    if header_method != Some(method) {
        return Err(json_response(
            400,
            &error(
                id,
                HEADER_MISMATCH,
                &format!("Header mismatch: Mcp-Method must be {method:?}"),
            ),
        ));
    }
    if let Err(reply) = VirtualServer::check_modern_meta(id, msg.get("params")) {
        return Err(render(app, reply, mode, None).await);
    }
    let meta_version = msg
        .pointer("/params/_meta")
        .and_then(|m| m.get(META_VERSION))
        .and_then(Value::as_str);
    let header_version = headers
        .get("mcp-protocol-version")
        .and_then(|v| v.to_str().ok());
    if header_version != meta_version {
        return Err(json_response(
            400,
            &error(
                id,
                HEADER_MISMATCH,
                "Header mismatch: MCP-Protocol-Version must match params._meta",
            ),
        ));
    }
    Ok(())
}

/// Legacy: initialize opens a session; everything else needs one.
async fn post_legacy(
    app: &App,
    server: Arc<VirtualServer>,
    name: String,
    msg: &Value,
    headers: &HeaderMap,
) -> Response {
    let mode = server.cfg.response;
    let method = method_of(msg);
    let id = msg.get("id").cloned();
    if method.as_deref() == Some("initialize") && id.is_some() {
        return open_session(app, &server, name, msg, headers).await;
    }
    let Some(sid) = headers
        .get(SESSION_HEADER)
        .and_then(|v| v.to_str().ok())
        .map(str::to_string)
    else {
        return no_session(app, method.as_deref(), id.unwrap_or(Value::Null));
    };
    let Some(mut state) = session_state(app, &server, &name, &sid, method.as_deref()) else {
        return session_not_found(id.as_ref());
    };
    let reply = answer(&server, msg, &mut state, headers);
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
    render(app, reply, mode, Some(&sid)).await
}

/// Answer `initialize` in a new session.
async fn open_session(
    app: &App,
    server: &VirtualServer,
    name: String,
    msg: &Value,
    headers: &HeaderMap,
) -> Response {
    let sid = app.new_session_id();
    let mut state = SessionState::default();
    let reply = answer(server, msg, &mut state, headers);
    app.insert_session(
        sid.clone(),
        HttpSession {
            server: name,
            state,
            last_used: Instant::now(),
            stream: None,
        },
    );
    render(app, reply, server.cfg.response, Some(&sid)).await
}

/// The 400 of a legacy request without a session id.
fn no_session(app: &App, method: Option<&str>, id: Value) -> Response {
    match method {
        Some(m) if !m.starts_with("notifications/") && !known_legacy_method(m) => {
            // As Python `mcp` 1.x stateful servers do: a session is
            // made for the unknown request, closed at once, and its id
            // still sent back with the 400.
            let mut resp = json_response(400, &error(&id, METHOD_NOT_FOUND, "Method not found"));
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
    }
}

/// The state of session `sid` of server `name`, marked used; `None` when
/// it is unknown, another server's, or expires now (session-expiry).
fn session_state(
    app: &App,
    server: &VirtualServer,
    name: &str,
    sid: &str,
    method: Option<&str>,
) -> Option<SessionState> {
    let mut sessions = lock(&app.sessions);
    let session = sessions.get_mut(sid).filter(|s| s.server == name)?;
    session.last_used = Instant::now();
    let expiring = method.is_some_and(is_list_method)
        && scenarios::of(server.cfg.scenario)
            .session_expired(&server.cfg, session.state.list_requests);
    if expiring {
        sessions.remove(sid);
        return None;
    }
    Some(session.state.clone())
}

/// The engine's answer to `msg`, with `--echo-header` applied.
fn answer(
    server: &VirtualServer,
    msg: &Value,
    state: &mut SessionState,
    headers: &HeaderMap,
) -> Reply {
    let mut reply = server.handle(msg, state);
    if let Some(name) = &server.cfg.credentials.echo_header {
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
    let server = match authorised(&app, &name, &headers) {
        Ok(server) => server,
        Err(denied) => return *denied,
    };
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
