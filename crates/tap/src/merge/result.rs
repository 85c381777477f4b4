//! The one page a merged answer is: every unique item of a complete walk's
//! pages in upstream order, no `nextCursor`. Items are told apart as the
//! walker tells them (`mcp_listing::shape::item_key`: the identity key, a
//! long one cut with a hash of the whole) and the first of each key is
//! kept; an item without its identity key is not part of the catalogue
//! (the walker counts it invalid): it passes as it came, and the merge's
//! count of items leaves it out, as the poller's does; from 2026-07-28 the smallest
//! `ttlMs` of the pages and their one `cacheScope` — pages whose scopes
//! differ are not merged; `resultType` and every other field as page 1
//! had them.
//!
//! Built as the pages come, from their text: each page's new items are
//! copied once into a piece of their own, and the answer is those pieces
//! written one after another — never a tree of values, never joined.

use crate::event::MergeFallback;
use crate::merge::scan::{self, Items};
use bytes::Bytes;
use mcp_listing::shape::item_key;
use mcp_listing::Kind;
use serde_json::value::RawValue;
use serde_json::{Map, Value};
use std::collections::HashSet;

/// What a kept identity key costs besides its bytes (the set's slot and
/// the allocation's header), for accounting.
const KEY_OVERHEAD_BYTES: usize = 48;
/// The JSON-RPC envelope around a result, besides the id.
const ENVELOPE_BYTES: usize = 64;

/// A merged `result`: its JSON text in pieces, written in order.
#[derive(Debug, Clone)]
pub(crate) struct Merged {
    pub(crate) parts: Vec<Bytes>,
    pub(crate) items: u64,
    /// The pages' smallest `ttlMs`, if any gave one.
    pub(crate) ttl_ms: Option<u64>,
}

impl Merged {
    /// Bytes of the result's text.
    pub(crate) fn len(&self) -> usize {
        self.parts.iter().map(Bytes::len).sum()
    }
}

/// The merge of one walk attempt, page by page.
pub(crate) struct Builder {
    kind: Kind,
    /// Pages taken in this attempt.
    pages: u32,
    head: Head,
    set: ItemSet,
}

/// What is kept of the pages but their items.
#[derive(Default)]
struct Head {
    /// Page 1's fields but the items, `nextCursor` and `ttlMs`, each
    /// `"key":value,`.
    fields: Vec<u8>,
    ttl_ms: Option<u64>,
    /// Page 1's `cacheScope` as text (a string unescaped).
    scope: Option<String>,
    scope_changed: bool,
}

/// The unique items so far.
struct ItemSet {
    kind: Kind,
    max_items: u64,
    max_bytes: usize,
    /// Each page's new items, comma-separated, one piece per page.
    pieces: Vec<Bytes>,
    /// Unique items (by key) ...
    items: u64,
    /// ... and items written (those without a key too).
    written: u64,
    bytes: usize,
    seen: HashSet<Box<str>>,
    seen_bytes: usize,
    /// More unique items than the walk allows: the walker aborts.
    capped: bool,
    too_large: bool,
}

/// What the walker reads of one page: its guards' fields, and one
/// stand-in per new identity key in place of the items.
pub(crate) type Skeleton = Value;

impl Builder {
    /// `max_items`: the walk's item cap; `max_bytes`: the largest merged
    /// answer.
    pub(crate) fn new(kind: Kind, max_items: u64, max_bytes: usize) -> Builder {
        Builder {
            kind,
            pages: 0,
            head: Head::default(),
            set: ItemSet {
                kind,
                max_items,
                max_bytes,
                pieces: Vec::new(),
                items: 0,
                written: 0,
                bytes: 0,
                seen: HashSet::new(),
                seen_bytes: 0,
                capped: false,
                too_large: false,
            },
        }
    }

    /// The walk started over: nothing of the last attempt stays.
    pub(crate) fn restart(&mut self) {
        *self = Builder::new(self.kind, self.set.max_items, self.set.max_bytes);
    }

    /// Bytes this merge holds now.
    pub(crate) fn held(&self) -> usize {
        let set = &self.set;
        self.head.fields.capacity()
            + self.head.scope.as_ref().map_or(0, String::capacity)
            + set.bytes
            + set.seen_bytes
            + set.seen.capacity() * KEY_OVERHEAD_BYTES
    }

    /// The merged answer would be larger than allowed: stop walking.
    pub(crate) fn too_large(&self) -> bool {
        self.set.too_large
    }

    /// Take one page's result (an object's text): what the walker reads of
    /// it, or `None` when it is not an object.
    pub(crate) fn page(&mut self, result: &RawValue) -> Option<Skeleton> {
        self.pages += 1;
        let first = self.pages == 1;
        let mut skeleton = Map::new();
        let mut scope = None;
        let mut piece = Vec::new();
        let mut stand_ins = Vec::new();
        let (head, set) = (&mut self.head, &mut self.set);
        let items = scan::page(
            result,
            self.kind.array_field(),
            |key, value| head.field(first, key, value, &mut skeleton, &mut scope),
            |item| set.take(item, &mut piece, &mut stand_ins),
        )?;
        self.set.close_piece(piece, self.head.fields.len());
        self.head.take_scope(first, scope);
        if items == Items::Array {
            skeleton.insert(self.kind.array_field().into(), Value::Array(stand_ins));
        }
        Some(Value::Object(skeleton))
    }

    /// The merged result of a complete walk, or why page 1 goes.
    pub(crate) fn finish(self) -> Result<Merged, MergeFallback> {
        if self.head.scope_changed {
            return Err(MergeFallback::ScopeChanged);
        }
        if self.set.too_large {
            return Err(MergeFallback::TooLarge);
        }
        let Builder {
            kind, head, set, ..
        } = self;
        let mut open = Vec::with_capacity(head.fields.len() + 32);
        open.push(b'{');
        open.extend_from_slice(&head.fields);
        open.push(b'"');
        open.extend_from_slice(kind.array_field().as_bytes());
        open.extend_from_slice(b"\":[");
        let close = match head.ttl_ms {
            Some(ttl) => format!("],\"ttlMs\":{ttl}}}"),
            None => "]}".to_string(),
        };
        let mut parts = Vec::with_capacity(set.pieces.len() + 2);
        parts.push(Bytes::from(open));
        parts.extend(set.pieces);
        parts.push(Bytes::from(close));
        let merged = Merged {
            parts,
            items: set.items,
            ttl_ms: head.ttl_ms,
        };
        if merged.len() + ENVELOPE_BYTES > set.max_bytes {
            return Err(MergeFallback::TooLarge);
        }
        Ok(merged)
    }
}

impl Head {
    /// One entry of a page but its items.
    fn field(
        &mut self,
        first: bool,
        key: &str,
        value: &RawValue,
        skeleton: &mut Map<String, Value>,
        scope: &mut Option<String>,
    ) {
        match key {
            "nextCursor" => {}
            "ttlMs" => {
                let ttl = value.get().parse::<u64>().ok();
                self.ttl_ms = match (self.ttl_ms, ttl) {
                    (Some(a), Some(b)) => Some(a.min(b)),
                    (a, b) => a.or(b),
                };
            }
            _ if first => {
                serde_json::to_writer(&mut self.fields, key).unwrap_or_default();
                self.fields.push(b':');
                push_flat(&mut self.fields, value.get());
                self.fields.push(b',');
            }
            _ => {}
        }
        if key == "cacheScope" {
            *scope = Some(match scan::stand_in(value) {
                Value::String(s) => s,
                _ => value.get().to_string(),
            });
        }
        if matches!(key, "nextCursor" | "ttlMs" | "cacheScope" | "resultType") {
            skeleton.insert(key.to_string(), scan::stand_in(value));
        }
    }

    /// `cacheScope`: page 1's is the walk's; another differing is noted.
    fn take_scope(&mut self, first: bool, scope: Option<String>) {
        if first {
            self.scope = scope;
        } else if scope != self.scope {
            self.scope_changed = true;
        }
    }
}

impl ItemSet {
    /// One item of a page: the first of its key joins the merge (`piece`,
    /// this page's) and its stand-in goes to the walker; an item without
    /// its key passes as it came, counted by neither (the walker leaves it
    /// out of a catalogue).
    fn take(&mut self, item: &RawValue, piece: &mut Vec<u8>, stand_ins: &mut Vec<Value>) {
        if self.capped || self.too_large {
            // The walk stops at this page.
            return;
        }
        let id = scan::identity(self.kind, item).map(item_key);
        if let Some(id) = &id {
            if self.seen.contains(id.as_ref()) {
                return;
            }
            // The n-th unique key stands for itself: the walker counts
            // them, and never holds the upstream's names.
            stand_ins.push(Value::String(self.seen.len().to_string()));
            if self.seen.len() as u64 >= self.max_items {
                // One past the cap: the walker aborts with `item_cap`.
                self.capped = true;
                return;
            }
        }
        let comma = usize::from(self.written > 0);
        if self.bytes + piece.len() + comma + item.get().len() + ENVELOPE_BYTES > self.max_bytes {
            self.too_large = true;
            return;
        }
        if comma == 1 {
            piece.push(b',');
        }
        push_flat(piece, item.get());
        self.written += 1;
        if let Some(id) = id {
            self.seen_bytes += id.len();
            self.seen.insert(id.into_owned().into_boxed_str());
            self.items += 1;
        }
    }

    /// A page's new items are in: they become one piece of the answer.
    fn close_piece(&mut self, mut piece: Vec<u8>, fields: usize) {
        if !piece.is_empty() {
            piece.shrink_to_fit();
            self.bytes += piece.len();
            self.pieces.push(Bytes::from(piece));
        }
        if fields + self.bytes + ENVELOPE_BYTES > self.max_bytes {
            self.too_large = true;
        }
    }
}

/// JSON text with its line breaks made spaces: outside strings they are
/// only whitespace (inside, JSON allows them escaped only), and an event
/// stream's `data:` line must not hold one.
fn push_flat(out: &mut Vec<u8>, text: &str) {
    let start = out.len();
    out.extend_from_slice(text.as_bytes());
    for byte in &mut out[start..] {
        if matches!(*byte, b'\n' | b'\r') {
            *byte = b' ';
        }
    }
}

/// The JSON-RPC answer to the client's request `id` carrying `result`,
/// in pieces; as the one event of an event stream when `event`.
pub(crate) fn answer(id: &Value, result: &Merged, event: bool) -> Vec<Bytes> {
    let mut open = Vec::with_capacity(64);
    if event {
        open.extend_from_slice(b"event: message\ndata: ");
    }
    open.extend_from_slice(br#"{"jsonrpc":"2.0","id":"#);
    // Writing a Value into a Vec cannot fail (no I/O, string keys); its
    // text has no line break (serde_json writes compact JSON).
    serde_json::to_writer(&mut open, id).unwrap_or_default();
    open.extend_from_slice(br#","result":"#);
    let close: &'static [u8] = if event { b"}\n\n" } else { b"}" };
    let mut parts = Vec::with_capacity(result.parts.len() + 2);
    parts.push(Bytes::from(open));
    parts.extend(result.parts.iter().cloned());
    parts.push(Bytes::from_static(close));
    parts
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn raw(value: &Value) -> Box<RawValue> {
        RawValue::from_string(value.to_string()).unwrap()
    }

    fn text(parts: &[Bytes]) -> String {
        parts
            .iter()
            .map(|p| String::from_utf8_lossy(p).into_owned())
            .collect()
    }

    fn merge(kind: Kind, pages: &[Value]) -> Result<Merged, MergeFallback> {
        let mut builder = Builder::new(kind, 100, 1 << 20);
        for page in pages {
            builder.page(&raw(page)).expect("an object");
        }
        builder.finish()
    }

    fn value(merged: &Merged) -> Value {
        serde_json::from_str(&text(&merged.parts)).unwrap()
    }

    #[test]
    fn items_are_merged_in_order_without_duplicates_or_cursor() {
        let pages = [
            json!({"tools": [{"name": "a"}, {"name": "b"}], "nextCursor": "c1", "_meta": {"x": 1}}),
            json!({"tools": [{"name": "b"}, {"name": "c"}, {"title": "keyless"}], "nextCursor": "c2", "_meta": {"y": 2}}),
            json!({"tools": [{"name": "d"}]}),
        ];
        let merged = merge(Kind::Tools, &pages).unwrap();
        assert_eq!(
            value(&merged),
            json!({"tools": [{"name": "a"}, {"name": "b"}, {"name": "c"}, {"title": "keyless"}, {"name": "d"}], "_meta": {"x": 1}})
        );
        assert_eq!(
            merged.items, 4,
            "an item without its identity key passes, counted as the walker counts it: not at all"
        );
        assert_eq!(merged.ttl_ms, None);
    }

    #[test]
    fn the_walker_reads_a_skeleton_of_stand_ins() {
        let mut builder = Builder::new(Kind::Tools, 2, 1 << 20);
        let page = json!({"tools": [{"name": "a"}, {"name": "a"}, 0, {"name": "b"}], "nextCursor": {"big": [1]}, "resultType": "complete"});
        let skeleton = builder.page(&raw(&page)).unwrap();
        assert_eq!(
            skeleton,
            json!({"tools": ["0", "1"], "nextCursor": {}, "resultType": "complete"})
        );
        let next = builder
            .page(&raw(&json!({"tools": [{"name": "c"}, {"name": "d"}]})))
            .unwrap();
        assert_eq!(next["tools"], json!(["2"]), "one past the cap, then none");
        assert!(builder
            .page(&raw(&json!({"tools": {"name": "a"}})))
            .unwrap()
            .get("tools")
            .is_none());
        assert!(builder.page(&raw(&json!([1]))).is_none());
        builder.restart();
        let again = builder
            .page(&raw(&json!({"tools": [{"name": "a"}]})))
            .unwrap();
        assert_eq!(again["tools"], json!(["0"]), "a restart forgets");
    }

    #[test]
    fn cache_hints_are_merged_and_scopes_must_agree() {
        let page = |ttl: u64, scope: &str| json!({"resources": [], "ttlMs": ttl, "cacheScope": scope, "resultType": "complete"});
        let merged = merge(Kind::Resources, &[page(500, "public"), page(200, "public")]).unwrap();
        let result = value(&merged);
        assert_eq!(result["ttlMs"], 200);
        assert_eq!(result["cacheScope"], "public");
        assert_eq!(result["resultType"], "complete");
        assert_eq!(merged.ttl_ms, Some(200));
        assert!(matches!(
            merge(Kind::Resources, &[page(1, "public"), page(1, "private")]),
            Err(MergeFallback::ScopeChanged)
        ));
        let unscoped = json!({"resources": []});
        assert!(matches!(
            merge(Kind::Resources, &[page(1, "public"), unscoped]),
            Err(MergeFallback::ScopeChanged)
        ));
    }

    #[test]
    fn long_names_are_told_apart_as_the_walker_tells_them() {
        let long = "t".repeat(mcp_listing::text::MAX_NAME_BYTES + 40);
        let twin = format!("{long}x");
        let pages = [
            json!({"tools": [{"name": long}, {"name": twin}], "nextCursor": "c"}),
            json!({"tools": [{"name": long}, {"name": "b"}]}),
        ];
        let merged = merge(Kind::Tools, &pages).unwrap();
        let names: Vec<String> = value(&merged)["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["name"].as_str().unwrap().to_string())
            .collect();
        assert_eq!(names, [long, twin, "b".to_string()], "whole names go out");
        let mut builder = Builder::new(Kind::Tools, 10, 1 << 20);
        let long = "k".repeat(10_000);
        builder
            .page(&raw(&json!({"tools": [{"name": long}]})))
            .unwrap();
        assert!(
            builder.held() < 10_000 + 1024,
            "a long name is kept as its cut key, not twice: {}",
            builder.held()
        );
    }

    #[test]
    fn a_merge_past_its_bytes_is_not_made() {
        let mut builder = Builder::new(Kind::Tools, 100, 200);
        let items: Vec<Value> = (0..20).map(|n| json!({"name": format!("t{n}")})).collect();
        builder.page(&raw(&json!({ "tools": items }))).unwrap();
        assert!(builder.too_large());
        assert!(builder.held() < 1024, "{}", builder.held());
        assert!(matches!(builder.finish(), Err(MergeFallback::TooLarge)));
    }

    #[test]
    fn pretty_pages_make_one_line_answers() {
        let pretty = "{\n  \"tools\": [\n    {\"name\": \"a\",\r\n \"d\": \"x\\ny\"}\n  ],\n  \"_meta\": {\n\"k\": 1}\n}";
        let mut builder = Builder::new(Kind::Tools, 10, 1 << 20);
        builder
            .page(&RawValue::from_string(pretty.into()).unwrap())
            .unwrap();
        let merged = builder.finish().unwrap();
        let event = text(&answer(&json!(7), &merged, true));
        assert_eq!(event.matches('\n').count(), 3, "{event}");
        let data = event.strip_prefix("event: message\ndata: ").unwrap();
        let message: Value = serde_json::from_str(data.trim_end()).unwrap();
        assert_eq!(message["result"]["tools"][0]["d"], "x\ny");
        assert_eq!(message["result"]["_meta"]["k"], 1);
    }

    #[test]
    fn answers_are_json_rpc_and_events() {
        let merged = merge(Kind::Tools, &[json!({"tools": []})]).unwrap();
        let body = text(&answer(&json!(7), &merged, false));
        assert_eq!(body, r#"{"jsonrpc":"2.0","id":7,"result":{"tools":[]}}"#);
        let event = text(&answer(&json!("x"), &merged, true));
        assert_eq!(
            event,
            "event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":\"x\",\"result\":{\"tools\":[]}}\n\n"
        );
    }
}
