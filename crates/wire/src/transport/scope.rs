//! Where a target's requests, and so its credentials, may go. The target
//! URL is checked where the target is made; a server can name more URLs
//! later (the legacy SSE `endpoint` event, a redirect). Every one of them
//! is held to the target's scope before a byte is sent: the same origin,
//! and then either the target URL's own directory (a configured target) or
//! the application's allow list (a module's `allow`). The wire crate knows
//! no configuration: the application hands it the "does this URL match"
//! call as a [`UrlAllow`].

use std::fmt;
use std::sync::Arc;
use url::Url;

/// The application's allow list: does `url` match?
pub trait UrlAllow: Send + Sync {
    fn allows(&self, url: &Url) -> bool;
}

/// Which URLs besides the target URL may get the target's requests.
#[derive(Clone, Default)]
pub enum CredentialScope {
    /// A configured target: its origin, under the directory of its URL's
    /// path (`https://h/mcp/sse` admits `/mcp/messages`, not `/admin`).
    #[default]
    UnderTarget,
    /// A target bound to an allow list (discovered, or probed through a
    /// module): its origin, and URLs the list allows.
    Allowed(Arc<dyn UrlAllow>),
}

impl fmt::Debug for CredentialScope {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            CredentialScope::UnderTarget => "UnderTarget",
            CredentialScope::Allowed(_) => "Allowed",
        })
    }
}

/// Where a refused URL came from: the error's detail.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NamedBy {
    /// The legacy SSE `endpoint` event (where messages are POSTed).
    SseEndpoint,
    /// A redirect's `Location`.
    Redirect,
    /// A request's own URL (refused by the client itself: a check that
    /// should already have happened where the URL was learnt).
    Request,
}

impl NamedBy {
    pub fn describe(self) -> &'static str {
        match self {
            NamedBy::SseEndpoint => "the SSE endpoint event",
            NamedBy::Redirect => "a redirect",
            NamedBy::Request => "a request",
        }
    }
}

/// A scope bound to one target URL: what the HTTP client checks before
/// every request it sends.
#[derive(Clone)]
pub struct BoundScope {
    origin: url::Origin,
    rule: Rule,
}

#[derive(Clone)]
enum Rule {
    /// Path prefix, ending in `/`.
    Under(String),
    Allowed(Arc<dyn UrlAllow>),
}

impl BoundScope {
    pub fn new(target: &Url, scope: &CredentialScope) -> BoundScope {
        let rule = match scope {
            CredentialScope::UnderTarget => Rule::Under(directory(target.path()).to_string()),
            CredentialScope::Allowed(allow) => Rule::Allowed(allow.clone()),
        };
        BoundScope {
            origin: target.origin(),
            rule,
        }
    }

    /// Whether `url` may get this target's requests. A URL with user info
    /// never may: it would carry credentials of its own.
    pub fn admits(&self, url: &Url) -> bool {
        if url.origin() != self.origin || !url.username().is_empty() || url.password().is_some() {
            return false;
        }
        match &self.rule {
            Rule::Under(prefix) => url
                .path()
                .strip_prefix(prefix.as_str())
                .is_some_and(|rest| !hides_a_separator(rest)),
            Rule::Allowed(allow) => allow.allows(url),
        }
    }
}

/// An encoded `/` or backslash: a server that decodes them may see another
/// path than the one checked (`/mcp/..%2fadmin`). Encoded dots need no
/// check: URL parsing already resolves `%2e%2e` segments.
fn hides_a_separator(path: &str) -> bool {
    path.as_bytes().windows(3).any(|w| {
        w[0] == b'%'
            && matches!(
                (w[1], w[2].to_ascii_lowercase()),
                (b'2', b'f') | (b'5', b'c')
            )
    })
}

/// The path up to and including its last `/`: the directory a URL names.
fn directory(path: &str) -> &str {
    match path.rfind('/') {
        Some(i) => &path[..=i],
        None => "/",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn url(s: &str) -> Url {
        Url::parse(s).unwrap()
    }

    fn admits(target: &str, scope: &CredentialScope, other: &str) -> bool {
        BoundScope::new(&url(target), scope).admits(&url(other))
    }

    #[test]
    fn a_configured_target_admits_its_own_directory_only() {
        let s = CredentialScope::UnderTarget;
        assert!(admits(
            "http://h/mcp/sse",
            &s,
            "http://h/mcp/messages?sessionId=1"
        ));
        assert!(admits("http://h/mcp/sse", &s, "http://h/mcp/sse"));
        assert!(admits("http://h/sse", &s, "http://h/messages/"));
        assert!(admits("http://h/mcp", &s, "http://h/mcp/"));
        assert!(!admits("http://h/mcp/sse", &s, "http://h/internal/admin/x"));
        assert!(!admits("http://h/mcp/sse", &s, "http://h/mcpx/messages"));
        assert!(!admits("http://h/mcp/sse", &s, "http://h:81/mcp/messages"));
        assert!(!admits("http://h/mcp/sse", &s, "https://h/mcp/messages"));
        assert!(!admits("http://h/mcp/sse", &s, "http://u:p@h/mcp/messages"));
        assert!(!admits("http://h/mcp/sse", &s, "http://evil/mcp/messages"));
        assert!(!admits(
            "http://h/mcp/sse",
            &s,
            "http://h/mcp/..%2Finternal"
        ));
        assert!(!admits(
            "http://h/mcp/sse",
            &s,
            "http://h/mcp/..%5cinternal"
        ));
        assert!(!admits(
            "http://h/mcp/sse",
            &s,
            "http://h/mcp/%2e%2e/internal"
        ));
        // The target's own encoded separators are its business.
        assert!(admits("http://h/o%2Fr/sse", &s, "http://h/o%2Fr/messages"));
        // Dot segments are resolved when the URL is parsed.
        assert!(!admits("http://h/mcp/sse", &s, "http://h/mcp/../internal"));
    }

    struct Prefix(&'static str);

    impl UrlAllow for Prefix {
        fn allows(&self, url: &Url) -> bool {
            url.path().starts_with(self.0)
        }
    }

    #[test]
    fn an_allow_list_decides_within_the_origin() {
        let s = CredentialScope::Allowed(Arc::new(Prefix("/a/")));
        assert!(admits("http://h/a/sse", &s, "http://h/a/messages"));
        assert!(!admits("http://h/a/sse", &s, "http://h/internal/admin"));
        // Another origin is refused even when the list would allow it.
        assert!(!admits("http://h/a/sse", &s, "http://other/a/messages"));
    }
}
