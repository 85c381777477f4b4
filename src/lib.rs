//! mcp-exporter: lists MCP servers to completion and reports how the walk went.
//!
//! Layers (see docs/architecture.md): `mcp` speaks the wire, `listing` walks
//! cursors into a pure `ListingReport`, `poller` schedules polls, `telemetry`
//! and `web` turn reports into metrics, spans and pages.

pub mod baseline;
pub mod cli;
pub mod config;
pub mod conformance;
pub mod listing;
pub mod mcp;
pub mod poller;
pub mod probe;
pub mod simulate;
pub mod telemetry;
pub mod web;
