//! Finds where a node sits in the YAML source, for problems found after
//! parsing (duplicate names, unknown references, ...).
//!
//! It re-reads the text with the same YAML parser, walks down `path`, and
//! raises a marker error at the node: the parser then attaches that node's
//! line and column to the error, exactly as it does for its own errors. So
//! positions agree with parse errors, and flow style, quoting, anchors and
//! comments need no special handling. Only called on the error path.

use serde::de::{self, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use std::fmt;

/// One step down the document.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Seg {
    Key(String),
    Index(usize),
}

impl From<&str> for Seg {
    fn from(key: &str) -> Seg {
        Seg::Key(key.to_string())
    }
}

impl From<&String> for Seg {
    fn from(key: &String) -> Seg {
        Seg::Key(key.clone())
    }
}

impl From<usize> for Seg {
    fn from(index: usize) -> Seg {
        Seg::Index(index)
    }
}

/// Build a path: `yaml_path!["targets", 2, "name"]`.
macro_rules! yaml_path {
    ($($seg:expr),* $(,)?) => { [$($crate::config::locate::Seg::from($seg)),*] };
}
pub(super) use yaml_path;

/// Point at a mapping entry's key or at the node itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum At {
    Key,
    Value,
}

/// Unlikely to appear in any real error message.
const MARKER: &str = "\u{1}mcp-exporter-locate\u{1}";

/// 1-based `(line, column)` of the node at `path` (of its key with
/// [`At::Key`]; the last segment must then be a key), or None if absent.
pub(super) fn locate(text: &str, path: &[Seg], at: At) -> Option<(usize, usize)> {
    locate_nth(text, path, at, 0)
}

/// Like [`locate`], but when the last key occurs several times in its
/// mapping, finds occurrence `nth` (0-based): for duplicate-key errors.
pub(super) fn locate_nth(text: &str, path: &[Seg], at: At, nth: usize) -> Option<(usize, usize)> {
    let de = yaml_serde::Deserializer::from_str(text);
    let err = match (Probe { path, at, nth }).deserialize(de) {
        Ok(()) => return None,
        Err(err) => err,
    };
    if !err.to_string().contains(MARKER) {
        return None;
    }
    let loc = err.location()?;
    Some((loc.line(), loc.column()))
}

/// Turn yaml_serde's error path (`targets[0].headers`, `.` for the root)
/// into segments. None for anything it cannot read unambiguously.
pub(super) fn parse_parser_path(text: &str) -> Option<Vec<Seg>> {
    if text == "." {
        return Some(Vec::new());
    }
    let mut segs = Vec::new();
    for part in text.split('.') {
        let (key, mut indexes) = match part.find('[') {
            Some(i) => part.split_at(i),
            None => (part, ""),
        };
        if key.is_empty() {
            return None;
        }
        segs.push(Seg::Key(key.to_string()));
        while let Some(rest) = indexes.strip_prefix('[') {
            let close = rest.find(']')?;
            segs.push(Seg::Index(rest[..close].parse().ok()?));
            indexes = &rest[close + 1..];
        }
        if !indexes.is_empty() {
            return None;
        }
    }
    Some(segs)
}

struct Probe<'a> {
    path: &'a [Seg],
    at: At,
    /// Matches of the last key to skip.
    nth: usize,
}

impl<'de> DeserializeSeed<'de> for Probe<'_> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

/// Every scalar either is the target (path exhausted) or a dead end.
macro_rules! scalar_visits {
    ($($name:ident: $ty:ty),*) => {$(
        fn $name<E: de::Error>(self, _: $ty) -> Result<(), E> { self.here() }
    )*};
}

impl Probe<'_> {
    fn here<E: de::Error>(&self) -> Result<(), E> {
        if self.path.is_empty() {
            Err(E::custom(MARKER))
        } else {
            Ok(())
        }
    }
}

impl<'de> Visitor<'de> for Probe<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any YAML node")
    }

    scalar_visits!(visit_bool: bool, visit_i64: i64, visit_u64: u64, visit_f64: f64, visit_str: &str);

    fn visit_unit<E: de::Error>(self) -> Result<(), E> {
        self.here()
    }

    fn visit_none<E: de::Error>(self) -> Result<(), E> {
        self.here()
    }

    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let Some((first, rest)) = self.path.split_first() else {
            return Err(de::Error::custom(MARKER));
        };
        let Seg::Key(want) = first else {
            return Ok(());
        };
        let last = rest.is_empty();
        let mut skip = if last { self.nth } else { 0 };
        loop {
            let mark_key = last && self.at == At::Key && skip == 0;
            let Some(matched) = map.next_key_seed(KeyProbe { want, mark_key })? else {
                return Ok(());
            };
            if matched && skip == 0 {
                return map.next_value_seed(Probe {
                    path: rest,
                    at: self.at,
                    nth: self.nth,
                });
            }
            if matched {
                skip -= 1;
            }
            map.next_value::<IgnoredAny>()?;
        }
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let Some((first, rest)) = self.path.split_first() else {
            return Err(de::Error::custom(MARKER));
        };
        let Seg::Index(want) = first else {
            return Ok(());
        };
        for _ in 0..*want {
            if seq.next_element::<IgnoredAny>()?.is_none() {
                return Ok(());
            }
        }
        seq.next_element_seed(Probe {
            path: rest,
            at: self.at,
            nth: self.nth,
        })?;
        Ok(())
    }
}

/// Reads one mapping key: is it the one we want? Raises the marker on it
/// when the key itself is the target.
struct KeyProbe<'a> {
    want: &'a str,
    mark_key: bool,
}

impl<'de> DeserializeSeed<'de> for KeyProbe<'_> {
    type Value = bool;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<bool, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for KeyProbe<'_> {
    type Value = bool;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a mapping key")
    }

    fn visit_str<E: de::Error>(self, key: &str) -> Result<bool, E> {
        let matched = key == self.want;
        if matched && self.mark_key {
            return Err(E::custom(MARKER));
        }
        Ok(matched)
    }

    fn visit_bool<E: de::Error>(self, v: bool) -> Result<bool, E> {
        self.visit_str(&v.to_string())
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<bool, E> {
        self.visit_str(&v.to_string())
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<bool, E> {
        self.visit_str(&v.to_string())
    }

    fn visit_f64<E: de::Error>(self, _: f64) -> Result<bool, E> {
        Ok(false)
    }

    fn visit_unit<E: de::Error>(self) -> Result<bool, E> {
        Ok(false)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const DOC: &str = "\
# comment
global:
  timeout: 60s
targets:
  - name: a
    url: https://a.invalid/
  - { name: b, command: srv }
  - name: \"c\"
    headers:
      X-Key: {env: KEY}
";

    #[test]
    fn finds_keys_and_values_in_block_and_flow_style() {
        let cases: [(Vec<Seg>, At, (usize, usize)); 8] = [
            (yaml_path!["global", "timeout"].to_vec(), At::Key, (3, 3)),
            (yaml_path!["global", "timeout"].to_vec(), At::Value, (3, 12)),
            (yaml_path!["targets", 0].to_vec(), At::Value, (5, 5)),
            (yaml_path!["targets", 0, "url"].to_vec(), At::Key, (6, 5)),
            (
                yaml_path!["targets", 1, "command"].to_vec(),
                At::Key,
                (7, 16),
            ),
            (
                yaml_path!["targets", 1, "command"].to_vec(),
                At::Value,
                (7, 25),
            ),
            (
                yaml_path!["targets", 2, "name"].to_vec(),
                At::Value,
                (8, 11),
            ),
            (
                yaml_path!["targets", 2, "headers", "X-Key"].to_vec(),
                At::Value,
                (10, 14),
            ),
        ];
        for (path, at, want) in cases {
            assert_eq!(locate(DOC, &path, at), Some(want), "{path:?} {at:?}");
        }
    }

    #[test]
    fn finds_a_repeated_key() {
        let doc = "a:\n  k: 1\n  j: 2\n  k: 3\n";
        assert_eq!(
            locate_nth(doc, &yaml_path!["a", "k"], At::Key, 0),
            Some((2, 3))
        );
        assert_eq!(
            locate_nth(doc, &yaml_path!["a", "k"], At::Key, 1),
            Some((4, 3))
        );
        assert_eq!(
            locate_nth(doc, &yaml_path!["a", "k"], At::Value, 1),
            Some((4, 6))
        );
        assert_eq!(locate_nth(doc, &yaml_path!["a", "k"], At::Key, 2), None);
    }

    /// yaml_serde's own path notation, as in its error messages.
    #[test]
    fn parses_parser_paths() {
        assert_eq!(
            parse_parser_path("targets[0].headers"),
            Some(yaml_path!["targets", 0, "headers"].to_vec())
        );
        assert_eq!(parse_parser_path("."), Some(vec![]));
        assert_eq!(parse_parser_path("web"), Some(yaml_path!["web"].to_vec()));
    }

    #[test]
    fn absent_nodes_are_none() {
        assert_eq!(
            locate(DOC, &yaml_path!["targets", 7, "name"], At::Key),
            None
        );
        assert_eq!(locate(DOC, &yaml_path!["web", "history"], At::Key), None);
        assert_eq!(
            locate(DOC, &yaml_path!["global", "timeout", "x"], At::Key),
            None
        );
    }
}
