//! The front page's "Clients" section: per tap, where it listens and what
//! it stands in front of, the catalogue it knows (per route, in front of a
//! gateway), and one row per client identity and route with its verdict —
//! the house's sentence ("mcp 0.1.0 read page 1 of 2 in 37 of 40 tools
//! listings: sees 8 of 14 tools, missing tool-009 … tool-014", "… page 1
//! of 2 of /mcp/alpha …") — and, for merged clients, what merging gave
//! them. Every client-chosen string (names, paths) is spliced as text
//! (escaped by construction).

use super::status_sections::{badge, first_reason};
use crate::tap::client_views::{CatalogueView, ClientKindView, ClientView, TapView};
use crate::verdict::ago;
use maud::{html, Markup};
use std::collections::BTreeMap;
use std::sync::Arc;

/// The section, or nothing without taps.
pub fn section(taps: &[Arc<TapView>], now: f64) -> Markup {
    if taps.is_empty() {
        return html! {};
    }
    html! {
        h2 id="clients" { "Clients" }
        @for tap in taps { (tap_block(tap, now)) }
        p.muted { "The same as JSON: " a href="/api/clients" { "/api/clients" } "." }
    }
}

fn tap_block(tap: &TapView, now: f64) -> Markup {
    html! {
        h3 id={ "tap-" (tap.name) } { "tap " (tap.name) }
        p.muted {
            "clients connect to " code { (tap.listen) } " · upstream " code { (tap.upstream) }
            @if !tap.merge_pages.is_empty() {
                " · merging pages for " (tap.merge_pages.join(", "))
            }
        }
        @if !tap.observing {
            p.warn {
                strong { "not observing" }
                ": this tap's observer ended (restarted " (tap.observer_restarts)
                " time(s)); it forwards every request, and a fresh observer starts shortly. What follows is as last seen; messages passing meanwhile are counted as not observed (observer_restart)."
            }
        }
        (catalogues(tap, now))
        @for rule in tap.route_rules.iter().filter(|r| r.matched == 0) {
            p.muted { "route " code { (rule.path) } " has matched no request yet" }
        }
        @if !tap.merges.is_empty() {
            p.muted {
                "merges: "
                @for (i, (what, n)) in tap.merges.iter().enumerate() {
                    @if i > 0 { " · " }
                    (what) " " (n)
                }
            }
        }
        @if tap.clients.is_empty() {
            p.muted { "No client has listed through this tap yet." }
        } @else {
            table.clients {
                tr { th { "client" } th { "verdict" } th { "what it saw" } th { "last seen" } }
                @for client in &tap.clients { (client_row(tap, client, now)) }
            }
        }
    }
}

/// The catalogue a tap knows: one line, or one per route when the tap
/// tells routes apart.
fn catalogues(tap: &TapView, now: f64) -> Markup {
    let routed = tap.routes.iter().any(|r| r.label.is_some());
    html! {
        @if !routed {
            (catalogue("catalogue: ", &tap.catalogue, now))
        } @else {
            @for route in &tap.routes {
                (catalogue(&format!("catalogue of {}: ", route.route), &route.catalogue, now))
            }
        }
    }
}

fn catalogue(title: &str, known: &BTreeMap<&'static str, CatalogueView>, now: f64) -> Markup {
    html! {
        p {
            (title)
            @if known.is_empty() {
                span.muted { "not known yet (no complete listing through the tap, no reference target)" }
            }
            @for (i, (kind, c)) in known.iter().enumerate() {
                @if i > 0 { " · " }
                (c.items) " " (kind)
                @if let Some(pages) = c.pages { " in " (pages) " page(s)" }
                span.muted {
                    " (" @if c.source == "walk" { "a complete listing" } @else { "the reference target" }
                    ", " (ago(now - c.learned_unix_seconds)) " ago)"
                }
            }
        }
    }
}

fn client_row(tap: &TapView, c: &ClientView, now: f64) -> Markup {
    let route = tap.routes.iter().find(|r| r.route == c.route);
    let routed = route.is_some_and(|r| r.label.is_some());
    let known = |kind: &str| {
        route
            .and_then(|r| r.catalogue.get(kind))
            .map(|cat| cat.items)
    };
    html! {
        tr data-client=(c.client) data-route=(c.route) {
            td {
                b { (c.client) }
                @if routed { br; "on " code { (c.route) } }
                @if !c.versions.is_empty() { br; span.muted { (c.versions.join(", ")) } }
            }
            td { (badge(c.verdict.verdict.level)) }
            td {
                @if c.verdict.verdict.reasons.is_empty() && merged(c) {
                    "sees every item: the tap merges its pages"
                } @else if c.verdict.verdict.reasons.is_empty() {
                    "reads every list to its last page"
                } @else {
                    (first_reason(&c.verdict.verdict))
                }
                @for (kind, k) in &c.kinds {
                    (kind_line(c, kind, k, known(kind)))
                }
            }
            td { (ago(now - c.last_seen_unix_seconds)) " ago" }
        }
    }
}

/// Per kind: how its recent listings ended, and what merging gave it
/// ("merged for mcp 0.1.0: 14 of 14 tools").
fn kind_line(c: &ClientView, kind: &str, k: &ClientKindView, known: Option<u64>) -> Markup {
    let r = &k.recent;
    let total = r.complete + r.abandoned + r.restarted + r.failed;
    html! {
        br;
        span.muted {
            (kind) ": " (r.complete) " of " (total) " listings complete"
            @if r.abandoned > 0 { ", " (r.abandoned) " stopped early" }
            @if r.restarted > 0 { ", " (r.restarted) " restarted" }
            @if r.failed > 0 { ", " (r.failed) " failed" }
        }
        @if let Some(m) = &k.last_merge {
            br;
            @match (m.outcome, k.last_complete.as_ref()) {
                ("first_page", _) => span.warn {
                    "merging fell back to page 1 (" (m.fallback.unwrap_or("?")) ")"
                },
                (_, Some(done)) => span.ok {
                    "merged for " (c.client)
                    @if let Some(v) = &done.version { " " (v) }
                    ": " (done.items)
                    @if let Some(all) = known { " of " (all) }
                    " " (kind)
                },
                _ => span.muted { "merged" },
            }
        }
    }
}

/// Whether the tap merged the client's last complete listing of some kind.
fn merged(c: &ClientView) -> bool {
    c.kinds
        .values()
        .any(|k| k.last_complete.as_ref().is_some_and(|l| l.merged))
}
