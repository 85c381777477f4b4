//! The front page's discovery section: every source, how its last refresh
//! went, whether its last good list is in force, what it yields and what
//! it leaves out (the reasons counted; each entry is on `/api/sources`).

use super::html::esc;
use crate::discovery::status::SourceStatus;
use crate::verdict::ago;
use std::fmt::Write as _;

/// The sources table, or nothing without sources.
pub fn section(sources: &[SourceStatus], now: f64) -> String {
    if sources.is_empty() {
        return String::new();
    }
    let mut b = String::from(
        "<h2>Discovery sources</h2><table class=\"sources\"><tr><th>source</th><th>last refresh</th><th class=\"num\">targets</th><th>left out</th></tr>",
    );
    for s in sources {
        let refresh = match &s.last_refresh {
            None => "<span class=\"muted\">not refreshed yet</span>".to_string(),
            Some(r) => {
                let class = if r.outcome == "complete" { "ok" } else { "bad" };
                let mut cell = format!(
                    "<span class=\"{class}\">{}{}</span> {} ago",
                    esc(r.outcome),
                    r.reason
                        .map(|x| format!(" ({})", esc(x)))
                        .unwrap_or_default(),
                    ago(now - r.started_unix_seconds)
                );
                if let Some(walk) = &r.walk {
                    let _ = write!(
                        cell,
                        "<br><span class=\"muted\">{} page(s), {} entries</span>",
                        walk.pages, walk.items
                    );
                }
                if let Some(d) = &r.detail {
                    let _ = write!(cell, "<br><span class=\"muted\">{}</span>", esc(d));
                }
                if s.keeps_last_good_list {
                    let since = s
                        .last_success_unix_seconds
                        .map(|t| format!(" of {} ago", ago(now - t)))
                        .unwrap_or_default();
                    let _ = write!(
                        cell,
                        "<br><span class=\"warn\">{} failure(s) in a row: the last good list{since} stays in force</span>",
                        s.consecutive_failures
                    );
                }
                cell
            }
        };
        let left_out: Vec<String> = s
            .skipped
            .counts
            .iter()
            .map(|(reason, n)| format!("{}: {n}", esc(reason.label())))
            .collect();
        let _ = write!(
            b,
            "<tr data-source=\"{}\"><td><b>{}</b><br><span class=\"muted\">{} · module {}</span></td><td>{refresh}</td><td class=\"num\">{}</td><td>{}</td></tr>",
            esc(&s.name),
            esc(&s.name),
            esc(s.kind),
            esc(&s.module),
            s.targets,
            if left_out.is_empty() {
                "<span class=\"muted\">none</span>".to_string()
            } else {
                left_out.join("<br>")
            }
        );
    }
    b.push_str("</table><p class=\"muted\">Every entry left out, and why: <a href=\"/api/sources\">/api/sources</a>.</p>");
    b
}
