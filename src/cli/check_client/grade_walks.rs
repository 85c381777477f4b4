//! Scenarios whose catalogue ends: the whole walk, `null` as the end, a
//! single page, a deep listing, duplicates across pages, a slow page. A
//! correct client reads to the last page; one that stops early returned a
//! prefix, unless it said so with an error.

use super::case::{completed, stopped_early, Case};
use super::verdict::{Status, Verdict};
use super::view::{LastPage, Listing};
use super::words;

pub fn walk(case: &Case, last: &Listing) -> Verdict {
    if case.complete(last) {
        let how = format!("read all {}", words::pages(u64::from(last.pages())));
        return completed(case, last, &how);
    }
    stopped_early(case, last, Status::Fail)
}

pub fn null_cursor(case: &Case, last: &Listing) -> Verdict {
    if case.view.sent_null() || case.view.continued_past_end() {
        return Verdict::fail(format!(
            "sent a cursor after the page that said `nextCursor: null` ({}): null is the end",
            words::pages(case.view.requests.len() as u64)
        ));
    }
    if case.complete(last) && case.end.exit.says_error() {
        return Verdict::warn(format!(
            "rejected the last page for its `nextCursor: null` and {}: strict (nextCursor is a string or absent), but its users see an error where servers commonly mean the end",
            case.end.exit.words()
        ));
    }
    if case.complete(last) {
        let how = format!(
            "took `nextCursor: null` as the end after {}",
            words::pages(u64::from(last.pages()))
        );
        return completed(case, last, &how);
    }
    stopped_early(case, last, Status::Fail)
}

pub fn single_page(case: &Case, last: &Listing) -> Verdict {
    if case.view.continued_past_end() {
        return Verdict::fail("sent a cursor after a page without nextCursor");
    }
    if !case.complete(last) {
        return stopped_early(case, last, Status::Fail);
    }
    let how = match case.view.listings().len() {
        1 => "one request".to_string(),
        n => format!("{n} listings of one request each"),
    };
    completed(case, last, &how)
}

pub fn deep(case: &Case, last: &Listing) -> Verdict {
    if case.complete(last) {
        let how = format!("read all {}", words::pages(u64::from(last.pages())));
        return completed(case, last, &how);
    }
    let pages = last.pages();
    if pages > 1 && case.end.exit.says_error() {
        return Verdict::warn(format!(
            "stopped after {} of 150 and {}: its page cap cuts a real catalogue ({})",
            words::pages(u64::from(pages)),
            case.end.exit.words(),
            case.saw(last)
        ));
    }
    stopped_early(case, last, Status::Warn)
}

pub fn duplicates(case: &Case, last: &Listing) -> Verdict {
    if !case.complete(last) {
        return stopped_early(case, last, Status::Fail);
    }
    let unique = last.keys().len() as u64;
    let raw = last.raw_items();
    let read = format!(
        "read all {} ({} unique of {} items sent)",
        words::pages(u64::from(last.pages())),
        words::count(unique),
        words::count(raw)
    );
    if case.end.exit.says_error() {
        return Verdict::warn(format!("{read}, then {}", case.end.exit.words()));
    }
    match case.end.printed {
        Some(printed) if printed > unique => Verdict::warn(format!(
            "returned {} items for {} {}: {} duplicate(s) kept",
            words::count(printed),
            words::count(unique),
            words::items_of(case.kind),
            words::count(printed - unique)
        )),
        Some(printed) if printed < unique => {
            Verdict::warn(format!("{read}, but printed {}", words::count(printed)))
        }
        Some(_) => Verdict::pass(format!("{read} and kept each once")),
        None => Verdict::pass(format!(
            "{read}; it printed no count, so keeping each once is not checked"
        )),
    }
}

pub fn slow_page(case: &Case, last: &Listing) -> Verdict {
    if case.complete(last) {
        let how = format!(
            "waited {} for the slow page and read all {}",
            words::seconds(last.longest_wait()),
            words::pages(u64::from(last.pages()))
        );
        return completed(case, last, &how);
    }
    if last.last_page() == LastPage::Unanswered && case.end.exit.says_error() {
        return Verdict::warn(format!(
            "gave up waiting for page {} (answered after 1.5 s) and {}: an error the user sees",
            last.pages(),
            case.end.exit.words()
        ));
    }
    stopped_early(case, last, Status::Warn)
}
