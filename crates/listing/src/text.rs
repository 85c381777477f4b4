//! The one cut and the one escape for text a server controls.
//!
//! A server decides how long its names, messages and fields are and which
//! bytes they hold. Whatever of them we keep is cut here to a documented
//! byte length (docs/reliability.md, "Byte budgets"), and whatever we print
//! to a terminal or log is escaped here, so a name cannot clear a screen,
//! retitle a terminal, forge a line of our output or pass for another
//! name.

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

/// Characters that show as nothing, or as a plain space, or change how the
/// text around them shows: Unicode's format characters (general category
/// Cf: the soft hyphen, zero-width spaces and joiners, the bidirectional
/// marks, embeddings, overrides and isolates, word joiners and invisible
/// operators, the byte order mark, interlinear annotation, tag characters,
/// and the other scripts' format marks), the line and paragraph separators
/// (Zl, Zp), spaces other than U+0020 (Zs), and their invisible friends of
/// other categories: the combining grapheme joiner, Hangul and Khmer
/// fillers, Mongolian free variation selectors, and variation selectors.
/// Variation selectors are escaped too, although an emoji's presentation
/// selector is legitimate text: a selector after a letter shows as nothing,
/// and names we show must not pass for other names. Sorted, inclusive.
const INVISIBLE: &[(u32, u32)] = &[
    (0x00A0, 0x00A0),
    (0x00AD, 0x00AD),
    (0x034F, 0x034F),
    (0x0600, 0x0605),
    (0x061C, 0x061C),
    (0x06DD, 0x06DD),
    (0x070F, 0x070F),
    (0x0890, 0x0891),
    (0x08E2, 0x08E2),
    (0x115F, 0x1160),
    (0x1680, 0x1680),
    (0x17B4, 0x17B5),
    (0x180B, 0x180F),
    (0x2000, 0x200F),
    (0x2028, 0x202F),
    (0x205F, 0x206F),
    (0x3000, 0x3000),
    (0x3164, 0x3164),
    (0xFE00, 0xFE0F),
    (0xFEFF, 0xFEFF),
    (0xFFA0, 0xFFA0),
    (0xFFF9, 0xFFFB),
    (0x110BD, 0x110BD),
    (0x110CD, 0x110CD),
    (0x13430, 0x1343F),
    (0x1BCA0, 0x1BCA3),
    (0x1D173, 0x1D17A),
    (0xE0000, 0xE007F),
    (0xE0100, 0xE01EF),
];

/// Whether `c` shows as nothing or as something else ([`INVISIBLE`]): a
/// name holding one could pass for another name.
pub fn is_invisible(c: char) -> bool {
    let c = c as u32;
    INVISIBLE
        .binary_search_by(|&(first, last)| {
            if last < c {
                std::cmp::Ordering::Less
            } else if first > c {
                std::cmp::Ordering::Greater
            } else {
                std::cmp::Ordering::Equal
            }
        })
        .is_ok()
}

/// Whether [`escape`] shows `c` escaped: a control or an invisible
/// character (the backslash, escaped too, is not hidden).
pub fn is_hidden(c: char) -> bool {
    is_control(c) || is_invisible(c)
}

/// `text` as shown to people: every control character shown instead of
/// acted on, every invisible character ([`is_invisible`]) made visible, and
/// the backslash escaped, so two different texts never show alike:
/// `\\` for a backslash, `\n`, `\r`, `\t`, `\xHH` for the rest of C0 and
/// DEL, `\u{HHHH}` for C1 and the invisible characters. For terminals, log
/// lines, labels and pages: a field can then neither move the cursor, nor
/// start a line of its own, nor pass for another name (`m\u{200b}cp` is
/// not `mcp`, `a\\nb` is not `a\nb`). Homoglyphs of other scripts (a
/// Cyrillic `а` for a Latin `a`) are letters, and are shown as they are.
pub fn escape(text: &str) -> Cow<'_, str> {
    if !text.chars().any(|c| c == '\\' || is_hidden(c)) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x80 && is_control(c) => {
                let _ = write!(out, "\\x{:02x}", c as u32);
            }
            c if is_hidden(c) => {
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
    escape(&echo(text)).into_owned()
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
        let shown = escape(hostile);
        assert!(!shown.chars().any(is_control), "{shown:?}");
        assert_eq!(
            shown,
            "a\\x1b[2J\\x1b]0;title\\x07\\x00b\\r\\n99 pass\\x7f\\u{009b}c\\té"
        );
        assert!(matches!(escape("plain é → ✓ 日本"), Cow::Borrowed(_)));
    }

    #[test]
    fn invisible_and_bidirectional_characters_are_made_visible() {
        assert_eq!(escape("m\u{200b}cp"), "m\\u{200b}cp");
        assert_eq!(escape("txt.\u{202e}exe"), "txt.\\u{202e}exe");
        assert_eq!(escape("\u{feff}a\u{e0041}"), "\\u{feff}a\\u{e0041}");
        for c in [
            '\u{00a0}',
            '\u{00ad}',
            '\u{034f}',
            '\u{061c}',
            '\u{115f}',
            '\u{180e}',
            '\u{2000}',
            '\u{200d}',
            '\u{2028}',
            '\u{2029}',
            '\u{202a}',
            '\u{2060}',
            '\u{2066}',
            '\u{206f}',
            '\u{3000}',
            '\u{3164}',
            '\u{fe0f}',
            '\u{fff9}',
            '\u{e0001}',
            '\u{e007f}',
            '\u{e01ef}',
        ] {
            assert!(is_invisible(c), "{:x}", c as u32);
        }
        for c in [
            'a',
            ' ',
            '-',
            'é',
            '\u{0301}',
            '\u{2010}',
            '\u{2070}',
            '✓',
            '\u{e0080}',
        ] {
            assert!(!is_invisible(c), "{:x}", c as u32);
        }
        assert!(INVISIBLE.windows(2).all(|w| w[0].1 < w[1].0));
        assert!(INVISIBLE.iter().all(|(first, last)| first <= last));
    }

    /// The one reading of an escaped text: what `escape` was given.
    fn unescape(shown: &str) -> String {
        let mut out = String::new();
        let mut chars = shown.chars();
        while let Some(c) = chars.next() {
            if c != '\\' {
                out.push(c);
                continue;
            }
            match chars.next() {
                Some('\\') => out.push('\\'),
                Some('n') => out.push('\n'),
                Some('r') => out.push('\r'),
                Some('t') => out.push('\t'),
                Some('x') => {
                    let hex: String = chars.by_ref().take(2).collect();
                    out.push(char::from(u8::from_str_radix(&hex, 16).unwrap()));
                }
                Some('u') => {
                    let hex: String = chars.by_ref().skip(1).take_while(|&c| c != '}').collect();
                    out.push(char::from_u32(u32::from_str_radix(&hex, 16).unwrap()).unwrap());
                }
                other => panic!("a lone backslash before {other:?} in {shown:?}"),
            }
        }
        out
    }

    #[test]
    fn escaping_is_one_to_one() {
        let texts = [
            "a\\nb",
            "a\nb",
            "a\\\nb",
            "\\x1b",
            "\u{1b}",
            "\\u{200b}",
            "\u{200b}",
            "C:\\dir\\",
            "\\",
            "\\\\",
            "mcp",
            "m\u{200b}cp",
            "\u{202e}pcm",
        ];
        let shown: std::collections::HashSet<String> =
            texts.iter().map(|t| escape(t).into_owned()).collect();
        assert_eq!(shown.len(), texts.len(), "{shown:?}");
        for text in texts {
            assert_eq!(unescape(&escape(text)), text);
        }
        assert_eq!(escape("a\\nb"), "a\\\\nb");
        assert_eq!(escape("a\nb"), "a\\nb");
    }

    #[test]
    fn shown_cuts_then_escapes() {
        let s = shown(&"\u{1b}".repeat(10_000));
        assert!(!s.contains('\u{1b}'));
        assert!(s.len() <= MAX_ECHO_BYTES * 4);
    }
}
