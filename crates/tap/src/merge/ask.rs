//! What a client's request asks, read from its body — only when merging is
//! on, and only for bodies small enough to hold (`MAX_INSPECTED_BYTES`):
//! an `initialize` (its client info is bound to the session it opens) or a
//! first-page list request (one the tap may merge for).

use crate::identity::{self, ClientInfo};
use mcp_listing::{Era, Kind};
use serde_json::Value;

/// Largest request body read whole to see what it asks.
pub(crate) const MAX_INSPECTED_BYTES: usize = 64 * 1024;

/// The `_meta` key of a 2026-07-28 request's protocol version.
const META_VERSION: &str = "io.modelcontextprotocol/protocolVersion";

pub(crate) enum Inspected {
    /// An `initialize` naming its client.
    Initialize(ClientInfo),
    FirstPage(ListRequest),
    Other,
}

/// A list request without a cursor.
pub(crate) struct ListRequest {
    pub(crate) kind: Kind,
    /// The client's request, whole (its id, params, `_meta`).
    pub(crate) message: Value,
    /// Client info from its `_meta` (2026-07-28).
    pub(crate) client_info: Option<ClientInfo>,
    /// The protocol era its walk follows (2026-07-28 or later: `""` is a
    /// cursor).
    pub(crate) era: Era,
}

/// What `body` asks; `protocol` is the request's `Mcp-Protocol-Version`.
pub(crate) fn inspect(body: &[u8], protocol: Option<&[u8]>) -> Inspected {
    let Ok(message) = serde_json::from_slice::<Value>(body) else {
        return Inspected::Other;
    };
    let Some(method) = message.get("method").and_then(Value::as_str) else {
        return Inspected::Other;
    };
    if method == "initialize" {
        return match identity::from_request(&message) {
            Some(info) => Inspected::Initialize(info),
            None => Inspected::Other,
        };
    }
    let Some(kind) = Kind::ALL.into_iter().find(|k| k.method() == method) else {
        return Inspected::Other;
    };
    let params = message.get("params");
    let cursor = params
        .and_then(|p| p.get("cursor"))
        .filter(|c| !c.is_null());
    if cursor.is_some() || message.get("id").is_none_or(Value::is_null) {
        return Inspected::Other;
    }
    let meta_version = params
        .and_then(|p| p.get("_meta"))
        .and_then(|m| m.get(META_VERSION))
        .and_then(Value::as_str)
        .map(str::as_bytes);
    let era = meta_version.or(protocol).map_or(Era::Legacy, Era::of_label);
    Inspected::FirstPage(ListRequest {
        kind,
        client_info: identity::from_request(&message),
        message,
        era,
    })
}

impl ListRequest {
    /// The client's id.
    pub(crate) fn id(&self) -> &Value {
        self.message.get("id").unwrap_or(&Value::Null)
    }

    /// The request for the page after `cursor` (`None`: the first), with
    /// `id` in place of the client's and everything else as it sent it.
    pub(crate) fn page(&self, id: &str, cursor: Option<&str>) -> Vec<u8> {
        let mut message = self.message.clone();
        if let Some(object) = message.as_object_mut() {
            object.insert("id".into(), Value::String(id.into()));
            let params = object
                .entry("params")
                .or_insert_with(|| Value::Object(Default::default()));
            if let (Some(params), Some(cursor)) = (params.as_object_mut(), cursor) {
                params.insert("cursor".into(), Value::String(cursor.into()));
            }
        }
        serde_json::to_vec(&message).unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn first_page(body: &str, protocol: Option<&str>) -> Option<ListRequest> {
        match inspect(body.as_bytes(), protocol.map(str::as_bytes)) {
            Inspected::FirstPage(list) => Some(list),
            _ => None,
        }
    }

    #[test]
    fn first_page_list_requests_are_told_apart() {
        let list = first_page(r#"{"jsonrpc":"2.0","id":3,"method":"prompts/list"}"#, None).unwrap();
        assert_eq!(list.kind, Kind::Prompts);
        assert_eq!(list.id(), &Value::from(3));
        assert_eq!(list.era, Era::Legacy);
        assert!(first_page(
            r#"{"id":3,"method":"tools/list","params":{"cursor":null}}"#,
            None
        )
        .is_some());
        assert!(first_page(
            r#"{"id":3,"method":"tools/list","params":{"cursor":"c"}}"#,
            None
        )
        .is_none());
        assert!(first_page(r#"{"id":3,"method":"tools/call"}"#, None).is_none());
        assert!(
            first_page(r#"{"method":"tools/list"}"#, None).is_none(),
            "a notification"
        );
        assert!(first_page("{garbage", None).is_none());
        let modern = first_page(r#"{"id":"a","method":"tools/list"}"#, Some("2026-07-28")).unwrap();
        assert_eq!(modern.era, Era::Modern);
        let meta = r#"{"id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"app"}}}}"#;
        let meta = first_page(meta, Some("2025-11-25")).unwrap();
        assert_eq!(meta.era, Era::Modern);
        assert_eq!(meta.client_info.unwrap().name, "app");
    }

    #[test]
    fn later_pages_keep_everything_but_the_id_and_cursor() {
        let list = first_page(
            r#"{"jsonrpc":"2.0","id":3,"method":"tools/list","params":{"_meta":{"k":1}}}"#,
            None,
        )
        .unwrap();
        let page: Value = serde_json::from_slice(&list.page("tap-1", Some("c2"))).unwrap();
        assert_eq!(page["id"], "tap-1");
        assert_eq!(page["params"]["cursor"], "c2");
        assert_eq!(page["params"]["_meta"]["k"], 1);
        let again: Value = serde_json::from_slice(&list.page("tap-2", None)).unwrap();
        assert!(again["params"].get("cursor").is_none());
    }

    #[test]
    fn initialize_names_its_client() {
        let init = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"clientInfo":{"name":"mcp","version":"0.1.0"}}}"#;
        assert!(
            matches!(inspect(init.as_bytes(), None), Inspected::Initialize(i) if i.name == "mcp")
        );
    }
}
