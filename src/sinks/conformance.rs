//! The conformance stage: a scheduled target's conformance run (serve mode,
//! opt-in) becomes its failing-rule series and the result the verdict of
//! every following poll is judged with, until the next run.

use crate::verdict::{ConformanceResult, RuleFailure};
use mcp_conformance::{ConformanceReport, RuleVerdict};
use mcp_listing::text;

/// Longest message or evidence line kept per failing rule, in bytes.
const MAX_TEXT_BYTES: usize = text::MAX_ECHO_BYTES;

/// What the verdict and the pages keep of one run.
pub fn result_of(report: &ConformanceReport, started_unix_seconds: f64) -> ConformanceResult {
    let s = &report.summary;
    ConformanceResult {
        at_unix_seconds: started_unix_seconds,
        protocol_version: report.protocol_version.clone(),
        passed: s.pass,
        failed: s.fail,
        not_applicable: s.not_applicable,
        failures: report
            .rules
            .iter()
            .filter(|r| r.verdict == RuleVerdict::Fail)
            .map(|r| RuleFailure {
                kind: r.kind,
                rule: r.id,
                level: r.level,
                message: truncate(&r.message),
                evidence: truncate(&r.evidence.display()),
            })
            .collect(),
    }
}

fn truncate(s: &str) -> String {
    text::cut(s, MAX_TEXT_BYTES).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use mcp_conformance::rule::{CURSOR_STABLE, ITEMS_IDENTITY, LISTING_COMPLETE};
    use mcp_conformance::{Evidence, Requirement, RuleResult};
    use mcp_listing::Kind;

    #[test]
    fn keeps_failing_rules_only_with_bounded_text() {
        let long = "x".repeat(1000);
        let report = ConformanceReport::new(
            "t",
            vec![
                RuleResult::pass(LISTING_COMPLETE, Kind::Tools, "ok"),
                RuleResult::fail(ITEMS_IDENTITY, Kind::Tools, long.clone())
                    .evidence(Evidence::page(1, 0).with_items([long.clone()])),
                RuleResult::fail(CURSOR_STABLE, Kind::Prompts, "different page"),
            ],
        );
        let r = result_of(&report, 5.0);
        assert_eq!((r.passed, r.failed, r.not_applicable), (1, 2, 0));
        assert_eq!(r.at_unix_seconds, 5.0);
        let rules: Vec<(&str, Requirement)> =
            r.failures.iter().map(|f| (f.rule, f.level)).collect();
        assert_eq!(
            rules,
            [
                ("items-identity", Requirement::Must),
                ("cursor-stable", Requirement::Should)
            ]
        );
        let first = &r.failures[0];
        assert!(first.message.len() <= MAX_TEXT_BYTES);
        assert!(first.message.ends_with('…'));
        assert!(first.evidence.starts_with("listing 1 · page 1 · items xxx"));
        assert!(first.evidence.len() <= MAX_TEXT_BYTES);
    }
}
