//! mcp-exporter: lists MCP servers to completion and reports how the walk went.
//!
//! The application floor of the workspace (docs/architecture.md): the crate
//! `mcp_wire` speaks the wire and `mcp_listing` walks cursors into a pure
//! `ListingReport`; here `poll` turns one target into a `PollReport`,
//! `scheduler` schedules polls, `sinks` fans each report out to `baseline`,
//! `verdict`, `telemetry` and the status store, and `web` serves them.

pub mod baseline;
pub mod cli;
pub mod config;
pub mod discovery;
pub mod files;
pub mod heap;
pub mod listen_tls;
pub mod poll;
pub mod scheduler;
pub mod sinks;
pub mod tap;
pub mod telemetry;
pub mod verdict;
pub mod web;
