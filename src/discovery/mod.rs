//! Targets from where a fleet keeps them: Prometheus `file_sd` files, an
//! `http_sd` endpoint, a registry of MCP servers. Each source kind is one
//! file behind one trait, [`DiscoverySource`] (as blackbox_exporter keeps one prober
//! per file): it produces its whole list now, as a plain [`Refresh`]. What
//! every entry must pass is `entry.rs`; turning lists into bound targets
//! (duplicates, the module's settings) is `fleet.rs`; the refresh loop is
//! `runner.rs`; what is kept per source (the last good list) is
//! `status.rs`; what one refresh may keep, in bytes, is `budget.rs`.
//!
//! Arrows: discovery → {config, mcp_listing, mcp_wire}. It knows nothing
//! of the poller, the sinks or the metrics: the poller feeds what a source
//! yields into the same reconcile that reloads use, and records each
//! refresh in the telemetry.

mod any_seed;
pub mod budget;
pub mod entry;
pub mod fetch;
pub mod file_sd;
pub mod fleet;
pub mod http_sd;
pub mod refresh;
pub mod registry;
mod registry_page;
pub mod runner;
mod scalar;
pub mod sd_format;
pub mod status;

pub use entry::{Entry, SkipList, SkipReason, Skipped};
pub use refresh::{Refresh, RefreshFailure, RefreshOutcome, SourceList, WalkStats};

use std::future::Future;

/// A configuration the discovery tests load from YAML text.
#[cfg(test)]
fn test_config(yaml: &str) -> crate::config::Config {
    crate::config::load_str(yaml, "t.yaml").unwrap().config
}

/// One source kind: its whole list, now.
pub trait DiscoverySource: Send {
    /// Read, fetch or walk the list once. Bounded in time and bytes; every
    /// failure is data (the refresh's outcome), never a panic.
    fn refresh(&mut self) -> impl Future<Output = Refresh> + Send;

    /// A cheap look between refreshes: may the list have changed since the
    /// last refresh? Sources that cannot tell without fetching say no and
    /// are refreshed on their interval only.
    fn changed(&mut self) -> impl Future<Output = bool> + Send {
        std::future::ready(false)
    }
}
