//! Scheduling polls, and the report one poll produces.

pub mod report;
pub mod schedule;
pub mod service;
pub mod sinks;
pub mod status;
pub mod target_spec;

pub use report::{InvalidCursorProbe, KindDiff, PollReport, PolledTarget, ServerInfo};
