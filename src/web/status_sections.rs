//! Pieces of the status pages built from a target's verdict history: the
//! verdict with its reasons, the change log, the gateway-versus-origin diff
//! and the recent failures.

use super::html::esc;
use crate::verdict::history::Failure;
use crate::verdict::{ago, clock, Change, Health, ReferenceGap, TargetVerdict, Verdict};
use mcp_listing::Kind;
use std::collections::{BTreeMap, VecDeque};
use std::fmt::Write as _;

/// CSS class of a level.
pub fn level_class(level: Health) -> &'static str {
    match level {
        Health::Healthy => "ok",
        Health::Degraded => "warn",
        Health::Down => "bad",
    }
}

/// `<span class="verdict warn">degraded</span>`.
pub fn badge(level: Health) -> String {
    format!(
        "<span class=\"verdict {}\">{}</span>",
        level_class(level),
        level.label()
    )
}

/// The first reason of a verdict, with a count of the others.
pub fn first_reason(v: &Verdict) -> String {
    match v.first_reason() {
        None => "<span class=\"muted\">nothing wrong</span>".to_string(),
        Some(r) => {
            let more = v.reasons.len() - 1;
            format!(
                "{}{}",
                esc(&r.message),
                if more > 0 {
                    format!(" <span class=\"muted\">(+{more} more)</span>")
                } else {
                    String::new()
                }
            )
        }
    }
}

/// The verdict block of a target page: level, since when, every reason, and
/// the level per kind.
pub fn verdict_block(v: &TargetVerdict, since: Option<f64>, now: f64) -> String {
    let mut b = String::new();
    let _ = write!(
        b,
        "<section class=\"verdict-block\"><h2>Verdict: {}</h2>",
        badge(v.overall.level)
    );
    if let Some(since) = since {
        let _ = write!(
            b,
            "<p class=\"muted\">{} since {} ({} ago)</p>",
            v.overall.level,
            esc(&clock(since)),
            ago(now - since)
        );
    }
    if v.overall.reasons.is_empty() {
        b.push_str("<p>Every enabled kind listed completely; nothing below the expected minimum, missing from a reference, shrunk silently or duplicated.</p>");
    } else {
        b.push_str("<table><tr><th>level</th><th>kind</th><th>reason</th><th>code</th></tr>");
        for r in &v.overall.reasons {
            let _ = write!(
                b,
                "<tr><td>{}</td><td>{}</td><td>{}</td><td><code>{}</code></td></tr>",
                badge(r.level),
                r.kind.map(|k| k.label()).unwrap_or("all"),
                esc(&r.message),
                r.code
            );
        }
        b.push_str("</table>");
    }
    if !v.kinds.is_empty() {
        b.push_str("<p>");
        for (kind, kv) in &v.kinds {
            let _ = write!(b, "{kind}: {} ", badge(kv.level));
        }
        b.push_str("</p>");
    }
    b.push_str("</section>");
    b
}

fn names_cell(names: &[String], total: u64) -> String {
    if total == 0 {
        return "<span class=\"muted\">-</span>".into();
    }
    let mut s = esc(&names.join(", "));
    if total > names.len() as u64 {
        let _ = write!(
            s,
            " <span class=\"muted\">… and {} more</span>",
            total - names.len() as u64
        );
    }
    s
}

/// Every catalogue change kept, newest first.
pub fn change_log(changes: &VecDeque<Change>) -> String {
    let mut b = String::from("<h2>Changes</h2>");
    if changes.is_empty() {
        b.push_str("<p class=\"muted\">No change between complete listings kept.</p>");
        return b;
    }
    b.push_str("<table><tr><th>when</th><th>kind</th><th class=\"num\">items</th><th>notice</th><th>removed</th><th>added</th></tr>");
    for c in changes {
        let notice = if c.silent_shrink {
            "<span class=\"bad\">silent shrink: without notice</span>"
        } else if c.announced {
            "<span class=\"ok\">announced (list_changed)</span>"
        } else {
            "<span class=\"muted\">without notice</span>"
        };
        let _ = write!(
            b,
            "<tr class=\"change\"><td>{}</td><td>{}</td><td class=\"num\">{} → {}</td><td>{notice}</td><td>{}</td><td>{}</td></tr>",
            esc(&clock(c.at_unix_seconds)),
            c.kind,
            c.from,
            c.to,
            names_cell(&c.removed, c.removed_total),
            names_cell(&c.added, c.added_total)
        );
    }
    b.push_str("</table>");
    b
}

/// What this target lacks compared with each reference, by name.
pub fn reference_diff(reference: &BTreeMap<Kind, Vec<ReferenceGap>>) -> String {
    if reference.is_empty() {
        return String::new();
    }
    let mut b = String::from("<h2>Compared with references</h2><table><tr><th>kind</th><th>reference</th><th class=\"num\">reference lists</th><th class=\"num\">missing here</th><th>missing names</th></tr>");
    for (kind, gaps) in reference {
        for g in gaps {
            let _ = write!(
                b,
                "<tr><td>{kind}</td><td><a href=\"/targets/{}\">{}</a></td><td class=\"num\">{}</td><td class=\"num {}\">{}</td><td>{}</td></tr>",
                super::html::path_segment(&g.reference),
                esc(&g.reference),
                g.reference_items,
                if g.missing_total == 0 { "ok" } else { "bad" },
                g.missing_total,
                names_cell(&g.missing, g.missing_total)
            );
        }
    }
    b.push_str("</table>");
    b
}

/// Failed and aborted listings, newest first, kept apart from the polls.
pub fn failures(failures: &VecDeque<Failure>) -> String {
    let mut b = String::from("<h2>Recent failures</h2>");
    if failures.is_empty() {
        b.push_str("<p class=\"muted\">None kept.</p>");
        return b;
    }
    b.push_str(
        "<table><tr><th>when</th><th>kind</th><th>outcome</th><th>page</th><th>detail</th></tr>",
    );
    for f in failures {
        let _ = write!(
            b,
            "<tr><td>{}</td><td>{}</td><td class=\"bad\">{}{}</td><td class=\"num\">{}</td><td class=\"muted\">{}</td></tr>",
            esc(&clock(f.at_unix_seconds)),
            f.kind.map(|k| k.label()).unwrap_or("all"),
            f.outcome,
            f.reason.map(|r| format!(" ({})", esc(r.label()))).unwrap_or_default(),
            f.page_index
                .map(|p| mcp_listing::page_number(p).to_string())
                .unwrap_or_else(|| "-".into()),
            esc(f.detail.as_deref().unwrap_or(""))
        );
    }
    b.push_str("</table>");
    b
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_change_log_names_what_vanished_and_escapes() {
        let mut log = VecDeque::new();
        log.push_back(Change {
            kind: Kind::Tools,
            at_unix_seconds: 60.0,
            from: 20,
            to: 19,
            added: Vec::new(),
            removed: vec!["<b>tool-020".into()],
            added_total: 0,
            removed_total: 3,
            announced: false,
            silent_shrink: true,
        });
        let html = change_log(&log);
        assert!(html.contains("&lt;b&gt;tool-020"));
        assert!(html.contains("… and 2 more"));
        assert!(html.contains("silent shrink: without notice"));
        assert!(html.contains("1970-01-01 00:01:00 UTC"));
    }

    #[test]
    fn the_reference_diff_lists_missing_names() {
        let mut r = BTreeMap::new();
        r.insert(
            Kind::Tools,
            vec![ReferenceGap {
                reference: "origin".into(),
                reference_items: 14,
                missing: vec!["tool-009".into(), "tool-010".into()],
                missing_total: 2,
            }],
        );
        let html = reference_diff(&r);
        assert!(html.contains("tool-009, tool-010"));
        assert!(html.contains("href=\"/targets/origin\""));
    }
}
