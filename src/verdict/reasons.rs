//! The sentence each reason code says, with its numbers and names.

use super::code::Code;
use super::types::{Change, Health, ProtocolGap, Reason, ReferenceGap};
use crate::poll::GarbageCursorAnswer;
use mcp_listing::report::SessionFailure;
use mcp_listing::{EndReason, ErrorKind, Guard, Kind, ListingReport, Outcome};
use std::fmt::Write as _;
use std::time::Duration;

/// Names quoted in one message; the rest are counted ("… and 12 more").
pub const MAX_NAMES_IN_MESSAGE: usize = 10;

/// The kind as a person says it.
pub(super) fn noun(kind: Kind) -> &'static str {
    match kind {
        Kind::Tools => "tools",
        Kind::Prompts => "prompts",
        Kind::Resources => "resources",
        Kind::ResourceTemplates => "resource templates",
    }
}

/// `a, b, c` or `a, b, … and 12 more`.
pub(super) fn name_list(names: &[String], total: u64) -> String {
    let shown: Vec<&str> = names
        .iter()
        .take(MAX_NAMES_IN_MESSAGE)
        .map(String::as_str)
        .collect();
    let mut s = shown.join(", ");
    let rest = total.saturating_sub(shown.len() as u64);
    if rest > 0 {
        let _ = write!(s, ", … and {rest} more");
    }
    s
}

fn reason(code: Code, kind: Option<Kind>, level: Health, message: String) -> Reason {
    Reason {
        code,
        kind,
        level,
        message,
    }
}

/// "at page 3" (1-based, as every text for people counts pages), with the
/// attempt after a restart.
fn page_phrase(l: &ListingReport, failed_page: bool) -> String {
    let page = if failed_page {
        l.pages
            .iter()
            .rev()
            .find(|p| p.error.is_some())
            .or(l.pages.last())
    } else {
        l.pages.last()
    };
    match page {
        None => "before the first page".to_string(),
        Some(p) if p.attempt > 0 => {
            format!("at page {} (attempt {})", p.number(), p.attempt + 1)
        }
        Some(p) => format!("at page {}", p.number()),
    }
}

pub(super) fn session_failed(kind: Option<Kind>, error: &SessionFailure) -> Reason {
    reason(
        Code::SessionFailed,
        kind,
        Health::Down,
        format!("no session: {error}; nothing could be listed"),
    )
}

pub(super) fn failed(kind: Kind, error: ErrorKind, l: &ListingReport) -> Reason {
    let mut m = format!(
        "{} listing failed {}: {}",
        noun(kind),
        page_phrase(l, true),
        error.label()
    );
    // The code once: the detail may already quote it.
    let detail_has = |text: &str| l.detail.as_deref().is_some_and(|d| d.contains(text));
    if let Some(code) = l.rpc_error_code.filter(|c| !detail_has(&c.to_string())) {
        let _ = write!(m, " (JSON-RPC {code})");
    } else if let Some(status) = l.http_status {
        let _ = write!(m, " (HTTP {status})");
    }
    let restarts = l.restarts.len();
    // The walker's detail may already say how many restarts it made.
    let detail_says_restarts = l.detail.as_deref().is_some_and(|d| d.contains("restart"));
    if restarts > 0 && !detail_says_restarts {
        let _ = write!(
            m,
            " after {restarts} restart{}",
            if restarts == 1 { "" } else { "s" }
        );
    }
    if let Some(d) = &l.detail {
        let _ = write!(m, ": {d}");
    }
    if let Some(wait) = l.retry_after {
        let _ = write!(
            m,
            "; the server asked to wait {} (Retry-After)",
            ago(wait.as_secs_f64())
        );
    }
    reason(Code::ListingFailed, Some(kind), Health::Down, m)
}

pub(super) fn aborted(kind: Kind, guard: Guard, l: &ListingReport) -> Reason {
    let why = match guard {
        Guard::CursorCycle => "the server handed out a cursor it had already sent",
        Guard::NoProgress => "a page brought no new items under the same cursor",
        Guard::PageCap => "more pages than max_pages",
        Guard::ItemCap => "more items than max_items",
    };
    reason(
        Code::ListingAborted,
        Some(kind),
        Health::Down,
        format!(
            "{} listing aborted {} by the {} guard ({why}) after {} unique items",
            noun(kind),
            page_phrase(l, false),
            guard.label(),
            l.unique_items
        ),
    )
}

pub(super) fn below_expected(kind: Kind, have: u64, min: u64) -> Reason {
    reason(
        Code::BelowExpected,
        Some(kind),
        Health::Degraded,
        format!(
            "{have} of ≥ {min} {} expected: {} below the configured minimum",
            noun(kind),
            min - have
        ),
    )
}

pub(super) fn reference_missing(kind: Kind, gap: &ReferenceGap) -> Reason {
    let n = gap.missing_total;
    reason(
        Code::ReferenceMissing,
        Some(kind),
        Health::Degraded,
        format!(
            "{n} of {}'s {} missing (it lists {}): {}",
            gap.reference,
            noun(kind),
            gap.reference_items,
            name_list(&gap.missing, n)
        ),
    )
}

pub(super) fn protocol_catalogue_differs(kind: Kind, gap: &ProtocolGap) -> Reason {
    let n = gap.missing_total;
    reason(
        Code::ProtocolCatalogueDiffers,
        Some(kind),
        Health::Degraded,
        format!(
            "{n} {} missing at protocol {} ({} listed there, {} under every configured version together): {}",
            noun(kind),
            gap.protocol_version,
            gap.unique_items,
            gap.union_items,
            name_list(&gap.missing, n)
        ),
    )
}

/// `outcome`: how the listing at the gap's version ended.
pub(super) fn protocol_listing_failed(kind: Kind, gap: &ProtocolGap, outcome: Outcome) -> Reason {
    let how = match EndReason::of(outcome, false) {
        Some(why) => format!("{outcome} {why}"),
        None => outcome.to_string(),
    };
    reason(
        Code::ProtocolListingFailed,
        Some(kind),
        Health::Degraded,
        format!(
            "{} listing at protocol {} did not complete: {how}",
            noun(kind),
            gap.protocol_version,
        ),
    )
}

pub(super) fn empty_but_advertised(kind: Kind) -> Reason {
    reason(
        Code::EmptyButAdvertised,
        Some(kind),
        Health::Degraded,
        format!(
            "the listing of {} completed with 0 items although the server advertises the capability (a merging gateway that dropped its origin answers like this; `expect: {{{}: 0}}` says empty is fine)",
            noun(kind),
            kind.label()
        ),
    )
}

/// An answered page of the listing took longer than `limit` (a client
/// waits that long for it): a reason naming the slowest page, its time,
/// how many pages were too slow, and the limit, in milliseconds.
pub(super) fn slow_pages(l: &ListingReport, limit: Duration) -> Option<Reason> {
    let answered = || l.pages.iter().filter(|p| p.error.is_none());
    let slowest = answered().max_by_key(|p| p.duration)?;
    if slowest.duration <= limit {
        return None;
    }
    let too_slow = answered().filter(|p| p.duration > limit).count();
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    Some(reason(
        Code::SlowPages,
        Some(l.kind),
        Health::Degraded,
        format!(
            "{} page {} took {:.0} ms, more than the expected {:.0} ms ({too_slow} of {} pages too slow)",
            noun(l.kind),
            slowest.number(),
            ms(slowest.duration),
            ms(limit),
            answered().count()
        ),
    ))
}

pub(super) fn duplicates(kind: Kind, l: &ListingReport) -> Reason {
    reason(
        Code::DuplicateItems,
        Some(kind),
        Health::Degraded,
        format!(
            "{} duplicate {} across pages ({} raw, {} unique): {}",
            l.duplicate_items,
            noun(kind),
            l.raw_items,
            l.unique_items,
            name_list(&l.duplicate_names, l.duplicate_names.len() as u64)
        ),
    )
}

pub(super) fn invalid_items(kind: Kind, n: u64) -> Reason {
    reason(
        Code::ItemsWithoutKey,
        Some(kind),
        Health::Degraded,
        format!(
            "{n} {} without their identity key `{}` were left out",
            noun(kind),
            kind.identity_key()
        ),
    )
}

pub(super) fn invalid_cursor_restarts(kind: Kind, restarts: usize, l: &ListingReport) -> Reason {
    reason(
        Code::InvalidCursorRestarts,
        Some(kind),
        Health::Degraded,
        format!(
            "the server rejected a {} cursor it had issued with -32602; the listing completed only after {restarts} restart{} from page 1 ({} requests for {} pages)",
            noun(kind),
            if restarts == 1 { "" } else { "s" },
            l.requests(),
            l.final_pages
        ),
    )
}

pub(super) fn garbage_cursor(kind: Kind, result: GarbageCursorAnswer) -> Reason {
    let what = match result {
        GarbageCursorAnswer::SilentRestart => "answered with the first page again",
        _ => "accepted it",
    };
    reason(
        Code::GarbageCursorAccepted,
        Some(kind),
        Health::Degraded,
        format!(
            "a garbage {} cursor was not rejected with -32602: the server {what} ({result})",
            noun(kind)
        ),
    )
}

pub(super) fn silent_shrinks(
    kind: Kind,
    shrinks: &[&Change],
    now_unix_seconds: f64,
    window: Duration,
) -> Reason {
    // Callers pass at least one shrink, oldest first.
    let (Some(first), Some(last)) = (shrinks.first(), shrinks.last()) else {
        return reason(
            Code::SilentShrink,
            Some(kind),
            Health::Degraded,
            String::new(),
        );
    };
    let mut removed: Vec<String> = Vec::new();
    let mut removed_total = 0u64;
    for c in shrinks.iter().rev() {
        removed_total += c.names.removed_total;
        for n in &c.names.removed {
            if removed.len() < MAX_NAMES_IN_MESSAGE && !removed.contains(n) {
                removed.push(n.clone());
            }
        }
    }
    let mut m = if shrinks.len() == 1 {
        format!(
            "{} shrank from {} to {} without a list_changed notice at {} ({} ago)",
            noun(kind),
            last.from,
            last.to,
            clock(last.at_unix_seconds),
            ago(now_unix_seconds - last.at_unix_seconds)
        )
    } else {
        format!(
            "{} shrank {} times without a list_changed notice, from {} to {}, first at {}, latest at {} ({} ago)",
            noun(kind),
            shrinks.len(),
            first.from,
            last.to,
            clock(first.at_unix_seconds),
            clock(last.at_unix_seconds),
            ago(now_unix_seconds - last.at_unix_seconds)
        )
    };
    let _ = write!(m, "; removed: {}", name_list(&removed, removed_total));
    let _ = write!(
        m,
        " (kept for {} after it happened)",
        ago(window.as_secs_f64())
    );
    reason(Code::SilentShrink, Some(kind), Health::Degraded, m)
}

/// `2026-12-02 18:21:05 UTC`.
pub fn clock(unix_seconds: f64) -> String {
    chrono::DateTime::from_timestamp_millis((unix_seconds * 1000.0) as i64)
        .map(|d| d.format("%Y-%m-%d %H:%M:%S UTC").to_string())
        .unwrap_or_else(|| format!("{unix_seconds:.0} (unix seconds)"))
}

/// `5s`, `12m`, `2.0h`.
pub fn ago(secs: f64) -> String {
    let s = secs.max(0.0);
    if s < 90.0 {
        format!("{s:.0}s")
    } else if s < 5400.0 {
        format!("{:.0}m", s / 60.0)
    } else {
        format!("{:.1}h", s / 3600.0)
    }
}
