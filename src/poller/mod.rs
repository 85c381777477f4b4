//! Scheduling polls and the report one poll produces.

pub mod report;

pub use report::{KindDiff, PollReport, PolledTarget, ServerInfo};
