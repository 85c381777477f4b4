//! A tap as resolved — from the `taps:` section (docs/configuration.md,
//! "taps") or from `mcp-exporter tap`'s flags — its listener, its upstream
//! and its bounds: the one shape a tap is started from. Plain data;
//! `crate::tap` builds a running tap from it.

use super::limits::Limits;
use super::tls::TlsConfig;
use mcp_observer::RouteRule;
use mcp_tap::apps::AppRule;
use mcp_tap::{MergeSettings, TapLimits};
use std::path::PathBuf;
use std::time::Duration;
use url::Url;

/// Defaults of a tap's own keys; docs/configuration.md quotes them. Those
/// of the data path and of merging are the tap crate's own
/// (`TapLimits::DEFAULT`, `MergeSettings::DEFAULT`), those of the observer
/// the observer crate's; `mcp-exporter tap`'s flags take these.
pub const DEFAULT_ABANDON_AFTER: Duration = Duration::from_secs(30);
pub const DEFAULT_INSPECT_BYTES: u64 = TapLimits::DEFAULT.inspect_bytes as u64;
pub const DEFAULT_MAX_CLIENTS: usize = 64;
pub const DEFAULT_MAX_MERGED_BYTES: u64 = MergeSettings::DEFAULT_MAX_MERGED_BYTES as u64;
pub const DEFAULT_MERGE_PAGE_BURST: u32 = MergeSettings::DEFAULT_PAGE_BURST;
pub const DEFAULT_MERGE_PAGES_PER_SECOND: u32 = MergeSettings::DEFAULT_PAGES_PER_SECOND;
pub const DEFAULT_MERGE_REUSE_FOR: Duration = MergeSettings::DEFAULT_REUSE_FOR;
pub const DEFAULT_UPSTREAM_TIMEOUT: Duration = TapLimits::DEFAULT.upstream_head_timeout;
pub const DEFAULT_MAX_ROUTES: usize = 64;
pub const DEFAULT_MAX_CLIENT_ROUTES: usize = 256;
pub const DEFAULT_LEARN_EVERY: Duration = Duration::from_secs(15 * 60);
/// The report file's bound (`mcp-exporter tap --report.max-bytes`).
pub const DEFAULT_REPORT_MAX_BYTES: u64 = 16 << 20;
pub const DEFAULT_MAX_SESSIONS: usize = mcp_observer::DEFAULT_MAX_SESSIONS;
pub const DEFAULT_CLIENT_IDLE: Duration = mcp_observer::DEFAULT_CLIENT_IDLE;

/// A tap's limits where its `limits:` says nothing: connecting to the
/// upstream, and a merged walk (pages, items, one page's bytes, time) —
/// the tap crate's defaults.
pub const TAP_LIMITS: Limits = {
    let walk = MergeSettings::DEFAULT_WALK;
    Limits {
        timeout: walk.listing_timeout,
        page_timeout: walk.page_timeout,
        connect_timeout: TapLimits::DEFAULT.connect_timeout,
        max_pages: walk.max_pages,
        max_items: walk.max_items,
        max_response_bytes: MergeSettings::DEFAULT_MAX_PAGE_BYTES as u64,
        invalid_cursor_restarts: walk.invalid_cursor_restarts,
    }
};

#[derive(Debug, Clone, PartialEq)]
pub struct TapConfig {
    /// The `tap` label.
    pub name: String,
    /// Where it was declared, which says how its errors name their keys
    /// and whether a reload changes it.
    pub origin: TapOrigin,
    pub listener: TapListener,
    pub upstream: TapUpstream,
    /// A configured target whose last complete poll is the catalogue
    /// clients are compared with.
    pub target: Option<String>,
    pub abandon_after: Duration,
    pub inspect_bytes: u64,
    pub max_clients: usize,
    /// Sessions the observer follows at once (`max_sessions`).
    pub max_sessions: usize,
    /// A client with no list request for this long is forgotten with its
    /// series (`client_idle`).
    pub client_idle: Duration,
    /// Client connections at once, when the configuration lowers the
    /// tap's share of the open-file limit (`crate::tap::fds`).
    pub max_connections: Option<usize>,
    /// A request header naming the client, checked as a header name.
    pub client_header: Option<String>,
    /// The operator's apps (`apps:`), by source address or User-Agent.
    pub apps: Vec<AppRule>,
    pub merge: TapMerge,
    pub limits: Limits,
    /// One JSON line per client listing.
    pub report: Option<TapReport>,
    /// A log line per client listing (`mcp-exporter tap --log.listings`).
    pub log_listings: bool,
    pub routes: TapRoutes,
}

/// Where a tap was declared.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TapOrigin {
    /// `taps:` in the configuration file: reloaded with it.
    File,
    /// `mcp-exporter tap`'s flags: as long as the process.
    Flags,
}

impl TapOrigin {
    /// How the setting `key` (as the file writes it) is named to people:
    /// the key, or the flag that sets it.
    pub fn key(self, key: &'static str, flag: &'static str) -> &'static str {
        match self {
            TapOrigin::File => key,
            TapOrigin::Flags => flag,
        }
    }
}

/// The report file: `report:` (`--report`) and its bound.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TapReport {
    pub path: PathBuf,
    pub max_bytes: u64,
}

/// The upstream's endpoints the tap tells apart (a gateway's servers):
/// `routes:`, `max_routes:`, `max_client_routes:`, `learn_paths:`,
/// `learn_catalogue:` and `learn_every:` (docs/clients.md, "Routes").
#[derive(Debug, Clone, PartialEq)]
pub struct TapRoutes {
    pub named: Vec<TapRoute>,
    /// Routes made from paths (a pattern's match, a path learned) besides
    /// the named ones; then `other`.
    pub max_routes: usize,
    /// (client, route) pairs told apart; then a client's further routes
    /// are `other`.
    pub max_client_routes: usize,
    /// A path no route matches becomes a route of its own.
    pub learn_paths: bool,
    /// The tap walks each route itself this often (`learn_catalogue: true`).
    pub learn_every: Option<Duration>,
}

/// One entry of `routes:`.
#[derive(Debug, Clone, PartialEq)]
pub struct TapRoute {
    pub rule: RouteRule,
    /// A configured target whose last complete poll is this route's
    /// catalogue (literal paths only).
    pub target: Option<String>,
}

impl TapRoute {
    /// The name its requests are told under, for a literal path: the
    /// operator's, else the path normalised.
    pub fn route_name(&self) -> Option<String> {
        let path = self.rule.literal_path()?;
        Some(self.rule.name().map_or(path, str::to_string))
    }
}

/// Where clients connect: `listen:` and its `tls:`.
#[derive(Debug, Clone, PartialEq)]
pub struct TapListener {
    /// `host:port`.
    pub address: String,
    pub tls: Option<ListenTls>,
}

/// The server a tap forwards to: `upstream:` and `upstream_timeout:`.
#[derive(Debug, Clone, PartialEq)]
pub struct TapUpstream {
    pub url: Url,
    pub tls: TlsConfig,
    /// Its answer head must come within this (else 504).
    pub timeout: Duration,
}

/// Pages merged for clients that would read only the first:
/// `merge_pages:`, `max_merged_bytes:`, `merge_credential_headers:`,
/// `merge_page_burst:` and `merge_pages_per_second:`.
#[derive(Debug, Clone, PartialEq)]
pub struct TapMerge {
    /// Client identities merged for (`all` for every one); empty: nobody.
    pub clients: Vec<String>,
    pub max_merged_bytes: u64,
    /// Header names (checked, lower-cased) keying reuse besides the usual
    /// credential headers.
    pub credential_headers: Vec<String>,
    pub page_burst: u32,
    pub pages_per_second: u32,
    /// How long a merged answer is reused (no key: the default, or
    /// `mcp-exporter tap --merge-reuse-for`).
    pub reuse_for: Duration,
}

/// TLS on a tap's listener.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListenTls {
    pub cert_file: PathBuf,
    pub key_file: PathBuf,
    pub client_ca_file: Option<PathBuf>,
}
