//! What the simulated client does with a paginated list: the behaviours of
//! real clients (walk to the end, or stop after page 1) and the misuse a
//! tap must notice (a cursor it was never handed).

use super::http_message::{Connection, RoundError};
use mcp_listing::Kind;
use serde_json::{json, Value};

/// Pages one walk follows at most: a server that never ends is not ours to
/// walk forever.
const MAX_PAGES: u32 = 100;

/// A cursor no server hands out.
const GARBAGE_CURSOR: &str = "simulated-client-garbage-cursor";

/// How the client lists one kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Behaviour {
    /// Follow `nextCursor` until a page has none (TypeScript SDK 2.x, fastmcp ≥ 3).
    Walk,
    /// One request, whatever `nextCursor` says (Python SDK and TypeScript SDK
    /// 1.x apps that never loop).
    FirstPageOnly,
    /// Page 1, then a cursor it was never handed (-32602 from a correct server).
    GarbageCursor,
}

/// How one listing went, as printed.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Listed {
    pub kind: Kind,
    pub pages: u32,
    pub items: usize,
    /// The last page still carried a cursor the client did not follow.
    pub left_cursor: bool,
    /// The JSON-RPC error code of the last page, if it failed.
    pub error_code: Option<i64>,
}

/// Lists `kind` as `behaviour` says.
pub async fn list(
    conn: &mut Connection,
    kind: Kind,
    behaviour: Behaviour,
) -> Result<Listed, RoundError> {
    let mut listed = Listed {
        kind,
        pages: 0,
        items: 0,
        left_cursor: false,
        error_code: None,
    };
    let mut cursor: Option<String> = None;
    loop {
        let params = match &cursor {
            Some(c) => json!({"cursor": c}),
            None => json!({}),
        };
        let answer = conn.request(kind.method(), params).await?;
        listed.pages += 1;
        if let Some(code) = answer.pointer("/error/code").and_then(Value::as_i64) {
            listed.error_code = Some(code);
            return Ok(listed);
        }
        let result = answer.get("result").unwrap_or(&Value::Null);
        listed.items += result
            .get(kind.array_field())
            .and_then(Value::as_array)
            .map_or(0, Vec::len);
        let next = result.get("nextCursor").and_then(Value::as_str);
        cursor = match (behaviour, next) {
            (_, None) => return Ok(listed),
            (Behaviour::Walk, Some(next)) if listed.pages < MAX_PAGES => Some(next.to_string()),
            (Behaviour::GarbageCursor, Some(_)) if listed.pages == 1 => {
                Some(GARBAGE_CURSOR.to_string())
            }
            (_, Some(_)) => {
                listed.left_cursor = true;
                return Ok(listed);
            }
        };
    }
}
