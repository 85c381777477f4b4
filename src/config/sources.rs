//! The resolved `discovery:` section: where targets come from besides
//! `targets:`, and what binds them (a module). docs/discovery.md describes
//! every key.

use super::endpoint::HttpEndpoint;
use super::expect::ExpectConfig;
use super::limits::Limits;
use super::schedule::Schedule;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

/// Defaults of a `discovery:` source; docs/discovery.md quotes these.
pub mod source_default {
    use crate::config::limits::Limits;
    use std::time::Duration;
    /// As Prometheus's `file_sd_configs`.
    pub const FILE_SD_REFRESH: Duration = Duration::from_secs(300);
    /// As Prometheus's `http_sd_configs`.
    pub const HTTP_SD_REFRESH: Duration = Duration::from_secs(60);
    /// Registry aggregators are asked to poll about hourly.
    pub const REGISTRY_REFRESH: Duration = Duration::from_secs(3600);
    /// The shortest accepted `refresh_interval`.
    pub const MIN_REFRESH: Duration = Duration::from_secs(1);
    pub const MAX_TARGETS: usize = 10_000;
    /// One file, one http_sd answer or one registry page.
    pub const MAX_BYTES: u64 = 16 * 1024 * 1024;
    pub const HTTP_TIMEOUT: Duration = Duration::from_secs(30);
    pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);
    /// A registry's whole walk.
    pub const REGISTRY_TIMEOUT: Duration = Duration::from_secs(300);
    pub const REGISTRY_PAGE_TIMEOUT: Duration = Duration::from_secs(30);
    pub const REGISTRY_MAX_PAGES: u32 = 1000;
    /// The registry API's own maximum page size.
    pub const REGISTRY_LIMIT: u32 = 100;
    /// Labels one target may carry on `mcp_target_info`.
    pub const MAX_LABELS: usize = 32;
    /// Bytes of one label value.
    pub const MAX_LABEL_VALUE_BYTES: usize = 1024;
    /// An `http_sd` answer's bounds (`timeout` is the whole answer; the
    /// walk's keys do not apply).
    pub const HTTP_SD_LIMITS: Limits = Limits {
        timeout: HTTP_TIMEOUT,
        page_timeout: HTTP_TIMEOUT,
        connect_timeout: CONNECT_TIMEOUT,
        max_pages: 1,
        max_items: Limits::DEFAULT.max_items,
        max_response_bytes: MAX_BYTES,
        invalid_cursor_restarts: 0,
    };
    /// A registry walk's bounds (`timeout` is the whole walk).
    pub const REGISTRY_LIMITS: Limits = Limits {
        timeout: REGISTRY_TIMEOUT,
        page_timeout: REGISTRY_PAGE_TIMEOUT,
        connect_timeout: CONNECT_TIMEOUT,
        max_pages: REGISTRY_MAX_PAGES,
        max_items: Limits::DEFAULT.max_items,
        max_response_bytes: MAX_BYTES,
        invalid_cursor_restarts: 1,
    };
}

/// One `discovery:` source.
#[derive(Debug, Clone, PartialEq)]
pub struct SourceConfig {
    /// Unique among sources; the `source` of every target it yields.
    pub name: String,
    /// The `modules:` entry every discovered target is bound to.
    pub module: String,
    pub kind: SourceKind,
    /// Re-read (or re-fetched, re-walked) at least this often.
    pub refresh_interval: Duration,
    /// More targets than this fail the refresh (the last good list stays).
    pub max_targets: usize,
    /// What every target of the source gets besides its module.
    pub schedule: Schedule,
    pub jitter: Duration,
    pub expect: ExpectConfig,
    /// Defaults for every target's `mcp_target_info` labels; a group's own
    /// labels win.
    pub labels: BTreeMap<String, String>,
}

/// Where a source's list comes from.
#[derive(Debug, Clone, PartialEq)]
pub enum SourceKind {
    /// Prometheus `file_sd` files: each pattern's last path segment may
    /// hold one `*`.
    FileSd {
        files: Vec<PathBuf>,
        max_file_bytes: u64,
    },
    /// Prometheus `http_sd`: the whole list at each GET.
    HttpSd(SourceEndpoint),
    /// A registry of MCP servers (`GET /v0.1/servers`).
    Registry(RegistrySource),
}

impl SourceKind {
    /// `file_sd`, `http_sd` or `registry`, as the configuration writes it.
    pub fn label(&self) -> &'static str {
        match self {
            SourceKind::FileSd { .. } => "file_sd",
            SourceKind::HttpSd(_) => "http_sd",
            SourceKind::Registry(_) => "registry",
        }
    }
}

/// An HTTP endpoint a source asks: its own credentials and TLS (never a
/// module's or a target's; no redirects) and its bounds. `http_sd` reads
/// `timeout` (the whole answer), `connect_timeout` and
/// `max_response_bytes`; a registry also `page_timeout` and `max_pages`,
/// and `timeout` is its whole walk.
#[derive(Debug, Clone, PartialEq)]
pub struct SourceEndpoint {
    pub http: HttpEndpoint,
    pub limits: Limits,
}

/// A registry and what its walk asks for.
#[derive(Debug, Clone, PartialEq)]
pub struct RegistrySource {
    pub endpoint: SourceEndpoint,
    /// `search=` (server names containing it); `None` sends none.
    pub search: Option<String>,
    /// `limit=`: entries per page asked for.
    pub limit: u32,
}

/// Labels a discovered target's `mcp_target_info` has already.
const RESERVED_LABELS: [&str; 2] = ["target", "source"];

/// Why a label may not be given to a discovered target, if it may not.
/// The same rule holds for a source's `labels:` and a group's `labels`.
pub fn check_label(name: &str, value: &str) -> std::result::Result<(), String> {
    if !is_label_name(name) {
        return Err(format!(
            "label name {name:?} is not a valid Prometheus label name ([a-zA-Z_][a-zA-Z0-9_]*)"
        ));
    }
    if name.starts_with("__") {
        return Err(format!(
            "label `{name}` starts with `__`, which Prometheus reserves for meta labels"
        ));
    }
    if RESERVED_LABELS.contains(&name) {
        return Err(format!(
            "label `{name}` is set by the exporter (`mcp_target_info{{target, source}}`)"
        ));
    }
    if value.len() > source_default::MAX_LABEL_VALUE_BYTES {
        return Err(format!(
            "the value of label `{name}` is longer than {} bytes",
            source_default::MAX_LABEL_VALUE_BYTES
        ));
    }
    Ok(())
}

/// `[a-zA-Z_][a-zA-Z0-9_]*`.
pub fn is_label_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// Prometheus's rule for `file_sd` patterns: a `*` only in the last path
/// segment, at most one, and a `.json`, `.yml` or `.yaml` name.
pub fn check_file_pattern(pattern: &str) -> std::result::Result<(), String> {
    let (dir, last) = pattern.rsplit_once('/').unwrap_or(("", pattern));
    if dir.contains('*') {
        return Err("has a `*` outside its last path segment".into());
    }
    if last.matches('*').count() > 1 {
        return Err("has more than one `*`".into());
    }
    if last.contains(['?', '[', ']']) {
        return Err("may hold only `*` as a wildcard".into());
    }
    let lower = last.to_ascii_lowercase();
    if ![".json", ".yml", ".yaml"]
        .iter()
        .any(|ext| lower.ends_with(ext))
    {
        return Err("must end in .json, .yml or .yaml".into());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_patterns_follow_prometheus() {
        assert!(check_file_pattern("/etc/t/*.json").is_ok());
        assert!(check_file_pattern("targets.yaml").is_ok());
        assert!(check_file_pattern("/etc/t/tg_*.YML").is_ok());
        assert!(check_file_pattern("/etc/*/t.json").is_err());
        assert!(check_file_pattern("/etc/t/*a*.json").is_err());
        assert!(check_file_pattern("/etc/t/*.txt").is_err());
        assert!(check_file_pattern("/etc/t/?.json").is_err());
    }

    #[test]
    fn labels_are_prometheus_names_and_not_ours() {
        assert!(check_label("team", "x").is_ok());
        assert!(check_label("_x1", "x").is_ok());
        assert!(check_label("1x", "x").is_err());
        assert!(check_label("a-b", "x").is_err());
        assert!(check_label("__meta_x", "x").is_err());
        assert!(check_label("target", "x").is_err());
        assert!(check_label("team", &"v".repeat(2000)).is_err());
    }
}
