//! The YAML parser's messages, made safe to log and to answer `/-/reload`
//! with: they name the key and the expected type, never the value written
//! (a header value, a token pasted in the wrong place), and are short.

/// Longest error message, in bytes; longer ones are cut with `…`. Room for
/// the parser's list of accepted keys (ours, bounded); what the file brings
/// in is cut much shorter.
pub const MAX_MESSAGE_BYTES: usize = 4096;
/// Longest unknown key quoted back.
const MAX_KEY_BYTES: usize = 64;

/// serde's value descriptions (`string "..."`, `integer `5``, ...) replaced
/// by the value's type, unknown variants and fields without the text, and
/// the result capped.
pub fn sanitize(message: &str) -> String {
    let mut out = message.to_string();
    for marker in ["invalid type: ", "invalid value: ", "invalid length "] {
        if let Some(start) = out.find(marker) {
            let after = start + marker.len();
            // The value's description ends where serde's ", expected" begins;
            // the last one is serde's (a quoted value may contain the words).
            let tail = match out[after..].rfind(", expected ") {
                Some(i) => out[after + i..].to_string(),
                None => String::new(),
            };
            let kind = value_kind(&out[after..]);
            out = format!("{}{marker}{kind}{tail}", &out[..start]);
        }
    }
    // The value is never quoted back; the accepted one nearest to it may be.
    if let Some(start) = out.find("unknown variant ") {
        let after = start + "unknown variant ".len();
        if let Some(i) = out[after..].rfind(", expected ") {
            let written = out[after..after + i].trim_matches('`');
            let expected = &out[after + i..];
            let hint = did_you_mean(written, expected);
            out = format!("{}unknown value{hint}{expected}", &out[..start]);
        }
    }
    // A key is shown (it says where the problem is), but not at any length;
    // with a near miss, the key meant instead of every key accepted.
    if let Some(start) = out.find("unknown field `") {
        let after = start + "unknown field `".len();
        if let Some(i) = out[after..].rfind("`, expected ") {
            let key = &out[after..after + i];
            let expected = &out[after + i + 1..];
            let hint = moved_hint(key, expected).unwrap_or_else(|| did_you_mean(key, expected));
            let shown = if key.len() > MAX_KEY_BYTES {
                format!("{}…", mcp_listing::text::prefix(key, MAX_KEY_BYTES))
            } else {
                key.to_string()
            };
            out = if hint.is_empty() {
                format!("{}unknown field `{shown}`{expected}", &out[..start])
            } else {
                format!("{}unknown field `{shown}`{hint}", &out[..start])
            };
        }
    }
    cap(&out)
}

/// ` (it moved under `limits:` ...)` for a key an older file kept flat.
fn moved_hint(key: &str, expected: &str) -> Option<String> {
    let names = expected_names(expected);
    super::suggest::moved_to(key, &names).map(|block| {
        format!(" (it moved under `{block}:`; see docs/configuration.md, \"Changelog\")")
    })
}

/// The names of serde's `expected one of `a`, `b`` list.
fn expected_names(expected: &str) -> Vec<&str> {
    expected.split('`').skip(1).step_by(2).collect()
}

/// ` (did you mean `NAME`?)` for the name of serde's `expected one of `a`,
/// `b`` list nearest to `written`; empty when none is near.
fn did_you_mean(written: &str, expected: &str) -> String {
    match super::suggest::closest(written, &expected_names(expected)) {
        Some(name) => format!(" (did you mean `{name}`?)"),
        None => String::new(),
    }
}

/// `message` cut to [`MAX_MESSAGE_BYTES`] at a character boundary (the
/// one cut, `mcp_listing::text`).
pub fn cap(message: &str) -> String {
    mcp_listing::text::cut(message, MAX_MESSAGE_BYTES).into_owned()
}

/// The type of a serde `Unexpected` description, without its value.
fn value_kind(description: &str) -> &'static str {
    const KINDS: [(&str, &str); 12] = [
        ("string", "a string"),
        ("integer", "an integer"),
        ("floating point", "a number"),
        ("boolean", "a boolean"),
        ("char", "a character"),
        ("byte array", "bytes"),
        ("unit variant", "an enum variant"),
        ("unit", "null"),
        ("map", "a mapping"),
        ("sequence", "a sequence"),
        ("newtype", "a value"),
        ("enum", "an enum"),
    ];
    KINDS
        .iter()
        .find(|(prefix, _)| description.starts_with(prefix))
        .map_or("a value", |(_, kind)| kind)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_never_survive() {
        let m = sanitize(
            "targets[0].headers: invalid type: string \"X-Api-Key: s3cr3t, expected x\", expected a mapping of header names",
        );
        assert_eq!(
            m,
            "targets[0].headers: invalid type: a string, expected a mapping of header names"
        );
        let m = sanitize(
            "targets[0].transport: unknown variant `tok-123`, expected one of `auto`, `sse`",
        );
        assert_eq!(
            m,
            "targets[0].transport: unknown value, expected one of `auto`, `sse`"
        );
        let key = "k".repeat(500);
        let m = sanitize(&format!("unknown field `{key}`, expected `a` or `b`"));
        assert!(!m.contains("did you mean"), "{m}");
        assert!(
            m.len() < 120 && m.ends_with("`, expected `a` or `b`"),
            "{m}"
        );
        let m = sanitize("global.max_pages: invalid value: integer `-5`, expected u32");
        assert_eq!(
            m,
            "global.max_pages: invalid value: an integer, expected u32"
        );
    }

    #[test]
    fn near_misses_get_a_suggestion() {
        let m = sanitize(
            "targets[0]: unknown field `timout`, expected one of `name`, `url`, `timeout`, `page_timeout`",
        );
        assert_eq!(
            m,
            "targets[0]: unknown field `timout` (did you mean `timeout`?)"
        );
        let m = sanitize(
            "targets[0]: unknown field `url`, expected one of `name`, `http`, `stdio`, `limits`",
        );
        assert_eq!(
            m,
            "targets[0]: unknown field `url` (it moved under `http:`; see docs/configuration.md, \"Changelog\")"
        );
        let m = sanitize("global: unknown field `colour`, expected `timeout` or `jitter`");
        assert_eq!(
            m,
            "global: unknown field `colour`, expected `timeout` or `jitter`"
        );
        let m = sanitize(
            "targets[0].transport: unknown variant `stremable_http`, expected one of `auto`, `streamable_http`, `sse`",
        );
        assert_eq!(
            m,
            "targets[0].transport: unknown value (did you mean `streamable_http`?), expected one of `auto`, `streamable_http`, `sse`"
        );
    }

    #[test]
    fn long_messages_are_capped() {
        let m = sanitize(&"é".repeat(1 << 20));
        assert!(m.len() <= MAX_MESSAGE_BYTES + '…'.len_utf8(), "{}", m.len());
    }
}
