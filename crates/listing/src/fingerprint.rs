//! Item-content drift: a short fingerprint of what callers of an item depend
//! on, and a classifier that says whether a change breaks them.
//!
//! Only fingerprints and a capped summary of a tool's `inputSchema` (or a
//! prompt's arguments) are kept, never whole items: a catalogue of 100,000
//! tools must not hold 100,000 schemas.

use super::kind::Kind;
pub use crate::schema_shape::{JsonTypes, SchemaShape, ShapeProperty};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;

/// Properties of one schema summary kept; the rest are left out (and the
/// summary marked truncated, so a classifier does not invent removals).
pub const MAX_SHAPE_PROPERTIES: usize = 32;
/// Longest property name (and type name) kept, in bytes; cut by
/// [`crate::text::cut`].
pub const MAX_PROPERTY_NAME: usize = 64;
/// Items per listing that keep a schema summary; beyond this only digests
/// are kept and a changed item is classified `unknown`.
pub const MAX_SHAPES_PER_LISTING: usize = 2_000;

/// What one item looked like to a caller, in short hashes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ItemFingerprint {
    /// Hash over every part below: equal digests, nothing a caller sees changed.
    pub digest: u64,
    /// Per-part hashes in the order of [`parts_of`] (`description`,
    /// `inputSchema`, ...), so a change can be named.
    pub parts: PartHashes,
    /// Tools: the `inputSchema` summary; prompts: the arguments as one.
    /// Boxed: resources and templates have none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shape: Option<Box<SchemaShape>>,
}

/// Most parts any kind has ([`parts_of`]).
const MAX_PARTS: usize = 4;

/// An item's per-part hashes, held inline: a baseline keeps one per item,
/// and a vector would be one more allocation each. Written as an array of
/// numbers, as the vector it replaced was; extra numbers in a file are
/// ignored.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PartHashes {
    len: PartCount,
    hashes: [u32; MAX_PARTS],
}

/// How many of [`PartHashes`]' slots are used. An enum rather than a `u8`
/// so that its unused values are a niche: `Option<ItemFingerprint>`, one per
/// item in every baseline, is then no bigger than the fingerprint (40
/// bytes, not 48).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[repr(u8)]
enum PartCount {
    #[default]
    Zero,
    One,
    Two,
    Three,
    Four,
}

impl PartCount {
    /// The count after one more part; `None` when every slot is used.
    fn next(self) -> Option<PartCount> {
        match self {
            PartCount::Zero => Some(PartCount::One),
            PartCount::One => Some(PartCount::Two),
            PartCount::Two => Some(PartCount::Three),
            PartCount::Three => Some(PartCount::Four),
            PartCount::Four => None,
        }
    }
}

impl PartHashes {
    /// Add the next part's hash (past [`MAX_PARTS`]: ignored).
    pub fn push(&mut self, hash: u32) {
        let (at, next) = (self.len(), self.len.next());
        let (Some(slot), Some(next)) = (self.hashes.get_mut(at), next) else {
            return;
        };
        *slot = hash;
        self.len = next;
    }

    pub fn get(&self, i: usize) -> Option<&u32> {
        self.as_slice().get(i)
    }

    pub fn len(&self) -> usize {
        usize::from(self.len as u8)
    }

    pub fn is_empty(&self) -> bool {
        self.len == PartCount::Zero
    }

    pub fn as_slice(&self) -> &[u32] {
        &self.hashes[..self.len()]
    }
}

impl Serialize for PartHashes {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.as_slice().serialize(s)
    }
}

impl<'de> Deserialize<'de> for PartHashes {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let mut parts = PartHashes::default();
        for h in Vec::<u32>::deserialize(d)? {
            parts.push(h);
        }
        Ok(parts)
    }
}

/// The parts of an item callers depend on, per kind.
pub fn parts_of(kind: Kind) -> &'static [&'static str] {
    match kind {
        Kind::Tools => &["description", "inputSchema", "outputSchema", "annotations"],
        Kind::Prompts => &["description", "arguments"],
        Kind::Resources => &["name", "mimeType"],
        Kind::ResourceTemplates => &["parameters", "name", "mimeType"],
    }
}

/// Fingerprint one item. `with_shape` false keeps digests only (past the
/// per-listing shape budget).
pub fn fingerprint(kind: Kind, item: &Value, with_shape: bool) -> ItemFingerprint {
    let mut parts = PartHashes::default();
    let mut all = Sha256::new();
    for &part in parts_of(kind) {
        let value = if part == "parameters" {
            item.get("uriTemplate")
                .and_then(Value::as_str)
                .map(|t| Value::from(template_parameters(t)))
        } else {
            item.get(part).cloned()
        };
        let text = match &value {
            Some(v) => canonical(v),
            None => String::new(),
        };
        all.update(part.as_bytes());
        all.update([0]);
        all.update(text.as_bytes());
        all.update([0]);
        parts.push(short(text.as_bytes()));
    }
    let shape = match kind {
        Kind::Tools if with_shape => item.get("inputSchema").map(|s| Box::new(schema_shape(s))),
        Kind::Prompts if with_shape => item.get("arguments").map(|a| Box::new(arguments_shape(a))),
        _ => None,
    };
    let d = all.finalize();
    ItemFingerprint {
        digest: u64::from_be_bytes([d[0], d[1], d[2], d[3], d[4], d[5], d[6], d[7]]),
        parts,
        shape,
    }
}

fn short(bytes: &[u8]) -> u32 {
    let d = Sha256::digest(bytes);
    u32::from_be_bytes([d[0], d[1], d[2], d[3]])
}

/// JSON with object keys sorted, so key order on the wire is not drift.
pub fn canonical(v: &Value) -> String {
    match v {
        Value::Object(m) => {
            let sorted: BTreeMap<&String, &Value> = m.iter().collect();
            let inner: Vec<String> = sorted
                .into_iter()
                .map(|(k, v)| format!("{}:{}", Value::from(k.as_str()), canonical(v)))
                .collect();
            format!("{{{}}}", inner.join(","))
        }
        Value::Array(a) => {
            let inner: Vec<String> = a.iter().map(canonical).collect();
            format!("[{}]", inner.join(","))
        }
        other => other.to_string(),
    }
}

/// Variable names of an RFC 6570 template: `a{b}c{?d,e*}` → `b, d, e`.
pub fn template_parameters(template: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = template;
    while let Some(start) = rest.find('{') {
        let Some(len) = rest[start..].find('}') else {
            break;
        };
        let expr = &rest[start + 1..start + len];
        let expr = expr.trim_start_matches(['+', '#', '.', '/', ';', '?', '&']);
        for var in expr.split(',') {
            let name = var.split(':').next().unwrap_or("").trim_end_matches('*');
            if !name.is_empty() && out.len() < MAX_SHAPE_PROPERTIES {
                out.push(bounded(name));
            }
        }
        rest = &rest[start + len + 1..];
    }
    out
}

fn bounded(s: &str) -> String {
    crate::text::cut(s, MAX_PROPERTY_NAME).into_owned()
}

/// Summarise an object schema's top level.
pub fn schema_shape(schema: &Value) -> SchemaShape {
    let mut shape = SchemaShape::default();
    if let Some(props) = schema.get("properties").and_then(Value::as_object) {
        for (name, prop) in props {
            if shape.properties().len() >= MAX_SHAPE_PROPERTIES {
                shape.truncated = true;
                break;
            }
            shape.insert_property(&bounded(name), types_of(prop));
        }
    }
    if let Some(req) = schema.get("required").and_then(Value::as_array) {
        for r in req.iter().filter_map(Value::as_str) {
            if shape.required_count() >= MAX_SHAPE_PROPERTIES {
                shape.truncated = true;
                break;
            }
            shape.insert_required(&bounded(r));
        }
    }
    shape
}

/// A prompt's `arguments` (`[{name, required}]`) as a schema summary, so
/// the same rules classify a new required argument.
pub fn arguments_shape(args: &Value) -> SchemaShape {
    let mut shape = SchemaShape::default();
    for a in args.as_array().into_iter().flatten() {
        let Some(name) = a.get("name").and_then(Value::as_str) else {
            continue;
        };
        if shape.properties().len() >= MAX_SHAPE_PROPERTIES {
            shape.truncated = true;
            break;
        }
        shape.insert_property(&bounded(name), JsonTypes::ANY);
        if a.get("required").and_then(Value::as_bool) == Some(true) {
            shape.insert_required(&bounded(name));
        }
    }
    shape
}

/// The JSON types a property schema allows; any when it names none.
fn types_of(prop: &Value) -> JsonTypes {
    match prop.get("type") {
        Some(Value::String(t)) => [t.as_str()].into_iter().collect(),
        Some(Value::Array(ts)) => ts
            .iter()
            .filter_map(Value::as_str)
            .take(MAX_SHAPE_PROPERTIES)
            .collect(),
        _ => JsonTypes::ANY,
    }
}

crate::labelled_enum! {
    /// Whether a change breaks existing callers.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub enum ChangeClass as "change class" {
        Breaking => "breaking",
        Compatible => "compatible",
        /// No schema summary on one side (past the shape budget).
        Unknown => "unknown",
    }
}

/// One changed item: what changed and the rule that classified it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ItemChange {
    pub name: String,
    pub class: ChangeClass,
    /// `required_added`, `property_removed`, `type_narrowed`,
    /// `schema_changed`, `description_changed`, ...
    pub rule: String,
    /// The parts whose hash differs.
    pub parts: Vec<String>,
    /// Human detail naming the property, when there is one.
    pub detail: Option<String>,
}

/// Classify the change from `old` to `new` of the item `name`. `None` when
/// nothing a caller sees changed.
pub fn classify(
    kind: Kind,
    name: &str,
    old: &ItemFingerprint,
    new: &ItemFingerprint,
) -> Option<ItemChange> {
    if old.digest == new.digest {
        return None;
    }
    let parts: Vec<String> = parts_of(kind)
        .iter()
        .enumerate()
        .filter(|(i, _)| old.parts.get(*i) != new.parts.get(*i))
        .map(|(_, p)| p.to_string())
        .collect();
    let change = |class, rule: &str, detail: Option<String>| ItemChange {
        name: name.to_string(),
        class,
        rule: rule.to_string(),
        parts: parts.clone(),
        detail,
    };
    let shaped = parts.iter().any(|p| p == "inputSchema" || p == "arguments");
    if shaped {
        let (Some(a), Some(b)) = (&old.shape, &new.shape) else {
            return Some(change(ChangeClass::Unknown, "no_schema_summary", None));
        };
        if let Some((rule, detail)) = breaking_rule(a, b) {
            return Some(change(ChangeClass::Breaking, rule, Some(detail)));
        }
        return Some(change(ChangeClass::Compatible, "schema_widened", None));
    }
    let rule = match parts.first().map(String::as_str) {
        Some("description") => "description_changed",
        Some("outputSchema") => "output_schema_changed",
        Some("annotations") => "annotations_changed",
        Some("parameters") => "parameters_changed",
        _ => "metadata_changed",
    };
    Some(change(ChangeClass::Compatible, rule, None))
}

/// The first rule a schema change breaks, in a fixed order: a required
/// property added, a property removed, a property's type narrowed.
pub fn breaking_rule(old: &SchemaShape, new: &SchemaShape) -> Option<(&'static str, String)> {
    if let Some(p) = new.required().into_iter().find(|r| !old.requires(r)) {
        return Some(("required_added", format!("required property {p:?} added")));
    }
    if !new.truncated {
        if let Some(p) = old
            .properties()
            .iter()
            .find(|p| new.property(&p.name).is_none())
        {
            return Some(("property_removed", format!("property {:?} removed", p.name)));
        }
    }
    for p in old.properties() {
        let Some(new_types) = new.property(&p.name) else {
            continue;
        };
        if p.types.narrowed_by(new_types) {
            return Some((
                "type_narrowed",
                format!(
                    "property {:?} type {} → {}",
                    p.name,
                    p.types.label(),
                    new_types.label()
                ),
            ));
        }
    }
    None
}

/// Changed items between the fingerprints `old` finds by name and `new`
/// (present in both), sorted by name, at most `limit` of them.
pub fn changed_items<'a>(
    kind: Kind,
    old: impl Fn(&str) -> Option<&'a ItemFingerprint>,
    new: &BTreeMap<String, ItemFingerprint>,
    limit: usize,
) -> (u64, Vec<ItemChange>) {
    let mut count = 0u64;
    let mut out = Vec::new();
    for (name, n) in new {
        let Some(o) = old(name) else { continue };
        if let Some(c) = classify(kind, name, o, n) {
            count += 1;
            if out.len() < limit {
                out.push(c);
            }
        }
    }
    (count, out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn tool(desc: &str, schema: Value) -> ItemFingerprint {
        fingerprint(
            Kind::Tools,
            &json!({"name": "t", "description": desc, "inputSchema": schema}),
            true,
        )
    }

    /// The change from a tool with input schema `old` to one with `new`.
    fn schema_change(old: Value, new: Value) -> ItemChange {
        classify(Kind::Tools, "t", &tool("a", old), &tool("a", new)).unwrap()
    }

    fn verdict(c: &ItemChange) -> (ChangeClass, &str) {
        (c.class, c.rule.as_str())
    }

    fn base_schema() -> Value {
        json!({"type": "object", "properties": {"q": {"type": "string"}, "n": {"type": "number"}}, "required": ["q"]})
    }

    #[test]
    fn part_hashes_hold_four_and_a_kept_fingerprint_has_no_option_overhead() {
        let mut parts = PartHashes::default();
        for h in 1..=6 {
            parts.push(h);
        }
        assert_eq!(parts.as_slice(), &[1, 2, 3, 4]);
        let back: PartHashes = serde_json::from_str("[7, 8, 9, 10, 11]").unwrap();
        assert_eq!(back.as_slice(), &[7, 8, 9, 10]);
        // A baseline keeps one `Option<ItemFingerprint>` per item.
        assert_eq!(
            std::mem::size_of::<Option<ItemFingerprint>>(),
            std::mem::size_of::<ItemFingerprint>()
        );
    }

    #[test]
    fn key_order_and_unrelated_fields_are_not_drift() {
        let a = fingerprint(
            Kind::Tools,
            &json!({"name": "t", "description": "d", "inputSchema": {"type": "object", "properties": {}}, "title": "x"}),
            true,
        );
        let b = fingerprint(
            Kind::Tools,
            &json!({"inputSchema": {"properties": {}, "type": "object"}, "description": "d", "name": "t", "title": "y"}),
            true,
        );
        assert_eq!(a.digest, b.digest);
        assert!(classify(Kind::Tools, "t", &a, &b).is_none());
    }

    #[test]
    fn description_edit_is_compatible() {
        let c = classify(
            Kind::Tools,
            "t",
            &tool("a", base_schema()),
            &tool("b", base_schema()),
        )
        .unwrap();
        assert_eq!(c.class, ChangeClass::Compatible);
        assert_eq!(c.rule, "description_changed");
        assert_eq!(c.parts, ["description"]);
    }

    #[test]
    fn required_property_added_is_breaking() {
        let mut s = base_schema();
        s["properties"]["region"] = json!({"type": "string"});
        s["required"] = json!(["q", "region"]);
        let c = schema_change(base_schema(), s);
        assert_eq!(c.class, ChangeClass::Breaking);
        assert_eq!(c.rule, "required_added");
        assert!(c.detail.unwrap().contains("region"));
    }

    #[test]
    fn property_removed_is_breaking() {
        let s =
            json!({"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]});
        let c = schema_change(base_schema(), s);
        assert_eq!(verdict(&c), (ChangeClass::Breaking, "property_removed"));
    }

    #[test]
    fn type_narrowing_is_breaking_and_widening_is_not() {
        let mut narrow = base_schema();
        narrow["properties"]["n"] = json!({"type": "integer"});
        let c = schema_change(base_schema(), narrow.clone());
        assert_eq!(verdict(&c), (ChangeClass::Breaking, "type_narrowed"));
        // integer → number widens.
        let c = schema_change(narrow, base_schema());
        assert_eq!(verdict(&c), (ChangeClass::Compatible, "schema_widened"));
        // any → string narrows; string → [string, null] widens.
        let any = json!({"type": "object", "properties": {"q": {}, "n": {"type": "number"}}, "required": ["q"]});
        let c = schema_change(any, base_schema());
        assert_eq!(c.rule, "type_narrowed");
        let mut wide = base_schema();
        wide["properties"]["q"] = json!({"type": ["string", "null"]});
        let c = schema_change(base_schema(), wide);
        assert_eq!(c.class, ChangeClass::Compatible);
    }

    #[test]
    fn optional_property_added_is_compatible() {
        let mut s = base_schema();
        s["properties"]["extra"] = json!({"type": "boolean"});
        let c = schema_change(base_schema(), s);
        assert_eq!(verdict(&c), (ChangeClass::Compatible, "schema_widened"));
    }

    #[test]
    fn prompt_required_argument_added_is_breaking() {
        let p = |args: Value| {
            fingerprint(
                Kind::Prompts,
                &json!({"name": "p", "arguments": args}),
                true,
            )
        };
        let old = p(json!([{"name": "a"}]));
        let new = p(json!([{"name": "a"}, {"name": "b", "required": true}]));
        let c = classify(Kind::Prompts, "p", &old, &new).unwrap();
        assert_eq!(verdict(&c), (ChangeClass::Breaking, "required_added"));
    }

    #[test]
    fn resources_and_templates_fingerprint_their_parts() {
        let r = |mime: &str| {
            fingerprint(
                Kind::Resources,
                &json!({"uri": "u", "name": "n", "mimeType": mime}),
                true,
            )
        };
        let c = classify(
            Kind::Resources,
            "u",
            &r("text/plain"),
            &r("application/json"),
        )
        .unwrap();
        assert_eq!(c.parts, ["mimeType"]);
        assert_eq!(c.class, ChangeClass::Compatible);
        assert_eq!(
            template_parameters("sim://a/{id}{?q,page*}{/x:3}"),
            ["id", "q", "page", "x"]
        );
        let t = fingerprint(
            Kind::ResourceTemplates,
            &json!({"uriTemplate": "a/{id}", "name": "n"}),
            true,
        );
        assert_eq!(t.parts.len(), parts_of(Kind::ResourceTemplates).len());
        assert!(t.shape.is_none());
    }

    #[test]
    fn no_summary_past_the_budget_classifies_unknown() {
        let a = fingerprint(
            Kind::Tools,
            &json!({"name": "t", "inputSchema": base_schema()}),
            false,
        );
        let b = fingerprint(
            Kind::Tools,
            &json!({"name": "t", "inputSchema": {"type": "object"}}),
            false,
        );
        assert_eq!(
            classify(Kind::Tools, "t", &a, &b).unwrap().class,
            ChangeClass::Unknown
        );
    }

    #[test]
    fn summaries_are_capped() {
        let props: serde_json::Map<String, Value> = (0..100)
            .map(|i| {
                (
                    format!("{i:03}{}", "p".repeat(200)),
                    json!({"type": "string"}),
                )
            })
            .collect();
        let s = schema_shape(&json!({"properties": props}));
        assert_eq!(s.properties().len(), MAX_SHAPE_PROPERTIES);
        assert!(s.truncated);
        assert!(s
            .properties()
            .iter()
            .all(|p| p.name.chars().count() <= MAX_PROPERTY_NAME));
        // A truncated summary never reports removals it cannot see.
        let mut old = s.clone();
        old.truncated = false;
        old.insert_property("zzz-gone", JsonTypes::ANY);
        assert!(breaking_rule(&old, &s).is_none_or(|(r, _)| r != "property_removed"));
    }

    #[test]
    fn changed_items_counts_all_and_names_a_bounded_few() {
        let mut old = BTreeMap::new();
        let mut new = BTreeMap::new();
        for i in 0..5 {
            old.insert(format!("t{i}"), tool("a", base_schema()));
            new.insert(format!("t{i}"), tool("b", base_schema()));
        }
        new.insert("fresh".into(), tool("c", base_schema()));
        let (n, named) = changed_items(Kind::Tools, |n| old.get(n), &new, 2);
        assert_eq!(n, 5);
        assert_eq!(named.len(), 2);
    }
}
