//! Whether merging needs to read a request's body, decided from what is
//! known before any of it is read: who the operator says the client is
//! (its header, its app rules), the client its session was bound to at
//! `initialize`, its User-Agent, and the method a 2026-07-28 request names
//! in its `Mcp-Method` header. A client that is not named for merging is
//! forwarded unread, as with merging off; only bodies that may name a
//! client (an `initialize`, a request with no session yet) or may be a
//! named client's list request are read.

use crate::identity::{self, ClientInfo};
use crate::settings::MergeClients;
use mcp_listing::Kind;

/// Who is merged for, as the data path decides it.
#[derive(Debug, Clone)]
pub(crate) struct Eligible {
    clients: MergeClients,
    /// Some name merged for may be one a client gives itself (not only an
    /// app's): `initialize`s must be read to bind sessions to clients.
    self_named: bool,
}

/// What the request's session says of its client.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Session<'a> {
    /// The request names no session (an `initialize`, a sessionless or a
    /// 2026-07-28 request): what it says of itself is in its body.
    None,
    /// A session whose `initialize` the tap did not see (or no longer
    /// remembers).
    Unbound,
    /// A session opened by this client.
    Bound(&'a ClientInfo),
}

/// What is known of a request before its body is read.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Known<'a> {
    /// Who the operator's header or app rules say the client is.
    pub(crate) operator: Option<&'a ClientInfo>,
    pub(crate) session: Session<'a>,
    /// The product of its User-Agent.
    pub(crate) user_agent: Option<&'a ClientInfo>,
    /// Its `Mcp-Method` header.
    pub(crate) method: Option<&'a [u8]>,
}

impl Eligible {
    /// Merging for `clients`; `is_app`: whether a name is one of the
    /// operator's apps.
    pub(crate) fn new(clients: MergeClients, is_app: impl Fn(&str) -> bool) -> Eligible {
        let self_named = match &clients {
            MergeClients::Nobody => false,
            MergeClients::All => true,
            MergeClients::Named(names) => names.iter().any(|n| !is_app(n)),
        };
        Eligible {
            clients,
            self_named,
        }
    }

    /// Whether `client` is merged for.
    pub(crate) fn names(&self, client: &ClientInfo) -> bool {
        self.clients.includes(&identity::label(&client.name))
    }

    /// Whether merging must read the body of a request of which `known`
    /// is known: it may be a named client's first-page list request, or an
    /// `initialize` naming the client its session is bound to.
    pub(crate) fn reads(&self, known: &Known<'_>) -> bool {
        let initialize = known.method == Some(&b"initialize"[..]);
        if let Some(method) = known.method {
            let listing = Kind::ALL.iter().any(|k| k.method().as_bytes() == method);
            if !listing && !initialize {
                return false;
            }
        }
        if let Some(operator) = known.operator {
            // What the client says of itself does not count.
            return !initialize && self.names(operator);
        }
        if !self.self_named {
            // Only apps are merged for, and the operator names none here.
            return false;
        }
        match known.session {
            Session::None => true,
            Session::Bound(client) => !initialize && self.names(client),
            Session::Unbound => {
                let unknown = ClientInfo::unknown();
                !initialize && self.names(known.user_agent.unwrap_or(&unknown))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn client(name: &str) -> ClientInfo {
        ClientInfo {
            name: name.into(),
            version: None,
        }
    }

    fn named(names: &[&str], apps: &[&'static str]) -> Eligible {
        let names = names.iter().map(|n| n.to_string()).collect();
        let apps = apps.to_vec();
        Eligible::new(MergeClients::Named(names), move |n| apps.contains(&n))
    }

    fn known<'a>(operator: Option<&'a ClientInfo>, session: Session<'a>) -> Known<'a> {
        Known {
            operator,
            session,
            user_agent: None,
            method: None,
        }
    }

    #[test]
    fn an_unnamed_client_is_not_read() {
        let desk_only = named(&["desk"], &["desk", "agents"]);
        let (desk, agents) = (client("desk"), client("agents"));
        assert!(desk_only.reads(&known(Some(&desk), Session::None)));
        assert!(!desk_only.reads(&known(Some(&agents), Session::None)));
        assert!(
            !desk_only.reads(&known(None, Session::None)),
            "no app: never merged, never read, not even its initialize"
        );
        let mcp = client("mcp");
        let by_name = named(&["mcp"], &["desk"]);
        assert!(
            by_name.reads(&known(None, Session::None)),
            "may be an initialize"
        );
        assert!(by_name.reads(&known(None, Session::Bound(&mcp))));
        assert!(!by_name.reads(&known(None, Session::Bound(&agents))));
        assert!(
            !by_name.reads(&known(Some(&desk), Session::Bound(&mcp))),
            "the app decides"
        );
        assert!(!by_name.reads(&known(None, Session::Unbound)));
        let agent = client("mcp");
        let by_agent = Known {
            user_agent: Some(&agent),
            ..known(None, Session::Unbound)
        };
        assert!(
            by_name.reads(&by_agent),
            "an unbound session: its User-Agent"
        );
        assert!(!Eligible::new(MergeClients::Nobody, |_| false).reads(&by_agent));
    }

    #[test]
    fn the_method_header_spares_other_requests() {
        let all = Eligible::new(MergeClients::All, |_| false);
        let with = |method: &'static [u8]| Known {
            method: Some(method),
            ..known(None, Session::None)
        };
        assert!(all.reads(&with(b"tools/list")));
        assert!(all.reads(&with(b"resources/templates/list")));
        assert!(all.reads(&with(b"initialize")));
        assert!(!all.reads(&with(b"tools/call")));
        assert!(!all.reads(&with(b"server/discover")));
        let desk = client("desk");
        let initialize = Known {
            method: Some(b"initialize"),
            ..known(Some(&desk), Session::None)
        };
        assert!(!all.reads(&initialize), "the operator already named it");
    }
}
