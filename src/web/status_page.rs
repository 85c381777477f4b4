//! The status pages a person reads at a glance: every target's health,
//! catalogue sizes and trend, and per target recent polls page by page.
//! Each page is a list of sections, one function each returning its markup.

use super::html::{page, sparkline, target_href};
use super::status_chart::catalogue_chart;
use super::status_sections::{
    badge, change_log, failures, first_reason, reference_diff, verdict_block,
};
use super::AppState;
use crate::discovery::status::SourceStatus;
use crate::poll::unix_now;
use crate::sinks::status::{KindSummary, PollSummary, TargetStatus};
use crate::verdict::{ago, Health};
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::response::{Html, IntoResponse, Response};
use maud::{html, Markup};
use serde::Deserialize;

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
    let sources = app.service.sources();
    let now = unix_now();
    let taps = app.clients.taps();
    let clients = super::status_clients::section(&taps, now);
    // `mcp-exporter tap` polls nothing: its page is its clients.
    if targets.is_empty() && sources.is_empty() && !taps.is_empty() {
        return page("mcp-exporter tap", clients);
    }
    page(
        "mcp-exporter",
        html! {
            h1 { "Targets" }
            (counts(&targets))
            (super::status_sources::section(&sources, now))
            (filter_form(&q))
            (targets_table(&targets, &sources, &q, now))
            (clients)
        },
    )
}

/// How many targets are at each level.
fn counts(targets: &[TargetStatus]) -> Markup {
    let count = |w: &str| targets.iter().filter(|t| level_word(t) == w).count();
    html! {
        p.counts {
            span.bad { (count("down")) " down" } " · "
            span.warn { (count("degraded")) " degraded" } " · "
            span.ok { (count("healthy")) " healthy" } " · "
            span.muted { (count("pending")) " pending" }
        }
    }
}

/// The verdict and name filter, a plain GET form showing the current query.
fn filter_form(q: &IndexQuery) -> Markup {
    let selected = q.level.as_deref().unwrap_or("all");
    html! {
        form.filter method="get" action="/" {
            label {
                "verdict "
                select name="level" {
                    @for (value, label) in [
                        ("all", "all"),
                        ("unhealthy", "down or degraded"),
                        ("down", "down"),
                        ("degraded", "degraded"),
                        ("healthy", "healthy"),
                        ("pending", "pending"),
                    ] {
                        option value=(value) selected[value == selected] { (label) }
                    }
                }
            }
            " "
            label { "name " input name="q" value=(q.q.as_deref().unwrap_or("")) size="16"; }
            " "
            button type="submit" { "filter" }
        }
    }
}

/// Every target the filter keeps, grouped by where they come from:
/// `targets:` first, then each source in `discovery:` order; worst first
/// within a group. Then how many the filter hid.
fn targets_table(
    targets: &[TargetStatus],
    sources: &[SourceStatus],
    q: &IndexQuery,
    now: f64,
) -> Markup {
    let groups = std::iter::once(None).chain(sources.iter().map(|s| Some(s.name.as_str())));
    let grouped: Vec<(Option<&str>, Vec<&TargetStatus>)> = groups
        .map(|group| {
            let rows = targets
                .iter()
                .filter(|t| t.target.source.as_deref() == group && keep(t, q))
                .collect();
            (group, rows)
        })
        .filter(|(_, rows): &(_, Vec<_>)| !rows.is_empty())
        .collect();
    let shown: usize = grouped.iter().map(|(_, rows)| rows.len()).sum();
    html! {
        table.targets {
            tr { th { "target" } th { "verdict" } th { "first reason (worst first)" } th { "catalogue (unique items, trend)" } th { "last poll" } th { "next poll" } }
            @for (group, rows) in &grouped {
                @if !sources.is_empty() {
                    tr.group {
                        th colspan="6" {
                            @match group {
                                None => { "static targets (" code { "targets:" } ")" },
                                Some(name) => { "discovered by " b { (name) } },
                            }
                            " · " (rows.len())
                        }
                    }
                }
                @for t in rows {
                    (target_row(t, now))
                }
            }
        }
        @if shown < targets.len() {
            p.muted { (shown) " of " (targets.len()) " target(s) shown. " a href="/" { "Show all" } }
        }
    }
}

/// One target's row: verdict and since when, first reason, catalogue sizes
/// with their trend, last and next poll.
fn target_row(t: &TargetStatus, now: f64) -> Markup {
    let last = t.history.front();
    html! {
        tr data-target=(t.target.name) data-level=(level_word(t)) {
            td { a href=(target_href(&t.target.name)) { (t.target.name) } br; span.muted { (t.target.endpoint) } }
            @match &t.catalogue.verdict {
                None => {
                    td { span.verdict.muted { "pending" } }
                    td.reason { span.muted { "not polled yet" } }
                },
                Some(v) => {
                    td {
                        (badge(v.overall.level))
                        @if let Some(s) = t.catalogue.level_since_unix_seconds {
                            br; span.muted { "for " (ago(now - s)) }
                        }
                    }
                    td.reason { (first_reason(&v.overall)) }
                },
            }
            td {
                @for (kind, trend) in &t.trend {
                    (kind) ": " b { (trend.last().unwrap_or(0)) } " " span.spark { (sparkline(trend.iter())) } br;
                }
            }
            td {
                @match last {
                    Some(p) => { (ago(now - p.started_unix_seconds)) " ago" },
                    None => "-",
                }
            }
            td { (next_poll(t, last, now)) }
        }
    }
}

/// When the next poll is due, and the wait a server's HTTP 429 with
/// Retry-After asked for.
fn next_poll(t: &TargetStatus, last: Option<&PollSummary>, now: f64) -> Markup {
    html! {
        @match t.next_poll_unix_seconds {
            Some(n) if n > now => { "in " (ago(n - now)) },
            Some(_) => "due",
            None => "-",
        }
        @if let Some(wait) = last.and_then(|p| p.retry_after_seconds()) {
            br; span.muted { "Retry-After " (ago(wait)) }
        }
    }
}

/// `/targets/NAME`.
pub async fn target(State(app): State<AppState>, Path(name): Path<String>) -> Response {
    target_page(&app, &name)
}

/// `/targets/?name=NAME`: how the pages link to a target whose name is a
/// dot segment (`..`), which a path cannot carry (html.rs, `target_href`).
#[derive(Debug, Deserialize)]
pub struct TargetQuery {
    name: Option<String>,
}

pub async fn target_named(State(app): State<AppState>, Query(q): Query<TargetQuery>) -> Response {
    target_page(&app, q.name.as_deref().unwrap_or(""))
}

fn target_page(app: &AppState, name: &str) -> Response {
    let Some(t) = app.service.status().get(name) else {
        let body = html! { p { "No such target." } };
        return (StatusCode::NOT_FOUND, page("not found", body)).into_response();
    };
    page(&t.target.name, render_target(&t)).into_response()
}

/// A target's page: what it is, its verdict, then each section.
fn render_target(t: &TargetStatus) -> Markup {
    let c = &t.catalogue;
    html! {
        (target_header(t))
        @match &c.verdict {
            Some(v) => (verdict_block(v, c.level_since_unix_seconds, unix_now())),
            None => {
                h2 { "Verdict: " span.verdict.muted { "pending" } }
                p.muted { "Not polled yet." }
            },
        }
        h2 { "Catalogue over time" }
        (catalogue_chart(&c.points))
        (change_log(&c.changes))
        (reference_diff(&c.reference))
        @if let Some(latest) = t.history.front() {
            (super::status_protocols::section(latest.protocols()))
        }
        (super::status_conformance::section(c.conformance.as_ref()))
        (failures(&c.failures))
        (recent_polls(t))
        @if let Some(tail) = &t.stderr_tail {
            h2 { "stderr (last bytes, secrets redacted)" }
            pre { (tail) }
        }
    }
}

/// The name, endpoint, source, schedule and counters.
fn target_header(t: &TargetStatus) -> Markup {
    html! {
        h1 { (t.target.name) }
        p {
            span.muted { (t.target.endpoint) }
            @if let Some(s) = &t.target.source { " · discovered by " b { (s) } }
            " · " (t.target.schedule) " · " (t.polls) " poll(s), " (t.skipped_polls) " skipped · "
            (t.consecutive_failures) " consecutive failure(s)"
        }
    }
}

/// The kept polls, newest first.
fn recent_polls(t: &TargetStatus) -> Markup {
    html! {
        h2 { "Recent polls" }
        p.muted { "The last " (t.history.len()) " poll(s), newest first; failures above are kept apart and outlive them." }
        @for (i, p) in t.history.iter().enumerate() {
            (recent_poll(p, i == 0))
        }
    }
}

/// One recent poll: when, up or down, protocol, timing and trace, its
/// session error, and a row per kind.
fn recent_poll(p: &PollSummary, latest: bool) -> Markup {
    let when = chrono::DateTime::from_timestamp_millis((p.started_unix_seconds * 1000.0) as i64)
        .map(|d| d.format("%Y-%m-%d %H:%M:%S UTC").to_string())
        .unwrap_or_default();
    html! {
        h3 { (if latest { "Latest poll" } else { "Poll" }) " " (when) }
        p {
            @if p.up { span.ok { "up" } } @else { span.bad { "down" } }
            " · protocol " (p.protocol_version.as_deref().unwrap_or("-"))
            " over " (p.transport.label())
            " · " (format!("{:.1}", p.duration_seconds * 1000.0)) " ms"
            @if let Some(s) = p.time_to_ready_seconds { " · ready in " (format!("{:.1}", s * 1000.0)) " ms" }
            @if let Some(id) = p.trace_id { " · trace " code { (id) } }
        }
        @if let Some(e) = p.session_error() {
            p.bad { (e) }
        }
        table {
            tr { th { "kind" } th { "outcome" } th.num { "pages" } th.num { "requests" } th.num { "raw" } th.num { "unique" } th.num { "dupes" } th.num { "-32602" } th { "added / removed" } th { "pages (items · ms · next)" } }
            @for k in p.kinds.iter() {
                (kind_row(k))
            }
        }
    }
}

/// One kind of a recent poll: outcome, counts, churn, and its pages.
fn kind_row(k: &KindSummary) -> Markup {
    html! {
        tr {
            td { (k.kind) }
            td {
                (k.outcome.label())
                @if let Some(r) = k.reason { " (" (r.label()) ")" }
                @if let Some(d) = &k.detail { br; span.muted { (d) } }
            }
            td.num { (k.pages) }
            td.num { (k.requests) }
            td.num { (k.raw_items) }
            td.num { (k.unique_items) }
            td.num { (k.duplicate_items) }
            td.num { (k.invalid_cursor_errors) }
            td {
                @if !k.added().is_empty() { "+ " (k.added().join(", ")) br; }
                @if !k.removed().is_empty() { "− " (k.removed().join(", ")) }
            }
            td.muted {
                @for (i, pg) in k.page_detail().iter().enumerate() {
                    @if i > 0 { br; }
                    "#" (mcp_listing::page_number(pg.index))
                    // Attempts counted from 1, as the verdict's "(attempt 2)".
                    @if pg.attempt > 0 { "/a" (pg.attempt + 1) }
                    " " (pg.items) "·" (format!("{:.1}", pg.ms)) "·" (pg.next)
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
