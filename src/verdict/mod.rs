//! The one health verdict per target and kind: `healthy`, `degraded` or
//! `down`, with every reason that applies. Pure: the sink fan-out fills a
//! [`TargetInput`] from the poll report, the baseline diff, the expectations
//! and the references, and every surface (status page, `/api/targets`,
//! `probe`, `/probe?debug=true`, the `mcp_verdict` gauge) shows the result.
//! docs/verdict.md describes every reason code.

pub mod client;
mod code;
pub mod conformance;
mod conformance_reason;
pub mod history;
mod judge;
mod reasons;
pub mod text;
mod types;

pub use code::Code;
pub use conformance::{ConformanceResult, RuleFailure};
pub use history::CatalogueHistory;
pub use judge::{combine, judge};
pub use reasons::{ago, clock, MAX_NAMES_IN_MESSAGE};
pub use types::{
    Change, Health, KindInput, NameChanges, ProtocolGap, Reason, ReferenceGap, TargetInput,
    TargetVerdict, Verdict, DEFAULT_EVENT_WINDOW,
};

#[cfg(test)]
mod tests;
