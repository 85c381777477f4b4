//! Headers as a proxy passes them: every end-to-end header unchanged and in
//! order, the hop-by-hop ones (RFC 9110 §7.6.1: `Connection` and what it
//! names, `Keep-Alive`, `Proxy-*`, `TE`, `Trailer`, `Transfer-Encoding`,
//! `Upgrade`) dropped, since each side's connection has its own. `Expect`
//! is answered by the tap's own server and not passed on; `Host` is the
//! upstream's.

use crate::event::BodyFraming;
use http::header::{self, HeaderMap, HeaderName, HeaderValue};

/// The end-to-end headers of `from`.
pub(crate) fn end_to_end(from: &HeaderMap) -> HeaderMap {
    let named = connection_tokens(from);
    let mut out = HeaderMap::with_capacity(from.len());
    for (name, value) in from {
        if !hop_by_hop(name) && !named.iter().any(|n| name.as_str() == n) {
            out.append(name.clone(), value.clone());
        }
    }
    out
}

fn hop_by_hop(name: &HeaderName) -> bool {
    *name == header::CONNECTION
        || *name == header::TE
        || *name == header::TRAILER
        || *name == header::TRANSFER_ENCODING
        || *name == header::UPGRADE
        || *name == header::HOST
        || *name == header::EXPECT
        || name.as_str() == "keep-alive"
        || name.as_str().starts_with("proxy-")
}

/// Header names listed in `Connection` (lowercase), which are hop-by-hop
/// for this message.
fn connection_tokens(headers: &HeaderMap) -> Vec<String> {
    headers
        .get_all(header::CONNECTION)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .map(|t| t.trim().to_ascii_lowercase())
        .filter(|t| !t.is_empty() && t != "close" && t != "keep-alive")
        .collect()
}

/// How a body of this `Content-Type` carries messages. No type at all is
/// taken for JSON (a body without one is still one message).
pub(crate) fn framing(headers: &HeaderMap) -> BodyFraming {
    let Some(value) = headers.get(header::CONTENT_TYPE) else {
        return BodyFraming::Json;
    };
    let essence = value
        .to_str()
        .unwrap_or("")
        .split(';')
        .next()
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase();
    if essence == "application/json" || essence.ends_with("+json") {
        BodyFraming::Json
    } else if essence == "text/event-stream" {
        BodyFraming::EventStream
    } else {
        BodyFraming::Other
    }
}

/// The value of `name`, shared (a `HeaderValue` clone is a reference count).
pub(crate) fn value(headers: &HeaderMap, name: impl header::AsHeaderName) -> Option<HeaderValue> {
    headers.get(name).cloned()
}

/// Whether the answer's length is fixed by a `Content-Length`.
pub(crate) fn has_length(headers: &HeaderMap) -> bool {
    headers.contains_key(header::CONTENT_LENGTH)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hop_by_hop_headers_and_those_connection_names_are_dropped() {
        let mut h = HeaderMap::new();
        for (k, v) in [
            ("connection", "keep-alive, X-Hop"),
            ("keep-alive", "timeout=5"),
            ("x-hop", "1"),
            ("proxy-authorization", "Basic x"),
            ("te", "trailers"),
            ("transfer-encoding", "chunked"),
            ("upgrade", "websocket"),
            ("host", "tap.test"),
            ("expect", "100-continue"),
            ("mcp-session-id", "s"),
            ("authorization", "Bearer t"),
            ("accept", "application/json"),
            ("accept", "text/event-stream"),
        ] {
            h.append(k, HeaderValue::from_static(v));
        }
        let kept = end_to_end(&h);
        let names: Vec<&str> = kept.keys().map(HeaderName::as_str).collect();
        assert_eq!(names, ["mcp-session-id", "authorization", "accept"]);
        assert_eq!(kept.get_all("accept").iter().count(), 2);
    }

    #[test]
    fn framing_follows_the_content_type() {
        let with = |v: &'static str| {
            let mut h = HeaderMap::new();
            h.insert(header::CONTENT_TYPE, HeaderValue::from_static(v));
            framing(&h)
        };
        assert_eq!(with("application/json; charset=utf-8"), BodyFraming::Json);
        assert_eq!(with("Text/Event-Stream"), BodyFraming::EventStream);
        assert_eq!(with("text/html"), BodyFraming::Other);
        assert_eq!(framing(&HeaderMap::new()), BodyFraming::Json);
    }
}
