//! JUnit XML for CI systems: one `<testsuite>` per target, one `<testcase>`
//! per rule and kind. `fail` becomes `<failure>`, `n/a` `<skipped>`.

use super::rule::RuleVerdict;
use super::ConformanceReport;
use std::fmt::Write;

/// Render reports as one JUnit document.
pub fn render(reports: &[ConformanceReport]) -> String {
    let tests: usize = reports.iter().map(|r| r.rules.len()).sum();
    let failures: u32 = reports.iter().map(|r| r.summary.fail).sum();
    let skipped: u32 = reports.iter().map(|r| r.summary.not_applicable).sum();
    let errors = reports.iter().filter(|r| r.session_error.is_some()).count();
    let mut out = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    let _ = writeln!(
        out,
        "<testsuites name=\"mcp-exporter check\" tests=\"{tests}\" failures=\"{failures}\" errors=\"{errors}\" skipped=\"{skipped}\">"
    );
    for r in reports {
        let _ = writeln!(
            out,
            "  <testsuite name=\"{}\" tests=\"{}\" failures=\"{}\" errors=\"{}\" skipped=\"{}\">",
            escape(&r.target),
            r.rules.len(),
            r.summary.fail,
            u8::from(r.session_error.is_some()),
            r.summary.not_applicable
        );
        if let Some(p) = &r.protocol_version {
            let _ = writeln!(
                out,
                "    <properties><property name=\"protocol_version\" value=\"{}\"/></properties>",
                escape(p)
            );
        }
        if let Some(e) = &r.session_error {
            let _ = writeln!(
                out,
                "    <testcase classname=\"{}\" name=\"session\"><error message=\"{}\"/></testcase>",
                escape(&r.target),
                escape(e)
            );
        }
        for rule in &r.rules {
            let classname = format!("{}.{}", r.target, rule.kind.label());
            let name = format!("{} [{}]", rule.id, rule.level.label());
            let _ = write!(
                out,
                "    <testcase classname=\"{}\" name=\"{}\"",
                escape(&classname),
                escape(&name)
            );
            let evidence = rule.evidence.display();
            let body = if evidence.is_empty() {
                format!("{} ({})", rule.message, rule.spec)
            } else {
                format!("{} ({}) — {evidence}", rule.message, rule.spec)
            };
            match rule.verdict {
                RuleVerdict::Pass => {
                    let _ = writeln!(out, "/>");
                }
                RuleVerdict::Fail => {
                    let _ = writeln!(
                        out,
                        "><failure type=\"{}\" message=\"{}\">{}</failure></testcase>",
                        rule.level.label(),
                        escape(&rule.message),
                        escape(&body)
                    );
                }
                RuleVerdict::NotApplicable => {
                    let _ = writeln!(
                        out,
                        "><skipped message=\"{}\"/></testcase>",
                        escape(&rule.message)
                    );
                }
            }
        }
        let _ = writeln!(out, "  </testsuite>");
    }
    out.push_str("</testsuites>\n");
    out
}

/// XML text and attribute escaping; characters XML 1.0 cannot carry at
/// all (most control characters) become U+FFFD.
pub fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            '\t' | '\n' | '\r' => out.push(c),
            c if (c as u32) < 0x20 || c == '\u{FFFE}' || c == '\u{FFFF}' => out.push('\u{FFFD}'),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rule::{self, RuleResult};
    use mcp_listing::Kind;

    #[test]
    fn escapes_markup_and_control_characters() {
        assert_eq!(
            escape("a<b>&\"'\u{1}"),
            "a&lt;b&gt;&amp;&quot;&apos;\u{FFFD}"
        );
    }

    #[test]
    fn counts_match_the_cases() {
        let rules = vec![
            RuleResult::pass(rule::CURSOR_TYPE, Kind::Tools, "ok"),
            RuleResult::fail(rule::CURSOR_CYCLE, Kind::Tools, "loop <here>"),
            RuleResult::na(rule::CACHE_TTL, Kind::Tools, "2026-07-28 only"),
        ];
        let x = render(&[ConformanceReport::new("t&1", rules)]);
        assert!(x.contains("tests=\"3\" failures=\"1\" errors=\"0\" skipped=\"1\""));
        assert!(x.contains("<failure type=\"MUST\" message=\"loop &lt;here&gt;\">"));
        assert!(x.contains("name=\"t&amp;1\""));
    }
}
