//! What to write for one message, transport-free: a [`Reply`] (notifications,
//! a delay, a body) and the JSON-RPC messages it is made of. The engine and
//! the scenarios build replies; the transports render them.

use bytes::Bytes;
use mcp_listing::kind::Kind;
use serde_json::{json, Value};
use std::time::Duration;

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
