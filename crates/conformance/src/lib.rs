//! Pagination conformance: rules over what a listing recorded, for server
//! and gateway authors (`mcp-exporter check`) and, opt-in, for scheduled
//! targets. Pure logic over a [`mcp_listing::Pager`]: no transport, no
//! metrics. docs/conformance.md is the catalogue with the spec sentences.

pub mod evaluate;
pub mod junit;
pub mod record;
pub mod rule;
pub mod run;

#[cfg(test)]
mod tests;

pub use evaluate::evaluate;
pub use rule::{Evidence, Requirement, RuleResult, RuleVerdict};
pub use run::{observe_kind, KindObservations};

use mcp_listing::TransportKind;
use serde::Serialize;

/// The verdicts for one target: every rule for every kind.
#[derive(Debug, Clone, Serialize)]
pub struct ConformanceReport {
    pub target: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub protocol_version: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub transport: Option<TransportKind>,
    /// Why no listing could start (no session), if so.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub session_error: Option<String>,
    pub rules: Vec<RuleResult>,
    pub summary: Summary,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Summary {
    pub pass: u32,
    pub fail: u32,
    #[serde(rename = "n/a")]
    pub not_applicable: u32,
    pub must_failures: u32,
    /// Kinds whose listing could not be completed (or no session at all).
    pub incomplete_listings: u32,
}

impl ConformanceReport {
    pub fn new(target: &str, rules: Vec<RuleResult>) -> ConformanceReport {
        let mut s = Summary::default();
        for r in &rules {
            match r.verdict {
                RuleVerdict::Pass => s.pass += 1,
                RuleVerdict::Fail => s.fail += 1,
                RuleVerdict::NotApplicable => s.not_applicable += 1,
            }
            if r.is_must_failure() {
                s.must_failures += 1;
            }
            if r.id == rule::LISTING_COMPLETE.id && r.verdict == RuleVerdict::Fail {
                s.incomplete_listings += 1;
            }
        }
        ConformanceReport {
            target: target.to_string(),
            protocol_version: None,
            transport: None,
            session_error: None,
            rules,
            summary: s,
        }
    }

    /// `check`'s exit status: 1 when a MUST fails or a listing cannot be
    /// completed, else 0.
    pub fn exit_code(&self) -> u8 {
        let s = &self.summary;
        u8::from(s.must_failures > 0 || s.incomplete_listings > 0 || self.session_error.is_some())
    }

    /// Failing rules only: `(kind, rule id)` pairs, each once.
    pub fn failures(&self) -> Vec<(mcp_listing::Kind, &'static str)> {
        let mut v: Vec<_> = self
            .rules
            .iter()
            .filter(|r| r.verdict == RuleVerdict::Fail)
            .map(|r| (r.kind, r.id))
            .collect();
        v.sort();
        v.dedup();
        v
    }
}
