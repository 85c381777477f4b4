//! What one kind's grade reads (the scenario, the record, how the client
//! ended, the catalogue), and the grades every scenario shares: a listing
//! read to its end, and one that stopped before it.

use super::record::Record;
use super::scenarios::Setup;
use super::verdict::{ClientEnd, Exit, Status, Verdict};
use super::view::{KindView, LastPage, Listing};
use super::words;
use mcp_listing::Kind;

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
