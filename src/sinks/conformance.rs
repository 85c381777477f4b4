//! The conformance stage: a scheduled target's conformance run (serve mode,
//! opt-in) becomes its failing-rule series and the result the verdict of
//! every following poll is judged with, until the next run.

use crate::conformance::{ConformanceReport, Verdict};
use crate::verdict::{ConformanceResult, RuleFailure};

/// Longest message or evidence line kept per failing rule.
const MAX_TEXT_CHARS: usize = 300;

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
            .filter(|r| r.verdict == Verdict::Fail)
            .map(|r| RuleFailure {
                kind: r.kind,
                rule: r.id,
                level: r.level.label(),
                message: truncate(&r.message),
                evidence: truncate(&r.evidence.display()),
            })
            .collect(),
    }
}

fn truncate(s: &str) -> String {
    match s.char_indices().nth(MAX_TEXT_CHARS) {
        Some((at, _)) => format!("{}…", &s[..at]),
        None => s.to_string(),
    }
}
