//! One value of a list, read for what a source keeps of it: its text
//! (borrowed from the answer when the parser can), a boolean, or just its
//! type. A list, a mapping or a number where text was expected is skipped
//! over, never built: a reader decides whether that is an error (a
//! target group's URL) or an absent field (a registry entry's status).

use serde::de::{self, Deserialize, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use std::borrow::Cow;
use std::fmt;
use std::marker::PhantomData;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Scalar<'de> {
    Text(Cow<'de, str>),
    Bool(bool),
    Null,
    /// Anything else, by its type's name (`a number`, `a list`, ...).
    Other(&'static str),
}

impl<'de> Scalar<'de> {
    /// The text, if the value is text.
    pub fn text(self) -> Option<Cow<'de, str>> {
        match self {
            Scalar::Text(t) => Some(t),
            _ => None,
        }
    }

    pub fn bool(&self) -> Option<bool> {
        match self {
            Scalar::Bool(b) => Some(*b),
            _ => None,
        }
    }

    /// The value's type, as a message names it.
    pub fn type_name(&self) -> &'static str {
        match self {
            Scalar::Text(_) => "a string",
            Scalar::Bool(_) => "a boolean",
            Scalar::Null => "null",
            Scalar::Other(name) => name,
        }
    }
}

impl<'de: 'a, 'a> Deserialize<'de> for Scalar<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(ScalarVisitor(PhantomData))
    }
}

struct ScalarVisitor<'a>(PhantomData<&'a ()>);

impl<'de: 'a, 'a> Visitor<'de> for ScalarVisitor<'a> {
    type Value = Scalar<'a>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any value")
    }

    fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Self::Value, E> {
        Ok(Scalar::Text(Cow::Borrowed(v)))
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
        Ok(Scalar::Text(Cow::Owned(v.to_string())))
    }

    fn visit_string<E: de::Error>(self, v: String) -> Result<Self::Value, E> {
        Ok(Scalar::Text(Cow::Owned(v)))
    }

    fn visit_bool<E: de::Error>(self, v: bool) -> Result<Self::Value, E> {
        Ok(Scalar::Bool(v))
    }

    fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(Scalar::Null)
    }

    fn visit_none<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(Scalar::Null)
    }

    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_any(self)
    }

    fn visit_i64<E: de::Error>(self, _: i64) -> Result<Self::Value, E> {
        Ok(Scalar::Other("a number"))
    }

    fn visit_u64<E: de::Error>(self, _: u64) -> Result<Self::Value, E> {
        Ok(Scalar::Other("a number"))
    }

    fn visit_f64<E: de::Error>(self, _: f64) -> Result<Self::Value, E> {
        Ok(Scalar::Other("a number"))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(Scalar::Other("a list"))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        Ok(Scalar::Other("a mapping"))
    }

    fn visit_enum<A: de::EnumAccess<'de>>(self, data: A) -> Result<Self::Value, A::Error> {
        // A tagged YAML value (`!tag x`): never text a list means.
        use de::VariantAccess;
        let (IgnoredAny, content) = data.variant::<IgnoredAny>()?;
        content.newtype_variant::<IgnoredAny>()?;
        Ok(Scalar::Other("a tagged value"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_is_borrowed_and_the_rest_is_named_not_built() {
        let s: Scalar = serde_json::from_str("\"abc\"").unwrap();
        assert!(matches!(s, Scalar::Text(Cow::Borrowed("abc"))));
        let s: Scalar = serde_json::from_str("\"a\\nb\"").unwrap();
        assert_eq!(s.text().as_deref(), Some("a\nb"));
        for (json, name) in [
            ("1", "a number"),
            ("[1, [2]]", "a list"),
            ("{\"a\": {}}", "a mapping"),
            ("null", "null"),
            ("true", "a boolean"),
        ] {
            let s: Scalar = serde_json::from_str(json).unwrap();
            assert_eq!(s.type_name(), name, "{json}");
        }
    }
}
