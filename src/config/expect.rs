//! `expect:` of a target or a discovery source, resolved: what a listing
//! must reach to be judged complete rather than `degraded`.

use mcp_listing::Kind;
use std::collections::BTreeMap;
use std::time::Duration;

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ExpectConfig {
    /// Minimum unique items expected per kind.
    pub items: BTreeMap<Kind, u64>,
    /// `page_latency:`: a listing with a page that took longer is
    /// `degraded` (`slow_pages`).
    pub page_latency: Option<Duration>,
}
