//! The one cut and the one escape for text a server controls.
//!
//! A server decides how long its names, messages and fields are and which
//! bytes they hold. Whatever of them we keep is cut here to a documented
//! byte length (docs/reliability.md, "Byte budgets"), and whatever we print
//! to a terminal or log is escaped here, so a name cannot clear a screen,
//! retitle a terminal or forge a line of our output.

use sha2::{Digest, Sha256};
use std::borrow::Cow;
use std::fmt::Write as _;

/// Longest item name (tool, prompt, resource URI, template) kept, in bytes.
/// A longer one keeps its start, the marker and a hash of the whole name, so
/// two long names that share their first bytes stay apart.
pub const MAX_NAME_BYTES: usize = 256;

/// Longest server-supplied string echoed in a message, detail, evidence
/// line or label (error messages, `resultType`, server name and version),
/// in bytes.
pub const MAX_ECHO_BYTES: usize = 512;

/// What a cut leaves where the rest was: visible, and one character.
pub const CUT_MARK: &str = "…";

/// Hex digits of the whole name's hash a cut name ends with.
const NAME_HASH_HEX: usize = 8;

/// `text` cut to at most `max` bytes at a character boundary, the cut
/// marked with [`CUT_MARK`] (counted in `max`). Unchanged when it fits.
pub fn cut(text: &str, max: usize) -> Cow<'_, str> {
    if text.len() <= max {
        return Cow::Borrowed(text);
    }
    if max < CUT_MARK.len() {
        return Cow::Borrowed(prefix(text, max));
    }
    let keep = prefix(text, max - CUT_MARK.len());
    Cow::Owned(format!("{keep}{CUT_MARK}"))
}

/// A server string as an echo in a message: [`cut`] to [`MAX_ECHO_BYTES`].
pub fn echo(text: &str) -> Cow<'_, str> {
    cut(text, MAX_ECHO_BYTES)
}

/// An item name as kept: unchanged up to [`MAX_NAME_BYTES`]; a longer one
/// becomes its start, [`CUT_MARK`] and 8 hex digits of the SHA-256 of the
/// whole name, [`MAX_NAME_BYTES`] at most. The same name always gives the
/// same kept name (baselines compare across polls); two names that differ
/// only past the cut stay apart unless their 32-bit hashes collide.
pub fn name(text: &str) -> Cow<'_, str> {
    if text.len() <= MAX_NAME_BYTES {
        return Cow::Borrowed(text);
    }
    let digest = Sha256::digest(text.as_bytes());
    let hash = hex::encode(&digest[..NAME_HASH_HEX / 2]);
    let keep = prefix(text, MAX_NAME_BYTES - CUT_MARK.len() - NAME_HASH_HEX);
    Cow::Owned(format!("{keep}{CUT_MARK}{hash}"))
}

/// The longest prefix of `text` of at most `max` bytes ending at a
/// character boundary.
pub fn prefix(text: &str, max: usize) -> &str {
    let mut end = max.min(text.len());
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

/// Whether a terminal would act on `c` rather than show it: C0 (tab
/// included), DEL and C1.
pub fn is_control(c: char) -> bool {
    c.is_control()
}

/// `text` with every control character shown instead of acted on: `\n`,
/// `\r`, `\t`, `\\` for a backslash before one, and `\xHH` (C0, DEL) or
/// `\u{HHHH}` (C1) for the rest. For terminals and log lines: a field can
/// then neither move the cursor nor start a line of its own.
pub fn escape_controls(text: &str) -> Cow<'_, str> {
    if !text.chars().any(is_control) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        match c {
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x80 && is_control(c) => {
                let _ = write!(out, "\\x{:02x}", c as u32);
            }
            c if is_control(c) => {
                let _ = write!(out, "\\u{{{:04x}}}", c as u32);
            }
            c => out.push(c),
        }
    }
    Cow::Owned(out)
}

/// A server string for a terminal or log line: cut to
/// [`MAX_ECHO_BYTES`], then escaped.
pub fn shown(text: &str) -> String {
    escape_controls(&echo(text)).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cut_keeps_short_text_and_marks_a_cut_at_a_char_boundary() {
        assert_eq!(cut("short", 10), "short");
        let long = "é".repeat(100); // 200 bytes
        let c = cut(&long, 11);
        assert!(c.len() <= 11, "{c}");
        assert!(c.ends_with(CUT_MARK));
        assert_eq!(c, format!("{}{CUT_MARK}", "é".repeat(4)));
        assert_eq!(cut("abcdef", 2), "ab");
    }

    #[test]
    fn echo_is_bounded_whatever_the_input() {
        let huge = "x".repeat(5_000_000);
        assert!(echo(&huge).len() <= MAX_ECHO_BYTES);
    }

    #[test]
    fn long_names_are_bounded_stable_and_stay_apart() {
        let a = format!("{}A", "n".repeat(60_000));
        let b = format!("{}B", "n".repeat(60_000));
        let (ka, kb) = (name(&a), name(&b));
        assert!(ka.len() <= MAX_NAME_BYTES && kb.len() <= MAX_NAME_BYTES);
        assert_ne!(ka, kb);
        assert_eq!(ka, name(&a));
        assert!(ka.contains(CUT_MARK));
        let exact = "x".repeat(MAX_NAME_BYTES);
        assert_eq!(name(&exact), exact.as_str());
        let multibyte = "ü".repeat(MAX_NAME_BYTES);
        assert!(name(&multibyte).len() <= MAX_NAME_BYTES);
    }

    #[test]
    fn escape_shows_every_control_and_nothing_else() {
        let hostile = "a\u{1b}[2J\u{1b}]0;title\u{7}\0b\r\n99 pass\u{7f}\u{9b}c\té";
        let shown = escape_controls(hostile);
        assert!(!shown.chars().any(is_control), "{shown:?}");
        assert_eq!(
            shown,
            "a\\x1b[2J\\x1b]0;title\\x07\\x00b\\r\\n99 pass\\x7f\\u{009b}c\\té"
        );
        assert!(matches!(escape_controls("plain é"), Cow::Borrowed(_)));
    }

    #[test]
    fn shown_cuts_then_escapes() {
        let s = shown(&"\u{1b}".repeat(10_000));
        assert!(!s.contains('\u{1b}'));
        assert!(s.len() <= MAX_ECHO_BYTES * 4);
    }
}
