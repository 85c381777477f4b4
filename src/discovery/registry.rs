//! A registry of MCP servers (the generic registry API): `GET
//! /v0.1/servers` (falling back to `/v0/servers`) with `version=latest`,
//! walked page by page by the walker itself, so every guard holds here as
//! for an MCP listing — cursor cycle, page cap, byte cap, deadline — and
//! an empty or null `nextCursor` ends the walk, as the registry API says.
//! One target per server entry, named by the entry's `name`, from its
//! first `streamable-http` remote, else its first `sse` remote.

use super::entry::SkipList;
use super::entry::{admit_all, Candidate, SkipReason, Skipped};
use super::fetch::Fetcher;
use super::refresh::{Refresh, RefreshFailure, WalkStats};
use super::DiscoverySource;
use crate::config::{ProbeModule, RegistrySource, SourceConfig};
use http::HeaderMap;
use mcp_listing::fingerprint::ItemFingerprint;
use mcp_listing::walk::INVALID_PARAMS;
use mcp_listing::{
    walk, HttpMode, ListingReport, Outcome, PageError, PageResult, PageShape, Pager, WalkLimits,
};
use serde_json::{Map, Value};
use std::borrow::Cow;
use std::collections::{BTreeMap, HashSet};
use std::sync::Arc;
use std::time::{Duration, SystemTime};
use url::Url;

/// The `_meta` key of the official registry's per-entry facts.
pub const OFFICIAL_META: &str = "io.modelcontextprotocol.registry/official";

/// The stable path and the development one, tried in this order.
const PATHS: [&str; 2] = ["v0.1/servers", "v0/servers"];

/// Longest server name or version kept from an entry (longer names are
/// refused as names anyway; this bounds what we hold).
const MAX_FIELD_BYTES: usize = 512;

/// Required header names kept per remote.
const MAX_HEADERS: usize = 16;

/// A registry page: entries under `servers`, each identified by its
/// server's name and version, the cursor under `metadata.nextCursor`.
#[derive(Debug, Clone, Copy)]
pub struct RegistryPage;

impl PageShape for RegistryPage {
    fn array_field(self) -> &'static str {
        "servers"
    }

    fn identity(self, item: &Value) -> Option<Cow<'_, str>> {
        let server = item.get("server")?;
        let name = server.get("name")?.as_str()?;
        Some(match server.get("version").and_then(Value::as_str) {
            Some(version) => Cow::Owned(format!("{name}@{version}")),
            None => Cow::Borrowed(name),
        })
    }

    fn next_cursor(self, page: &Map<String, Value>) -> Option<&Value> {
        page.get("metadata").and_then(|m| m.get("nextCursor"))
    }

    fn fingerprint(self, _item: &Value, _with_shape: bool) -> Option<ItemFingerprint> {
        None
    }
}

pub struct McpRegistry {
    source: Arc<SourceConfig>,
    registry: RegistrySource,
    module: ProbeModule,
}

impl McpRegistry {
    /// `source`, whose registry settings are `registry`.
    pub fn new(
        source: Arc<SourceConfig>,
        module: ProbeModule,
        registry: RegistrySource,
    ) -> McpRegistry {
        McpRegistry {
            registry,
            source,
            module,
        }
    }

    fn limits(&self) -> WalkLimits {
        WalkLimits {
            // No notifications and no session to restart.
            list_changed_restarts: 0,
            session_restarts: 0,
            // The registry API ends a walk on an empty `nextCursor`, as MCP
            // did before 2026-07-28; a repeated cursor is a cycle.
            ..self.registry.endpoint.limits.walk_limits(false)
        }
    }
}

impl DiscoverySource for McpRegistry {
    async fn refresh(&mut self) -> Refresh {
        let started = SystemTime::now();
        let fetcher = match Fetcher::new(&self.registry.endpoint) {
            Ok(f) => f,
            Err((failure, why)) => return Refresh::failed(failure, why, started),
        };
        let mut pager = RegistryPager {
            fetcher,
            registry: &self.registry,
            path: 0,
            requests: 0,
            entries: Vec::new(),
        };
        let report = walk(&mut pager, RegistryPage, &self.limits()).await;
        let stats = WalkStats {
            pages: report.final_pages,
            requests: report.requests(),
            items: report.unique_items,
            duplicate_items: report.duplicate_items,
            restarts: report.restarts.len() as u32,
            fell_back_to_v0: pager.path == 1,
        };
        let mut refresh = match report.outcome {
            Outcome::Complete => self.complete(&report, pager.entries, started),
            Outcome::Aborted(guard) => {
                Refresh::failed(RefreshFailure::Guard(guard), walk_detail(&report), started)
            }
            Outcome::Error(error) => {
                Refresh::failed(RefreshFailure::Error(error), walk_detail(&report), started)
            }
            // Never produced by a walk; counted as malformed if it were.
            Outcome::Unsupported => Refresh::failed(
                RefreshFailure::Error(mcp_listing::ErrorKind::MalformedResult),
                "the walk reported no listing".into(),
                started,
            ),
        };
        refresh.walk = Some(stats);
        refresh
    }
}

impl McpRegistry {
    /// The targets of a complete walk: each entry the walk listed (its
    /// first occurrence), checked against the registry's rules and then
    /// every entry's rules.
    fn complete(
        &self,
        report: &ListingReport<RegistryPage>,
        entries: Vec<ServerEntry>,
        started: SystemTime,
    ) -> Refresh {
        let listed: HashSet<&str> = report.names.iter().map(String::as_str).collect();
        let mut seen = HashSet::new();
        let mut skipped = SkipList::default();
        let mut candidates = Vec::new();
        for entry in entries {
            if let Some(identity) = &entry.identity {
                if !listed.contains(identity.as_str()) || !seen.insert(identity.clone()) {
                    continue;
                }
            }
            match self.candidate(entry) {
                Ok(c) => candidates.push(c),
                Err(skip) => skipped.push(skip),
            }
        }
        if candidates.len() > self.source.max_targets {
            return Refresh::failed(
                RefreshFailure::TooManyTargets,
                format!(
                    "the registry lists {} servers with a remote, more than max_targets ({})",
                    candidates.len(),
                    self.source.max_targets
                ),
                started,
            );
        }
        let (entries, skipped) = admit_all(candidates, &self.module, skipped);
        Refresh::complete(entries, skipped, started)
    }

    /// The registry's own rules, in order: an entry with a name, active,
    /// the latest version, with a remote, a URL without `{variable}`, no
    /// required header the module does not send.
    fn candidate(&self, entry: ServerEntry) -> Result<Candidate, Skipped> {
        let origin = "registry";
        let Some(name) = entry.name else {
            return Err(Skipped::new(
                "(no name)",
                origin,
                SkipReason::InvalidEntry,
                "the entry has no `server.name`",
            ));
        };
        let skip = |reason, detail: String| Skipped::new(&name, origin, reason, detail);
        if let Some(status) = entry.status.as_deref().filter(|s| *s != "active") {
            return Err(skip(
                SkipReason::NotActive,
                format!("its status is {status:?}, not \"active\""),
            ));
        }
        if entry.is_latest == Some(false) {
            return Err(skip(
                SkipReason::NotLatest,
                "not the latest version of this server".into(),
            ));
        }
        let Some(remote) = entry.remote else {
            return Err(skip(
                SkipReason::NoRemote,
                "no streamable-http or sse remote (packages are never started)".into(),
            ));
        };
        if remote.url.contains('{') {
            return Err(skip(
                SkipReason::UrlVariable,
                "the remote URL has an unresolved {variable}".into(),
            ));
        }
        if let Some(header) = remote
            .required_headers
            .iter()
            .find(|h| !self.module_sends(h))
        {
            return Err(skip(
                SkipReason::RequiredHeader,
                format!(
                    "the remote requires header {header:?}, which module `{}` does not send",
                    self.module.name
                ),
            ));
        }
        Ok(Candidate {
            name: Some(name),
            url: remote.url,
            labels: BTreeMap::new(),
            transport: Some(remote.transport),
            origin: origin.into(),
        })
    }

    /// Whether the module sends `header` (its `headers`, or
    /// `Authorization` from its bearer token).
    fn module_sends(&self, header: &str) -> bool {
        let http = &self.module.http;
        http.headers
            .iter()
            .any(|(n, _)| n.eq_ignore_ascii_case(header))
            || (header.eq_ignore_ascii_case("authorization") && http.bearer_token.is_some())
    }
}

/// What the walker said, with the HTTP status when there was one.
fn walk_detail(report: &ListingReport<RegistryPage>) -> String {
    let detail = report.detail.clone().unwrap_or_default();
    match report.http_status {
        Some(status) if !detail.contains(&status.to_string()) => {
            format!("{detail} (HTTP {status})")
        }
        _ => detail,
    }
}

/// One registry entry, as much of it as a target needs.
#[derive(Debug)]
struct ServerEntry {
    /// As [`RegistryPage::identity`] says; `None` for an entry without
    /// a name (the walker counts it invalid).
    identity: Option<String>,
    name: Option<String>,
    status: Option<String>,
    is_latest: Option<bool>,
    remote: Option<Remote>,
}

#[derive(Debug)]
struct Remote {
    url: String,
    transport: HttpMode,
    required_headers: Vec<String>,
}

impl ServerEntry {
    fn read(item: &Value) -> ServerEntry {
        let server = item.get("server");
        let text = |v: Option<&Value>| {
            v.and_then(Value::as_str)
                .map(|s| s.chars().take(MAX_FIELD_BYTES).collect::<String>())
        };
        let official = item.get("_meta").and_then(|m| m.get(OFFICIAL_META));
        ServerEntry {
            identity: RegistryPage.identity(item).map(Cow::into_owned),
            name: text(server.and_then(|s| s.get("name"))),
            status: text(official.and_then(|o| o.get("status"))),
            is_latest: official
                .and_then(|o| o.get("isLatest"))
                .and_then(Value::as_bool),
            remote: server
                .and_then(|s| s.get("remotes"))
                .and_then(Value::as_array)
                .and_then(|remotes| pick_remote(remotes)),
        }
    }
}

/// The first `streamable-http` remote, else the first `sse` one.
fn pick_remote(remotes: &[Value]) -> Option<Remote> {
    let of_type = |t: &str| {
        remotes
            .iter()
            .find(|r| r.get("type").and_then(Value::as_str) == Some(t))
    };
    let (remote, transport) = match of_type("streamable-http") {
        Some(r) => (r, HttpMode::StreamableHttp),
        None => (of_type("sse")?, HttpMode::Sse),
    };
    let url = remote.get("url").and_then(Value::as_str)?;
    let required_headers = remote
        .get("headers")
        .and_then(Value::as_array)
        .map(|headers| {
            headers
                .iter()
                .filter(|h| h.get("isRequired").and_then(Value::as_bool) == Some(true))
                .filter_map(|h| h.get("name").and_then(Value::as_str))
                .take(MAX_HEADERS)
                .map(|n| n.chars().take(MAX_FIELD_BYTES).collect())
                .collect()
        })
        .unwrap_or_default();
    Some(Remote {
        // Longer than an entry may be: kept whole up to the cap, refused by
        // the entry's URL check.
        url: url.chars().take(super::entry::MAX_URL_BYTES + 1).collect(),
        transport,
        required_headers,
    })
}

/// The walker's pager over the registry's HTTP API: one GET per page, the
/// entries of each page kept (compactly) for after the walk.
struct RegistryPager<'a> {
    fetcher: Fetcher,
    registry: &'a RegistrySource,
    /// Index into [`PATHS`]: 1 once `/v0.1/servers` answered 404.
    path: usize,
    requests: i64,
    /// The entries of the current attempt, in page order.
    entries: Vec<ServerEntry>,
}

impl RegistryPager<'_> {
    fn page_url(&self, cursor: Option<&str>) -> Url {
        let mut url = self.registry.endpoint.http.url.clone();
        let base = url.path().trim_end_matches('/').to_string();
        url.set_path(&format!("{base}/{}", PATHS[self.path]));
        {
            let mut q = url.query_pairs_mut();
            q.append_pair("version", "latest");
            q.append_pair("limit", &self.registry.limit.to_string());
            if let Some(search) = &self.registry.search {
                q.append_pair("search", search);
            }
            if let Some(cursor) = cursor {
                q.append_pair("cursor", cursor);
            }
        }
        url
    }
}

impl Pager<RegistryPage> for RegistryPager<'_> {
    async fn fetch_page(
        &mut self,
        _kind: RegistryPage,
        cursor: Option<&str>,
        timeout: Duration,
    ) -> PageResult {
        if cursor.is_none() {
            // A new attempt: what an earlier one listed does not count.
            self.entries.clear();
        }
        self.requests += 1;
        let mut fetched = self
            .fetcher
            .get(&self.page_url(cursor), HeaderMap::new(), timeout)
            .await;
        let not_found = matches!(
            &fetched.outcome,
            Err(PageError::Transport {
                http_status: Some(404),
                ..
            })
        );
        if cursor.is_none() && self.path == 0 && not_found {
            // No stable API here: the development path, at once.
            self.path = 1;
            self.requests += 1;
            fetched = self
                .fetcher
                .get(&self.page_url(cursor), HeaderMap::new(), timeout)
                .await;
        }
        let outcome = fetched.outcome.and_then(|answer| {
            serde_json::from_slice::<Value>(&answer.body)
                .map_err(|e| PageError::Malformed(format!("not JSON: {e}")))
        });
        let outcome = match outcome {
            Ok(page) => {
                if let Some(items) = page.get("servers").and_then(Value::as_array) {
                    self.entries.extend(items.iter().map(ServerEntry::read));
                }
                Ok(page)
            }
            // The registry rejected a cursor it handed out: the walker
            // restarts once, then reports `invalid_cursor`.
            Err(PageError::Transport {
                http_status: Some(status @ (400 | 422)),
                ..
            }) if cursor.is_some() => Err(PageError::Rpc {
                code: INVALID_PARAMS,
                message: format!("the registry rejected its own cursor (HTTP {status})"),
            }),
            Err(e) => Err(e),
        };
        PageResult {
            outcome,
            request_id: self.requests,
            bytes: fetched.bytes,
            duration: fetched.duration,
            started: fetched.started,
            span_id: None,
            list_changed: 0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_registry_page_is_read_where_the_api_keeps_things() {
        let page = json!({
            "servers": [{"server": {"name": "io.x/a", "version": "2.0.0"}}, {"server": {"name": "io.x/b"}}, {}],
            "metadata": {"nextCursor": "c2", "count": 3}
        });
        let servers = page["servers"].as_array().unwrap();
        assert_eq!(
            RegistryPage.identity(&servers[0]).as_deref(),
            Some("io.x/a@2.0.0")
        );
        assert_eq!(
            RegistryPage.identity(&servers[1]).as_deref(),
            Some("io.x/b")
        );
        assert_eq!(RegistryPage.identity(&servers[2]), None);
        let obj = page.as_object().unwrap();
        assert_eq!(RegistryPage.next_cursor(obj), Some(&json!("c2")));
        assert_eq!(RegistryPage.next_cursor(&Map::new()), None);
    }

    #[test]
    fn streamable_http_wins_over_sse_and_required_headers_are_kept() {
        let remotes = json!([
            {"type": "sse", "url": "https://h.invalid/sse"},
            {"type": "streamable-http", "url": "https://h.invalid/mcp",
             "headers": [{"name": "X-Key", "isRequired": true}, {"name": "X-Opt", "isRequired": false}]}
        ]);
        let r = pick_remote(remotes.as_array().unwrap()).unwrap();
        assert_eq!(r.url, "https://h.invalid/mcp");
        assert_eq!(r.transport, HttpMode::StreamableHttp);
        assert_eq!(r.required_headers, vec!["X-Key".to_string()]);
        let sse = json!([{"type": "sse", "url": "https://h.invalid/sse"}]);
        assert_eq!(
            pick_remote(sse.as_array().unwrap()).unwrap().transport,
            HttpMode::Sse
        );
        assert!(pick_remote(&[json!({"type": "stdio"})]).is_none());
    }
}
