//! Grading one scenario: what the client did (the record, the observer's
//! listings, its exit and printed count) against what the scenario asks.
//! Checks common to every scenario are here (no request, no listing, a
//! loop); each scenario's own rules are in grade_walks.rs (finite
//! catalogues), grade_loops.rs (cursors that never end) and
//! grade_cursors.rs (end markers, -32602, list_changed).

use super::case::Case;
use super::grade_cursors as cursors;
use super::grade_loops as loops;
use super::grade_walks as walks;
use super::record::Record;
use super::scenarios::{ClientScenario, Setup};
use super::verdict::{ClientEnd, Exit, Status, Stopped, Verdict};
use super::view::{KindView, LastPage};
use super::words;
use mcp_listing::Kind;
use std::time::Duration;

/// How the client reached its server (what the no-request message names).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reach {
    Url,
    Command,
    /// An app launched us over stdio (serving mode).
    Launched,
    /// A client pointed at our listener (serving mode over HTTP).
    Listener,
}

/// The grade of one scenario over every expected kind: the worst kind's.
pub fn grade(
    setup: &Setup,
    kinds: &[Kind],
    record: &Record,
    end: ClientEnd,
    reach: Reach,
) -> Verdict {
    if record.first_request.is_none() {
        return Verdict::fail(no_request(reach, end));
    }
    if setup.modern && record.negotiation.modern_requests == 0 {
        return Verdict::new(Status::NotApplicable, not_modern(record));
    }
    let mut worst: Option<(Kind, Verdict)> = None;
    for &kind in kinds {
        let case = Case {
            setup,
            kind,
            view: KindView::of(record, kind),
            record,
            end,
            catalogue: setup.catalogue(kind),
        };
        let verdict = grade_kind(&case);
        if worst
            .as_ref()
            .is_none_or(|(_, w)| verdict.status > w.status)
        {
            worst = Some((kind, verdict));
        }
    }
    match worst {
        Some((kind, mut verdict)) if kinds.len() > 1 => {
            verdict.message = format!("{}: {}", kind.method(), verdict.message);
            verdict
        }
        Some((_, verdict)) => verdict,
        None => Verdict::fail("no kind to grade"),
    }
}

fn no_request(reach: Reach, end: ClientEnd) -> String {
    if end.exit.says_error() {
        return format!("the client {} before any request arrived", end.exit.words());
    }
    let when = match end.exit {
        Exit::Killed(_) => format!(" in {}", words::seconds(end.elapsed)),
        Exit::Code(_) => format!(" before it {}", end.exit.words()),
        _ => String::new(),
    };
    let question = match reach {
        Reach::Url => "does the client read {url} or MCP_SERVER_URL?",
        Reach::Command => "does the client start the server of {command} or MCP_SERVER_COMMAND?",
        Reach::Launched => "did the app send anything on stdin?",
        Reach::Listener => "was the client pointed at the listener's URL?",
    };
    format!("no request arrived{when}: {question}")
}

fn not_modern(record: &Record) -> String {
    let how = if record.negotiation.initialize_refused {
        "it sent initialize, which a 2026-07-28 server refuses (-32022)"
    } else {
        "no request carried the 2026-07-28 _meta"
    };
    format!("the client does not speak 2026-07-28: {how}")
}

fn grade_kind(case: &Case) -> Verdict {
    if case.end.exit == Exit::Killed(Stopped::TooManySessions) {
        return Verdict::fail(format!(
            "opened {} sessions in one scenario and was stopped",
            words::count(u64::from(case.record.negotiation.initializes))
        ));
    }
    if case.view.requests.is_empty() {
        return Verdict::fail(format!(
            "never called {} ({} other requests)",
            case.kind.method(),
            words::count(
                case.record.other_requests + u64::from(case.record.negotiation.initializes)
            )
        ));
    }
    if let Some(verdict) = never_stopped(case) {
        return verdict;
    }
    // Requests make a listing; every scenario's rules read the last one.
    let Some(last) = case.last() else {
        return Verdict::fail("no listing");
    };
    let last = &last;
    match case.setup.scenario {
        ClientScenario::Walk => walks::walk(case, last),
        ClientScenario::NullCursor => walks::null_cursor(case, last),
        ClientScenario::SinglePage => walks::single_page(case, last),
        ClientScenario::Deep => walks::deep(case, last),
        ClientScenario::Duplicates => walks::duplicates(case, last),
        ClientScenario::SlowPage => walks::slow_page(case, last),
        ClientScenario::Cycle | ClientScenario::RepeatCursor => loops::repeat(case, last),
        ClientScenario::Endless => loops::endless(case, last),
        ClientScenario::BlankCursor => cursors::blank(case, last),
        ClientScenario::BlankCursor2026 => cursors::blank_2026(case, last),
        ClientScenario::InvalidCursor => cursors::invalid(case, last),
        ClientScenario::ListChanged => cursors::list_changed(case, last),
    }
}

/// How long before the kill a list request counts as "still listing".
const STILL_LISTING: Duration = Duration::from_secs(2);

/// A client the harness had to stop while it was still listing: "never
/// stopped: 4,812 pages in 30 s".
fn never_stopped(case: &Case) -> Option<Verdict> {
    let Exit::Killed(why) = case.end.exit else {
        return None;
    };
    let last = case.view.requests.last()?.at;
    let first = case.record.first_request?;
    // A client idle after reaching the end is slow to exit, not looping.
    let ended = case.last().is_some_and(|l| l.last_page() == LastPage::End);
    let recent = case.end.ended.saturating_duration_since(last) <= STILL_LISTING;
    let listing = why == Stopped::TooManyRequests || (recent && !ended);
    if !listing || case.view.requests.len() < 3 {
        return None;
    }
    let recorded = case.view.requests.len() as u64;
    // Past the record's bound only the total is known.
    let capped = (case.record.requests.len() as u64) < case.record.list_requests;
    let pages = if capped {
        case.record.list_requests
    } else {
        recorded
    };
    let over = last.saturating_duration_since(first);
    Some(Verdict::fail(format!(
        "never stopped: {} in {}",
        words::pages(pages),
        words::seconds(over)
    )))
}
