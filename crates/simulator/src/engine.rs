//! The transport-free half of the simulator: one virtual server's state and
//! what it answers to each JSON-RPC message. Transports render a [`Reply`].

use super::behaviour::scenarios;
use super::behaviour::Counters;
use super::config::{ChangeEvery, ServerConfig, LEGACY_VERSIONS, MODERN_VERSION};
use super::cursor::CursorKey;
use super::per_kind::PerKind;
use super::reply::{
    error, error_with_data, result, Reply, INVALID_PARAMS, INVALID_REQUEST, METHOD_NOT_FOUND,
    UNSUPPORTED_VERSION,
};
use mcp_listing::kind::Kind;
use serde_json::{json, Value};
use std::time::Instant;

pub const SERVER_NAME: &str = "mcp-exporter-simulator";
pub const NEWEST_LEGACY: &str = "2025-11-25";
pub const META_VERSION: &str = "io.modelcontextprotocol/protocolVersion";
pub const META_CAPABILITIES: &str = "io.modelcontextprotocol/clientCapabilities";

/// State of one client's session (a stdio process, an HTTP session, a
/// legacy SSE stream). Modern requests get a throwaway one.
#[derive(Debug, Default, Clone)]
pub struct SessionState {
    /// Catalogue change epoch this session was last told about, per kind.
    pub notified: PerKind<u32>,
    /// List requests answered in this session (session-expiry).
    pub list_requests: u32,
    pub version: Option<String>,
}

pub struct VirtualServer {
    pub cfg: ServerConfig,
    pub(super) started: Instant,
    pub(super) key: CursorKey,
    /// silent-restart signs some cursors with a "previous incarnation".
    pub(super) old_key: CursorKey,
    /// What the scenario keeps per kind.
    pub(super) counters: Counters,
}

/// One request: what both protocol eras dispatch on.
struct Call<'a> {
    method: &'a str,
    id: &'a Value,
    params: Option<&'a Value>,
}

fn kind_for_method(method: &str) -> Option<Kind> {
    Kind::ALL.into_iter().find(|k| k.method() == method)
}

impl VirtualServer {
    pub fn new(cfg: ServerConfig) -> VirtualServer {
        VirtualServer {
            key: CursorKey::new(cfg.seed, &cfg.name, 1),
            old_key: CursorKey::new(cfg.seed, &cfg.name, 0),
            started: Instant::now(),
            counters: Counters::new(&cfg),
            cfg,
        }
    }

    /// The catalogue change epoch of `kind` (0 until the first change).
    pub(super) fn epoch(&self, kind: Kind) -> u32 {
        let behaviour = scenarios::of(self.cfg.scenario);
        if let Some(own) = self.counters.with(kind, |c| behaviour.own_epoch(c)) {
            return own;
        }
        match self.cfg.change.every {
            ChangeEvery::Listings(m) => self.counters.with(kind, |c| c.completed) / m.max(1),
            ChangeEvery::Duration(d) => {
                (self.started.elapsed().as_millis() / d.as_millis().max(1)) as u32
            }
        }
    }

    pub fn capabilities(&self) -> Value {
        if !scenarios::of(self.cfg.scenario).advertises_list_changed() {
            return json!({"tools": {}, "prompts": {}, "resources": {}});
        }
        json!({
            "tools": {"listChanged": true},
            "prompts": {"listChanged": true},
            "resources": {"listChanged": true},
        })
    }

    pub fn server_info(scenario: crate::scenario::Scenario) -> Value {
        let name = scenarios::of(scenario).server_name();
        json!({"name": name, "version": env!("CARGO_PKG_VERSION")})
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
        let call = Call {
            method,
            id,
            params: obj.get("params"),
        };
        if self.cfg.modern {
            self.handle_modern(call, session)
        } else {
            self.handle_legacy(call, session)
        }
    }

    fn handle_legacy(&self, call: Call<'_>, session: &mut SessionState) -> Reply {
        let Call { method, id, params } = call;
        match method {
            "initialize" => {
                let version = self.negotiate(requested_version(params));
                session.version = Some(version.clone());
                Reply::json(result(
                    id,
                    json!({
                        "protocolVersion": version,
                        "capabilities": self.capabilities(),
                        "serverInfo": Self::server_info(self.cfg.scenario),
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

    fn handle_modern(&self, call: Call<'_>, session: &mut SessionState) -> Reply {
        let Call { method, id, params } = call;
        if method == "initialize" {
            let requested = requested_version(params).unwrap_or("none");
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
                    "serverInfo": Self::server_info(self.cfg.scenario),
                    "ttlMs": MODERN_TTL_MS,
                    "cacheScope": "public",
                    "_meta": {"io.modelcontextprotocol/serverInfo": Self::server_info(self.cfg.scenario)},
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

/// The `protocolVersion` an `initialize` asks for, if it names one.
fn requested_version(params: Option<&Value>) -> Option<&str> {
    params
        .and_then(|p| p.get("protocolVersion"))
        .and_then(Value::as_str)
}
