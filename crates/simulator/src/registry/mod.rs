//! The simulated MCP Registry: the generic registry API's server list
//! (`GET /v0.1/servers`, `/v0/servers`) over the virtual servers, with
//! decoy entries a discoverer must skip and a fault on one page.
//! `config` reads the YAML block, `entry` writes one entry, `query` reads
//! a request and its opaque cursor; this file pages.

pub mod config;
mod entry;
mod query;

use crate::config::ServerConfig;
use crate::cursor::CursorKey;
use crate::scenario::Scenario;
use crate::ServingMode;
use config::{LastCursor, RegistryFault, SimulatedRegistryConfig};
use entry::{EntryKind, RegistryEntry};
use query::{ListFilters, ListQuery, PagePosition};
use serde_json::{json, Map, Value};
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// The cursor key's server name: no virtual server can have it (names
/// hold no NUL), so no MCP cursor opens as a registry cursor.
const KEY_NAME: &str = "\0registry";

/// What `GET /v0.1/servers` answers: an HTTP status, a JSON body, after a
/// delay.
#[derive(Debug)]
pub struct ListAnswer {
    pub status: u16,
    pub body: Value,
    pub delay: Duration,
}

impl ListAnswer {
    fn error(status: u16, message: &str) -> ListAnswer {
        ListAnswer {
            status,
            body: json!({"error": message}),
            delay: Duration::ZERO,
        }
    }
}

pub struct SimulatedRegistry {
    cfg: SimulatedRegistryConfig,
    entries: Vec<RegistryEntry>,
    key: CursorKey,
    mode: ServingMode,
    /// Listings served to their last page, across all clients: the fault
    /// starts when this reaches `after_walks`.
    walks: AtomicU64,
}

impl SimulatedRegistry {
    /// The virtual servers in configuration order, then the decoys.
    /// `single`: the one server of a run without `--scenarios` (at `/mcp`).
    pub fn new(
        cfg: SimulatedRegistryConfig,
        servers: &[ServerConfig],
        single: bool,
        mode: ServingMode,
        seed: u64,
    ) -> SimulatedRegistry {
        let mut entries: Vec<RegistryEntry> = servers
            .iter()
            .map(|s| RegistryEntry {
                short: s.name.clone(),
                endpoint: if single {
                    String::new()
                } else {
                    format!("/{}", s.name)
                },
                what: EntryKind::Server {
                    scenario: s.scenario.label(),
                    auth: s.scenario == Scenario::Auth,
                },
                minute: 0,
            })
            .collect();
        for (decoy, count) in &cfg.decoys {
            for n in 1..=*count {
                let short = format!("decoy-{}-{n}", decoy.label());
                entries.push(RegistryEntry {
                    endpoint: format!("/{short}"),
                    short,
                    what: EntryKind::Decoy(*decoy),
                    minute: 0,
                });
            }
        }
        for (i, e) in entries.iter_mut().enumerate() {
            e.minute = u32::try_from(i).unwrap_or(u32::MAX);
        }
        SimulatedRegistry {
            cfg,
            entries,
            key: CursorKey::new(seed, KEY_NAME, 0),
            mode,
            walks: AtomicU64::new(0),
        }
    }

    /// The answer to one list request. `base` is the origin remotes point
    /// at (`http://HOST:PORT`); `headers` the request's header names.
    pub fn list<'a>(
        &self,
        query: &HashMap<String, String>,
        base: &str,
        mut headers: impl Iterator<Item = &'a str>,
    ) -> ListAnswer {
        if let Some(h) = headers.find(|h| self.cfg.forbid_headers.iter().any(|f| f == h)) {
            return ListAnswer::error(400, &format!("this registry forbids the {h} header"));
        }
        let q = match ListQuery::parse(query, &self.key, self.cfg.page_size, self.cfg.max_limit) {
            Ok(q) => q,
            Err(e) => return ListAnswer::error(400, &e.to_string()),
        };
        let fault = self
            .cfg
            .fault
            .filter(|_| self.walks.load(Ordering::Relaxed) >= self.cfg.after_walks);
        let on_fault_page = q.at.page == self.cfg.page;
        let selected: Vec<&RegistryEntry> = self
            .entries
            .iter()
            .filter(|e| matches(e, &self.cfg.namespace, &q.filters))
            .collect();
        match fault {
            Some(RegistryFault::Http500) if on_fault_page => {
                return ListAnswer::error(500, "simulated registry failure")
            }
            _ => {}
        }
        let endless = fault == Some(RegistryFault::Endless) && q.at.page >= self.cfg.page;
        let (page, next) = self.page(&q, &selected, endless);
        let next = match fault {
            Some(RegistryFault::CursorCycle) if on_fault_page && next.is_some() => {
                // Page 1's nextCursor again (same limit, same filters).
                let second = PagePosition {
                    offset: q.limit,
                    page: 2,
                };
                Some(json!(q.cursor(&self.key, second)))
            }
            Some(RegistryFault::GarbageCursor) if on_fault_page => {
                Some(json!("not-a-cursor-this-registry-issued"))
            }
            _ => next,
        };
        if next.is_none() {
            self.walks.fetch_add(1, Ordering::Relaxed);
        }
        let mut metadata = Map::new();
        metadata.insert("count".into(), json!(page.len()));
        match (next, self.cfg.last_cursor) {
            (Some(c), _) => {
                metadata.insert("nextCursor".into(), c);
            }
            (None, LastCursor::Absent) => {}
            (None, LastCursor::JsonNull) => {
                metadata.insert("nextCursor".into(), Value::Null);
            }
            (None, LastCursor::EmptyString) => {
                metadata.insert("nextCursor".into(), json!(""));
            }
        }
        let servers: Vec<Value> = page
            .iter()
            .map(|e| e.to_json(&self.cfg.namespace, base, self.mode))
            .collect();
        let mut body = json!({"servers": servers, "metadata": metadata});
        if fault == Some(RegistryFault::Oversize) && on_fault_page {
            body["padding"] = json!("x".repeat(self.cfg.size_bytes));
        }
        let delay = match fault {
            Some(RegistryFault::SlowPage) if on_fault_page => self.cfg.delay,
            _ => Duration::ZERO,
        };
        ListAnswer {
            status: 200,
            body,
            delay,
        }
    }

    /// The entries of the page at `q.at` and the cursor of the next one
    /// (`None` at the end). `endless`: entries wrap round and there is
    /// always a next page.
    fn page<'e>(
        &self,
        q: &ListQuery,
        selected: &[&'e RegistryEntry],
        endless: bool,
    ) -> (Vec<&'e RegistryEntry>, Option<Value>) {
        let total = selected.len();
        let start = q.at.offset as usize;
        let page: Vec<&RegistryEntry> = if endless && total > 0 {
            (0..q.limit as usize)
                .map(|i| selected[(start + i) % total])
                .collect()
        } else {
            selected
                .iter()
                .skip(start)
                .take(q.limit as usize)
                .copied()
                .collect()
        };
        let end = start.saturating_add(q.limit as usize);
        let offset = match (endless, total) {
            (true, 0) => 0,
            // Wrapping keeps an endless walk's offsets small.
            (true, _) => end % total,
            (false, _) if end >= total => return (page, None),
            (false, _) => end,
        };
        let next = PagePosition {
            // Below the entry count, which came from a u32-sized config.
            offset: u32::try_from(offset).unwrap_or(u32::MAX),
            page: q.at.page.saturating_add(1),
        };
        (page, Some(json!(q.cursor(&self.key, next))))
    }
}

/// Does `e` pass the request's filters?
fn matches(e: &RegistryEntry, namespace: &str, f: &ListFilters) -> bool {
    if let Some(s) = &f.search {
        let name = format!("{namespace}/{}", e.short).to_lowercase();
        if !name.contains(s.as_str()) {
            return false;
        }
    }
    match f.version.as_deref() {
        // A registry whose filter leaks: not-latest decoys pass it, which
        // is their point.
        Some("latest") => {}
        Some(v) if v != e.version() => return false,
        _ => {}
    }
    match f.updated_since {
        Some(t) => e.updated_at() > t,
        None => true,
    }
}
