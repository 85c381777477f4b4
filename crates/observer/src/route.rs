//! Routes: which of the upstream's endpoints a request is for. In front of a
//! gateway one origin serves many MCP servers at different paths
//! (ContextForge's `/servers/<id>/mcp`), each with its own catalogue, so
//! what the observer knows of a catalogue and every client listing belongs
//! to a route.
//!
//! A route is named by the operator (a path, or a pattern such as
//! `/servers/{id}/mcp` whose name may use its variables), or learned from
//! the paths clients use. Paths are compared normalised ([`normalise`]):
//! the query never counts, percent-encoded unreserved characters are
//! decoded and other escapes upper-cased (RFC 3986 §6.2.2), empty and `.`
//! segments dropped, `..` resolved, and a trailing slash ignored — so
//! `/mcp/alpha/`, `/mcp//alpha?x=1` and `/mcp/%61lpha` are one route.

use mcp_listing::text;
use std::borrow::Cow;
use std::fmt;
use std::sync::Arc;

/// The name of the route of requests the tap keeps no route for.
pub const OTHER_ROUTE: &str = "other";

/// Bytes of a path read; a longer one is cut there before it is normalised
/// (its route then ends in a hash of what was kept, like a long item name).
pub const MAX_PATH_BYTES: usize = 4096;

/// A route as it is shown and labelled: the operator's name, the normalised
/// path, or `other`. Cheap to clone.
#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct RouteId {
    name: Arc<str>,
    /// Whether series carry a `route` label for it: all but the upstream's
    /// own path on a tap with no routes configured (which reads as a tap in
    /// front of one server always did).
    labelled: bool,
}

impl RouteId {
    pub(crate) fn new(name: &str, labelled: bool) -> RouteId {
        RouteId {
            name: Arc::from(shown(name).as_ref()),
            labelled,
        }
    }

    /// What people read: a name, a path, or `other`.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The `route` label's value, `None` where series carry none.
    pub fn label(&self) -> Option<&str> {
        self.labelled.then_some(&*self.name)
    }

    pub fn is_other(&self) -> bool {
        &*self.name == OTHER_ROUTE
    }
}

impl fmt::Display for RouteId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.name)
    }
}

impl fmt::Debug for RouteId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "route:{}", self.name)
    }
}

/// A route name as kept and shown: cut as an item name is (256 bytes, a
/// hash of the whole past the cut), control characters escaped.
fn shown(name: &str) -> Cow<'_, str> {
    match text::name(name) {
        Cow::Borrowed(kept) => text::escape(kept),
        Cow::Owned(kept) => Cow::Owned(text::escape(&kept).into_owned()),
    }
}

mcp_listing::labelled_enum! {
    /// Why a list request was counted under the route `other`; the
    /// `reason` label of `mcp_tap_other_route_total`.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
    pub enum OtherRoute as "reason" {
        /// The tap already keeps `max_routes` routes besides the named ones.
        MaxRoutes => "max_routes",
        /// No configured route matched and the tap learns no paths.
        Unmatched => "unmatched",
        /// The client already has `max_client_routes` routes of its own
        /// on this tap (its listings there are told under `other`).
        MaxClientRoutes => "max_client_routes",
    }
}

/// `path` normalised (see the module's comment); the query is the
/// caller's to leave off. At most [`MAX_PATH_BYTES`] of it are read.
pub fn normalise(path: &str) -> String {
    let path = text::prefix(path, MAX_PATH_BYTES);
    let decoded = decode_unreserved(path);
    let mut segments: Vec<&str> = Vec::new();
    for segment in decoded.split('/') {
        match segment {
            "" | "." => {}
            ".." => {
                segments.pop();
            }
            s => segments.push(s),
        }
    }
    let mut out = String::with_capacity(decoded.len() + 1);
    for segment in &segments {
        out.push('/');
        out.push_str(segment);
    }
    if out.is_empty() {
        out.push('/');
    }
    out
}

/// Percent escapes of unreserved characters decoded, the rest upper-cased;
/// a `%` not followed by two hex digits is left as it is.
fn decode_unreserved(path: &str) -> Cow<'_, str> {
    if !path.contains('%') {
        return Cow::Borrowed(path);
    }
    let bytes = path.as_bytes();
    let mut out = String::with_capacity(path.len());
    let mut i = 0;
    while i < bytes.len() {
        let escape = (bytes[i] == b'%')
            .then(|| Some((hex(*bytes.get(i + 1)?)?, hex(*bytes.get(i + 2)?)?)))
            .flatten();
        match escape {
            Some((hi, lo)) => {
                let byte = hi << 4 | lo;
                if byte.is_ascii_alphanumeric() || matches!(byte, b'-' | b'.' | b'_' | b'~') {
                    out.push(char::from(byte));
                } else {
                    out.push('%');
                    out.push_str(&format!("{byte:02X}"));
                }
                i += 3;
            }
            None => {
                // A whole character: `path` is text, and `%` is ASCII.
                let len = path[i..].chars().next().map_or(1, char::len_utf8);
                out.push_str(&path[i..i + len]);
                i += len;
            }
        }
    }
    Cow::Owned(out)
}

fn hex(b: u8) -> Option<u8> {
    char::from(b)
        .to_digit(16)
        .and_then(|d| u8::try_from(d).ok())
}

/// Why a configured route cannot be used; says what is wrong with the
/// text it was given (the operator's own configuration).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RouteRuleError {
    #[error("a route's path must start with `/`")]
    NotAbsolute,
    #[error("`{{{0}}}` must be a whole path segment, named with letters, digits and `_`")]
    BadVariable(String),
    #[error("`{{{0}}}` appears twice in the path")]
    RepeatedVariable(String),
    #[error("the name uses `{{{0}}}`, which the path does not have")]
    UnknownVariable(String),
    #[error("a route's name must not be empty or `other`")]
    BadName,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Segment {
    Literal(String),
    Variable(String),
}

/// One configured route: a path, or a pattern whose `{var}` segments match
/// any one segment; and the name its requests are told under (by default
/// the path a request used, normalised). Rules with the same name are one
/// route (a server's `/mcp` and legacy `/sse`, say).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RouteRule {
    /// As the operator wrote it (shown in warnings).
    pub written: String,
    segments: Vec<Segment>,
    name: Option<String>,
}

impl RouteRule {
    /// `path` (`/mcp/alpha`, or `/servers/{id}/mcp`) named `name` (which
    /// may use the path's variables: `server-{id}`).
    pub fn parse(name: Option<&str>, path: &str) -> Result<RouteRule, RouteRuleError> {
        if !path.starts_with('/') {
            return Err(RouteRuleError::NotAbsolute);
        }
        // The query never counts, here as in requests.
        let bare = path.split_once('?').map_or(path, |(p, _)| p);
        let mut segments = Vec::new();
        for segment in normalise(bare).split('/').filter(|s| !s.is_empty()) {
            segments.push(match variable(segment)? {
                Some(var) if segments.contains(&Segment::Variable(var.clone())) => {
                    return Err(RouteRuleError::RepeatedVariable(var))
                }
                Some(var) => Segment::Variable(var),
                None => Segment::Literal(segment.to_string()),
            });
        }
        if let Some(name) = name {
            if name.trim().is_empty() || name == OTHER_ROUTE {
                return Err(RouteRuleError::BadName);
            }
            for var in name_variables(name) {
                if !segments.contains(&Segment::Variable(var.to_string())) {
                    return Err(RouteRuleError::UnknownVariable(var.to_string()));
                }
            }
        }
        Ok(RouteRule {
            written: path.to_string(),
            segments,
            name: name.map(str::to_string),
        })
    }

    /// The operator's name for it (a template for a pattern), if any.
    pub fn name(&self) -> Option<&str> {
        self.name.as_deref()
    }

    /// A path without variables: one route, known from the start.
    pub fn is_literal(&self) -> bool {
        self.segments
            .iter()
            .all(|s| matches!(s, Segment::Literal(_)))
    }

    /// The path of a literal rule (normalised), to walk or compare.
    pub fn literal_path(&self) -> Option<String> {
        self.is_literal().then(|| self.fill_path(&[]))
    }

    /// The route name of a normalised `path` this rule matches.
    pub(crate) fn matches(&self, path: &str) -> Option<String> {
        let parts: Vec<&str> = path.split('/').filter(|s| !s.is_empty()).collect();
        if parts.len() != self.segments.len() {
            return None;
        }
        let mut bound: Vec<(&str, &str)> = Vec::new();
        for (segment, part) in self.segments.iter().zip(&parts) {
            match segment {
                Segment::Literal(l) if l == part => {}
                Segment::Literal(_) => return None,
                Segment::Variable(v) => bound.push((v, part)),
            }
        }
        Some(match &self.name {
            Some(name) => fill_name(name, &bound),
            None => path.to_string(),
        })
    }

    fn fill_path(&self, bound: &[(&str, &str)]) -> String {
        let mut out = String::new();
        for segment in &self.segments {
            out.push('/');
            match segment {
                Segment::Literal(l) => out.push_str(l),
                Segment::Variable(v) => {
                    let value = bound.iter().find(|(n, _)| n == v).map_or("", |(_, x)| x);
                    out.push_str(value);
                }
            }
        }
        if out.is_empty() {
            out.push('/');
        }
        out
    }
}

/// A segment's variable name, if it is `{name}`; an error for a brace
/// anywhere else.
fn variable(segment: &str) -> Result<Option<String>, RouteRuleError> {
    if !segment.contains(['{', '}']) {
        return Ok(None);
    }
    let inner = segment
        .strip_prefix('{')
        .and_then(|s| s.strip_suffix('}'))
        .filter(|v| !v.is_empty() && v.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'));
    match inner {
        Some(v) => Ok(Some(v.to_string())),
        None => Err(RouteRuleError::BadVariable(segment.to_string())),
    }
}

/// The `{var}` names a route name template uses.
fn name_variables(name: &str) -> impl Iterator<Item = &str> {
    name.split('{')
        .skip(1)
        .filter_map(|rest| rest.split_once('}').map(|(var, _)| var))
}

fn fill_name(name: &str, bound: &[(&str, &str)]) -> String {
    let mut out = name.to_string();
    for (var, value) in bound {
        out = out.replace(&format!("{{{var}}}"), value);
    }
    out
}

/// How a tap's requests become routes.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Routing {
    /// The upstream URL's own path (`None` for the stdio tap): always a
    /// route, and with no `rules` the one route series carry no label for.
    pub default_path: Option<String>,
    /// The operator's routes, first match wins.
    pub rules: Vec<RouteRule>,
    /// A path no rule matches becomes a route of its own (while fewer than
    /// `max_routes` are kept); otherwise it is `other`.
    pub learn_paths: bool,
}

impl Routing {
    /// No routes configured, paths learned: what a tap does unless told.
    pub fn learning(default_path: Option<&str>) -> Routing {
        Routing {
            default_path: default_path.map(normalise),
            rules: Vec::new(),
            learn_paths: true,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_differing_by_encoding_slashes_dots_or_query_are_one() {
        for path in [
            "/mcp/alpha",
            "/mcp/alpha/",
            "/mcp//alpha",
            "/mcp/%61lpha",
            "/mcp/./alpha",
            "/mcp/beta/../alpha",
            "/%6D%63%70/alpha///",
        ] {
            assert_eq!(normalise(path), "/mcp/alpha", "{path}");
        }
        assert_eq!(normalise("/"), "/");
        assert_eq!(normalise(""), "/");
        assert_eq!(normalise("/../.."), "/");
        // Reserved characters stay escaped (a `/` inside a segment is not
        // a separator), in one case.
        assert_eq!(normalise("/servers/a%2fb/mcp"), "/servers/a%2Fb/mcp");
        assert_eq!(normalise("/x%zz%4"), "/x%zz%4");
        assert_eq!(normalise("/é/%C3%A9"), "/é/%C3%A9");
        assert_eq!(normalise("/MCP"), "/MCP", "paths keep their case");
    }

    #[test]
    fn long_paths_are_read_to_a_bound_and_shown_cut_with_a_hash() {
        let long = format!("/{}", "a".repeat(100_000));
        let n = normalise(&long);
        assert_eq!(n.len(), MAX_PATH_BYTES);
        let route = RouteId::new(&n, true);
        assert!(route.name().len() <= text::MAX_NAME_BYTES);
        let other = RouteId::new(&format!("{}b", &n[..n.len() - 1]), true);
        assert_ne!(route, other, "the hash keeps them apart");
        assert_eq!(RouteId::new("/a\x1b[2J", true).name(), "/a\\x1b[2J");
    }

    #[test]
    fn patterns_match_whole_segments_and_name_their_routes() {
        let servers = RouteRule::parse(Some("server-{id}"), "/servers/{id}/mcp").unwrap();
        assert!(!servers.is_literal());
        assert_eq!(
            servers.matches("/servers/7/mcp").as_deref(),
            Some("server-7")
        );
        assert_eq!(servers.matches("/servers/7/sse"), None);
        assert_eq!(servers.matches("/servers/mcp"), None);
        let unnamed = RouteRule::parse(None, "/servers/{id}/mcp/").unwrap();
        assert_eq!(
            unnamed.matches("/servers/7/mcp").as_deref(),
            Some("/servers/7/mcp")
        );
        let alpha = RouteRule::parse(Some("alpha"), "/mcp//alpha/?x=1").unwrap();
        assert_eq!(alpha.literal_path().as_deref(), Some("/mcp/alpha"));
        assert_eq!(alpha.matches("/mcp/alpha").as_deref(), Some("alpha"));
    }

    #[test]
    fn bad_rules_say_what_is_wrong() {
        let err = |name: Option<&str>, path: &str| RouteRule::parse(name, path).unwrap_err();
        assert_eq!(err(None, "servers/{id}"), RouteRuleError::NotAbsolute);
        assert_eq!(
            err(None, "/s/x{id}"),
            RouteRuleError::BadVariable("x{id}".into())
        );
        assert_eq!(
            err(None, "/s/{a-b}"),
            RouteRuleError::BadVariable("{a-b}".into())
        );
        assert_eq!(
            err(None, "/{id}/{id}"),
            RouteRuleError::RepeatedVariable("id".into())
        );
        assert_eq!(
            err(Some("s-{name}"), "/s/{id}"),
            RouteRuleError::UnknownVariable("name".into())
        );
        assert_eq!(err(Some("other"), "/s"), RouteRuleError::BadName);
    }
}
