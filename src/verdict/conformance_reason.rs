//! The `conformance_failed` reason: the MUST rules of one kind that failed
//! in the target's latest conformance run.

use super::code::Code;
use super::conformance::ConformanceResult;
use super::reasons::{ago, clock, noun};
use super::types::{Health, Reason};
use mcp_listing::Kind;
use std::fmt::Write as _;

/// `conformance_failed` for `kind`, when a MUST rule failed for it in the
/// latest run: the rule ids, then the first failure's message and evidence.
pub(super) fn reason(
    result: &ConformanceResult,
    kind: Kind,
    now_unix_seconds: f64,
) -> Option<Reason> {
    let failures = result.must_failures(kind);
    let first = failures.first()?;
    let ids: Vec<&str> = failures.iter().map(|f| f.rule).collect();
    let mut m = format!(
        "{} MUST conformance rule{} fail{} for {} at the run of {} ({} ago): {}; first: {}",
        failures.len(),
        if failures.len() == 1 { "" } else { "s" },
        if failures.len() == 1 { "s" } else { "" },
        noun(kind),
        clock(result.at_unix_seconds),
        ago(now_unix_seconds - result.at_unix_seconds),
        ids.join(", "),
        first.message
    );
    if !first.evidence.is_empty() {
        let _ = write!(m, " ({})", first.evidence);
    }
    Some(Reason {
        code: Code::ConformanceFailed,
        kind: Some(kind),
        level: Health::Degraded,
        message: m,
    })
}
