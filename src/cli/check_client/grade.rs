//! Grading one scenario: what the client did (the record, the observer's
//! listings, its exit and printed count) against what the scenario asks.
//! Checks common to every scenario are here (no request, no listing, a
//! loop); each scenario's own rules are in grade_walks.rs (finite
//! catalogues), grade_loops.rs (cursors that never end) and
//! grade_cursors.rs (end markers, -32602, list_changed).

use super::grade_cursors as cursors;
use super::grade_loops as loops;
use super::grade_walks as walks;
use super::record::Record;
use super::scenarios::{ClientScenario, Setup};
use super::verdict::{ClientEnd, Exit, Status, Stopped, Verdict};
use super::view::{KindView, LastPage, Listing};
use super::words;
use mcp_listing::Kind;
use std::time::Duration;

/// What one kind's grade reads.
pub struct Case<'a> {
    pub setup: &'a Setup,
    pub kind: Kind,
    pub view: KindView<'a>,
    pub record: &'a Record,
    pub end: ClientEnd,
    /// The names a complete listing ends with.
    pub catalogue: Vec<String>,
}

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
    if setup.modern && record.modern_requests == 0 {
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
    let how = if record.initialize_refused {
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
            words::count(u64::from(case.record.initializes))
        ));
    }
    if case.view.requests.is_empty() {
        return Verdict::fail(format!(
            "never called {} ({} other requests)",
            case.kind.method(),
            words::count(case.record.other_requests + u64::from(case.record.initializes))
        ));
    }
    if let Some(verdict) = never_stopped(case) {
        return verdict;
    }
    match case.setup.scenario {
        ClientScenario::Walk => walks::walk(case),
        ClientScenario::NullCursor => walks::null_cursor(case),
        ClientScenario::SinglePage => walks::single_page(case),
        ClientScenario::Deep => walks::deep(case),
        ClientScenario::Duplicates => walks::duplicates(case),
        ClientScenario::SlowPage => walks::slow_page(case),
        ClientScenario::Cycle | ClientScenario::RepeatCursor => loops::repeat(case),
        ClientScenario::Endless => loops::endless(case),
        ClientScenario::BlankCursor => cursors::blank(case),
        ClientScenario::BlankCursor2026 => cursors::blank_2026(case),
        ClientScenario::InvalidCursor => cursors::invalid(case),
        ClientScenario::ListChanged => cursors::list_changed(case),
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

impl Case<'_> {
    /// The catalogue's pages, when it has an end.
    pub fn total_pages(&self) -> Option<u32> {
        self.setup.pages
    }

    /// `read page 1 of 3`, `read 2 of 3 pages`, `read page 1 only`.
    pub fn read(&self, pages: u32) -> String {
        match (pages, self.total_pages()) {
            (1, Some(total)) => format!("read page 1 of {total}"),
            (1, None) => "read page 1 only".into(),
            (n, Some(total)) => format!("read {n} of {total} pages"),
            (n, None) => format!("read {}", words::pages(u64::from(n))),
        }
    }

    /// `saw 10 of 23 tools, missing tool-011 … tool-023`.
    pub fn saw(&self, listing: &Listing) -> String {
        let missing = listing.missing(&self.catalogue);
        let seen = self.catalogue.len() - missing.len();
        let saw = words::saw(seen, self.setup.items, self.kind);
        if missing.is_empty() {
            saw
        } else {
            format!("{saw}, {}", words::missing(&missing))
        }
    }

    /// ` (printed 10)` when the client printed a count.
    pub fn printed(&self) -> String {
        self.end
            .printed
            .map(|n| format!(" (printed {})", words::count(n)))
            .unwrap_or_default()
    }

    /// The last listing; `view` is never empty when a grade asks.
    pub fn last(&self) -> Option<Listing<'_, '_>> {
        self.view.last()
    }

    /// Did the last listing read the whole catalogue to its end?
    pub fn complete(&self, listing: &Listing) -> bool {
        listing.last_page() == LastPage::End && listing.missing(&self.catalogue).is_empty()
    }
}

/// The common grade of a listing that stopped before its end: a prefix
/// returned as the whole fails; an error the user sees gets `on_error`.
pub fn stopped_early(case: &Case, listing: &Listing, on_error: Status) -> Verdict {
    let asked = listing.pages();
    let last = match listing.last_page() {
        LastPage::Unanswered => format!("; gave up waiting for page {asked}"),
        LastPage::Error(Some(code)) => format!("; page {asked} was answered with error {code}"),
        LastPage::Error(None) | LastPage::Malformed => {
            format!("; page {asked} was answered with an error")
        }
        LastPage::End | LastPage::CursorLeft(_) => String::new(),
    };
    let what = format!(
        "{}: {}{last}",
        case.read(listing.pages_read()),
        case.saw(listing)
    );
    let exit = case.end.exit;
    if exit.says_error() {
        return Verdict::new(
            on_error,
            format!(
                "{what}; {}: an error the user sees{}",
                exit.words(),
                case.printed()
            ),
        );
    }
    match exit {
        Exit::Code(_) => Verdict::fail(format!(
            "{what}; {}: a prefix returned as the whole{}",
            exit.words(),
            case.printed()
        )),
        _ => Verdict::fail(format!("{what}{}", case.printed())),
    }
}

/// The grade of a complete listing: pass, unless the client then exited
/// with an error or printed another count than it received.
pub fn completed(case: &Case, listing: &Listing, how: &str) -> Verdict {
    let unique = listing.keys().len() as u64;
    let exit = case.end.exit;
    let summary = format!(
        "{how}: {} of {} {}",
        words::count(unique),
        words::count(u64::from(case.setup.items)),
        words::items_of(case.kind)
    );
    if exit.says_error() {
        return Verdict::warn(format!("{summary}, then {}", exit.words()));
    }
    match case.end.printed {
        Some(printed) if printed != unique => {
            Verdict::warn(format!("{summary}, but printed {}", words::count(printed)))
        }
        _ => Verdict::pass(format!("{summary}{}", exit_tail(exit))),
    }
}

/// `, exited 0` for a known exit, nothing otherwise.
pub fn exit_tail(exit: Exit) -> String {
    match exit {
        Exit::Code(_) | Exit::Signal(_) => format!(", {}", exit.words()),
        Exit::Killed(_) => format!(", then did not exit and {}", exit.words()),
        Exit::Unknown => String::new(),
    }
}
