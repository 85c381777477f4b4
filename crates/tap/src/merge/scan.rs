//! Reading a page a merge walks as raw JSON text, never as a tree of
//! values (the message around it is read by the wire's
//! `jsonrpc::RawMessage`): a page's entries and items are visited one at a
//! time, each item read only for its identity key. A page of millions of
//! tiny items costs its own bytes, not sixteen times them.

use mcp_listing::Kind;
use serde::de::{DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::Value;
use std::borrow::Cow;
use std::fmt;

/// How a page held its items.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Items {
    /// An array, each item visited.
    Array,
    /// No field of that name.
    Missing,
    /// Not an array, or the field twice: not a page to merge.
    Unusable,
}

/// Visit a page (`result`, an object): `field` is called with every entry
/// but `items_field` (its name and value as text), `item` with every
/// element of the `items_field` array, in order. `None`: not an object.
pub(crate) fn page<'a>(
    result: &'a RawValue,
    items_field: &str,
    field: impl FnMut(&str, &'a RawValue),
    item: impl FnMut(&'a RawValue),
) -> Option<Items> {
    let visitor = PageVisitor {
        items_field,
        field,
        item,
    };
    let mut de = serde_json::Deserializer::from_str(result.get());
    de.deserialize_map(visitor).ok()
}

/// A key as written, borrowed when it has no escapes.
#[derive(Deserialize)]
struct Key<'a>(#[serde(borrow)] Cow<'a, str>);

struct PageVisitor<'f, F, I> {
    items_field: &'f str,
    field: F,
    item: I,
}

impl<'de, F, I> Visitor<'de> for PageVisitor<'_, F, I>
where
    F: FnMut(&str, &'de RawValue),
    I: FnMut(&'de RawValue),
{
    type Value = Items;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a result object")
    }

    fn visit_map<A: MapAccess<'de>>(mut self, mut map: A) -> Result<Items, A::Error> {
        let mut items = Items::Missing;
        while let Some(Key(key)) = map.next_key::<Key<'de>>()? {
            if key != self.items_field {
                let value: &'de RawValue = map.next_value()?;
                (self.field)(&key, value);
            } else if items == Items::Missing {
                items = map.next_value_seed(ItemsVisitor(&mut self.item))?;
            } else {
                map.next_value::<IgnoredAny>()?;
                items = Items::Unusable;
            }
        }
        Ok(items)
    }
}

/// The items field's value, read once: an array's elements visited, any
/// other value skipped.
struct ItemsVisitor<'i, I>(&'i mut I);

impl<'de, I: FnMut(&'de RawValue)> DeserializeSeed<'de> for ItemsVisitor<'_, I> {
    type Value = Items;

    fn deserialize<D: Deserializer<'de>>(self, de: D) -> Result<Items, D::Error> {
        de.deserialize_any(self)
    }
}

impl<'de, I: FnMut(&'de RawValue)> Visitor<'de> for ItemsVisitor<'_, I> {
    type Value = Items;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an array of items")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Items, A::Error> {
        while let Some(item) = seq.next_element::<&'de RawValue>()? {
            (self.0)(item);
        }
        Ok(Items::Array)
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Items, A::Error> {
        while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        Ok(Items::Unusable)
    }

    fn visit_bool<E>(self, _: bool) -> Result<Items, E> {
        Ok(Items::Unusable)
    }

    fn visit_i64<E>(self, _: i64) -> Result<Items, E> {
        Ok(Items::Unusable)
    }

    fn visit_u64<E>(self, _: u64) -> Result<Items, E> {
        Ok(Items::Unusable)
    }

    fn visit_f64<E>(self, _: f64) -> Result<Items, E> {
        Ok(Items::Unusable)
    }

    fn visit_str<E>(self, _: &str) -> Result<Items, E> {
        Ok(Items::Unusable)
    }

    fn visit_unit<E>(self) -> Result<Items, E> {
        Ok(Items::Unusable)
    }
}

/// What identifies `item` in a listing of `kind`: its identity key's
/// string (the last one, when written twice, as a JSON parser keeps);
/// `None` for an item that is not an object or has no such string.
pub(crate) fn identity(kind: Kind, item: &RawValue) -> Option<Cow<'_, str>> {
    if !item.get().starts_with('{') {
        return None;
    }
    let mut de = serde_json::Deserializer::from_str(item.get());
    let raw = IdentitySeed(kind.identity_key())
        .deserialize(&mut de)
        .ok()??;
    if !raw.get().starts_with('"') {
        return None;
    }
    serde_json::from_str::<Key<'_>>(raw.get()).ok().map(|k| k.0)
}

struct IdentitySeed(&'static str);

impl<'de> DeserializeSeed<'de> for IdentitySeed {
    type Value = Option<&'de RawValue>;

    fn deserialize<D: Deserializer<'de>>(self, de: D) -> Result<Self::Value, D::Error> {
        de.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for IdentitySeed {
    type Value = Option<&'de RawValue>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an item object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut found = None;
        while let Some(Key(key)) = map.next_key::<Key<'de>>()? {
            if key == self.0 {
                found = Some(map.next_value::<&'de RawValue>()?);
            } else {
                map.next_value::<IgnoredAny>()?;
            }
        }
        Ok(found)
    }
}

/// What the walker needs of a field's value, at a cost that does not grow
/// with what the upstream put there: strings, numbers, booleans and null
/// as they are; an array or object as an empty one (it only asks which).
pub(crate) fn stand_in(raw: &RawValue) -> Value {
    match raw.get().as_bytes().first() {
        Some(b'[') => Value::Array(Vec::new()),
        Some(b'{') => Value::Object(serde_json::Map::new()),
        _ => serde_json::from_str(raw.get()).unwrap_or(Value::Null),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn raw(text: &str) -> &RawValue {
        serde_json::from_str(text).unwrap()
    }

    #[test]
    fn a_page_is_visited_entry_by_entry_and_item_by_item() {
        let page_text =
            r#"{"tools":[{"name":"a"},0,{"title":"t"}],"nextCursor":"c","_meta":{"x":[1]}}"#;
        let mut fields = Vec::new();
        let mut items = Vec::new();
        let found = page(
            raw(page_text),
            "tools",
            |k, v| fields.push(format!("{k}={}", v.get())),
            |i| items.push(i.get().to_string()),
        );
        assert_eq!(found, Some(Items::Array));
        assert_eq!(fields, [r#"nextCursor="c""#, r#"_meta={"x":[1]}"#]);
        assert_eq!(items, [r#"{"name":"a"}"#, "0", r#"{"title":"t"}"#]);
        let twice = raw(r#"{"tools":[],"tools":[]}"#);
        assert_eq!(
            page(twice, "tools", |_, _| {}, |_| {}),
            Some(Items::Unusable)
        );
        let object = raw(r#"{"tools":{"name":"a"}}"#);
        assert_eq!(
            page(object, "tools", |_, _| {}, |_| {}),
            Some(Items::Unusable)
        );
        assert_eq!(
            page(raw("{}"), "tools", |_, _| {}, |_| {}),
            Some(Items::Missing)
        );
        assert_eq!(page(raw("[1]"), "tools", |_, _| {}, |_| {}), None);
    }

    #[test]
    fn identity_is_the_keys_string_as_a_parser_keeps_it() {
        let id = |text: &str, kind| identity(kind, raw(text)).map(Cow::into_owned);
        assert_eq!(
            id(r#"{"name":"a","x":{"name":"b"}}"#, Kind::Tools),
            Some("a".into())
        );
        assert_eq!(
            id(r#"{"name":"a","name":"b"}"#, Kind::Tools),
            Some("b".into())
        );
        assert_eq!(id(r#"{"name":"\u0061"}"#, Kind::Tools), Some("a".into()));
        assert_eq!(id(r#"{"uri":"u"}"#, Kind::Resources), Some("u".into()));
        assert_eq!(id(r#"{"name":"u"}"#, Kind::Resources), None);
        assert_eq!(id(r#"{"name":1}"#, Kind::Tools), None);
        assert_eq!(id("0", Kind::Tools), None);
        assert_eq!(id(r#""name""#, Kind::Tools), None);
    }

    #[test]
    fn stand_ins_cost_nothing_for_containers() {
        assert_eq!(stand_in(raw("\"c\"")), json!("c"));
        assert_eq!(stand_in(raw("12")), json!(12));
        assert_eq!(stand_in(raw("null")), Value::Null);
        assert_eq!(stand_in(raw("[1,2,3]")), json!([]));
        assert_eq!(stand_in(raw(r#"{"a":1}"#)), json!({}));
    }
}
