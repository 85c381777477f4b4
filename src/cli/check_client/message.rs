//! One copied message read as JSON-RPC, as far as a grade cares: a request
//! (method, id, cursor, the protocol version it names), an answer, or a
//! `list_changed` notification. An event-stream event is read through its
//! `data:` lines; an event without data (a priming event) is empty.

use mcp_listing::cursor::CursorDigest;
use mcp_listing::Kind;
use mcp_tap::BodyFraming;
use serde_json::{Map, Value};

/// The `_meta` key of a 2026-07-28 request's protocol version.
const META_PROTOCOL_VERSION: &str = "io.modelcontextprotocol/protocolVersion";

/// The cursor a list request carried.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SentCursor {
    /// No `cursor` (page 1).
    None,
    /// `"cursor": null`.
    Null,
    Str(CursorDigest),
    /// A number, an object: not a string.
    Other,
}

/// What a page said about the next one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NextCursor {
    Absent,
    Null,
    Str(CursorDigest),
    Other,
}

impl NextCursor {
    /// Does a client stop here (absent or null)?
    pub fn ends(self) -> bool {
        matches!(self, NextCursor::Absent | NextCursor::Null)
    }

    pub fn is_blank(self) -> bool {
        matches!(self, NextCursor::Str(d) if d.is_blank())
    }
}

/// What a message is.
#[derive(Debug)]
pub enum Message {
    /// Nothing to read (an SSE event without data).
    Empty,
    Request {
        /// The JSON-RPC id as its JSON text; `None` for a notification.
        id: Option<String>,
        method: String,
        cursor: SentCursor,
        /// Carries the 2026-07-28 `_meta` protocol version.
        modern: bool,
        /// `initialize`'s `protocolVersion`, or the `_meta` one.
        version: Option<String>,
    },
    Answer {
        id: String,
        answer: Answer,
    },
    ListChanged(Kind),
    /// Anything else (other notifications, server requests).
    Other,
}

#[derive(Debug)]
pub enum Answer {
    Result(Map<String, Value>),
    Error(Option<i64>),
}

/// Longest method name or version kept.
const MAX_WORD: usize = 64;

/// The message `bytes` hold under `framing`; `None` when unreadable.
pub fn read_message(bytes: &[u8], framing: BodyFraming) -> Option<Message> {
    let json = match framing {
        BodyFraming::EventStream => match event_data(bytes) {
            Some(data) => data,
            None => return Some(Message::Empty),
        },
        BodyFraming::Json | BodyFraming::Lines => bytes.to_vec(),
        BodyFraming::Other => return None,
    };
    let value: Value = serde_json::from_slice(&json).ok()?;
    let Value::Object(object) = value else {
        return None;
    };
    Some(classify(object))
}

/// The `data:` lines of one SSE event, joined by newlines.
fn event_data(bytes: &[u8]) -> Option<Vec<u8>> {
    let mut data: Option<Vec<u8>> = None;
    for line in bytes.split(|&b| b == b'\n') {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        let Some(rest) = line.strip_prefix(b"data:") else {
            continue;
        };
        let rest = rest.strip_prefix(b" ").unwrap_or(rest);
        match &mut data {
            Some(d) => {
                d.push(b'\n');
                d.extend_from_slice(rest);
            }
            None => data = Some(rest.to_vec()),
        }
    }
    data.filter(|d| !d.iter().all(u8::is_ascii_whitespace))
}

fn classify(mut object: Map<String, Value>) -> Message {
    let id = object.get("id").map(Value::to_string);
    if let Some(Value::String(method)) = object.remove("method") {
        if id.is_none() {
            return notification(&method);
        }
        return request(id, method, object.get("params"));
    }
    let Some(id) = id else {
        return Message::Other;
    };
    let answer = match (object.remove("result"), object.get("error")) {
        (Some(Value::Object(result)), _) => Answer::Result(result),
        (_, Some(error)) => Answer::Error(error.get("code").and_then(Value::as_i64)),
        _ => Answer::Result(Map::new()),
    };
    Message::Answer { id, answer }
}

fn notification(method: &str) -> Message {
    Kind::ALL
        .into_iter()
        .find(|k| k.list_changed_method() == method)
        .map_or(Message::Other, Message::ListChanged)
}

fn request(id: Option<String>, method: String, params: Option<&Value>) -> Message {
    let cursor = match params.and_then(|p| p.get("cursor")) {
        None => SentCursor::None,
        Some(Value::Null) => SentCursor::Null,
        Some(Value::String(s)) => SentCursor::Str(CursorDigest::of(s)),
        Some(_) => SentCursor::Other,
    };
    let meta_version = params
        .and_then(|p| p.pointer("/_meta"))
        .and_then(|m| m.get(META_PROTOCOL_VERSION))
        .and_then(Value::as_str);
    let version = meta_version
        .or_else(|| {
            params
                .and_then(|p| p.get("protocolVersion"))
                .and_then(Value::as_str)
        })
        .map(|v| mcp_listing::text::cut(v, MAX_WORD).into_owned());
    Message::Request {
        id,
        method: mcp_listing::text::cut(&method, MAX_WORD).into_owned(),
        cursor,
        modern: meta_version.is_some(),
        version,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_a_list_request_with_its_cursor() {
        let body = br#"{"jsonrpc":"2.0","id":7,"method":"tools/list","params":{"cursor":"abc"}}"#;
        let Some(Message::Request {
            id,
            method,
            cursor,
            modern,
            ..
        }) = read_message(body, BodyFraming::Json)
        else {
            panic!("not a request");
        };
        assert_eq!(id.as_deref(), Some("7"));
        assert_eq!(method, "tools/list");
        assert_eq!(cursor, SentCursor::Str(CursorDigest::of("abc")));
        assert!(!modern);
    }

    #[test]
    fn reads_an_event_and_skips_a_priming_one() {
        let event = b"event: message\nid: 3\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"tools\":[]}}";
        assert!(matches!(
            read_message(event, BodyFraming::EventStream),
            Some(Message::Answer { .. })
        ));
        assert!(matches!(
            read_message(b"id: 1\ndata:", BodyFraming::EventStream),
            Some(Message::Empty)
        ));
    }

    #[test]
    fn tells_notifications_and_errors() {
        let note = br#"{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}"#;
        assert!(matches!(
            read_message(note, BodyFraming::Lines),
            Some(Message::ListChanged(Kind::Tools))
        ));
        let err = br#"{"jsonrpc":"2.0","id":"a","error":{"code":-32602,"message":"x"}}"#;
        assert!(matches!(
            read_message(err, BodyFraming::Json),
            Some(Message::Answer {
                answer: Answer::Error(Some(-32602)),
                ..
            })
        ));
        assert!(read_message(b"not json", BodyFraming::Json).is_none());
    }
}
