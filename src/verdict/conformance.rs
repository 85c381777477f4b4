//! Serve-mode conformance as the verdict sees it: the failing rules of a
//! target's latest conformance run (the rules of `check`, run on their own
//! slower schedule). `conformance_reason.rs` says the reason they give.
//!
//! Only MUST failures change the level (to `degraded`): they break clients
//! that follow the spec. SHOULD and advice failures are shown on the target
//! page, in `/api/targets` and in `mcp_conformance_failures`, not in the
//! verdict, so a healthy catalogue stays healthy. The result holds until the
//! next run replaces it (a state, not an event).

use mcp_conformance::Requirement;
use mcp_listing::Kind;
use serde::Serialize;

/// One failing rule for one kind.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RuleFailure {
    pub kind: Kind,
    /// A rule id of the closed set in docs/conformance.md.
    pub rule: &'static str,
    /// As `check` reports it (`MUST`, `SHOULD` or `advice`).
    pub level: Requirement,
    /// What the rule found.
    pub message: String,
    /// Where (listing, page, cursor hash, item names); empty when none.
    pub evidence: String,
}

impl RuleFailure {
    pub fn is_must(&self) -> bool {
        self.level == Requirement::Must
    }
}

/// A target's latest conformance run. Bounded: at most one entry per rule
/// and kind (18 rules × 4 kinds), each message and evidence line short.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ConformanceResult {
    /// When the run started.
    pub at_unix_seconds: f64,
    pub protocol_version: Option<String>,
    /// Rule verdicts of the run, all kinds together.
    pub passed: u32,
    pub failed: u32,
    pub not_applicable: u32,
    /// Failing rules, in the catalogue's order per kind.
    pub failures: Vec<RuleFailure>,
}

impl ConformanceResult {
    /// The MUST failures of one kind.
    pub fn must_failures(&self, kind: Kind) -> Vec<&RuleFailure> {
        self.failures
            .iter()
            .filter(|f| f.kind == kind && f.is_must())
            .collect()
    }
}
