//! `/probe` module allow patterns, matched as parsed parts: scheme, host
//! (label by label), port and path prefix. A pattern is never matched as a
//! string against the URL's text, so `http://127.0.0.*/m/` cannot match
//! another port or `127.0.0.1.evil.example`. A path prefix ends at a
//! segment boundary: `http://h/mcp` admits `/mcp` and `/mcp/x`, never
//! `/mcpX`.

use url::Url;

/// One parsed `allow` entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AllowPattern {
    scheme: String,
    /// Lower-case labels; a label may hold `*` (any run of characters but
    /// `.`); a leading label that is exactly `*` matches one or more labels.
    host: Vec<String>,
    /// An IPv6 literal (`[::1]`), compared whole.
    ipv6: Option<String>,
    /// The port; the scheme's default when the pattern gives none.
    port: u16,
    /// Path prefix; `*` matches any run of characters but `/`.
    path: String,
}

impl AllowPattern {
    /// Parse `scheme://host[:port]/path-prefix`.
    pub fn parse(pattern: &str) -> Result<AllowPattern, String> {
        let (scheme, rest) = pattern
            .split_once("://")
            .ok_or("must start with http:// or https://")?;
        let scheme = scheme.to_ascii_lowercase();
        let default_port = match scheme.as_str() {
            "http" => 80,
            "https" => 443,
            _ => return Err("must start with http:// or https://".into()),
        };
        let slash = rest
            .find('/')
            .filter(|&i| i > 0)
            .ok_or("must include a path (at least a `/` after the host)")?;
        let (authority, path) = rest.split_at(slash);
        if authority.contains('@') {
            return Err("must not contain user info".into());
        }
        let (host, port) = if let Some(v6) = authority.strip_prefix('[') {
            let (addr, after) = v6.split_once(']').ok_or("unclosed `[` in the host")?;
            (
                format!("[{}]", addr.to_ascii_lowercase()),
                after.strip_prefix(':'),
            )
        } else {
            match authority.rsplit_once(':') {
                Some((h, p)) => (h.to_ascii_lowercase(), Some(p)),
                None => (authority.to_ascii_lowercase(), None),
            }
        };
        let port = match port {
            None => default_port,
            Some(p) => p
                .parse::<u16>()
                .map_err(|_| format!("port {p:?} is not a number from 0 to 65535"))?,
        };
        let (ipv6, labels) = if host.starts_with('[') {
            (Some(host), Vec::new())
        } else {
            let labels: Vec<String> = host.split('.').map(str::to_string).collect();
            if labels.iter().any(String::is_empty) {
                return Err("has an empty host label".into());
            }
            if labels.iter().all(|l| l.contains('*')) {
                return Err("has no host label without `*`, so it would match any host".into());
            }
            (None, labels)
        };
        Ok(AllowPattern {
            scheme,
            host: labels,
            ipv6,
            port,
            path: path.to_string(),
        })
    }

    pub fn matches(&self, url: &Url) -> bool {
        if url.scheme() != self.scheme
            || !url.username().is_empty()
            || url.password().is_some()
            || url.port_or_known_default() != Some(self.port)
        {
            return false;
        }
        let host_ok = match (&self.ipv6, url.host()) {
            (Some(v6), Some(url::Host::Ipv6(addr))) => *v6 == format!("[{addr}]"),
            (None, Some(url::Host::Domain(d))) => self.host_matches(d),
            (None, Some(url::Host::Ipv4(addr))) => self.host_matches(&addr.to_string()),
            _ => false,
        };
        let open_end = self.path.ends_with('/');
        host_ok && glob_prefix_match(self.path.as_bytes(), url.path().as_bytes(), open_end)
    }

    fn host_matches(&self, host: &str) -> bool {
        let host = host.to_ascii_lowercase();
        let got: Vec<&str> = host.trim_end_matches('.').split('.').collect();
        let want = &self.host;
        if want.first().is_some_and(|l| l == "*") {
            // `*.example.com`: one or more labels, then the rest exactly.
            let rest = &want[1..];
            return got.len() > rest.len() && labels_match(rest, &got[got.len() - rest.len()..]);
        }
        got.len() == want.len() && labels_match(want, &got)
    }
}

fn labels_match(want: &[String], got: &[&str]) -> bool {
    want.iter()
        .zip(got)
        .all(|(w, g)| glob_match(w.as_bytes(), g.as_bytes()))
}

/// Whole-text match; `*` is any run of bytes (a label has no `.`).
fn glob_match(pattern: &[u8], text: &[u8]) -> bool {
    match pattern.split_first() {
        None => text.is_empty(),
        Some((b'*', rest)) => (0..=text.len()).any(|i| glob_match(rest, &text[i..])),
        Some((c, rest)) => text
            .split_first()
            .is_some_and(|(t, text_rest)| t == c && glob_match(rest, text_rest)),
    }
}

/// Does `pattern` (with `*` = any bytes but `/`) match a prefix of `text`
/// that ends at a segment boundary (the end of `text` or a `/`)? A pattern
/// ending in `/` (`open_end`) ends at one itself.
fn glob_prefix_match(pattern: &[u8], text: &[u8], open_end: bool) -> bool {
    match pattern.split_first() {
        None => open_end || text.first().is_none_or(|&c| c == b'/'),
        Some((b'*', rest)) => {
            let mut i = 0;
            loop {
                if glob_prefix_match(rest, &text[i..], open_end) {
                    return true;
                }
                if i >= text.len() || text[i] == b'/' {
                    return false;
                }
                i += 1;
            }
        }
        Some((c, rest)) => text
            .split_first()
            .is_some_and(|(t, text_rest)| t == c && glob_prefix_match(rest, text_rest, open_end)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn allows(pattern: &str, url: &str) -> bool {
        AllowPattern::parse(pattern)
            .unwrap()
            .matches(&Url::parse(url).unwrap())
    }

    #[test]
    fn parts_are_matched_separately() {
        assert!(allows("http://127.0.0.*/m/", "http://127.0.0.1/m/mcp"));
        assert!(!allows(
            "http://127.0.0.*/m/",
            "http://127.0.0.1:8080/m/mcp"
        ));
        assert!(!allows(
            "http://127.0.0.*/m/",
            "http://127.0.0.1.evil.example/m/"
        ));
        assert!(!allows("http://127.0.0.*/m/", "https://127.0.0.1/m/"));
        assert!(allows(
            "http://127.0.0.1:9000/m/",
            "http://127.0.0.1:9000/m/x"
        ));
        assert!(!allows(
            "http://127.0.0.1:9000/m/",
            "http://127.0.0.1:9001/m/x"
        ));
        assert!(!allows(
            "http://127.0.0.1:9000/m/",
            "http://127.0.0.1:9000/internal/m/"
        ));
        assert!(allows(
            "https://gw.example.invalid/",
            "https://GW.example.invalid/mcp"
        ));
        assert!(!allows(
            "https://gw.example.invalid/",
            "https://gw.example.invalid.evil/"
        ));
        assert!(allows(
            "https://*.example.invalid/",
            "https://a.b.example.invalid/mcp"
        ));
        assert!(!allows(
            "https://*.example.invalid/",
            "https://example.invalid/mcp"
        ));
        assert!(!allows(
            "https://*.example.invalid/",
            "https://evil.test/x.example.invalid/"
        ));
        assert!(allows(
            "https://gw-*.example.invalid/",
            "https://gw-3.example.invalid/"
        ));
        assert!(!allows(
            "https://gw-*.example.invalid/",
            "https://gw-3.x.example.invalid/"
        ));
        assert!(allows(
            "https://gw.example.invalid/*/mcp",
            "https://gw.example.invalid/t1/mcp"
        ));
        assert!(!allows(
            "https://gw.example.invalid/*/mcp",
            "https://gw.example.invalid/a/b/mcp"
        ));
        assert!(allows("http://[::1]:8080/m/", "http://[::1]:8080/m/x"));
        // A path prefix ends at a segment boundary.
        assert!(allows("http://h.invalid/mcp", "http://h.invalid/mcp"));
        assert!(allows("http://h.invalid/mcp", "http://h.invalid/mcp/x"));
        assert!(!allows("http://h.invalid/mcp", "http://h.invalid/mcpX"));
        assert!(!allows(
            "https://gw.example.invalid/*/mcp",
            "https://gw.example.invalid/t1/mcp-admin"
        ));
        assert!(!allows("http://[::1]:8080/m/", "http://[::2]:8080/m/x"));
        assert!(!allows(
            "https://gw.example.invalid/",
            "https://u@gw.example.invalid/"
        ));
    }

    #[test]
    fn bad_patterns_are_refused() {
        for p in [
            "ftp://a/",
            "https://a",
            "https:///x",
            "https://*/",
            "https://*.*/",
            "https://a..b/",
            "https://a:99999/",
            "https://u@a/",
        ] {
            assert!(AllowPattern::parse(p).is_err(), "{p}");
        }
    }
}
