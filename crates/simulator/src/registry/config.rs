//! The `registry:` block of a `--scenarios` file: how the simulated MCP
//! registry pages, which fault it plays, and which entries a correct
//! discoverer must skip.

use serde::Deserialize;
use std::collections::BTreeMap;
use std::time::Duration;

/// Entries the registry serves that a discoverer must not turn into
/// targets, one kind per skip reason.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Decoy {
    /// `isLatest: false`, version 0.9.0, served even when `version=latest`
    /// is asked (a registry whose filter leaks).
    NotLatest,
    /// Official status `deleted`.
    Deleted,
    /// Official status `deprecated`.
    Deprecated,
    /// No `remotes` (a stdio package only).
    NoRemote,
    /// The remote URL holds `{tenant}`, which nothing resolves.
    UrlVariable,
    /// The remote needs an `X-Api-Key` header (`isRequired: true`).
    RequiredHeader,
}

impl Decoy {
    pub const ALL: [Decoy; 6] = [
        Decoy::NotLatest,
        Decoy::Deleted,
        Decoy::Deprecated,
        Decoy::NoRemote,
        Decoy::UrlVariable,
        Decoy::RequiredHeader,
    ];

    /// As written in YAML, and in the decoy's entry name.
    pub fn label(self) -> &'static str {
        match self {
            Decoy::NotLatest => "not-latest",
            Decoy::Deleted => "deleted",
            Decoy::Deprecated => "deprecated",
            Decoy::NoRemote => "no-remote",
            Decoy::UrlVariable => "url-variable",
            Decoy::RequiredHeader => "required-header",
        }
    }
}

/// How the registry's listing misbehaves on page [`SimulatedRegistryConfig::page`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum RegistryFault {
    /// The page's `nextCursor` is the one page 1 handed out: page 2
    /// repeats its own cursor, page 3 closes A → B → A.
    CursorCycle,
    /// The page is answered after `delay_ms`.
    SlowPage,
    /// The page is an HTTP 500.
    #[serde(rename = "http-500")]
    Http500,
    /// From the page on, the listing never ends: the last page carries a
    /// `nextCursor` and entries wrap round.
    Endless,
    /// The page's `nextCursor` is garbage the registry itself rejects (400).
    GarbageCursor,
    /// The page is padded to `size_mib` MiB.
    Oversize,
}

/// How the end of the listing is said (YAML names avoid a bare `null`,
/// which YAML reads as "not set").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum LastCursor {
    /// No `nextCursor` in `metadata`.
    #[default]
    Absent,
    /// `"nextCursor": null`.
    JsonNull,
    /// `"nextCursor": ""`.
    EmptyString,
}

/// The YAML `registry:` block; every field optional.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RegistryKnobs {
    pub namespace: Option<String>,
    pub page_size: Option<u32>,
    pub max_limit: Option<u32>,
    pub fault: Option<RegistryFault>,
    pub page: Option<u32>,
    pub delay_ms: Option<u64>,
    pub size_mib: Option<u32>,
    pub after_walks: Option<u64>,
    pub last_cursor: Option<LastCursor>,
    #[serde(default)]
    pub decoys: BTreeMap<Decoy, u32>,
    #[serde(default)]
    pub forbid_headers: Vec<String>,
}

/// The registry, resolved.
#[derive(Debug, Clone)]
pub struct SimulatedRegistryConfig {
    /// Entry names are `<namespace>/<virtual server name>`.
    pub namespace: String,
    /// Entries per page when the request gives no `limit`.
    pub page_size: u32,
    /// A larger `limit` is lowered to this.
    pub max_limit: u32,
    pub fault: Option<RegistryFault>,
    /// The 1-based page the fault hits.
    pub page: u32,
    pub delay: Duration,
    pub size_bytes: usize,
    /// The fault starts once this many listings were served to their end.
    pub after_walks: u64,
    pub last_cursor: LastCursor,
    /// How many entries of each decoy kind follow the virtual servers.
    pub decoys: BTreeMap<Decoy, u32>,
    /// Request headers (lower case) answered with a 400: proof a client
    /// sent none of them.
    pub forbid_headers: Vec<String>,
}

pub const DEFAULT_NAMESPACE: &str = "io.github.sim";
pub const DEFAULT_PAGE_SIZE: u32 = 30;
pub const DEFAULT_MAX_LIMIT: u32 = 100;
/// Decoys of one kind: enough for any test, small enough to stay a decoy.
pub const MAX_DECOYS: u32 = 1000;

#[derive(Debug, thiserror::Error)]
pub enum RegistryKnobsError {
    #[error("registry.namespace {0:?}: use letters, digits, '.' or '-'")]
    Namespace(String),
    #[error("registry.{0} must be at least 1")]
    Zero(&'static str),
    #[error("registry.decoys.{0}: at most {MAX_DECOYS}")]
    TooManyDecoys(&'static str),
}

impl RegistryKnobs {
    pub fn resolve(self) -> Result<SimulatedRegistryConfig, RegistryKnobsError> {
        let namespace = self
            .namespace
            .unwrap_or_else(|| DEFAULT_NAMESPACE.to_string());
        let namespace_ok = !namespace.is_empty()
            && namespace
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-'));
        if !namespace_ok {
            return Err(RegistryKnobsError::Namespace(namespace));
        }
        let page_size = self.page_size.unwrap_or(DEFAULT_PAGE_SIZE);
        let max_limit = self.max_limit.unwrap_or(DEFAULT_MAX_LIMIT);
        if page_size == 0 {
            return Err(RegistryKnobsError::Zero("page_size"));
        }
        if max_limit == 0 {
            return Err(RegistryKnobsError::Zero("max_limit"));
        }
        if let Some((decoy, _)) = self.decoys.iter().find(|(_, n)| **n > MAX_DECOYS) {
            return Err(RegistryKnobsError::TooManyDecoys(decoy.label()));
        }
        let slow_default = if self.fault == Some(RegistryFault::SlowPage) {
            1500
        } else {
            0
        };
        Ok(SimulatedRegistryConfig {
            namespace,
            page_size,
            max_limit,
            fault: self.fault,
            page: self.page.unwrap_or(2).max(1),
            delay: Duration::from_millis(self.delay_ms.unwrap_or(slow_default)),
            size_bytes: self.size_mib.unwrap_or(4) as usize * 1024 * 1024,
            after_walks: self.after_walks.unwrap_or(0),
            last_cursor: self.last_cursor.unwrap_or_default(),
            decoys: self.decoys,
            forbid_headers: self
                .forbid_headers
                .iter()
                .map(|h| h.to_ascii_lowercase())
                .collect(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn yaml_knobs_resolve_with_defaults() {
        let k: RegistryKnobs = yaml_serde::from_str(
            "fault: cursor-cycle\npage: 3\ndecoys: {not-latest: 2, url-variable: 1}\nforbid_headers: [Authorization]\n",
        )
        .unwrap();
        let c = k.resolve().unwrap();
        assert_eq!(c.fault, Some(RegistryFault::CursorCycle));
        assert_eq!((c.page, c.page_size, c.max_limit), (3, 30, 100));
        assert_eq!(c.decoys.get(&Decoy::NotLatest), Some(&2));
        assert_eq!(c.forbid_headers, ["authorization"]);
        assert_eq!(c.namespace, DEFAULT_NAMESPACE);
        assert_eq!(c.last_cursor, LastCursor::Absent);
    }

    #[test]
    fn bad_knobs_are_refused() {
        let bad = |yaml: &str| {
            let k: RegistryKnobs = yaml_serde::from_str(yaml).unwrap();
            k.resolve().is_err()
        };
        assert!(bad("page_size: 0\n"));
        assert!(bad("namespace: \"a/b\"\n"));
        assert!(bad("decoys: {deleted: 100000}\n"));
        assert!(yaml_serde::from_str::<RegistryKnobs>("fault: nope\n").is_err());
        let k: RegistryKnobs =
            yaml_serde::from_str("fault: http-500\nlast_cursor: json-null\n").unwrap();
        assert_eq!(k.fault, Some(RegistryFault::Http500));
        assert_eq!(k.last_cursor, Some(LastCursor::JsonNull));
        assert!(yaml_serde::from_str::<RegistryKnobs>("pagesize: 3\n").is_err());
    }
}
