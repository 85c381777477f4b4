//! The transport-free half of the simulator: one virtual server's state and
//! what it answers to each JSON-RPC message. Transports render a [`Reply`].

use super::config::Scenario;
use super::config::{ChangeEvery, ServerConfig, LEGACY_VERSIONS, MODERN_VERSION};
use super::cursor::CursorKey;
use bytes::Bytes;
use mcp_listing::kind::Kind;
use serde_json::{json, Value};
use std::sync::Mutex;
use std::time::{Duration, Instant};

pub const SERVER_NAME: &str = "mcp-exporter-simulator";
pub const NEWEST_LEGACY: &str = "2025-11-25";
pub const META_VERSION: &str = "io.modelcontextprotocol/protocolVersion";
pub const META_CAPABILITIES: &str = "io.modelcontextprotocol/clientCapabilities";

pub const METHOD_NOT_FOUND: i64 = -32601;
pub const INVALID_PARAMS: i64 = -32602;
pub const INVALID_REQUEST: i64 = -32600;
pub const PARSE_ERROR: i64 = -32700;
pub const HEADER_MISMATCH: i64 = -32020;
pub const UNSUPPORTED_VERSION: i64 = -32022;

/// What to write for one message.
#[derive(Debug)]
pub struct Reply {
    /// Server notifications written before the answer (stdio lines, SSE
    /// events). A JSON-mode HTTP answer has nowhere to put them.
    pub notifications: Vec<Value>,
    /// Wait this long before writing the answer (slow-page).
    pub delay: Duration,
    pub body: Body,
    /// HTTP status for the answer (modern errors use 400/404).
    pub http_status: u16,
}

#[derive(Debug)]
pub enum Body {
    /// A notification was accepted; nothing to answer (HTTP 202).
    None,
    Json(Value),
    /// Bytes that are not valid JSON (malformed).
    Raw(Bytes),
    /// The serialised answer, written `chunk` bytes at a time.
    Drip {
        bytes: Bytes,
        chunk: usize,
        every: Duration,
    },
    /// Never answer.
    Hang,
    /// stdio: exit the process; HTTP: cut the connection.
    Crash,
}

impl Reply {
    pub fn json(v: Value) -> Reply {
        Reply {
            notifications: Vec::new(),
            delay: Duration::ZERO,
            body: Body::Json(v),
            http_status: 200,
        }
    }
    pub fn none() -> Reply {
        Reply {
            notifications: Vec::new(),
            delay: Duration::ZERO,
            body: Body::None,
            http_status: 202,
        }
    }
    pub fn with_status(mut self, status: u16) -> Reply {
        self.http_status = status;
        self
    }
}

pub fn result(id: &Value, result: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "result": result})
}

pub fn error(id: &Value, code: i64, message: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}})
}

pub fn error_with_data(id: &Value, code: i64, message: &str, data: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message, "data": data}})
}

pub fn list_changed(kind: Kind) -> Value {
    json!({"jsonrpc": "2.0", "method": kind.list_changed_method()})
}

/// State of one client's session (a stdio process, an HTTP session, a
/// legacy SSE stream). Modern requests get a throwaway one.
#[derive(Debug, Default, Clone)]
pub struct SessionState {
    /// Catalogue change epoch this session was last told about, per kind.
    pub notified: [u32; 4],
    /// List requests answered in this session (session-expiry).
    pub list_requests: u32,
    pub version: Option<String>,
}

/// Mutable per-server counters, shared by every session.
#[derive(Debug, Default)]
pub(super) struct KindState {
    /// Listings served to their last page (drives shrink/grow/reorder).
    pub completed: u32,
    /// stale-cursor: rejections still to hand out.
    pub stale_left: u32,
    /// protocol-2026: where the constant `tail` cursor continues.
    pub tail: u32,
    /// unstable-cursor: times each continuation offset was served (at
    /// most one entry per page of the catalogue).
    pub served: std::collections::HashMap<u32, u32>,
}

pub struct VirtualServer {
    pub cfg: ServerConfig,
    pub(super) started: Instant,
    pub(super) key: CursorKey,
    /// silent-restart signs some cursors with a "previous incarnation".
    pub(super) old_key: CursorKey,
    pub(super) kinds: Mutex<[KindState; 4]>,
}

pub fn kind_index(kind: Kind) -> usize {
    match kind {
        Kind::Tools => 0,
        Kind::Prompts => 1,
        Kind::Resources => 2,
        Kind::ResourceTemplates => 3,
    }
}

fn kind_for_method(method: &str) -> Option<Kind> {
    Kind::ALL.into_iter().find(|k| k.method() == method)
}

impl VirtualServer {
    pub fn new(cfg: ServerConfig) -> VirtualServer {
        let kinds = std::array::from_fn(|_| KindState {
            stale_left: cfg.stale_times,
            ..KindState::default()
        });
        VirtualServer {
            key: CursorKey::new(cfg.seed, &cfg.name, 1),
            old_key: CursorKey::new(cfg.seed, &cfg.name, 0),
            started: Instant::now(),
            kinds: Mutex::new(kinds),
            cfg,
        }
    }

    pub(super) fn lock_kinds(&self) -> std::sync::MutexGuard<'_, [KindState; 4]> {
        // A panic while holding the lock cannot leave the counters
        // inconsistent in a way that matters here, so recover the guard.
        self.kinds.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The catalogue change epoch of `kind` (0 until the first change).
    pub(super) fn epoch(&self, kind: Kind) -> u32 {
        match self.cfg.change_every {
            ChangeEvery::Listings(m) => self.lock_kinds()[kind_index(kind)].completed / m.max(1),
            ChangeEvery::Duration(d) => {
                (self.started.elapsed().as_millis() / d.as_millis().max(1)) as u32
            }
        }
    }

    pub fn capabilities(&self) -> Value {
        // stray-list-changed sends notifications it does not advertise.
        if self.cfg.scenario == Scenario::StrayListChanged {
            return json!({"tools": {}, "prompts": {}, "resources": {}});
        }
        json!({
            "tools": {"listChanged": true},
            "prompts": {"listChanged": true},
            "resources": {"listChanged": true},
        })
    }

    pub fn server_info() -> Value {
        json!({"name": SERVER_NAME, "version": env!("CARGO_PKG_VERSION")})
    }

    /// The version a legacy `initialize` is answered with.
    pub fn negotiate(&self, requested: Option<&str>) -> String {
        if let Some(forced) = &self.cfg.protocol {
            return forced.clone();
        }
        match requested {
            Some(v) if LEGACY_VERSIONS.contains(&v) => v.to_string(),
            _ => NEWEST_LEGACY.to_string(),
        }
    }

    /// Answer one parsed JSON-RPC message.
    pub fn handle(&self, msg: &Value, session: &mut SessionState) -> Reply {
        let Some(obj) = msg.as_object() else {
            return Reply::json(error(
                &Value::Null,
                INVALID_REQUEST,
                "not a JSON-RPC message",
            ))
            .with_status(400);
        };
        let Some(method) = obj.get("method").and_then(Value::as_str) else {
            // Responses from the client (we never ask anything): ignore.
            return Reply::none();
        };
        let Some(id) = obj.get("id") else {
            return Reply::none();
        };
        let params = obj.get("params");
        if self.cfg.modern {
            self.handle_modern(method, id, params, session)
        } else {
            self.handle_legacy(method, id, params, session)
        }
    }

    fn handle_legacy(
        &self,
        method: &str,
        id: &Value,
        params: Option<&Value>,
        session: &mut SessionState,
    ) -> Reply {
        match method {
            "initialize" => {
                let requested = params
                    .and_then(|p| p.get("protocolVersion"))
                    .and_then(Value::as_str);
                let version = self.negotiate(requested);
                session.version = Some(version.clone());
                Reply::json(result(
                    id,
                    json!({
                        "protocolVersion": version,
                        "capabilities": self.capabilities(),
                        "serverInfo": Self::server_info(),
                    }),
                ))
            }
            "ping" => Reply::json(result(id, json!({}))),
            m => match kind_for_method(m) {
                Some(kind) => {
                    session.list_requests += 1;
                    self.list(kind, id, params, session)
                }
                None => Reply::json(error(id, METHOD_NOT_FOUND, "Method not found")),
            },
        }
    }

    /// Checks every modern request's `_meta`; `Err` is the answer.
    pub fn check_modern_meta(id: &Value, params: Option<&Value>) -> Result<(), Reply> {
        let meta = params.and_then(|p| p.get("_meta"));
        let version = meta
            .and_then(|m| m.get(META_VERSION))
            .and_then(Value::as_str);
        let caps = meta.and_then(|m| m.get(META_CAPABILITIES));
        let (Some(version), Some(Value::Object(_))) = (version, caps) else {
            return Err(Reply::json(error(
                id,
                INVALID_PARAMS,
                "params._meta must carry io.modelcontextprotocol/protocolVersion and io.modelcontextprotocol/clientCapabilities",
            ))
            .with_status(400));
        };
        if version != MODERN_VERSION {
            return Err(Reply::json(error_with_data(
                id,
                UNSUPPORTED_VERSION,
                "Unsupported protocol version",
                json!({"supported": [MODERN_VERSION], "requested": version}),
            ))
            .with_status(400));
        }
        Ok(())
    }

    fn handle_modern(
        &self,
        method: &str,
        id: &Value,
        params: Option<&Value>,
        session: &mut SessionState,
    ) -> Reply {
        if method == "initialize" {
            let requested = params
                .and_then(|p| p.get("protocolVersion"))
                .and_then(Value::as_str)
                .unwrap_or("none");
            return Reply::json(error_with_data(
                id,
                UNSUPPORTED_VERSION,
                &format!("initialize is not supported: this server speaks only protocol {MODERN_VERSION} (use server/discover)"),
                json!({"supported": [MODERN_VERSION], "requested": requested}),
            ))
            .with_status(400);
        }
        if let Err(reply) = Self::check_modern_meta(id, params) {
            return reply;
        }
        match method {
            "server/discover" => Reply::json(result(
                id,
                json!({
                    "resultType": "complete",
                    "supportedVersions": [MODERN_VERSION],
                    "capabilities": self.capabilities(),
                    "serverInfo": Self::server_info(),
                    "ttlMs": MODERN_TTL_MS,
                    "cacheScope": "public",
                    "_meta": {"io.modelcontextprotocol/serverInfo": Self::server_info()},
                }),
            )),
            m => match kind_for_method(m) {
                Some(kind) => self.list(kind, id, params, session),
                None => {
                    Reply::json(error(id, METHOD_NOT_FOUND, "Method not found")).with_status(404)
                }
            },
        }
    }
}

/// `ttlMs` on modern list and discover results.
pub const MODERN_TTL_MS: u64 = 30_000;
