//! Pieces of the status pages built from a target's verdict history: the
//! verdict with its reasons, the change log, the gateway-versus-origin diff
//! and the recent failures. Each returns its markup (maud escapes the text).

use super::html::target_href;
use crate::verdict::history::Failure;
use crate::verdict::{ago, clock, Change, Health, ReferenceGap, TargetVerdict, Verdict};
use maud::{html, Markup};
use mcp_listing::Kind;
use std::collections::{BTreeMap, VecDeque};

/// CSS class of a level.
pub fn level_class(level: Health) -> &'static str {
    match level {
        Health::Healthy => "ok",
        Health::Degraded => "warn",
        Health::Down => "bad",
    }
}

/// `<span class="verdict warn">degraded</span>`.
pub fn badge(level: Health) -> Markup {
    html! { span class={ "verdict " (level_class(level)) } { (level.label()) } }
}

/// The first reason of a verdict, with a count of the others.
pub fn first_reason(v: &Verdict) -> Markup {
    html! {
        @match v.first_reason() {
            None => span.muted { "nothing wrong" },
            Some(r) => {
                (r.message)
                @let more = v.reasons.len().saturating_sub(1);
                @if more > 0 {
                    " " span.muted { "(+" (more) " more)" }
                }
            }
        }
    }
}

/// The verdict block of a target page: level, since when, every reason, and
/// the level per kind.
pub fn verdict_block(v: &TargetVerdict, since: Option<f64>, now: f64) -> Markup {
    html! {
        section.verdict-block {
            h2 { "Verdict: " (badge(v.overall.level)) }
            @if let Some(since) = since {
                p.muted { (v.overall.level) " since " (clock(since)) " (" (ago(now - since)) " ago)" }
            }
            @if v.overall.reasons.is_empty() {
                p { "Every enabled kind listed completely; nothing below the expected minimum, missing from a reference, shrunk silently or duplicated." }
            } @else {
                table {
                    tr { th { "level" } th { "kind" } th { "reason" } th { "code" } }
                    @for r in &v.overall.reasons {
                        tr {
                            td { (badge(r.level)) }
                            td { (r.kind.map(|k| k.label()).unwrap_or("all")) }
                            td { (r.message) }
                            td { code { (r.code) } }
                        }
                    }
                }
            }
            @if !v.kinds.is_empty() {
                p {
                    @for (kind, kv) in &v.kinds {
                        (kind) ": " (badge(kv.level)) " "
                    }
                }
            }
        }
    }
}

/// Names, comma separated, and how many more there are than `names` kept.
pub fn names_cell(names: &[String], total: u64) -> Markup {
    let kept = names.len() as u64;
    html! {
        @if total == 0 {
            span.muted { "-" }
        } @else {
            (names.join(", "))
            @if total > kept {
                " " span.muted { "… and " (total - kept) " more" }
            }
        }
    }
}

/// Every catalogue change kept, newest first.
pub fn change_log(changes: &VecDeque<Change>) -> Markup {
    let header = html! {
        tr { th { "when" } th { "kind" } th.num { "items" } th { "notice" } th { "removed" } th { "added" } }
    };
    let none = "No change between complete listings kept.";
    kept_table("Changes", none, changes, header, |c| {
        html! {
            tr.change {
                td { (clock(c.at_unix_seconds)) }
                td { (c.kind) }
                td.num { (c.from) " → " (c.to) }
                td { (notice(c)) }
                td { (names_cell(&c.names.removed, c.names.removed_total)) }
                td { (names_cell(&c.names.added, c.names.added_total)) }
            }
        }
    })
}

/// A section of kept entries under `heading`: `none` when there are none,
/// else a table of `header` and a row per entry.
fn kept_table<T>(
    heading: &str,
    none: &str,
    entries: &VecDeque<T>,
    header: Markup,
    row: impl Fn(&T) -> Markup,
) -> Markup {
    html! {
        h2 { (heading) }
        @if entries.is_empty() {
            p.muted { (none) }
        } @else {
            table {
                (header)
                @for e in entries { (row(e)) }
            }
        }
    }
}

/// Whether a change was announced, and whether it is a silent shrink.
fn notice(c: &Change) -> Markup {
    html! {
        @if c.silent_shrink {
            span.bad { "silent shrink: without notice" }
        } @else if c.announced {
            span.ok { "announced (list_changed)" }
        } @else {
            span.muted { "without notice" }
        }
    }
}

/// What this target lacks compared with each reference, by name.
pub fn reference_diff(reference: &BTreeMap<Kind, Vec<ReferenceGap>>) -> Markup {
    html! {
        @if !reference.is_empty() {
            h2 { "Compared with references" }
            table {
                tr { th { "kind" } th { "reference" } th.num { "reference lists" } th.num { "missing here" } th { "missing names" } }
                @for (kind, gaps) in reference {
                    @for g in gaps {
                        tr {
                            td { (kind) }
                            td { a href=(target_href(&g.reference)) { (g.reference) } }
                            td.num { (g.reference_items) }
                            td class={ "num " (if g.missing_total == 0 { "ok" } else { "bad" }) } { (g.missing_total) }
                            td { (names_cell(&g.missing, g.missing_total)) }
                        }
                    }
                }
            }
        }
    }
}

/// Failed and aborted listings, newest first, kept apart from the polls.
pub fn failures(failures: &VecDeque<Failure>) -> Markup {
    let header = html! {
        tr { th { "when" } th { "kind" } th { "outcome" } th { "page" } th { "detail" } }
    };
    kept_table("Recent failures", "None kept.", failures, header, |f| {
        html! {
            tr {
                td { (clock(f.at_unix_seconds)) }
                td { (f.kind.map(|k| k.label()).unwrap_or("all")) }
                td.bad {
                    (f.outcome)
                    @if let Some(r) = f.reason { " (" (r.label()) ")" }
                }
                td.num {
                    @match f.page_index {
                        Some(p) => (mcp_listing::page_number(p)),
                        None => "-",
                    }
                }
                td.muted { (f.detail.as_deref().unwrap_or("")) }
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::verdict::NameChanges;

    #[test]
    fn the_change_log_names_what_vanished_and_escapes() {
        let mut log = VecDeque::new();
        log.push_back(Change {
            kind: Kind::Tools,
            at_unix_seconds: 60.0,
            from: 20,
            to: 19,
            names: NameChanges {
                removed: vec!["<b>tool-020".into()],
                removed_total: 3,
                ..NameChanges::default()
            },
            announced: false,
            silent_shrink: true,
        });
        let html = change_log(&log).into_string();
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
        let html = reference_diff(&r).into_string();
        assert!(html.contains("tool-009, tool-010"));
        assert!(html.contains("href=\"/targets/origin\""));
    }
}
