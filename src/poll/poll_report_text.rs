//! A poll report as text for people: the header (server, protocol,
//! handshakes, time to ready), then per kind its outcome and a page table
//! with cursors as short hashes. Shown by `probe` and `/probe?debug=true`,
//! both of which sit above `poll`. Every server-supplied field is shown
//! with its control characters escaped (`mcp_listing::text`): a name
//! cannot clear the terminal or start a line of its own.

use super::poll_report::PollReport;
use mcp_listing::text::escape as shown;
use mcp_listing::{page_number, ErrorKind, ListingReport, Outcome, PageRecord, TransportKind};
use std::fmt::Write as _;
use std::time::Duration;

/// The human view: a header, then per kind a page table and a verdict.
pub fn render(r: &PollReport) -> String {
    let mut out = String::new();
    header(&mut out, r);
    if r.session_error.is_some() {
        // Every kind failed for the one reason above: said once.
        let _ = writeln!(out, "\nnothing listed: no session");
        return out;
    }
    for l in &r.listings {
        let _ = writeln!(out);
        listing(&mut out, l);
        page_table(&mut out, &l.pages);
    }
    out
}

/// Server, protocol, handshakes, time to ready, session failure, rate limit.
fn header(out: &mut String, r: &PollReport) {
    let server = r
        .server
        .as_ref()
        .map(|s| format!("{} {}", shown(&s.name), shown(&s.version)))
        .unwrap_or_else(|| "-".into());
    let _ = writeln!(out, "server     {server}");
    let _ = writeln!(
        out,
        "protocol   {} over {}",
        shown(r.protocol_version.as_deref().unwrap_or("-")),
        r.transport.label()
    );
    for (i, h) in r.handshakes.iter().enumerate() {
        // Without a session the last handshake is the one that failed: it
        // did not happen, so it has no time to show.
        if r.session_error.is_some() && i + 1 == r.handshakes.len() {
            let _ = writeln!(out, "handshake  {} not completed", h.method);
        } else {
            let _ = writeln!(out, "handshake  {} {:.1} ms", h.method, ms(h.duration));
        }
    }
    match r.time_to_ready {
        Some(d) => {
            let _ = writeln!(out, "ready in   {:.1} ms", ms(d));
        }
        None => {
            let _ = writeln!(out, "ready in   - (not every listing completed)");
        }
    }
    if let Some(e) = &r.session_error {
        // The detail is the verdict's, printed just above this report.
        let _ = writeln!(out, "session    not established ({})", e.error.label());
        if let Some(hint) = session_hint(e.error, r.transport) {
            let _ = writeln!(out, "           {hint}");
        }
    }
    if let Some(wait) = r.retry_after() {
        let _ = writeln!(
            out,
            "rate limited: the server asked to wait {:.0} s (Retry-After)",
            wait.as_secs_f64()
        );
    }
}

/// What a person can check when no session could be opened.
fn session_hint(error: ErrorKind, transport: TransportKind) -> Option<&'static str> {
    let stdio = transport == TransportKind::Stdio;
    match error {
        ErrorKind::TransportError | ErrorKind::Timeout if stdio => Some(
            "→ check the command and its arguments: run it by hand, it should wait for JSON-RPC on stdin",
        ),
        ErrorKind::TransportError => Some(
            "→ check the URL (host, port and path): is the server running and listening there?",
        ),
        ErrorKind::Timeout => {
            Some("→ no answer in time: is the server running, and reachable from here?")
        }
        ErrorKind::Unauthorized => Some("→ check the bearer token or headers the server expects"),
        _ => None,
    }
}

/// One kind's outcome and counts, its detail, restarts and duplicates.
fn listing(out: &mut String, l: &ListingReport) {
    let verdict = match (l.outcome, &l.reason) {
        (Outcome::Complete, None) => "complete".to_string(),
        (o, Some(reason)) => format!("{} ({reason})", o.label()),
        (o, None) => o.label().to_string(),
    };
    let _ = writeln!(
        out,
        "{}: {} · {} page{} · {} raw / {} unique / {} duplicate(s){}",
        l.kind,
        verdict,
        l.final_pages,
        if l.final_pages == 1 { "" } else { "s" },
        l.raw_items,
        l.unique_items,
        l.duplicate_items,
        if l.invalid_items > 0 {
            format!(" · {} without identity key", l.invalid_items)
        } else {
            String::new()
        }
    );
    if let Some(d) = &l.detail {
        let _ = writeln!(out, "  {}", shown(d));
    }
    if !l.restarts.is_empty() {
        let list: Vec<String> = l
            .restarts
            .iter()
            .map(|r| format!("{} at page {}", r.reason.label(), page_number(r.at_page)))
            .collect();
        let _ = writeln!(out, "  restarts: {}", list.join(", "));
    }
    if !l.duplicate_names.is_empty() {
        let names: Vec<String> = l
            .duplicate_names
            .iter()
            .take(10)
            .map(|n| shown(n).into_owned())
            .collect();
        let more = l.duplicate_names.len().saturating_sub(10);
        let _ = writeln!(
            out,
            "  duplicates: {}{}",
            names.join(", "),
            if more > 0 {
                format!(" (+{more} more)")
            } else {
                String::new()
            }
        );
    }
}

/// One row per page (nothing without pages), cursors as short hashes.
fn page_table(out: &mut String, pages: &[PageRecord]) {
    if pages.is_empty() {
        return;
    }
    let header = format!(
        "  {:>4}  {:>7}  {:>5}  {:>5}  {:>9}  {:<10}  {:<10}",
        "page", "attempt", "items", "new", "ms", "sent", "next"
    );
    let _ = writeln!(out, "{}", header.trim_end());
    for p in pages {
        let next = match &p.error {
            Some(e) => format!("error: {e}"),
            None => p.next_cursor.display(),
        };
        let row = format!(
            "  {:>4}  {:>7}  {:>5}  {:>5}  {:>9.2}  {:<10}  {:<10}",
            p.number(),
            // Counted from 1 as the verdict's "(attempt 2)".
            p.attempt + 1,
            p.items,
            p.new_items,
            ms(p.duration),
            p.sent_cursor.as_deref().unwrap_or("-"),
            next
        );
        let _ = writeln!(out, "{}", row.trim_end());
    }
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}
