//! JSON-RPC 2.0 framing over `serde_json::Value`: we keep raw messages so
//! defects a typed model would hide (wrong shapes, odd cursors) stay visible.

use serde_json::{json, Map, Value};

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
    let code = err.get("code").and_then(Value::as_i64).unwrap_or(0);
    let message = err
        .get("message")
        .and_then(Value::as_str)
        .unwrap_or("")
        .chars()
        .take(512)
        .collect();
    RpcError {
        code,
        message,
        data: err.get("data").cloned(),
    }
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
