//! The status pages a person reads at a glance: every target's health,
//! catalogue sizes and trend, and per target recent polls page by page.

use super::html::{esc, page, path_segment, sparkline};
use super::status_chart::catalogue_chart;
use super::status_sections::{
    badge, change_log, failures, first_reason, reference_diff, verdict_block,
};
use super::AppState;
use crate::poll::unix_now;
use crate::sinks::status::{KindSummary, PollSummary, TargetStatus};
use crate::verdict::{ago, Health};
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::response::{Html, IntoResponse, Response};
use serde::Deserialize;
use std::fmt::Write as _;

/// Front-page filter: `?level=down|degraded|healthy|pending|unhealthy`
/// and `?q=` (a substring of the name), a plain GET form.
#[derive(Debug, Default, Deserialize)]
pub struct IndexQuery {
    level: Option<String>,
    q: Option<String>,
}

/// Sort key, worst first: down, degraded, pending (no verdict yet), healthy.
fn rank(t: &TargetStatus) -> u8 {
    match t.catalogue.verdict.as_ref().map(|v| v.overall.level) {
        Some(Health::Down) => 0,
        Some(Health::Degraded) => 1,
        None => 2,
        Some(Health::Healthy) => 3,
    }
}

fn level_word(t: &TargetStatus) -> &'static str {
    t.catalogue
        .verdict
        .as_ref()
        .map(|v| v.overall.level.label())
        .unwrap_or("pending")
}

fn keep(t: &TargetStatus, q: &IndexQuery) -> bool {
    let level_ok = match q.level.as_deref().unwrap_or("") {
        "" | "all" => true,
        "unhealthy" => rank(t) < 2,
        l => level_word(t) == l,
    };
    let name_ok =
        q.q.as_deref()
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .is_none_or(|s| t.target.name.contains(s));
    level_ok && name_ok
}

pub async fn index(State(app): State<AppState>, Query(q): Query<IndexQuery>) -> Html<String> {
    let mut targets = app.service.status().all();
    targets.sort_by(|a, b| {
        rank(a)
            .cmp(&rank(b))
            .then(a.target.name.cmp(&b.target.name))
    });
    let now = unix_now();
    let mut b = String::new();
    let count = |w: &str| targets.iter().filter(|t| level_word(t) == w).count();
    let _ = write!(
        b,
        "<h1>Targets</h1><p class=\"counts\"><span class=\"bad\">{} down</span> · <span class=\"warn\">{} degraded</span> · <span class=\"ok\">{} healthy</span> · <span class=\"muted\">{} pending</span></p>",
        count("down"),
        count("degraded"),
        count("healthy"),
        count("pending")
    );
    let sources = app.service.sources();
    b.push_str(&super::status_sources::section(&sources, now));
    filter_form(&mut b, &q);
    b.push_str("<table class=\"targets\"><tr><th>target</th><th>verdict</th><th>first reason (worst first)</th><th>catalogue (unique items, trend)</th><th>last poll</th><th>next poll</th></tr>");
    let mut shown = 0;
    // Grouped by where they come from: `targets:` first, then each source
    // in `discovery:` order; worst first within a group.
    let groups = std::iter::once(None).chain(sources.iter().map(|s| Some(s.name.as_str())));
    for group in groups {
        let rows: Vec<&TargetStatus> = targets
            .iter()
            .filter(|t| t.target.source.as_deref() == group && keep(t, &q))
            .collect();
        if rows.is_empty() {
            continue;
        }
        if !sources.is_empty() {
            let title = match group {
                None => "static targets (<code>targets:</code>)".to_string(),
                Some(name) => format!("discovered by <b>{}</b>", esc(name)),
            };
            let _ = write!(
                b,
                "<tr class=\"group\"><th colspan=\"6\">{title} · {}</th></tr>",
                rows.len()
            );
        }
        for t in rows {
            shown += 1;
            target_row(&mut b, t, now);
        }
    }
    b.push_str("</table>");
    if shown < targets.len() {
        let _ = write!(
            b,
            "<p class=\"muted\">{shown} of {} target(s) shown. <a href=\"/\">Show all</a></p>",
            targets.len()
        );
    }
    Html(page("mcp-exporter", &b))
}

/// The verdict and name filter, a plain GET form showing the current query.
fn filter_form(b: &mut String, q: &IndexQuery) {
    let selected = q.level.as_deref().unwrap_or("all");
    b.push_str(
        "<form class=\"filter\" method=\"get\" action=\"/\"><label>verdict <select name=\"level\">",
    );
    for (value, label) in [
        ("all", "all"),
        ("unhealthy", "down or degraded"),
        ("down", "down"),
        ("degraded", "degraded"),
        ("healthy", "healthy"),
        ("pending", "pending"),
    ] {
        let _ = write!(
            b,
            "<option value=\"{value}\"{}>{label}</option>",
            if value == selected { " selected" } else { "" }
        );
    }
    let _ = write!(
        b,
        "</select></label> <label>name <input name=\"q\" value=\"{}\" size=\"16\"></label> <button type=\"submit\">filter</button></form>",
        esc(q.q.as_deref().unwrap_or(""))
    );
}

/// One target's row: verdict and since when, first reason, catalogue sizes
/// with their trend, last and next poll.
fn target_row(b: &mut String, t: &TargetStatus, now: f64) {
    let last = t.history.front();
    let (verdict, reason) = match &t.catalogue.verdict {
        None => (
            "<span class=\"verdict muted\">pending</span>".to_string(),
            "<span class=\"muted\">not polled yet</span>".to_string(),
        ),
        Some(v) => (
            format!(
                "{}{}",
                badge(v.overall.level),
                t.catalogue
                    .level_since_unix_seconds
                    .map(|s| format!("<br><span class=\"muted\">for {}</span>", ago(now - s)))
                    .unwrap_or_default()
            ),
            first_reason(&v.overall),
        ),
    };
    let mut sizes = String::new();
    for (kind, trend) in &t.trend {
        let _ = write!(
            sizes,
            "{}: <b>{}</b> <span class=\"spark\">{}</span><br>",
            kind,
            trend.last().unwrap_or(0),
            sparkline(trend.iter())
        );
    }
    let age = last
        .map(|p| format!("{} ago", ago(now - p.started_unix_seconds)))
        .unwrap_or_else(|| "-".into());
    let next = t
        .next_poll_unix_seconds
        .map(|n| {
            if n > now {
                format!("in {}", ago(n - now))
            } else {
                "due".into()
            }
        })
        .unwrap_or_else(|| "-".into());
    // A server that answered HTTP 429 with Retry-After moved the next poll.
    let next = match last.and_then(|p| p.retry_after_seconds()) {
        Some(wait) => format!(
            "{next}<br><span class=\"muted\">Retry-After {}</span>",
            ago(wait)
        ),
        None => next,
    };
    let _ = write!(
        b,
        "<tr data-target=\"{}\" data-level=\"{}\"><td><a href=\"/targets/{}\">{}</a><br><span class=\"muted\">{}</span></td><td>{verdict}</td><td class=\"reason\">{reason}</td><td>{sizes}</td><td>{age}</td><td>{next}</td></tr>",
        esc(&t.target.name),
        level_word(t),
        path_segment(&t.target.name),
        esc(&t.target.name),
        esc(&t.target.endpoint)
    );
}

pub async fn target(State(app): State<AppState>, Path(name): Path<String>) -> Response {
    let Some(t) = app.service.status().get(&name) else {
        return (
            StatusCode::NOT_FOUND,
            Html(page("not found", "<p>No such target.</p>")),
        )
            .into_response();
    };
    Html(page(&t.target.name, &render_target(&t))).into_response()
}

fn render_target(t: &TargetStatus) -> String {
    let mut b = String::new();
    let _ = write!(
        b,
        "<h1>{}</h1><p><span class=\"muted\">{}</span>{} · {} · {} poll(s), {} skipped · {} consecutive failure(s)</p>",
        esc(&t.target.name),
        esc(&t.target.endpoint),
        t.target.source
            .as_deref()
            .map(|s| format!(" · discovered by <b>{}</b>", esc(s)))
            .unwrap_or_default(),
        esc(&t.target.schedule),
        t.polls,
        t.skipped_polls,
        t.consecutive_failures
    );
    let c = &t.catalogue;
    match &c.verdict {
        Some(v) => b.push_str(&verdict_block(v, c.level_since_unix_seconds, unix_now())),
        None => b.push_str("<h2>Verdict: <span class=\"verdict muted\">pending</span></h2><p class=\"muted\">Not polled yet.</p>"),
    }
    b.push_str("<h2>Catalogue over time</h2>");
    b.push_str(&catalogue_chart(&c.points));
    b.push_str(&change_log(&c.changes));
    b.push_str(&reference_diff(&c.reference));
    if let Some(latest) = t.history.front() {
        b.push_str(&super::status_protocols::section(latest.protocols()));
    }
    b.push_str(&super::status_conformance::section(c.conformance.as_ref()));
    b.push_str(&failures(&c.failures));
    let _ = write!(
        b,
        "<h2>Recent polls</h2><p class=\"muted\">The last {} poll(s), newest first; failures above are kept apart and outlive them.</p>",
        t.history.len()
    );
    for (i, p) in t.history.iter().enumerate() {
        recent_poll(&mut b, p, i == 0);
    }
    if let Some(tail) = &t.stderr_tail {
        let _ = write!(
            b,
            "<h2>stderr (last bytes, secrets redacted)</h2><pre>{}</pre>",
            esc(tail)
        );
    }
    b
}

/// One recent poll: when, up or down, protocol, timing and trace, its
/// session error, and a row per kind.
fn recent_poll(b: &mut String, p: &PollSummary, latest: bool) {
    let when = chrono::DateTime::from_timestamp_millis((p.started_unix_seconds * 1000.0) as i64)
        .map(|d| d.format("%Y-%m-%d %H:%M:%S UTC").to_string())
        .unwrap_or_default();
    let _ = write!(
        b,
        "<h3>{} {}</h3><p>{} · protocol {} over {} · {:.1} ms{}{}</p>",
        if latest { "Latest poll" } else { "Poll" },
        esc(&when),
        if p.up {
            "<span class=\"ok\">up</span>"
        } else {
            "<span class=\"bad\">down</span>"
        },
        esc(p.protocol_version.as_deref().unwrap_or("-")),
        esc(p.transport.label()),
        p.duration_seconds * 1000.0,
        p.time_to_ready_seconds
            .map(|s| format!(" · ready in {:.1} ms", s * 1000.0))
            .unwrap_or_default(),
        p.trace_id
            .map(|id| format!(" · trace <code>{id}</code>"))
            .unwrap_or_default()
    );
    if let Some(e) = p.session_error() {
        let _ = write!(b, "<p class=\"bad\">{}</p>", esc(e));
    }
    b.push_str("<table><tr><th>kind</th><th>outcome</th><th class=\"num\">pages</th><th class=\"num\">requests</th><th class=\"num\">raw</th><th class=\"num\">unique</th><th class=\"num\">dupes</th><th class=\"num\">-32602</th><th>added / removed</th><th>pages (items · ms · next)</th></tr>");
    for k in p.kinds.iter() {
        kind_row(b, k);
    }
    b.push_str("</table>");
}

/// One kind of a recent poll: outcome, counts, churn, and its pages.
fn kind_row(b: &mut String, k: &KindSummary) {
    let pages: Vec<String> = k
        .page_detail()
        .iter()
        .map(|pg| {
            format!(
                "#{}{} {}·{:.1}·{}",
                mcp_listing::page_number(pg.index),
                if pg.attempt > 0 {
                    // Attempts counted from 1, as the verdict's "(attempt 2)".
                    format!("/a{}", pg.attempt + 1)
                } else {
                    String::new()
                },
                pg.items,
                pg.ms,
                esc(&pg.next)
            )
        })
        .collect();
    let churn = format!(
        "{}{}",
        if k.added().is_empty() {
            String::new()
        } else {
            format!("+ {}<br>", esc(&k.added().join(", ")))
        },
        if k.removed().is_empty() {
            String::new()
        } else {
            format!("− {}", esc(&k.removed().join(", ")))
        }
    );
    let _ = write!(
        b,
        "<tr><td>{}</td><td>{}{}{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td>{churn}</td><td class=\"muted\">{}</td></tr>",
        k.kind,
        esc(k.outcome.label()),
        k.reason.map(|r| format!(" ({})", esc(r.label()))).unwrap_or_default(),
        k.detail.as_deref().map(|d| format!("<br><span class=\"muted\">{}</span>", esc(d))).unwrap_or_default(),
        k.pages,
        k.requests,
        k.raw_items,
        k.unique_items,
        k.duplicate_items,
        k.invalid_cursor_errors,
        pages.join("<br>")
    );
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn ages_read_naturally() {
        assert_eq!(ago(5.0), "5s");
        assert_eq!(ago(600.0), "10m");
        assert_eq!(ago(7200.0), "2.0h");
    }

    #[test]
    fn pending_targets_sort_between_degraded_and_healthy_and_filter() {
        let store = crate::sinks::status::StatusStore::new(5);
        store.set_targets(&[crate::sinks::TargetDescription {
            name: "b".into(),
            endpoint: "u".into(),
            schedule: "s".into(),
            source: None,
        }]);
        let t = store.get("b").unwrap();
        assert_eq!(rank(&t), 2);
        assert_eq!(level_word(&t), "pending");
        let q = |level: &str, name: &str| IndexQuery {
            level: Some(level.into()),
            q: Some(name.into()),
        };
        assert!(keep(&t, &q("pending", "")));
        assert!(keep(&t, &q("all", "b")));
        assert!(!keep(&t, &q("down", "")));
        assert!(!keep(&t, &q("unhealthy", "")));
        assert!(!keep(&t, &q("all", "zzz")));
    }
}
