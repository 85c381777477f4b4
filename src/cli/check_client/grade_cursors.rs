//! Scenarios about what a cursor means: `""` before 2026-07-28 (the end, in
//! practice) and under it (a cursor to send back), -32602 on a continuation
//! (restart from page 1), and `list_changed` in the middle of a walk (list
//! again from page 1).

use super::case::{completed, stopped_early, Case};
use super::record::{PageAnswer, SentCursor};
use super::verdict::{Exit, Status, Verdict};
use super::view::{LastPage, Listing};
use super::words;
use mcp_listing::cursor::CursorDigest;
use mcp_listing::walk::INVALID_PARAMS;

/// Before 2026-07-28: page 1 holds every item and says `nextCursor: ""`,
/// which the server answers with page 1 again.
pub fn blank(case: &Case, last: &Listing) -> Verdict {
    let blank = SentCursor::Str(CursorDigest::of(""));
    let sent_back = case.view.requests.iter().any(|r| r.cursor == blank);
    if !sent_back {
        return completed(
            case,
            last,
            "took `nextCursor: \"\"` as the end after page 1",
        );
    }
    let pages = words::pages(u64::from(last.pages()));
    let unique = last.keys().len() as u64;
    let exit = case.end.exit;
    match case.end.printed {
        Some(printed) if printed > unique => Verdict::fail(format!(
            "sent `\"\"` back, got page 1 again ({pages}) and returned {} items for {} {}",
            words::count(printed),
            words::count(unique),
            words::items_of(case.kind)
        )),
        _ if exit.says_error() => Verdict::warn(format!(
            "sent `\"\"` back ({pages}; before 2026-07-28 it reads as the end), got page 1 again and {}",
            exit.words()
        )),
        _ => Verdict::warn(format!(
            "sent `\"\"` back ({pages}; before 2026-07-28 it reads as the end) and got page 1 again: {} {}{}",
            words::count(unique),
            words::items_of(case.kind),
            case.printed()
        )),
    }
}

/// 2026-07-28: page 1 says `nextCursor: ""`, page 2 a constant `tail`.
pub fn blank_2026(case: &Case, last: &Listing) -> Verdict {
    if case.complete(last) {
        let how = format!(
            "sent `\"\"` back as a cursor and read all {}",
            words::pages(u64::from(last.pages()))
        );
        return completed(case, last, &how);
    }
    if last.pages() == 1 && matches!(last.last_page(), LastPage::CursorLeft(n) if n.is_blank()) {
        let verdict = stopped_early(case, last, Status::Fail);
        return Verdict::fail(format!(
            "took `nextCursor: \"\"` for the end under 2026-07-28: {}",
            verdict.message
        ));
    }
    stopped_early(case, last, Status::Fail)
}

/// The first continuation is answered -32602 (once).
pub fn invalid(case: &Case, last: &Listing) -> Verdict {
    let rejected = case.view.requests.iter().any(|r| {
        r.cursor != SentCursor::None
            && matches!(r.answer, Some(PageAnswer::Error(Some(INVALID_PARAMS))))
    });
    if !rejected {
        return stopped_early(case, last, Status::Fail);
    }
    if case.view.resent_rejected() && case.complete(last) {
        return Verdict::warn(
            "sent the rejected cursor again, which worked the second time: the spec asks for a restart from page 1",
        );
    }
    if case.complete(last) && case.view.restarted_after_error() {
        return completed(
            case,
            last,
            "restarted from page 1 after -32602 and read the whole list",
        );
    }
    if last.last_page() != LastPage::Error(Some(INVALID_PARAMS)) {
        return stopped_early(case, last, Status::Warn);
    }
    let exit = case.end.exit;
    let page = last.pages();
    match exit {
        e if e.says_error() => Verdict::warn(format!(
            "failed the whole listing on -32602 at page {page} and {}: an error the user sees, where the spec asks for a restart from page 1",
            e.words()
        )),
        Exit::Code(_) => Verdict::fail(format!(
            "kept what it had after -32602 at page {page} and {}: a prefix returned as the whole ({}){}",
            exit.words(),
            case.saw(last),
            case.printed()
        )),
        _ => Verdict::warn(format!(
            "gave up the listing on -32602 at page {page} without a restart ({})",
            case.saw(last)
        )),
    }
}

/// `notifications/<kind>/list_changed` precedes page 2's answer, and the
/// catalogue grows by one.
pub fn list_changed(case: &Case, last: &Listing) -> Verdict {
    let told = case
        .record
        .list_changed
        .get(&case.kind)
        .copied()
        .unwrap_or(0)
        > 0;
    if !case.complete(last) {
        return stopped_early(case, last, Status::Fail);
    }
    let notification = case.kind.list_changed_method();
    if !told {
        return completed(
            case,
            last,
            &format!("read the whole list; {notification} did not reach it"),
        );
    }
    let again = case.view.relisted_after_change();
    let went_on = case.view.continued_after_change();
    match (again, went_on) {
        (true, true) => completed(
            case,
            last,
            &format!("finished its walk, then listed again from page 1 after {notification}"),
        ),
        (true, false) => completed(
            case,
            last,
            &format!("listed again from page 1 after {notification}"),
        ),
        (false, _) => Verdict::warn(format!(
            "went on with its cursor after {notification}: a walk across two catalogues ({}); list again from page 1",
            case.saw(last)
        )),
    }
}
