//! What both HTTP transports share: the virtual servers by name, the
//! registry listing them, the session tables of Streamable HTTP and legacy
//! HTTP+SSE, and the answers both give alike (no such server, 401, a JSON
//! body).

use super::config::ServerConfig;
use super::engine::{SessionState, VirtualServer};
use super::registry::config::SimulatedRegistryConfig;
use super::registry::SimulatedRegistry;
use super::wire::Step;
use super::ServingMode;
use axum::body::Bytes;
use axum::extract::Query;
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use serde_json::{json, Value};
use sha2::{Digest, Sha256};
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};
use tokio::sync::mpsc;

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

/// A Streamable HTTP session.
pub struct HttpSession {
    pub server: String,
    pub state: SessionState,
    pub last_used: Instant,
    /// The standing GET stream, if the client opened one: where JSON-mode
    /// answers put their notifications.
    pub stream: Option<mpsc::Sender<Bytes>>,
}

/// A legacy HTTP+SSE session: its answers go to its stream.
pub struct SseSession {
    pub server: String,
    pub state: SessionState,
    pub tx: mpsc::Sender<Vec<Step>>,
}

pub struct App {
    /// Keyed by name; the single-server mode uses "" (served at `/mcp`).
    pub servers: HashMap<String, Arc<VirtualServer>>,
    /// The registry listing them.
    pub registry: SimulatedRegistry,
    pub sessions: Mutex<HashMap<String, HttpSession>>,
    pub sse_sessions: Mutex<HashMap<String, SseSession>>,
    counter: AtomicU64,
    opts: HttpOptions,
}

pub fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // Maps of sessions stay usable after a panicking handler: the worst
    // case is one half-updated session, which the client sees as data.
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl App {
    /// One virtual server per config: by name, or at "" when `single`.
    pub fn new(
        configs: Vec<ServerConfig>,
        registry: SimulatedRegistryConfig,
        single: bool,
        opts: HttpOptions,
    ) -> App {
        let mode = if opts.legacy_sse {
            ServingMode::Sse
        } else {
            ServingMode::Http
        };
        let registry = SimulatedRegistry::new(registry, &configs, single, mode, opts.seed);
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
        App {
            servers,
            registry,
            sessions: Mutex::new(HashMap::new()),
            sse_sessions: Mutex::new(HashMap::new()),
            counter: AtomicU64::new(0),
            opts,
        }
    }

    /// Deterministic under the seed: the n-th session of a run always gets
    /// the same id.
    pub fn new_session_id(&self) -> String {
        let n = self.counter.fetch_add(1, Ordering::Relaxed);
        let mut h = Sha256::new();
        h.update(b"mcp-exporter-simulator session\0");
        h.update(self.opts.seed.to_be_bytes());
        h.update(n.to_be_bytes());
        hex::encode(&h.finalize()[..16])
    }

    pub fn next_event_id(&self) -> u64 {
        self.counter.fetch_add(1, Ordering::Relaxed)
    }

    pub fn max_sessions(&self) -> usize {
        self.opts.max_sessions
    }

    pub fn insert_session(&self, id: String, s: HttpSession) {
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

    /// Forget the Streamable HTTP sessions idle longer than `--session-idle-secs`.
    pub fn sweep(&self) {
        let idle = self.opts.session_idle;
        lock(&self.sessions).retain(|_, s| s.last_used.elapsed() < idle);
    }
}

pub fn host(headers: &HeaderMap) -> String {
    headers
        .get(header::HOST)
        .and_then(|h| h.to_str().ok())
        .unwrap_or("127.0.0.1")
        .to_string()
}

pub fn json_response(status: u16, v: &Value) -> Response {
    let status = StatusCode::from_u16(status).unwrap_or(StatusCode::OK);
    (
        status,
        [(header::CONTENT_TYPE, "application/json")],
        v.to_string(),
    )
        .into_response()
}

fn no_server(name: &str) -> Response {
    (
        StatusCode::NOT_FOUND,
        format!("no simulated server named {name:?}"),
    )
        .into_response()
}

/// `Some(401)` unless the request carries the configured bearer token.
fn check_auth(server: &VirtualServer, headers: &HeaderMap) -> Option<Response> {
    let token = server.cfg.credentials.token.as_ref()?;
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

/// The virtual server `name` for a request, if it exists and the request
/// may use it; `Err` is the answer (404, 401).
pub fn authorised(
    app: &App,
    name: &str,
    headers: &HeaderMap,
) -> Result<Arc<VirtualServer>, Box<Response>> {
    let Some(server) = app.servers.get(name).cloned() else {
        return Err(Box::new(no_server(name)));
    };
    match check_auth(&server, headers) {
        Some(denied) => Err(Box::new(denied)),
        None => Ok(server),
    }
}

/// Query of the legacy `/messages` endpoint.
pub type SessionQuery = Query<HashMap<String, String>>;
