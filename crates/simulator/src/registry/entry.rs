//! One entry of the simulated registry as the generic registry API writes
//! it: `{"server": ServerDetail, "_meta": {official metadata}}`.

use super::config::Decoy;
use crate::ServingMode;
use chrono::{DateTime, SecondsFormat};
use serde_json::{json, Map, Value};

/// The official metadata's key in an entry's `_meta`.
pub const OFFICIAL: &str = "io.modelcontextprotocol.registry/official";

/// 2025-09-01T00:00:00Z: entry n was published and updated n minutes later.
const EPOCH_SECONDS: i64 = 1_756_684_800;

/// The `type` and endpoint path of the virtual servers' remotes: how the
/// simulator serves them.
fn remote_of(mode: ServingMode) -> (&'static str, &'static str) {
    match mode {
        ServingMode::Sse => ("sse", "/sse"),
        // stdio serves no registry; HTTP is the only other answer.
        ServingMode::Http | ServingMode::Stdio => ("streamable-http", "/mcp"),
    }
}

/// What an entry stands for.
#[derive(Debug, Clone)]
pub enum EntryKind {
    /// A virtual server: `scenario` for its description; `auth` when its
    /// remote needs a bearer token.
    Server {
        scenario: &'static str,
        auth: bool,
    },
    Decoy(Decoy),
}

#[derive(Debug, Clone)]
pub struct RegistryEntry {
    /// The name after `<namespace>/`.
    pub short: String,
    /// The endpoint path after `/mcp` or `/sse`: `/<name>`, or empty for
    /// the single server of a run without `--scenarios`.
    pub endpoint: String,
    pub what: EntryKind,
    /// Position in the catalogue: timestamps are this many minutes past
    /// the epoch above.
    pub minute: u32,
}

impl RegistryEntry {
    pub fn is_latest(&self) -> bool {
        !matches!(self.what, EntryKind::Decoy(Decoy::NotLatest))
    }

    pub fn version(&self) -> &'static str {
        if self.is_latest() {
            "1.0.0"
        } else {
            "0.9.0"
        }
    }

    /// Seconds since the Unix epoch of its `updatedAt`.
    pub fn updated_at(&self) -> i64 {
        EPOCH_SECONDS + i64::from(self.minute) * 60
    }

    fn status(&self) -> &'static str {
        match self.what {
            EntryKind::Decoy(Decoy::Deleted) => "deleted",
            EntryKind::Decoy(Decoy::Deprecated) => "deprecated",
            _ => "active",
        }
    }

    fn description(&self) -> String {
        match &self.what {
            EntryKind::Server { scenario, .. } => {
                format!("Simulated MCP server (scenario {scenario})")
            }
            EntryKind::Decoy(d) => format!("Simulator decoy: {}", d.label()),
        }
    }

    /// The remotes, with `base` (`http://HOST:PORT`) as their origin.
    fn remotes(&self, base: &str, mode: ServingMode) -> Option<Value> {
        let (kind, path) = remote_of(mode);
        let url = format!("{base}{path}{}", self.endpoint);
        let mut r = Map::new();
        r.insert("type".into(), json!(kind));
        match &self.what {
            EntryKind::Decoy(Decoy::NoRemote) => return None,
            EntryKind::Decoy(Decoy::UrlVariable) => {
                r.insert("url".into(), json!(format!("{url}/{{tenant}}")));
                r.insert(
                    "variables".into(),
                    json!({"tenant": {"description": "Tenant id", "isRequired": true}}),
                );
            }
            EntryKind::Decoy(Decoy::RequiredHeader) => {
                r.insert("url".into(), json!(url));
                r.insert("headers".into(), json!([header("X-Api-Key", "API key")]));
            }
            EntryKind::Server { auth: true, .. } => {
                r.insert("url".into(), json!(url));
                r.insert(
                    "headers".into(),
                    json!([header("Authorization", "Bearer token")]),
                );
            }
            _ => {
                r.insert("url".into(), json!(url));
            }
        }
        Some(json!([Value::Object(r)]))
    }

    /// The `ServerResponse` object of the list answer.
    pub fn to_json(&self, namespace: &str, base: &str, mode: ServingMode) -> Value {
        let mut server = Map::new();
        server.insert("name".into(), json!(format!("{namespace}/{}", self.short)));
        server.insert("description".into(), json!(self.description()));
        server.insert("title".into(), json!(self.short));
        server.insert("version".into(), json!(self.version()));
        match self.remotes(base, mode) {
            Some(remotes) => {
                server.insert("remotes".into(), remotes);
            }
            None => {
                // What a stdio-only server publishes: a package a monitor
                // must never install or start.
                server.insert(
                    "packages".into(),
                    json!([{"registryType": "npm", "identifier": "@sim/decoy-no-remote",
                            "version": "1.0.0", "transport": {"type": "stdio"}}]),
                );
            }
        }
        let at = timestamp(self.updated_at());
        json!({
            "server": Value::Object(server),
            "_meta": {OFFICIAL: {
                "status": self.status(),
                "publishedAt": at,
                "updatedAt": at,
                "statusChangedAt": at,
                "isLatest": self.is_latest(),
            }},
        })
    }
}

fn header(name: &str, description: &str) -> Value {
    json!({"name": name, "description": description, "isRequired": true, "isSecret": true})
}

/// RFC 3339 in UTC, whole seconds.
fn timestamp(secs: i64) -> String {
    DateTime::from_timestamp(secs, 0)
        .map(|t| t.to_rfc3339_opts(SecondsFormat::Secs, true))
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(what: EntryKind) -> RegistryEntry {
        RegistryEntry {
            short: "fleet-0001".into(),
            endpoint: "/fleet-0001".into(),
            what,
            minute: 2,
        }
    }

    #[test]
    fn a_server_entry_has_one_remote_and_official_metadata() {
        let server = EntryKind::Server {
            scenario: "healthy",
            auth: false,
        };
        let v = entry(server).to_json("io.github.sim", "http://h:1", ServingMode::Http);
        assert_eq!(v["server"]["name"], "io.github.sim/fleet-0001");
        assert_eq!(
            v["server"]["remotes"],
            json!([{"type": "streamable-http", "url": "http://h:1/mcp/fleet-0001"}])
        );
        let official = &v["_meta"][OFFICIAL];
        assert_eq!(official["status"], "active");
        assert_eq!(official["isLatest"], true);
        assert_eq!(official["updatedAt"], "2025-09-01T00:02:00Z");
    }

    #[test]
    fn decoys_carry_what_makes_them_skipped() {
        let at = |d| entry(EntryKind::Decoy(d)).to_json("ns", "http://h", ServingMode::Sse);
        assert_eq!(at(Decoy::NotLatest)["_meta"][OFFICIAL]["isLatest"], false);
        assert_eq!(at(Decoy::Deleted)["_meta"][OFFICIAL]["status"], "deleted");
        assert!(at(Decoy::NoRemote)["server"].get("remotes").is_none());
        let url = &at(Decoy::UrlVariable)["server"]["remotes"][0]["url"];
        assert_eq!(url, "http://h/sse/fleet-0001/{tenant}");
        let headers = &at(Decoy::RequiredHeader)["server"]["remotes"][0]["headers"];
        assert_eq!(headers[0]["isRequired"], true);
    }
}
