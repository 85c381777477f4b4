//! JSON as we print and serve it (`probe --json`, `check --json`,
//! `discover --json`, the `/api` answers, the tap's report file):
//! serde_json's, except that every character [`text::is_hidden`] names is
//! written as a `\uXXXX` escape (a surrogate pair past U+FFFF). serde_json
//! escapes only C0; it writes DEL, C1 (U+009B is a terminal's CSI) and the
//! invisible characters (U+200B, U+202E, …) as they are, so a name in JSON
//! printed to a terminal could act on it or pass for another. The value is
//! the same: any JSON reader decodes the escapes back to the text.

use crate::text;
use serde::Serialize;
use serde_json::ser::{CompactFormatter, Formatter, PrettyFormatter};
use std::io;

/// `value` as compact JSON, hidden characters escaped.
pub fn to_vec<T: Serialize + ?Sized>(value: &T) -> serde_json::Result<Vec<u8>> {
    write(value, Shown(CompactFormatter))
}

/// `value` as compact JSON text, hidden characters escaped.
pub fn to_string<T: Serialize + ?Sized>(value: &T) -> serde_json::Result<String> {
    to_vec(value).map(utf8)
}

/// `value` as indented JSON text, hidden characters escaped.
pub fn to_string_pretty<T: Serialize + ?Sized>(value: &T) -> serde_json::Result<String> {
    write(value, Shown(PrettyFormatter::new())).map(utf8)
}

fn write<T: Serialize + ?Sized, F: Formatter>(
    value: &T,
    formatter: Shown<F>,
) -> serde_json::Result<Vec<u8>> {
    let mut out = Vec::with_capacity(128);
    value.serialize(&mut serde_json::Serializer::with_formatter(
        &mut out, formatter,
    ))?;
    Ok(out)
}

fn utf8(bytes: Vec<u8>) -> String {
    // serde_json writes UTF-8 (strings are `str`, escapes ASCII), and so do
    // we; a lossless conversion then, never a replacement.
    String::from_utf8(bytes).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
}

/// `c` as JSON's `\uXXXX` escape, or two for a character past U+FFFF.
pub fn unicode_escape(c: char) -> String {
    let mut units = [0u16; 2];
    c.encode_utf16(&mut units)
        .iter()
        .map(|unit| format!("\\u{unit:04x}"))
        .collect()
}

/// A formatter as `F`, escaping hidden characters in strings and keys.
struct Shown<F>(F);

/// `Formatter` methods of `Shown<F>` that do what `F`'s do: each takes the
/// writer and the arguments named.
macro_rules! hand_on {
    ($($method:ident($($arg:ident: $ty:ty)?);)+) => {
        $(
            fn $method<W: ?Sized + io::Write>(&mut self, w: &mut W $(, $arg: $ty)?) -> io::Result<()> {
                self.0.$method(w $(, $arg)?)
            }
        )+
    };
}

impl<F: Formatter> Formatter for Shown<F> {
    fn write_string_fragment<W: ?Sized + io::Write>(
        &mut self,
        writer: &mut W,
        fragment: &str,
    ) -> io::Result<()> {
        let mut start = 0;
        for (at, c) in fragment.char_indices() {
            if text::is_hidden(c) {
                self.0.write_string_fragment(writer, &fragment[start..at])?;
                writer.write_all(unicode_escape(c).as_bytes())?;
                start = at + c.len_utf8();
            }
        }
        self.0.write_string_fragment(writer, &fragment[start..])
    }

    // The layout is `F`'s: every method that writes it is handed on.
    hand_on! {
        begin_array(); end_array();
        begin_array_value(first: bool); end_array_value();
        begin_object(); end_object();
        begin_object_key(first: bool); end_object_key();
        begin_object_value(); end_object_value();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{json, Value};

    #[test]
    fn hidden_characters_are_escaped_and_the_value_is_the_same() {
        let value = json!({
            "name": "a\u{1b}[2J\u{9b}31m\u{7f}m\u{200b}cp\u{202e}\u{e0041}é✓\\\"",
            "k\u{9b}ey": [1, "plain"],
        });
        for text in [
            to_string(&value).unwrap(),
            to_string_pretty(&value).unwrap(),
        ] {
            let raw = |c: char| c != '\n' && text::is_hidden(c);
            assert!(!text.chars().any(raw), "{text:?}");
            assert!(
                text.contains(r#"\u001b[2J\u009b31m\u007fm\u200bcp\u202e\udb40\udc41é✓\\\""#),
                "{text}"
            );
            assert!(text.contains(r#""k\u009bey""#), "{text}");
            let back: Value = serde_json::from_str(&text).unwrap();
            assert_eq!(back, value);
        }
        assert_eq!(
            to_string_pretty(&value).unwrap().lines().count(),
            serde_json::to_string_pretty(&value)
                .unwrap()
                .lines()
                .count(),
            "the same layout"
        );
        assert_eq!(
            to_string(&json!({"a": [1, "b"]})).unwrap(),
            r#"{"a":[1,"b"]}"#
        );
    }
}
