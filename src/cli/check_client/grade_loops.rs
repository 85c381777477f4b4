//! Scenarios whose cursors never lead to an end: a cycle (A, B, A), a
//! cursor repeated on the next page, a new cursor on every page. A correct
//! client stops soon and says so (an error its user sees); one that stops
//! quietly returned a prefix as the whole; one that never stops is stopped
//! by the harness (grade.rs).

use super::case::{stopped_early, Case};
use super::verdict::{Exit, Status, Verdict};
use super::view::Listing;
use super::words;

/// Pages past the first repeated cursor that still count as stopping "at"
/// the repeat (a client may send the repeated cursor once to be sure).
const AT_THE_REPEAT: u32 = 2;

/// cycle and repeat-cursor.
pub fn repeat(case: &Case, last: &Listing) -> Verdict {
    let pages = last.pages();
    if pages == 1 {
        return stopped_early(case, last, Status::Fail);
    }
    let past = last.first_repeat().map_or(0, |at| pages + 1 - at);
    let at_repeat = past <= AT_THE_REPEAT && (past > 0 || last.ends_at_repeat());
    let read = words::pages(u64::from(pages));
    let exit = case.end.exit;
    match (exit.says_error(), at_repeat, exit) {
        (true, true, _) => Verdict::pass(format!(
            "stopped at the repeated cursor after {read} and {}: an error the user sees",
            exit.words()
        )),
        (true, false, _) => Verdict::warn(format!(
            "noticed only at its page cap: {read}, {} of them past the repeated cursor, then {}",
            words::count(u64::from(past)),
            exit.words()
        )),
        (false, true, Exit::Code(_)) => Verdict::fail(format!(
            "stopped at a repeated cursor after {read} and {}: a prefix returned as the whole ({}){}",
            exit.words(),
            case.saw(last),
            case.printed()
        )),
        (false, false, Exit::Code(_)) => Verdict::fail(format!(
            "stopped after {read}, {} past the repeated cursor, and {}: a prefix returned as the whole ({}){}",
            words::count(u64::from(past)),
            exit.words(),
            case.saw(last),
            case.printed()
        )),
        (false, _, _) => Verdict::warn(format!(
            "stopped after {read} at a repeated cursor ({}): did it tell its user the list may be incomplete?",
            case.saw(last)
        )),
    }
}

pub fn endless(case: &Case, last: &Listing) -> Verdict {
    let pages = last.pages();
    if pages == 1 {
        return stopped_early(case, last, Status::Fail);
    }
    let read = words::pages(u64::from(pages));
    let exit = case.end.exit;
    // The catalogue's items have all come round once by page 3.
    let why = if pages <= 3 {
        "when the items came round again"
    } else {
        "at its page cap"
    };
    let mut verdict = match exit {
        e if e.says_error() => Verdict::pass(format!(
            "stopped {why} after {read} and {}: page cap {}",
            e.words(),
            words::count(u64::from(pages))
        )),
        Exit::Code(_) => Verdict::fail(format!(
            "stopped after {read} and {}: a listing that never ends returned as the whole ({} items sent){}",
            exit.words(),
            words::count(last.raw_items()),
            case.printed()
        )),
        _ => Verdict::warn(format!(
            "stopped after {read}: did it tell its user the list may be incomplete?"
        )),
    };
    verdict.page_cap = Some(pages);
    verdict
}
