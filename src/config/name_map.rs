//! How a gateway renames a reference (origin) target's items, per kind:
//! strip a prefix, rewrite with a regular expression, add a prefix (with an
//! optional separator). The origin's names are mapped, then compared with
//! the gateway's.

use regex::Regex;
use std::borrow::Cow;

/// Compiled-program bound for one `regex:` (bytes), so a pathological
/// pattern in a configuration cannot take the exporter's memory.
pub const REGEX_SIZE_LIMIT: usize = 256 * 1024;

/// Longest `regex:` source accepted.
pub const MAX_REGEX_LEN: usize = 1024;

/// A compiled `regex:` and its `replace:` template (`$1`, `${name}`).
#[derive(Debug, Clone)]
pub struct NameRewrite {
    pub regex: Regex,
    pub replace: String,
}

impl PartialEq for NameRewrite {
    fn eq(&self, other: &Self) -> bool {
        self.regex.as_str() == other.regex.as_str() && self.replace == other.replace
    }
}

impl Eq for NameRewrite {}

/// One kind's mapping from an origin's name to the gateway's. Steps run in
/// this order: `strip_prefix`, `rewrite`, then `prefix` + `separator`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NameMap {
    /// Removed from the origin's name when present.
    pub strip_prefix: Option<String>,
    /// Every match replaced (`replace_all`); names that do not match are
    /// left as they are.
    pub rewrite: Option<NameRewrite>,
    /// Added in front of the (rewritten) name.
    pub prefix: Option<String>,
    /// Put between `prefix` and the name (`legacy` + `_` + `tool`).
    pub separator: Option<String>,
}

impl NameMap {
    /// Only a prefix: the old `prefix:` shorthand.
    pub fn prefix(prefix: Option<String>) -> NameMap {
        NameMap {
            prefix,
            ..NameMap::default()
        }
    }

    /// The gateway's name for an origin's `name`.
    pub fn apply<'a>(&self, name: &'a str) -> Cow<'a, str> {
        let mut out: Cow<'a, str> = Cow::Borrowed(name);
        if let Some(p) = self.strip_prefix.as_deref() {
            if let Cow::Borrowed(b) = out {
                if let Some(rest) = b.strip_prefix(p) {
                    out = Cow::Borrowed(rest);
                }
            }
        }
        if let Some(r) = &self.rewrite {
            let replaced = r.regex.replace_all(&out, r.replace.as_str()).into_owned();
            out = Cow::Owned(replaced);
        }
        if self.prefix.is_some() || self.separator.is_some() {
            let prefix = self.prefix.as_deref().unwrap_or("");
            let separator = self.separator.as_deref().unwrap_or("");
            out = Cow::Owned(format!("{prefix}{separator}{out}"));
        }
        // A mapped name is kept like any other: within the same byte cut.
        if out.len() > mcp_listing::text::MAX_NAME_BYTES {
            out = Cow::Owned(mcp_listing::text::name(&out).into_owned());
        }
        out
    }

    /// Compile `pattern` within the size bounds; the error names no value.
    pub fn compile(pattern: &str) -> Result<Regex, &'static str> {
        if pattern.len() > MAX_REGEX_LEN {
            return Err("is longer than 1024 characters");
        }
        regex::RegexBuilder::new(pattern)
            .size_limit(REGEX_SIZE_LIMIT)
            .dfa_size_limit(REGEX_SIZE_LIMIT)
            .build()
            .map_err(|e| match e {
                regex::Error::CompiledTooBig(_) => "compiles to more than 256 KiB",
                _ => "is not a valid regular expression",
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rewrite(pattern: &str, replace: &str) -> Option<NameRewrite> {
        Some(NameRewrite {
            regex: NameMap::compile(pattern).unwrap(),
            replace: replace.into(),
        })
    }

    #[test]
    fn steps_run_in_order() {
        let none = NameMap::default();
        assert_eq!(none.apply("tool_00"), "tool_00");
        let prefix = NameMap::prefix(Some("legacy_".into()));
        assert_eq!(prefix.apply("tool-001"), "legacy_tool-001");
        // A ContextForge-style rename: `tool_00` → `fm-tool-00`.
        let forge = NameMap {
            rewrite: rewrite("_", "-"),
            prefix: Some("fm".into()),
            separator: Some("-".into()),
            ..NameMap::default()
        };
        assert_eq!(forge.apply("tool_00"), "fm-tool-00");
        // FastMCP mount: the namespace after the scheme.
        let uri = NameMap {
            rewrite: rewrite("^sim://(.*)$", "sim://legacy/$1"),
            ..NameMap::default()
        };
        assert_eq!(
            uri.apply("sim://resources/001"),
            "sim://legacy/resources/001"
        );
        let strip = NameMap {
            strip_prefix: Some("old_".into()),
            prefix: Some("new_".into()),
            ..NameMap::default()
        };
        assert_eq!(strip.apply("old_a"), "new_a");
        assert_eq!(strip.apply("b"), "new_b");
    }

    #[test]
    fn compile_is_bounded_and_names_no_value() {
        assert!(NameMap::compile("^a(b|c)$").is_ok());
        let e = NameMap::compile("(unclosed-secret-looking").unwrap_err();
        assert!(!e.contains("unclosed"), "{e}");
        assert_eq!(
            NameMap::compile(&"a".repeat(MAX_REGEX_LEN + 1)).unwrap_err(),
            "is longer than 1024 characters"
        );
        assert_eq!(
            NameMap::compile(r"\w{500}\w{500}").unwrap_err(),
            "compiles to more than 256 KiB"
        );
    }
}
