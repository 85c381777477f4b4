//! mcp-exporter: lists MCP servers to completion and reports how the walk went.
//!
//! Layers (see docs/architecture.md): `mcp` speaks the wire, `listing` walks
//! cursors into a pure `ListingReport`, `poll` turns one target into a
//! `PollReport`, `poller` schedules polls, `sinks` fans each report out to
//! `baseline`, `telemetry` and the status store, and `web` serves them.

pub mod baseline;
pub mod cli;
pub mod config;
pub mod poll;
pub mod poller;

pub mod sinks;
pub mod telemetry;
pub mod verdict;
pub mod web;
