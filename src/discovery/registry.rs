//! A registry of MCP servers (the generic registry API): `GET
//! /v0.1/servers` (falling back to `/v0/servers`) with `version=latest`,
//! walked page by page by the walker itself, so every guard holds here as
//! for an MCP listing — cursor cycle, page cap, byte cap, deadline — and
//! an empty or null `nextCursor` ends the walk, as the registry API says.
//! One target per server entry, named by the entry's `name`, from its
//! first `streamable-http` remote, else its first `sse` remote.
//!
//! Each page is read as a stream (`registry_page.rs`): of every entry only
//! what becomes a target or a skip reason is kept, cut, and counted
//! against the source's byte budget (`budget.rs`) as the walk goes; an
//! entry without a name is a skip, never kept.

use super::budget::{entry_bytes, KeptBudget, OverBudget};
use super::entry::{admit_all, Candidate, SkipList, SkipReason, Skipped};
use super::fetch::Fetcher;
use super::refresh::{Refresh, RefreshFailure, WalkStats};
use super::registry_page::{read_page, ServerEntry};
use super::DiscoverySource;
use crate::config::{ProbeModule, RegistrySource, SourceConfig};
use http::HeaderMap;
use mcp_listing::fingerprint::ItemFingerprint;
use mcp_listing::walk::INVALID_PARAMS;
use mcp_listing::{
    walk, Era, ExchangeFailure, ListingReport, Outcome, PageError, PageResult, PageShape, Pager,
    WalkLimits,
};
use serde_json::{Map, Value};
use std::borrow::Cow;
use std::collections::{BTreeMap, HashSet};
use std::sync::Arc;
use std::time::{Duration, SystemTime};
use url::Url;

pub use super::registry_page::OFFICIAL_META;

/// The stable path and the development one, tried in this order.
const PATHS: [&str; 2] = ["v0.1/servers", "v0/servers"];

/// A registry page as the walker sees it (`registry_page.rs` reads the
/// answer into it): under `servers` the identity of each named entry
/// (`name@version`, cut as a name), the cursor under
/// `metadata.nextCursor`.
#[derive(Debug, Clone, Copy)]
pub struct RegistryPage;

impl PageShape for RegistryPage {
    fn array_field(self) -> &'static str {
        "servers"
    }

    fn identity(self, item: &Value) -> Option<Cow<'_, str>> {
        item.as_str().map(Cow::Borrowed)
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
            ..self.registry.endpoint.limits.walk_limits()
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
        let rules: &McpRegistry = self;
        let mut pager = RegistryPager {
            fetcher,
            rules,
            path: 0,
            requests: 0,
            kept: Kept::default(),
            over_budget: None,
        };
        let report = walk(&mut pager, RegistryPage, &rules.limits(), Era::Legacy).await;
        let stats = WalkStats {
            pages: report.final_pages,
            requests: report.requests(),
            items: report.unique_items,
            duplicate_items: report.duplicate_items,
            restarts: report.restarts.len() as u32,
            fell_back_to_v0: pager.path == 1,
        };
        let mut refresh = match report.outcome {
            // The walk was stopped where what it kept passed the budget.
            _ if pager.over_budget.is_some() => {
                let why = pager.over_budget.map(|e| e.to_string()).unwrap_or_default();
                Refresh::failed(RefreshFailure::OverBudget, why, started)
            }
            Outcome::Complete => rules.complete(pager.kept, started),
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
    /// The targets of a complete walk: each entry of its last attempt (the
    /// first occurrence of each identity), as the registry's rules left
    /// it, checked against every entry's rules.
    fn complete(&self, kept: Kept, started: SystemTime) -> Refresh {
        let Kept {
            candidates,
            skipped,
            ..
        } = kept;
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
            return Err(nameless());
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

/// What the current attempt of a walk keeps: each identity once (the
/// first occurrence wins, as in the walk), and of each entry the target it
/// may become or the reason it cannot; all of it within the budget.
#[derive(Default)]
struct Kept {
    seen: HashSet<String>,
    candidates: Vec<Candidate>,
    skipped: SkipList,
    budget: KeptBudget,
}

impl Kept {
    /// Keep what `entry` becomes under `rules`; the identity the walker
    /// sees, none for an entry without a name.
    fn keep(
        &mut self,
        rules: &McpRegistry,
        entry: ServerEntry,
    ) -> Result<Option<String>, OverBudget> {
        let Some(identity) = entry.identity.clone() else {
            self.skipped.push_with(SkipReason::InvalidEntry, nameless);
            return Ok(None);
        };
        if self.seen.contains(&identity) {
            return Ok(Some(identity));
        }
        // Kept here and in the walk's own set.
        self.budget.charge(entry_bytes(2 * identity.len(), 0))?;
        self.seen.insert(identity.clone());
        match rules.candidate(entry) {
            Ok(c) => {
                let text = c.name.as_ref().map_or(0, String::len) + c.url.len() + c.origin.len();
                self.budget.charge(entry_bytes(text, 0))?;
                self.candidates.push(c);
            }
            Err(skip) => self.skipped.push(skip),
        }
        Ok(Some(identity))
    }
}

/// An entry without `server.name` (it has no identity either).
fn nameless() -> Skipped {
    let detail = "the entry has no `server.name`";
    Skipped::new("(no name)", "registry", SkipReason::InvalidEntry, detail)
}

/// The walker's pager over the registry's HTTP API: one GET per page, what
/// the entries of each page become kept for after the walk.
struct RegistryPager<'a> {
    fetcher: Fetcher,
    rules: &'a McpRegistry,
    /// Index into [`PATHS`]: 1 once `/v0.1/servers` answered 404.
    path: usize,
    requests: i64,
    /// What the current attempt keeps.
    kept: Kept,
    /// Set when what the walk keeps passed the budget (the walk stopped).
    over_budget: Option<OverBudget>,
}

impl RegistryPager<'_> {
    fn page_url(&self, cursor: Option<&str>) -> Url {
        let registry = &self.rules.registry;
        let mut url = registry.endpoint.http.url.clone();
        let base = url.path().trim_end_matches('/').to_string();
        url.set_path(&format!("{base}/{}", PATHS[self.path]));
        {
            let mut q = url.query_pairs_mut();
            q.append_pair("version", "latest");
            q.append_pair("limit", &registry.limit.to_string());
            if let Some(search) = &registry.search {
                q.append_pair("search", search);
            }
            if let Some(cursor) = cursor {
                q.append_pair("cursor", cursor);
            }
        }
        url
    }
}

impl RegistryPager<'_> {
    /// The page as the walker sees it, its entries kept as they are read.
    fn read(&mut self, body: &[u8]) -> Result<Value, PageError> {
        let (rules, kept) = (self.rules, &mut self.kept);
        let mut over_budget = None;
        let page = read_page(body, &mut |entry| {
            kept.keep(rules, entry)
                .inspect_err(|e| over_budget = Some(*e))
        });
        if let Some(e) = over_budget {
            self.over_budget = Some(e);
            return Err(PageError::Failed(ExchangeFailure::TooLarge {
                limit: e.max,
            }));
        }
        page.map_err(|m| PageError::Failed(ExchangeFailure::Malformed(m)))
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
            self.kept = Kept::default();
        }
        self.requests += 1;
        let mut fetched = self
            .fetcher
            .get(&self.page_url(cursor), HeaderMap::new(), timeout)
            .await;
        let not_found = matches!(
            &fetched.outcome,
            Err(PageError::Failed(ExchangeFailure::Transport {
                http_status: Some(404),
                ..
            }))
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
        let outcome = fetched.outcome.and_then(|answer| self.read(&answer.body));
        let outcome = match outcome {
            Ok(page) => Ok(page),
            // The registry rejected a cursor it handed out: the walker
            // restarts once, then reports `invalid_cursor`.
            Err(PageError::Failed(ExchangeFailure::Transport {
                http_status: Some(status @ (400 | 422)),
                ..
            })) if cursor.is_some() => Err(PageError::Rpc {
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
    use crate::config::SourceKind;

    fn registry() -> McpRegistry {
        let config = crate::discovery::test_config(
            "modules:\n  m:\n    allow: [\"https://h.invalid/\"]\ndiscovery:\n  - name: r\n    module: m\n    registry: {http: {url: \"https://registry.invalid/\"}}\n",
        );
        let source = config.discovery[0].clone();
        let SourceKind::Registry(registry) = source.kind.clone() else {
            panic!("a registry source");
        };
        McpRegistry::new(Arc::new(source), config.modules["m"].clone(), registry)
    }

    fn entry(name: Option<&str>, identity: Option<String>) -> ServerEntry {
        ServerEntry {
            identity,
            name: name.map(str::to_string),
            remote: Some(super::super::registry_page::Remote {
                url: "https://h.invalid/mcp".into(),
                transport: mcp_listing::HttpMode::StreamableHttp,
                required_headers: Vec::new(),
            }),
            ..ServerEntry::default()
        }
    }

    #[test]
    fn every_entry_is_a_target_or_a_counted_skip() {
        let rules = registry();
        let mut kept = Kept::default();
        let long = mcp_listing::text::name(&format!("io.x/a@{}", "9".repeat(300))).into_owned();
        assert_eq!(
            kept.keep(&rules, entry(Some("io.x/a"), Some(long.clone()))),
            Ok(Some(long.clone()))
        );
        // A repeat of an identity is the walker's duplicate, kept once.
        assert_eq!(
            kept.keep(&rules, entry(Some("io.x/a"), Some(long.clone()))),
            Ok(Some(long))
        );
        for _ in 0..1000 {
            assert_eq!(kept.keep(&rules, ServerEntry::default()), Ok(None));
        }
        assert_eq!(kept.candidates.len(), 1);
        assert_eq!(kept.skipped.counts[&SkipReason::InvalidEntry], 1000);
        assert!(kept.skipped.entries.len() <= crate::discovery::entry::MAX_SKIPPED_KEPT);
        let refresh = rules.complete(kept, SystemTime::now());
        assert_eq!(refresh.list.entries.len(), 1);
        assert_eq!(refresh.list.entries[0].name, "io.x/a");
    }

    #[test]
    fn keeping_past_the_budget_stops() {
        let rules = registry();
        let mut kept = Kept {
            budget: KeptBudget::new(4096),
            ..Kept::default()
        };
        let result = (0..100)
            .map(|i| kept.keep(&rules, entry(Some("n"), Some(format!("io.x/{i}")))))
            .find(Result::is_err);
        assert_eq!(result, Some(Err(OverBudget { max: 4096 })));
    }
}
