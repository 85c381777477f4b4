//! Registry pages read as a stream, for what a refresh keeps.

use super::*;
use serde_json::json;
use std::convert::Infallible;

/// The walker's page and every entry handed on.
fn read(page: &Value) -> (Value, Vec<ServerEntry>) {
    let bytes = serde_json::to_vec(page).unwrap();
    let mut entries = Vec::new();
    let walker = read_page::<Infallible>(&bytes, &mut |e| {
        let id = e.identity.clone();
        entries.push(e);
        Ok(id)
    })
    .unwrap();
    (walker, entries)
}

#[test]
fn a_registry_page_is_read_where_the_api_keeps_things() {
    let (walker, entries) = read(&json!({
        "servers": [
            {"server": {"name": "io.x/a", "version": "2.0.0", "description": "d", "packages": [{"x": 1}]},
             "_meta": {OFFICIAL_META: {"status": "deprecated", "isLatest": false}}},
            {"server": {"name": "io.x/b"}},
            {}
        ],
        "metadata": {"nextCursor": "c2", "count": 3}
    }));
    assert_eq!(
        walker,
        json!({"servers": ["io.x/a@2.0.0", "io.x/b"], "metadata": {"nextCursor": "c2"}})
    );
    assert_eq!(entries.len(), 3);
    assert_eq!(entries[0].status.as_deref(), Some("deprecated"));
    assert_eq!(entries[0].is_latest, Some(false));
    assert_eq!(entries[1].identity.as_deref(), Some("io.x/b"));
    assert!(entries[2].identity.is_none() && entries[2].name.is_none());
    let (walker, _) = read(&json!({"servers": [], "metadata": {"nextCursor": null}}));
    assert_eq!(walker["metadata"]["nextCursor"], Value::Null);
    let (walker, _) = read(&json!({"servers": []}));
    assert_eq!(walker, json!({"servers": []}));
}

#[test]
fn streamable_http_wins_over_sse_and_required_headers_are_kept() {
    let remotes = json!([
        {"type": "sse", "url": "https://h.invalid/sse"},
        {"type": "streamable-http", "url": "https://h.invalid/mcp",
         "headers": [{"name": "X-Key", "isRequired": true}, {"name": "X-Opt", "isRequired": false}]},
        {"type": "streamable-http", "url": "https://h.invalid/second"}
    ]);
    let (_, entries) = read(&json!({"servers": [{"server": {"name": "a", "remotes": remotes}}]}));
    let r = entries[0].remote.as_ref().unwrap();
    assert_eq!(r.url, "https://h.invalid/mcp");
    assert_eq!(r.transport, HttpMode::StreamableHttp);
    assert_eq!(r.required_headers, vec!["X-Key".to_string()]);
    let sse = json!([{"type": "sse", "url": "https://h.invalid/sse"}]);
    let (_, entries) = read(&json!({"servers": [{"server": {"name": "a", "remotes": sse}}]}));
    assert_eq!(entries[0].remote.as_ref().unwrap().transport, HttpMode::Sse);
    let stdio = json!([{"type": "stdio"}]);
    let (_, entries) = read(&json!({"servers": [{"server": {"name": "a", "remotes": stdio}}]}));
    assert!(entries[0].remote.is_none());
}

#[test]
fn a_long_identity_is_cut_as_every_name() {
    let version = "9".repeat(300);
    let (walker, entries) =
        read(&json!({"servers": [{"server": {"name": "io.x/a", "version": version}}]}));
    let whole = format!("io.x/a@{version}");
    let cut = text::name(&whole).into_owned();
    assert!(cut.len() <= text::MAX_NAME_BYTES);
    assert_eq!(entries[0].identity.as_deref(), Some(cut.as_str()));
    assert_eq!(entries[0].name.as_deref(), Some("io.x/a"));
    assert_eq!(walker["servers"][0], json!(cut));
    let long_name = "n".repeat(5000);
    let (_, entries) = read(&json!({"servers": [{"server": {"name": long_name}}]}));
    assert!(entries[0].name.as_ref().unwrap().len() <= text::MAX_NAME_BYTES);
}

#[test]
fn fields_of_the_wrong_type_are_absent_not_a_broken_page() {
    let (walker, entries) = read(&json!({
        "servers": [
            {"server": 1},
            {"server": {"name": 5, "remotes": "x"}, "_meta": []},
            {"server": {"name": "a", "remotes": [{"type": "sse", "url": 1}], "version": {"v": 1}}},
            7
        ],
        "metadata": {"nextCursor": {"deep": [1, 2]}}
    }));
    assert_eq!(entries.len(), 4);
    assert!(entries[0].name.is_none() && entries[1].name.is_none());
    assert_eq!(entries[2].identity.as_deref(), Some("a"));
    assert!(entries[2].remote.is_none());
    assert_eq!(walker["metadata"]["nextCursor"], json!({}));
    let (walker, _) = read(&json!({"servers": {"a": 1}}));
    assert_eq!(walker, json!({}));
    let (walker, _) = read(&json!([1, 2]));
    assert_eq!(walker, Value::Null);
    let broken = read_page::<Infallible>(b"{\"servers\": [", &mut |_| Ok(None));
    assert!(broken.unwrap_err().starts_with("not JSON: "));
}

#[test]
fn a_keeper_that_refuses_stops_the_read() {
    let page = serde_json::to_vec(&json!({"servers": [{}, {}, {}]})).unwrap();
    let mut seen = 0;
    let read = read_page(&page, &mut |_| {
        seen += 1;
        if seen == 2 {
            Err("full")
        } else {
            Ok(None)
        }
    });
    assert_eq!(seen, 2);
    assert!(read.unwrap_err().contains("full"));
}
