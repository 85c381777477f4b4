//! The target page's conformance section: the latest serve-mode run
//! (`conformance:` in the config) with every failing rule, its level and
//! evidence. Absent for targets without conformance runs.

use super::html::esc;
use crate::poll::unix_now;
use crate::verdict::{ago, clock, ConformanceResult};
use std::fmt::Write as _;

pub fn section(result: Option<&ConformanceResult>) -> String {
    let Some(c) = result else {
        return String::new();
    };
    let mut b = String::from("<h2>Pagination conformance</h2>");
    let _ = write!(
        b,
        "<p class=\"muted\">Latest run {} ({} ago){}: {} pass, {} fail, {} n/a. Failing MUST rules make the kind degraded; the rules are in docs/conformance.md.</p>",
        esc(&clock(c.at_unix_seconds)),
        ago(unix_now() - c.at_unix_seconds),
        c.protocol_version
            .as_deref()
            .map(|v| format!(" under {}", esc(v)))
            .unwrap_or_default(),
        c.passed,
        c.failed,
        c.not_applicable
    );
    if c.failures.is_empty() {
        b.push_str("<p class=\"ok\">Every rule that applies passes.</p>");
        return b;
    }
    b.push_str(
        "<table><tr><th>kind</th><th>rule</th><th>level</th><th>what</th><th>evidence</th></tr>",
    );
    for f in &c.failures {
        let _ = write!(
            b,
            "<tr><td>{}</td><td>{}</td><td class=\"{}\">{}</td><td>{}</td><td class=\"muted\">{}</td></tr>",
            f.kind,
            esc(f.rule),
            if f.is_must() { "bad" } else { "warn" },
            esc(f.level.label()),
            esc(&f.message),
            esc(&f.evidence)
        );
    }
    b.push_str("</table>");
    b
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
        let html = section(Some(&c));
        assert!(html.contains("cache-ttl"), "{html}");
        assert!(html.contains("no ttlMs &lt;b&gt;"), "{html}");
        assert!(html.contains("10 pass, 1 fail, 3 n/a"), "{html}");
        assert_eq!(section(None), "");
    }
}
