//! `/probe` module allow patterns, compiled once at load and matched as
//! parsed parts: scheme, host (label by label), port and path prefix
//! (segment by segment). A pattern is never matched as a string against the
//! URL's text, so `http://127.0.0.*/m/` cannot match another port or
//! `127.0.0.1.evil.example`. A path prefix ends at a segment boundary:
//! `http://h/mcp` admits `/mcp` and `/mcp/x`, never `/mcpX`.
//!
//! Host labels and path segments a discovered list or a `/probe` request
//! brings are as long as their sender likes, so a `*` glob is matched in
//! time linear in the text (greedy, leftmost, no backtracking), never by
//! trying every split. A path holding an encoded separator (`%2f`, `%5c`)
//! or a dot segment (`.`, `..`, encoded or not) matches no pattern: a
//! server or proxy that decodes it would answer for another path.

use percent_encoding::percent_decode;
use url::Url;

/// A module's `allow:`, compiled: a URL is allowed when one pattern
/// matches it and its path is free of encoded separators and dot segments.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AllowList {
    patterns: Vec<AllowPattern>,
}

impl AllowList {
    pub fn new(patterns: Vec<AllowPattern>) -> AllowList {
        AllowList { patterns }
    }

    pub fn allows(&self, url: &Url) -> bool {
        !path_escapes(url.path()) && self.patterns.iter().any(|p| p.matches(url))
    }

    pub fn is_empty(&self) -> bool {
        self.patterns.is_empty()
    }
}

/// One parsed `allow` entry.
#[derive(Clone)]
pub struct AllowPattern {
    /// As written: what `Debug` shows and what equality compares (the
    /// compiled parts are a function of it).
    text: String,
    scheme: String,
    host: HostPattern,
    /// The port; the scheme's default when the pattern gives none.
    port: u16,
    path: PathPattern,
}

impl std::fmt::Debug for AllowPattern {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("AllowPattern").field(&self.text).finish()
    }
}

impl PartialEq for AllowPattern {
    fn eq(&self, other: &Self) -> bool {
        self.text == other.text
    }
}

impl Eq for AllowPattern {}

#[derive(Clone)]
enum HostPattern {
    /// An IPv6 literal (`[::1]`), compared whole.
    Ipv6(String),
    /// Lower-case labels, each a [`Glob`] (`*` is any run of characters
    /// but `.`); `subdomains`: the pattern began with a label that is
    /// exactly `*`, which stands for one or more labels.
    Labels { subdomains: bool, labels: Vec<Glob> },
}

/// A path prefix as segments between `/`: each a [`Glob`] (`*` is any run
/// of characters but `/`). `open_end`: the pattern ends in `/`, so the
/// URL's path must go on past the last segment, with anything.
#[derive(Clone)]
struct PathPattern {
    segments: Vec<Glob>,
    open_end: bool,
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
        let (host, port) = split_authority(authority)?;
        let port = match port {
            None => default_port,
            Some(p) => p
                .parse::<u16>()
                .map_err(|_| format!("port {p:?} is not a number from 0 to 65535"))?,
        };
        Ok(AllowPattern {
            text: pattern.to_string(),
            scheme,
            host: HostPattern::parse(host)?,
            port,
            path: PathPattern::parse(path),
        })
    }

    pub fn matches(&self, url: &Url) -> bool {
        self.matches_counting(url, &mut 0)
    }

    /// [`matches`](Self::matches), adding the bytes compared to `steps`.
    fn matches_counting(&self, url: &Url, steps: &mut u64) -> bool {
        if url.scheme() != self.scheme
            || !url.username().is_empty()
            || url.password().is_some()
            || url.port_or_known_default() != Some(self.port)
        {
            return false;
        }
        let host_ok = match (&self.host, url.host()) {
            (HostPattern::Ipv6(v6), Some(url::Host::Ipv6(addr))) => *v6 == format!("[{addr}]"),
            (HostPattern::Labels { .. }, Some(url::Host::Domain(d))) => {
                self.host.matches_labels(d, steps)
            }
            (HostPattern::Labels { .. }, Some(url::Host::Ipv4(addr))) => {
                self.host.matches_labels(&addr.to_string(), steps)
            }
            _ => false,
        };
        host_ok && self.path.matches(url.path(), steps)
    }
}

/// `host` (lower-cased) and the port text, if any.
fn split_authority(authority: &str) -> Result<(String, Option<&str>), String> {
    if let Some(v6) = authority.strip_prefix('[') {
        let (addr, after) = v6.split_once(']').ok_or("unclosed `[` in the host")?;
        return Ok((
            format!("[{}]", addr.to_ascii_lowercase()),
            after.strip_prefix(':'),
        ));
    }
    Ok(match authority.rsplit_once(':') {
        Some((h, p)) => (h.to_ascii_lowercase(), Some(p)),
        None => (authority.to_ascii_lowercase(), None),
    })
}

impl HostPattern {
    fn parse(host: String) -> Result<HostPattern, String> {
        if host.starts_with('[') {
            return Ok(HostPattern::Ipv6(host));
        }
        let labels: Vec<&str> = host.split('.').collect();
        if labels.iter().any(|l| l.is_empty()) {
            return Err("has an empty host label".into());
        }
        if labels.iter().all(|l| l.contains('*')) {
            return Err("has no host label without `*`, so it would match any host".into());
        }
        let subdomains = labels[0] == "*";
        let rest = if subdomains {
            &labels[1..]
        } else {
            &labels[..]
        };
        Ok(HostPattern::Labels {
            subdomains,
            labels: rest.iter().map(|l| Glob::new(l)).collect(),
        })
    }

    fn matches_labels(&self, host: &str, steps: &mut u64) -> bool {
        let HostPattern::Labels { subdomains, labels } = self else {
            return false;
        };
        let host = host.to_ascii_lowercase();
        let got: Vec<&str> = host.trim_end_matches('.').split('.').collect();
        // `*.example.com`: one or more labels, then the rest exactly.
        let fits = if *subdomains {
            got.len() > labels.len()
        } else {
            got.len() == labels.len()
        };
        fits && labels
            .iter()
            .zip(&got[got.len() - labels.len()..])
            .all(|(want, got)| want.matches(got.as_bytes(), steps))
    }
}

impl PathPattern {
    fn parse(path: &str) -> PathPattern {
        let open_end = path.ends_with('/');
        let mut segments: Vec<Glob> = path.split('/').map(Glob::new).collect();
        if open_end {
            // The empty text after the last `/`: anything may follow it.
            segments.pop();
        }
        PathPattern { segments, open_end }
    }

    /// Whether the pattern's segments match the first segments of `path`
    /// whole (and, for an open end, a `/` follows them).
    fn matches(&self, path: &str, steps: &mut u64) -> bool {
        let mut got = path.split('/');
        for want in &self.segments {
            match got.next() {
                Some(segment) if want.matches(segment.as_bytes(), steps) => {}
                _ => return false,
            }
        }
        !self.open_end || got.next().is_some()
    }
}

/// A glob whose only wildcard is `*` (any run of bytes), compiled to the
/// literal pieces between its stars and matched against a whole text in
/// linear time: the first piece is a prefix, the last a suffix, each
/// piece between is found leftmost after the one before. Taking the
/// leftmost place never loses a match (a later `*` absorbs whatever an
/// earlier choice skipped), so nothing is ever tried twice.
#[derive(Clone)]
struct Glob {
    /// `pattern.split('*')`: one piece means no star.
    pieces: Vec<Box<[u8]>>,
}

impl Glob {
    fn new(pattern: &str) -> Glob {
        Glob {
            pieces: pattern.split('*').map(|p| p.as_bytes().into()).collect(),
        }
    }

    /// Whether the glob matches all of `text`; `steps` counts the bytes
    /// compared, at most `text.len()` times the pattern's length.
    fn matches(&self, text: &[u8], steps: &mut u64) -> bool {
        let Some((first, rest)) = self.pieces.split_first() else {
            return text.is_empty();
        };
        let Some((last, middle)) = rest.split_last() else {
            *steps += first.len().min(text.len()) as u64;
            return text == &first[..];
        };
        if text.len() < first.len() + last.len() {
            return false;
        }
        *steps += (first.len() + last.len()) as u64;
        if !text.starts_with(first) || !text.ends_with(last) {
            return false;
        }
        let mut rest = &text[first.len()..text.len() - last.len()];
        for piece in middle {
            match find(rest, piece, steps) {
                Some(at) => rest = &rest[at + piece.len()..],
                None => return false,
            }
        }
        true
    }
}

/// Where `needle` first occurs in `hay`, comparing at most `hay.len()`
/// times `needle.len()` bytes (counted in `steps`).
fn find(hay: &[u8], needle: &[u8], steps: &mut u64) -> Option<usize> {
    if needle.is_empty() {
        return Some(0);
    }
    hay.windows(needle.len()).position(|window| {
        *steps += needle.len() as u64;
        window == needle
    })
}

/// Whether a URL path holds a segment that is a dot segment or hides a
/// separator once percent-decoded (also twice or three times, for a proxy
/// that decodes again): such a path is refused by every pattern.
fn path_escapes(path: &str) -> bool {
    path.split('/').any(|segment| {
        let mut decoded = segment.as_bytes().to_vec();
        for _ in 0..3 {
            if !decoded.contains(&b'%') {
                break;
            }
            decoded = percent_decode(&decoded).collect();
        }
        // `..;x` is `..` to servers that strip path parameters.
        let name = decoded.split(|&b| b == b';').next().unwrap_or_default();
        decoded.contains(&b'/') || decoded.contains(&b'\\') || name == b"." || name == b".."
    })
}

#[cfg(test)]
#[path = "allow_tests.rs"]
mod tests;
