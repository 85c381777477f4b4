//! The one page a merged answer is: every unique item of a complete walk's
//! pages in upstream order (the first of each identity key; items without
//! one kept as they came), no `nextCursor`; from 2026-07-28 the smallest
//! `ttlMs` of the pages and their one `cacheScope` — pages whose scopes
//! differ are not merged; `resultType` and every other field as page 1
//! had them.

use crate::event::MergeFallback;
use mcp_listing::Kind;
use serde_json::{Map, Value};
use std::collections::HashSet;

/// A merged `result`.
pub(crate) struct Merged {
    pub(crate) result: Value,
    pub(crate) items: u64,
    /// The pages' smallest `ttlMs`, if any gave one.
    pub(crate) ttl_ms: Option<u64>,
}

/// Merge the results of one complete walk, page 1 first.
pub(crate) fn merge(kind: Kind, pages: Vec<Value>) -> Result<Merged, MergeFallback> {
    let scope = |page: &Value| page.get("cacheScope").cloned();
    let first_scope = pages.first().and_then(scope);
    if pages.iter().any(|p| scope(p) != first_scope) {
        return Err(MergeFallback::ScopeChanged);
    }
    let ttl_ms = pages
        .iter()
        .filter_map(|p| p.get("ttlMs").and_then(Value::as_u64))
        .min();
    let field = kind.array_field();
    let key = kind.identity_key();
    let mut seen = HashSet::new();
    let mut items = Vec::new();
    let mut pages = pages.into_iter();
    let mut result = match pages.next() {
        Some(Value::Object(first)) => first,
        _ => Map::new(),
    };
    let first_items = result.remove(field);
    for list in
        std::iter::once(first_items).chain(pages.map(|mut p| p.get_mut(field).map(Value::take)))
    {
        let Some(Value::Array(list)) = list else {
            continue;
        };
        for item in list {
            let fresh = match item.get(key).and_then(Value::as_str) {
                Some(id) => seen.insert(id.to_string()),
                None => true,
            };
            if fresh {
                items.push(item);
            }
        }
    }
    let count = items.len() as u64;
    result.remove("nextCursor");
    result.insert(field.into(), Value::Array(items));
    if let Some(ttl) = ttl_ms {
        result.insert("ttlMs".into(), Value::from(ttl));
    }
    Ok(Merged {
        result: Value::Object(result),
        items: count,
        ttl_ms,
    })
}

/// The JSON-RPC answer to the client's request `id`.
pub(crate) fn envelope(id: &Value, result: &Value) -> Vec<u8> {
    let mut out = br#"{"jsonrpc":"2.0","id":"#.to_vec();
    // Serialising a Value into a Vec cannot fail (no I/O, string keys).
    let _ = serde_json::to_writer(&mut out, id);
    out.extend_from_slice(br#","result":"#);
    let _ = serde_json::to_writer(&mut out, result);
    out.push(b'}');
    out
}

/// `message` as the one event of an event stream.
pub(crate) fn as_event(message: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(message.len() + 24);
    out.extend_from_slice(b"event: message\ndata: ");
    out.extend_from_slice(message);
    out.extend_from_slice(b"\n\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn items_are_merged_in_order_without_duplicates_or_cursor() {
        let pages = vec![
            json!({"tools": [{"name": "a"}, {"name": "b"}], "nextCursor": "c1", "_meta": {"x": 1}}),
            json!({"tools": [{"name": "b"}, {"name": "c"}, {"title": "keyless"}], "nextCursor": "c2"}),
            json!({"tools": [{"name": "d"}]}),
        ];
        let merged = merge(Kind::Tools, pages).unwrap();
        assert_eq!(
            merged.result,
            json!({"tools": [{"name": "a"}, {"name": "b"}, {"name": "c"}, {"title": "keyless"}, {"name": "d"}], "_meta": {"x": 1}})
        );
        assert_eq!(merged.items, 5);
        assert_eq!(merged.ttl_ms, None);
    }

    #[test]
    fn cache_hints_are_merged_and_scopes_must_agree() {
        let page = |ttl: u64, scope: &str| json!({"resources": [], "ttlMs": ttl, "cacheScope": scope, "resultType": "complete"});
        let merged = merge(
            Kind::Resources,
            vec![page(500, "public"), page(200, "public")],
        )
        .unwrap();
        assert_eq!(merged.result["ttlMs"], 200);
        assert_eq!(merged.result["cacheScope"], "public");
        assert_eq!(merged.result["resultType"], "complete");
        assert_eq!(merged.ttl_ms, Some(200));
        assert!(matches!(
            merge(Kind::Resources, vec![page(1, "public"), page(1, "private")]),
            Err(MergeFallback::ScopeChanged)
        ));
    }

    #[test]
    fn answers_are_json_rpc_and_events() {
        let body = envelope(&json!(7), &json!({"tools": []}));
        assert_eq!(body, br#"{"jsonrpc":"2.0","id":7,"result":{"tools":[]}}"#);
        assert_eq!(as_event(b"{}"), b"event: message\ndata: {}\n\n");
    }
}
