//! Who a client says it is, read the one way both the data path (which
//! merges pages for named clients) and the observer (which labels what
//! clients do) read it. Pure: JSON values and header bytes in, bounded
//! names out.
//!
//! In order of precedence: the operator's own client-identity header (a
//! gateway's `X-Client-Id`: the gateway knows its caller best); the
//! operator's app rules (`apps`: the client's source address, its
//! User-Agent product); the client's `clientInfo` — `initialize`'s
//! `params.clientInfo`, bound to its session, or from 2026-07-28 any
//! request's `params._meta["io.modelcontextprotocol/clientInfo"]`; the
//! product of its `User-Agent` (`python-httpx/0.28.1` → `python-httpx`);
//! else `unknown`. Everything here is the client's to choose: names are
//! cut to [`MAX_NAME_BYTES`] and versions to [`MAX_VERSION_BYTES`] as soon
//! as they are read, and [`label`] makes a name safe to show.

use mcp_listing::text;
use serde_json::Value;

/// Bytes of a client name kept (and shown).
pub const MAX_NAME_BYTES: usize = 64;
/// Bytes of a client version kept.
pub const MAX_VERSION_BYTES: usize = 32;
/// The name of a client that said nothing of itself.
pub const UNKNOWN: &str = "unknown";

/// The `_meta` key of a 2026-07-28 request's client info.
const META_CLIENT_INFO: &str = "io.modelcontextprotocol/clientInfo";

/// What a client calls itself, cut to the bounds above.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ClientInfo {
    pub name: String,
    pub version: Option<String>,
}

mcp_listing::labelled_enum! {
    /// Where a client's identity was read.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
    pub enum IdentitySource as "source" {
        Header => "header",
        /// An operator's app rule (`apps`).
        App => "app",
        ClientInfo => "client_info",
        UserAgent => "user_agent",
        Unknown => "unknown",
    }
}

impl ClientInfo {
    fn new(name: &str, version: Option<&str>) -> Option<ClientInfo> {
        let name = text::prefix(name.trim(), MAX_NAME_BYTES);
        if name.is_empty() {
            return None;
        }
        Some(ClientInfo {
            name: name.to_string(),
            version: version
                .map(|v| text::prefix(v.trim(), MAX_VERSION_BYTES).to_string())
                .filter(|v| !v.is_empty()),
        })
    }

    /// The client of no known name.
    pub fn unknown() -> ClientInfo {
        ClientInfo {
            name: UNKNOWN.to_string(),
            version: None,
        }
    }
}

/// The client info a JSON-RPC request carries: `initialize`'s
/// `params.clientInfo`, else `params._meta["io.modelcontextprotocol/clientInfo"]`.
pub fn from_request(message: &Value) -> Option<ClientInfo> {
    let params = message.get("params")?;
    let info = match message.get("method").and_then(Value::as_str) {
        Some("initialize") => params.get("clientInfo"),
        _ => None,
    }
    .or_else(|| params.get("_meta")?.get(META_CLIENT_INFO))?;
    ClientInfo::new(
        info.get("name")?.as_str()?,
        info.get("version").and_then(Value::as_str),
    )
}

/// The product of a `User-Agent`: its first token, split at `/`.
pub fn from_user_agent(value: &[u8]) -> Option<ClientInfo> {
    let value = String::from_utf8_lossy(value);
    let product = value.split_whitespace().next()?;
    let (name, version) = match product.split_once('/') {
        Some((name, version)) => (name, Some(version)),
        None => (product, None),
    };
    ClientInfo::new(name, version)
}

/// The operator's header as a name (its whole value, no version).
pub fn from_header(value: &[u8]) -> Option<ClientInfo> {
    ClientInfo::new(&String::from_utf8_lossy(value), None)
}

/// What each source says a client is.
#[derive(Debug, Clone, Default)]
pub struct Claims {
    /// The operator's client-identity header.
    pub header: Option<ClientInfo>,
    /// The operator's app rules.
    pub app: Option<ClientInfo>,
    /// What the client said of itself (`initialize`, `_meta`).
    pub client_info: Option<ClientInfo>,
    /// The product of its User-Agent.
    pub user_agent: Option<ClientInfo>,
}

impl Claims {
    /// Who the operator says the client is (its header, else its app
    /// rules): when known, what the client says does not count.
    pub fn operator(&self) -> Option<&ClientInfo> {
        self.header.as_ref().or(self.app.as_ref())
    }
}

/// The client's identity, by precedence, and where it came from.
pub fn identify(claims: Claims) -> (ClientInfo, IdentitySource) {
    let Claims {
        header,
        app,
        client_info,
        user_agent,
    } = claims;
    header
        .map(|c| (c, IdentitySource::Header))
        .or_else(|| app.map(|c| (c, IdentitySource::App)))
        .or_else(|| client_info.map(|c| (c, IdentitySource::ClientInfo)))
        .or_else(|| user_agent.map(|c| (c, IdentitySource::UserAgent)))
        .unwrap_or_else(|| (ClientInfo::unknown(), IdentitySource::Unknown))
}

/// A client name as a label value and as operators write it (in a tap's
/// `merge_pages:`, say): shown as `text::escape` shows it (controls and
/// invisible characters escaped, the backslash too, so two names never
/// share a label), never empty.
pub fn label(name: &str) -> String {
    let shown = text::escape(text::prefix(name, MAX_NAME_BYTES));
    if shown.is_empty() {
        UNKNOWN.to_string()
    } else {
        shown.into_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn client_info_comes_from_initialize_or_meta() {
        let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize",
            "params": {"clientInfo": {"name": "mcp", "version": "0.1.0"}}});
        assert_eq!(
            from_request(&init),
            Some(ClientInfo {
                name: "mcp".into(),
                version: Some("0.1.0".into())
            })
        );
        let modern = json!({"method": "tools/list", "params": {"_meta":
            {"io.modelcontextprotocol/clientInfo": {"name": "fastmcp"}}}});
        assert_eq!(from_request(&modern).unwrap().name, "fastmcp");
        let list = json!({"method": "tools/list", "params": {"clientInfo": {"name": "x"}}});
        assert_eq!(
            from_request(&list),
            None,
            "clientInfo counts on initialize only"
        );
        let odd = json!({"method": "initialize", "params": {"clientInfo": {"name": 7}}});
        assert_eq!(from_request(&odd), None);
    }

    #[test]
    fn user_agents_give_their_product() {
        let ua = from_user_agent(b"python-httpx/0.28.1").unwrap();
        assert_eq!(
            (ua.name.as_str(), ua.version.as_deref()),
            ("python-httpx", Some("0.28.1"))
        );
        assert_eq!(from_user_agent(b"node").unwrap().name, "node");
        assert_eq!(
            from_user_agent(b"Mozilla/5.0 (X11; Linux)").unwrap().name,
            "Mozilla"
        );
        assert_eq!(from_user_agent(b"  "), None);
    }

    #[test]
    fn names_are_bounded_and_shown_safely() {
        let long = "n".repeat(1000);
        let info = from_header(long.as_bytes()).unwrap();
        assert_eq!(info.name.len(), MAX_NAME_BYTES);
        assert_eq!(label("evil\x1b[31m"), "evil\\x1b[31m");
        assert_eq!(label("m\u{200b}cp"), "m\\u{200b}cp");
        assert_eq!(label("\u{202e}pcm"), "\\u{202e}pcm");
        assert_ne!(label("a\\nb"), label("a\nb"));
        assert_eq!(label("a\\nb"), "a\\\\nb");
        assert_eq!(label(""), UNKNOWN);
        let (who, from) = identify(Claims {
            user_agent: from_user_agent(b"node"),
            ..Claims::default()
        });
        assert_eq!(
            (who.name.as_str(), from),
            ("node", IdentitySource::UserAgent)
        );
        let app = Some(ClientInfo {
            name: "desk".into(),
            version: None,
        });
        let claims = Claims {
            header: from_header(b"gw-7"),
            app: app.clone(),
            client_info: from_user_agent(b"mcp"),
            user_agent: None,
        };
        assert_eq!(claims.operator().map(|c| c.name.as_str()), Some("gw-7"));
        let (who, from) = identify(claims);
        assert_eq!((who.name.as_str(), from), ("gw-7", IdentitySource::Header));
        let (who, from) = identify(Claims {
            app,
            client_info: from_user_agent(b"mcp"),
            ..Claims::default()
        });
        assert_eq!((who.name.as_str(), from), ("desk", IdentitySource::App));
        assert_eq!(identify(Claims::default()).1, IdentitySource::Unknown);
    }
}
