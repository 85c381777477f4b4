//! A capped summary of a tool's `inputSchema` (or a prompt's arguments):
//! property names, their JSON types and which are required — what the
//! drift classifier needs to say whether a change breaks callers.
//!
//! A baseline keeps one per tool and prompt, so the summary is compact: one
//! allocation for the properties, one per name, the types a bit set, the
//! required flag beside its property. A two-property tool's summary is four
//! allocations and ~100 bytes (ten and ~250 as nested strings and vectors).
//! The file format is unchanged: `properties` an object of type lists,
//! `required` an array of names.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The JSON types a property allows, as a set; empty means any. A type name
/// outside JSON Schema's seven (an invalid schema) is kept as `other`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct JsonTypes(u8);

/// JSON Schema's type names, in the order of their bits; `other` last.
const TYPE_NAMES: [&str; 8] = [
    "array", "boolean", "integer", "null", "number", "object", "string", "other",
];
const INTEGER: u8 = 1 << 2;
const NUMBER: u8 = 1 << 4;

impl JsonTypes {
    pub const ANY: JsonTypes = JsonTypes(0);

    /// Add a type by its name (`other` for a name JSON Schema lacks).
    pub fn insert(&mut self, name: &str) {
        let bit = TYPE_NAMES[..7].iter().position(|t| *t == name).unwrap_or(7);
        self.0 |= 1 << bit;
    }

    pub fn is_any(self) -> bool {
        self.0 == 0
    }

    /// The type names, sorted (empty for any).
    pub fn names(self) -> impl Iterator<Item = &'static str> {
        TYPE_NAMES
            .iter()
            .enumerate()
            .filter(move |(i, _)| self.0 & (1 << i) != 0)
            .map(|(_, name)| *name)
    }

    /// Does `new` reject a value `self` accepted? Any accepts everything;
    /// `integer` is within `number`.
    pub fn narrowed_by(self, new: JsonTypes) -> bool {
        if new.is_any() {
            return false;
        }
        if self.is_any() {
            return true;
        }
        let mut lost = self.0 & !new.0;
        if new.0 & NUMBER != 0 {
            lost &= !INTEGER;
        }
        lost != 0
    }

    /// `string|null`, or `any`.
    pub fn label(self) -> String {
        if self.is_any() {
            return "any".into();
        }
        self.names().collect::<Vec<_>>().join("|")
    }
}

impl<'a> FromIterator<&'a str> for JsonTypes {
    fn from_iter<I: IntoIterator<Item = &'a str>>(names: I) -> JsonTypes {
        let mut types = JsonTypes::ANY;
        for name in names {
            types.insert(name);
        }
        types
    }
}

/// One property of a [`SchemaShape`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShapeProperty {
    pub name: Box<str>,
    pub types: JsonTypes,
    pub required: bool,
}

/// A capped summary of an object schema. Written as before: `properties` a
/// JSON object of type lists, `required` an array.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(from = "ShapeFile")]
pub struct SchemaShape {
    /// Sorted by name, names unique.
    properties: Box<[ShapeProperty]>,
    /// Required names that are not properties (sorted, unique; rare).
    required_elsewhere: Box<[Box<str>]>,
    /// More properties (or required names) than the cap: removals past it
    /// cannot be seen.
    pub truncated: bool,
}

impl SchemaShape {
    pub fn properties(&self) -> &[ShapeProperty] {
        &self.properties
    }

    /// The JSON types of property `name`, if it has one.
    pub fn property(&self, name: &str) -> Option<JsonTypes> {
        self.find(name).ok().map(|i| self.properties[i].types)
    }

    pub fn requires(&self, name: &str) -> bool {
        match self.find(name) {
            Ok(i) => self.properties[i].required,
            Err(_) => self
                .required_elsewhere
                .binary_search_by(|r| (**r).cmp(name))
                .is_ok(),
        }
    }

    /// Required names, sorted.
    pub fn required(&self) -> Vec<&str> {
        let mut names: Vec<&str> = self
            .properties
            .iter()
            .filter(|p| p.required)
            .map(|p| &*p.name)
            .chain(self.required_elsewhere.iter().map(|r| &**r))
            .collect();
        names.sort_unstable();
        names
    }

    /// How many required names the summary holds.
    pub fn required_count(&self) -> usize {
        self.properties.iter().filter(|p| p.required).count() + self.required_elsewhere.len()
    }

    /// Add (or replace the types of) a property, keeping the list sorted; a
    /// name already required stays required.
    pub fn insert_property(&mut self, name: &str, types: JsonTypes) {
        match self.find(name) {
            Ok(i) => self.properties[i].types = types,
            Err(i) => {
                let required = self.take_required_elsewhere(name);
                let mut props = std::mem::take(&mut self.properties).into_vec();
                props.insert(
                    i,
                    ShapeProperty {
                        name: name.into(),
                        types,
                        required,
                    },
                );
                self.properties = props.into_boxed_slice();
            }
        }
    }

    /// Mark a name required (a property, or a name kept apart).
    pub fn insert_required(&mut self, name: &str) {
        if let Ok(i) = self.find(name) {
            self.properties[i].required = true;
            return;
        }
        if let Err(i) = self
            .required_elsewhere
            .binary_search_by(|r| (**r).cmp(name))
        {
            let mut names = std::mem::take(&mut self.required_elsewhere).into_vec();
            names.insert(i, name.into());
            self.required_elsewhere = names.into_boxed_slice();
        }
    }

    /// The same summary with every name passed through `rename` (scrubbing
    /// secrets out of property names).
    pub fn renamed(&self, rename: impl Fn(&str) -> String) -> SchemaShape {
        let mut out = SchemaShape {
            truncated: self.truncated,
            ..SchemaShape::default()
        };
        for p in self.properties.iter() {
            out.insert_property(&rename(&p.name), p.types);
        }
        for name in self.required() {
            out.insert_required(&rename(name));
        }
        out
    }

    fn find(&self, name: &str) -> Result<usize, usize> {
        self.properties.binary_search_by(|p| (*p.name).cmp(name))
    }

    fn take_required_elsewhere(&mut self, name: &str) -> bool {
        let Ok(i) = self
            .required_elsewhere
            .binary_search_by(|r| (**r).cmp(name))
        else {
            return false;
        };
        let mut names = std::mem::take(&mut self.required_elsewhere).into_vec();
        names.remove(i);
        self.required_elsewhere = names.into_boxed_slice();
        true
    }
}

/// [`SchemaShape`] as files hold it.
#[derive(Deserialize)]
struct ShapeFile {
    #[serde(default)]
    properties: BTreeMap<String, Vec<String>>,
    #[serde(default)]
    required: Vec<String>,
    #[serde(default)]
    truncated: bool,
}

impl From<ShapeFile> for SchemaShape {
    fn from(f: ShapeFile) -> SchemaShape {
        let mut shape = SchemaShape {
            truncated: f.truncated,
            ..SchemaShape::default()
        };
        for (name, types) in &f.properties {
            shape.insert_property(name, types.iter().map(String::as_str).collect());
        }
        for name in &f.required {
            shape.insert_required(name);
        }
        shape
    }
}

impl Serialize for SchemaShape {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        struct Properties<'a>(&'a [ShapeProperty]);
        impl Serialize for Properties<'_> {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.collect_map(
                    self.0
                        .iter()
                        .map(|p| (&*p.name, p.types.names().collect::<Vec<_>>())),
                )
            }
        }
        let mut st = s.serialize_struct("SchemaShape", 2 + usize::from(self.truncated))?;
        st.serialize_field("properties", &Properties(&self.properties))?;
        st.serialize_field("required", &self.required())?;
        if self.truncated {
            st.serialize_field("truncated", &true)?;
        }
        st.end()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn types_narrow_as_json_schema_means() {
        let t = |names: &[&str]| names.iter().copied().collect::<JsonTypes>();
        assert!(t(&["number"]).narrowed_by(t(&["integer"])));
        assert!(!t(&["integer"]).narrowed_by(t(&["number"])));
        assert!(JsonTypes::ANY.narrowed_by(t(&["string"])));
        assert!(!t(&["string"]).narrowed_by(JsonTypes::ANY));
        assert!(!t(&["string"]).narrowed_by(t(&["string", "null"])));
        assert!(t(&["string", "null"]).narrowed_by(t(&["string"])));
        assert_eq!(t(&["string", "null"]).label(), "null|string");
        assert_eq!(t(&["uuid"]).label(), "other");
        assert_eq!(JsonTypes::ANY.label(), "any");
    }

    #[test]
    fn required_names_stay_with_their_property_whatever_the_order() {
        let mut s = SchemaShape::default();
        s.insert_required("b");
        s.insert_required("ghost");
        s.insert_property("b", JsonTypes::ANY);
        s.insert_property("a", ["string"].into_iter().collect());
        assert_eq!(s.required(), ["b", "ghost"]);
        assert!(s.requires("b") && s.requires("ghost") && !s.requires("a"));
        assert_eq!(s.properties().len(), 2);
        assert_eq!(s.required_elsewhere.len(), 1);
    }

    #[test]
    fn the_file_format_is_unchanged() {
        let text = r#"{"properties":{"n":["integer","null"],"q":["string"]},"required":["q","z"]}"#;
        let s: SchemaShape = serde_json::from_str(text).unwrap();
        assert_eq!(serde_json::to_string(&s).unwrap(), text);
        assert!(s.requires("z") && s.property("z").is_none());
    }
}
