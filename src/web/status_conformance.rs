//! The target page's conformance section: the latest serve-mode run
//! (`conformance:` in the config) with every failing rule, its level and
//! evidence. Absent for targets without conformance runs.

use crate::poll::unix_now;
use crate::verdict::{ago, clock, ConformanceResult};
use maud::{html, Markup};

pub fn section(result: Option<&ConformanceResult>) -> Markup {
    let Some(c) = result else {
        return html! {};
    };
    html! {
        h2 { "Pagination conformance" }
        p.muted {
            "Latest run " (clock(c.at_unix_seconds)) " (" (ago(unix_now() - c.at_unix_seconds)) " ago)"
            @if let Some(v) = &c.protocol_version { " under " (v) }
            ": " (c.passed) " pass, " (c.failed) " fail, " (c.not_applicable)
            " n/a. Failing MUST rules make the kind degraded; the rules are in docs/conformance.md."
        }
        @if c.failures.is_empty() {
            p.ok { "Every rule that applies passes." }
        } @else {
            table {
                tr { th { "kind" } th { "rule" } th { "level" } th { "what" } th { "evidence" } }
                @for f in &c.failures {
                    tr {
                        td { (f.kind) }
                        td { (f.rule) }
                        td class=(if f.is_must() { "bad" } else { "warn" }) { (f.level.label()) }
                        td { (f.message) }
                        td.muted { (f.evidence) }
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::verdict::RuleFailure;
    use mcp_conformance::Requirement;
    use mcp_listing::Kind;

    #[test]
    fn lists_failing_rules_escaped() {
        let c = ConformanceResult {
            at_unix_seconds: 0.0,
            protocol_version: Some("2026-07-28".into()),
            passed: 10,
            failed: 1,
            not_applicable: 3,
            failures: vec![RuleFailure {
                kind: Kind::Tools,
                rule: "cache-ttl",
                level: Requirement::Must,
                message: "no ttlMs <b>".into(),
                evidence: "listing 1 · page 0".into(),
            }],
        };
        let html = section(Some(&c)).into_string();
        assert!(html.contains("cache-ttl"), "{html}");
        assert!(html.contains("no ttlMs &lt;b&gt;"), "{html}");
        assert!(html.contains("10 pass, 1 fail, 3 n/a"), "{html}");
        assert_eq!(section(None).into_string(), "");
    }
}
