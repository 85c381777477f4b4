//! The front page's discovery section: every source, how its last refresh
//! went, whether its last good list is in force, what it yields and what
//! it leaves out (the reasons counted; each entry is on `/api/sources`).

use crate::discovery::status::SourceStatus;
use crate::verdict::ago;
use maud::{html, Markup};

/// The sources table, or nothing without sources.
pub fn section(sources: &[SourceStatus], now: f64) -> Markup {
    if sources.is_empty() {
        return html! {};
    }
    html! {
        h2 { "Discovery sources" }
        table.sources {
            tr { th { "source" } th { "last refresh" } th.num { "targets" } th { "left out" } }
            @for s in sources {
                tr data-source=(s.name) {
                    td { b { (s.name) } br; span.muted { (s.kind) " · module " (s.module) } }
                    td { (refresh(s, now)) }
                    td.num { (s.in_force.targets) }
                    td { (left_out(s)) }
                }
            }
        }
        p.muted { "Every entry left out, and why: " a href="/api/sources" { "/api/sources" } "." }
    }
}

/// How the last refresh went, and whether the last good list stays in force.
fn refresh(s: &SourceStatus, now: f64) -> Markup {
    let Some(r) = &s.last_refresh else {
        return html! { span.muted { "not refreshed yet" } };
    };
    html! {
        span class=(if r.outcome == "complete" { "ok" } else { "bad" }) {
            (r.outcome)
            @if let Some(reason) = r.reason { " (" (reason) ")" }
        }
        " " (ago(now - r.started_unix_seconds)) " ago"
        @if let Some(walk) = &r.walk {
            br; span.muted { (walk.pages) " page(s), " (walk.items) " entries" }
        }
        @if let Some(d) = &r.detail {
            br; span.muted { (d) }
        }
        @if s.in_force.keeps_last_good_list {
            br;
            span.warn {
                (s.consecutive_failures) " failure(s) in a row: the last good list"
                @if let Some(t) = s.last_success_unix_seconds { " of " (ago(now - t)) " ago" }
                " stays in force"
            }
        }
    }
}

/// Each reason entries were left out for, with its count.
fn left_out(s: &SourceStatus) -> Markup {
    html! {
        @if s.in_force.skipped.counts.is_empty() {
            span.muted { "none" }
        }
        @for (i, (reason, n)) in s.in_force.skipped.counts.iter().enumerate() {
            @if i > 0 { br; }
            (reason.label()) ": " (n)
        }
    }
}
