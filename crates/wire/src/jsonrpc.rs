//! JSON-RPC 2.0 framing over `serde_json::Value`: we keep raw messages so
//! defects a typed model would hide (wrong shapes, odd cursors) stay visible.
//! The one reader of what a message is and what an answer holds: over a
//! parsed value ([`classify`]) and, where a message may be a page of
//! millions of items, over its text ([`RawMessage`], what the tap's merge
//! reads), by the same rules.

use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{json, Map, Value};
use std::borrow::Cow;

/// JSON-RPC "Method not found": our answer to server requests we do not serve.
pub const METHOD_NOT_FOUND: i64 = -32601;

/// An error object as the server sent it.
#[derive(Debug, Clone, PartialEq)]
pub struct RpcError {
    pub code: i64,
    pub message: String,
    pub data: Option<Value>,
}

/// One message received from a server.
#[derive(Debug)]
pub enum Incoming {
    /// A response; `id` is kept raw (servers echo strings or numbers).
    Response {
        id: Value,
        result: Result<Value, RpcError>,
    },
    /// A request from the server (ping, sampling, ...): must be answered.
    Request {
        id: Value,
        method: String,
        params: Value,
    },
    Notification {
        method: String,
        params: Value,
    },
    /// Parsed as JSON but not a JSON-RPC message.
    Invalid(String),
}

/// Classify a parsed JSON value.
pub fn classify(value: Value) -> Incoming {
    let Value::Object(mut obj) = value else {
        return Incoming::Invalid("not a JSON object".into());
    };
    let method = obj.remove("method");
    let id = obj.remove("id");
    match (method, id) {
        (Some(Value::String(method)), Some(id)) if !id.is_null() => Incoming::Request {
            id,
            method,
            params: obj.remove("params").unwrap_or(Value::Null),
        },
        (Some(Value::String(method)), _) => Incoming::Notification {
            method,
            params: obj.remove("params").unwrap_or(Value::Null),
        },
        (Some(_), _) => Incoming::Invalid("method is not a string".into()),
        (None, id) => {
            let id = id.unwrap_or(Value::Null);
            if let Some(err) = obj.remove("error") {
                Incoming::Response {
                    id,
                    result: Err(parse_error(err)),
                }
            } else if let Some(result) = obj.remove("result") {
                Incoming::Response {
                    id,
                    result: Ok(result),
                }
            } else {
                Incoming::Invalid("neither method, result nor error".into())
            }
        }
    }
}

fn parse_error(err: Value) -> RpcError {
    RpcError::new(
        err.get("code").and_then(Value::as_i64),
        err.get("message").and_then(Value::as_str),
        err.get("data").cloned(),
    )
}

/// Characters of an error's message kept.
const MAX_ERROR_MESSAGE_CHARS: usize = 512;

impl RpcError {
    /// An error object's parts as kept: a code that is no integer is 0, a
    /// message that is no string empty, a long one cut.
    fn new(code: Option<i64>, message: Option<&str>, data: Option<Value>) -> RpcError {
        RpcError {
            code: code.unwrap_or(0),
            message: (message.unwrap_or("").chars())
                .take(MAX_ERROR_MESSAGE_CHARS)
                .collect(),
            data,
        }
    }
}

/// Longest `method` or `id` compared, as text (longer ones are not ours).
const MAX_COMPARED_BYTES: usize = 64 * 1024 + 64;

/// The top of one message, its members left as the text they are: the
/// answer's `result` is never made a tree of values, so reading a page of
/// millions of tiny items costs its own bytes, not sixteen times them.
#[derive(Deserialize, Default)]
pub struct RawMessage<'a> {
    #[serde(borrow, default)]
    id: Option<&'a RawValue>,
    #[serde(borrow, default)]
    method: Option<&'a RawValue>,
    #[serde(borrow, default)]
    result: Option<&'a RawValue>,
    #[serde(borrow, default)]
    error: Option<&'a RawValue>,
}

impl<'a> RawMessage<'a> {
    /// `text` read as a message (`None`: not one JSON object, or a member
    /// written twice: no guessing which one counts).
    pub fn read(text: &'a [u8]) -> Option<RawMessage<'a>> {
        // An object only (serde would read an array as one too).
        let start = text.iter().find(|b| !b.is_ascii_whitespace());
        (start == Some(&b'{'))
            .then(|| serde_json::from_slice(text).ok())
            .flatten()
    }

    /// Whether this is the answer to `id`: an id, and no method (as
    /// [`classify`] tells a response).
    pub fn answers(&self, id: &Value) -> bool {
        self.method.is_none() && self.id.is_some_and(|raw| same_value(raw, id))
    }

    /// What an answer holds, as [`classify`] reads a response: its error
    /// first, else its result as text; `None` when it has neither.
    pub fn outcome(&self) -> Option<Result<&'a RawValue, RpcError>> {
        match (self.error, self.result) {
            (Some(error), _) => Some(Err(raw_error(error))),
            (None, Some(result)) => Some(Ok(result)),
            (None, None) => None,
        }
    }

    /// Its `method`, when it has a string one (of a sane length).
    pub fn method(&self) -> Option<Cow<'a, str>> {
        let raw = self.method?;
        (raw.get().len() <= MAX_COMPARED_BYTES)
            .then(|| {
                serde_json::from_str::<Text<'a>>(raw.get())
                    .ok()
                    .map(|t| t.0)
            })
            .flatten()
    }

    /// Its `id` as compact JSON text (how an id is looked up), when it has
    /// one (of a sane length).
    pub fn id_text(&self) -> Option<String> {
        let raw = self.id?;
        (raw.get().len() <= MAX_COMPARED_BYTES)
            .then(|| serde_json::from_str::<Value>(raw.get()).ok())
            .flatten()
            .map(|id| id.to_string())
    }

    /// Whether this is a notification or request named `method`.
    pub fn is(&self, method: &str) -> bool {
        self.method.is_some_and(|raw| {
            raw.get().len() <= MAX_COMPARED_BYTES
                && serde_json::from_str::<Cow<'_, str>>(raw.get()).is_ok_and(|m| m == method)
        })
    }
}

/// A string as written, borrowed when it has no escapes.
#[derive(Deserialize)]
struct Text<'a>(#[serde(borrow)] Cow<'a, str>);

fn same_value(raw: &RawValue, value: &Value) -> bool {
    raw.get().len() <= MAX_COMPARED_BYTES
        && serde_json::from_str::<Value>(raw.get()).is_ok_and(|v| &v == value)
}

/// An error object read from its text, by [`parse_error`]'s rules; its
/// `data` is left out (it may be as large as the message).
fn raw_error(raw: &RawValue) -> RpcError {
    #[derive(Deserialize, Default)]
    struct Members<'a> {
        #[serde(borrow, default)]
        code: Option<&'a RawValue>,
        #[serde(borrow, default)]
        message: Option<&'a RawValue>,
    }
    let members: Members = serde_json::from_str(raw.get()).unwrap_or_default();
    let code = members
        .code
        .and_then(|c| serde_json::from_str::<i64>(c.get()).ok());
    let message = (members.message)
        .and_then(|m| serde_json::from_str::<Text<'_>>(m.get()).ok())
        .map(|t| t.0);
    RpcError::new(code, message.as_deref(), None)
}

/// Whether a response id is ours. Servers may echo our integer id as a
/// number or (wrongly but commonly) as a string.
pub fn id_matches(id: &Value, ours: i64) -> bool {
    match id {
        Value::Number(n) => n.as_i64() == Some(ours),
        Value::String(s) => s.parse::<i64>().ok() == Some(ours),
        _ => false,
    }
}

/// Serialise a request.
pub fn request(id: i64, method: &str, params: Option<Map<String, Value>>) -> Vec<u8> {
    let mut msg = json!({"jsonrpc": "2.0", "id": id, "method": method});
    if let Some(p) = params {
        msg["params"] = Value::Object(p);
    }
    // Serialising a Value built from owned maps cannot fail.
    serde_json::to_vec(&msg).unwrap_or_default()
}

/// Serialise a notification.
pub fn notification(method: &str, params: Option<Map<String, Value>>) -> Vec<u8> {
    let mut msg = json!({"jsonrpc": "2.0", "method": method});
    if let Some(p) = params {
        msg["params"] = Value::Object(p);
    }
    serde_json::to_vec(&msg).unwrap_or_default()
}

/// Our answer to a server-to-client request: `ping` gets `{}`, anything
/// else "method not found" (a monitor offers no sampling, roots, ...).
pub fn answer_server_request(id: &Value, method: &str) -> Vec<u8> {
    let msg = if method == "ping" {
        json!({"jsonrpc": "2.0", "id": id, "result": {}})
    } else {
        json!({"jsonrpc": "2.0", "id": id, "error": {"code": METHOD_NOT_FOUND, "message": format!("method not supported by mcp-exporter: {method}")}})
    };
    serde_json::to_vec(&msg).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classifies_every_message_shape() {
        assert!(matches!(
            classify(json!({"jsonrpc":"2.0","id":1,"result":{"tools":[]}})),
            Incoming::Response { result: Ok(_), .. }
        ));
        match classify(
            json!({"jsonrpc":"2.0","id":"7","error":{"code":-32602,"message":"bad cursor"}}),
        ) {
            Incoming::Response { id, result: Err(e) } => {
                assert!(id_matches(&id, 7));
                assert_eq!(e.code, -32602);
                assert_eq!(e.message, "bad cursor");
            }
            other => panic!("{other:?}"),
        }
        assert!(matches!(
            classify(json!({"jsonrpc":"2.0","id":3,"method":"ping"})),
            Incoming::Request { .. }
        ));
        assert!(matches!(
            classify(json!({"jsonrpc":"2.0","method":"notifications/tools/list_changed"})),
            Incoming::Notification { .. }
        ));
        assert!(matches!(classify(json!([1, 2])), Incoming::Invalid(_)));
        assert!(matches!(classify(json!({"id": 1})), Incoming::Invalid(_)));
    }

    #[test]
    fn a_message_read_as_text_is_told_apart_by_id_and_method() {
        let answer =
            RawMessage::read(br#"{"jsonrpc":"2.0","id":"a","result":{"tools":[]}}"#).unwrap();
        assert!(answer.answers(&json!("a")));
        assert!(!answer.answers(&json!(1)));
        let result = answer.outcome().unwrap().unwrap();
        assert_eq!(result.get(), r#"{"tools":[]}"#);
        let note =
            RawMessage::read(br#"{"method":"notifications/tools/list_changed","id":"a"}"#).unwrap();
        assert!(!note.answers(&json!("a")), "a request is no answer");
        assert!(note.is("notifications/tools/list_changed"));
        assert_eq!(
            note.method().as_deref(),
            Some("notifications/tools/list_changed")
        );
        assert_eq!(note.id_text().as_deref(), Some("\"a\""));
        assert_eq!(answer.method(), None);
        let escaped =
            RawMessage::read(br#"{"method":"notifications\/tools\/list_changed"}"#).unwrap();
        assert!(escaped.is("notifications/tools/list_changed"));
        assert!(RawMessage::read(b"[1]").is_none());
        assert!(
            RawMessage::read(b"{\"id\":1,\"id\":2}").is_none(),
            "no guessing"
        );
        assert!(RawMessage::read(br#"{"id":1}"#)
            .unwrap()
            .outcome()
            .is_none());
    }

    #[test]
    fn an_error_reads_the_same_from_text_and_from_a_value() {
        for error in [
            json!({"code": -32602, "message": "bad"}),
            json!({"code": 1.5, "message": 7}),
            json!({"message": "x".repeat(600)}),
            json!("odd"),
        ] {
            let text = json!({"jsonrpc": "2.0", "id": 1, "error": error}).to_string();
            let raw = RawMessage::read(text.as_bytes()).unwrap();
            let Some(Err(from_text)) = raw.outcome() else {
                panic!("{text}");
            };
            let Incoming::Response {
                result: Err(from_value),
                ..
            } = classify(serde_json::from_str(&text).unwrap())
            else {
                panic!("{text}");
            };
            assert_eq!(
                (from_text.code, &from_text.message),
                (from_value.code, &from_value.message)
            );
        }
    }

    #[test]
    fn answers_ping_and_refuses_the_rest() {
        let pong: Value =
            serde_json::from_slice(&answer_server_request(&json!(5), "ping")).unwrap();
        assert_eq!(pong["result"], json!({}));
        let no: Value = serde_json::from_slice(&answer_server_request(
            &json!("x"),
            "sampling/createMessage",
        ))
        .unwrap();
        assert_eq!(no["error"]["code"], json!(METHOD_NOT_FOUND));
        assert_eq!(no["id"], json!("x"));
    }

    #[test]
    fn answer_echoes_an_id_beyond_64_bits_as_parsed() {
        // Found by the jsonrpc fuzz target: a number id past i64/u64 is an
        // f64; parsing our answer back must give the server's id again.
        let line = br#"{"jsonrpc":"2.0","id":-444444444444444444444445,"method":"ping"}"#;
        let request: Value = serde_json::from_slice(line).unwrap();
        let answer: Value =
            serde_json::from_slice(&answer_server_request(&request["id"], "ping")).unwrap();
        assert_eq!(answer["id"], request["id"]);
    }

    #[test]
    fn id_matching_accepts_numeric_strings_only_when_equal() {
        assert!(id_matches(&json!(4), 4));
        assert!(!id_matches(&json!(5), 4));
        assert!(id_matches(&json!("4"), 4));
        assert!(!id_matches(&Value::Null, 4));
    }
}
