//! The verdict as plain text, for `probe` and `/probe?debug=true`.

use super::types::TargetVerdict;
use std::fmt::Write as _;

/// `verdict: degraded`, one line per reason (level, kind, code, message),
/// then the level per kind.
pub fn render(v: &TargetVerdict) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "verdict: {}", v.overall.level);
    for r in &v.overall.reasons {
        let _ = writeln!(
            s,
            "  {:<9} {:<18} {:<24} {}",
            r.level.label(),
            r.kind.map(|k| k.label()).unwrap_or("all"),
            r.code.label(),
            mcp_listing::text::escape(&r.message)
        );
    }
    if !v.kinds.is_empty() {
        let per_kind: Vec<String> = v
            .kinds
            .iter()
            .map(|(k, kv)| format!("{k} {}", kv.level))
            .collect();
        let _ = writeln!(s, "  per kind: {}", per_kind.join(" · "));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::verdict::{judge, KindInput, TargetInput, DEFAULT_EVENT_WINDOW};
    use mcp_listing::{Kind, ListingReport, Outcome};

    #[test]
    fn says_the_level_each_reason_and_each_kind() {
        let mut l = ListingReport::empty(Kind::Tools, Outcome::Complete);
        l.unique_items = 8;
        let v = judge(&TargetInput {
            session_error: None,
            kinds: vec![KindInput {
                listing: &l,
                expected_min: Some(14),
                reference_gaps: Vec::new(),
                garbage_cursor: None,
                protocol_gaps: Vec::new(),
                empty_is_suspect: false,
                page_latency: None,
            }],
            changes: &[],
            now_unix_seconds: 0.0,
            event_window: DEFAULT_EVENT_WINDOW,
            conformance: None,
        });
        let text = render(&v);
        assert!(text.starts_with("verdict: degraded\n"), "{text}");
        assert!(text.contains("below_expected"), "{text}");
        assert!(text.contains("8 of ≥ 14 tools expected"), "{text}");
        assert!(text.ends_with("  per kind: tools degraded\n"), "{text}");
    }
}
