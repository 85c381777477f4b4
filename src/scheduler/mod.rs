//! Scheduling polls: ticks, jitter, backoff, single-flight, the concurrency
//! cap, shards, reloads and watch mode. Calls `poll` and hands every report
//! to the one sink fan-out.
//!
//! Imports go one way: `service` → {`discovered`, `schedule`} → `watch` →
//! `shared` (and `shard`); `discovered` runs the discovery sources.

pub mod discovered;
pub mod schedule;
pub mod service;
pub mod shard;
pub mod shared;
pub mod watch;

pub use service::{ReloadOutcome, Service};
pub use shard::Shard;
pub use shared::Shared;
