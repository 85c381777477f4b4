//! The guarded walk over `nextCursor`. Pure logic over a [`Pager`]: it owns
//! every termination rule (DESIGN.md, "The walker's contract") and turns
//! whatever the pager returns into a [`ListingReport`].

use super::cursor::short_hash;
use super::fingerprint::{fingerprint, ItemFingerprint, MAX_SHAPES_PER_LISTING};
use super::kind::Kind;
use super::report::{
    CursorState, EndReason, ErrorKind, Guard, ListingReport, Outcome, PageRecord, Restart,
    RestartReason,
};
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet, HashSet};
use std::future::Future;
use std::time::{Duration, Instant, SystemTime};

/// JSON-RPC "Invalid params": what a server SHOULD answer to a bad cursor.
pub const INVALID_PARAMS: i64 = -32602;

/// What one page request produced, success or not. Timing is always kept so a
/// failed page still shows in the report.
#[derive(Debug)]
pub struct PageResult {
    pub outcome: Result<Value, PageError>,
    pub request_id: i64,
    /// Bytes of the response body read.
    pub bytes: u64,
    /// From request written to response read: the server's time, not ours.
    pub duration: Duration,
    pub started: SystemTime,
    /// Span id sent in `_meta.traceparent`, when trace propagation is on.
    pub span_id: Option<String>,
    /// `list_changed` notifications for the walked kind that arrived while
    /// this request was outstanding (or since the previous one).
    pub list_changed: u32,
}

/// Why a page request failed.
#[derive(Debug, Clone, thiserror::Error)]
pub enum PageError {
    #[error("JSON-RPC error {code}: {message}")]
    Rpc { code: i64, message: String },
    #[error("no answer within {0:?}")]
    Timeout(Duration),
    #[error("{message}")]
    Transport {
        message: String,
        http_status: Option<u16>,
    },
    #[error("unauthorized (HTTP {status})")]
    Unauthorized { status: u16 },
    #[error("response exceeded {limit} bytes")]
    TooLarge { limit: u64 },
    #[error("malformed response: {0}")]
    Malformed(String),
    /// HTTP 429, with the server's `Retry-After` if it gave one.
    #[error("rate limited (HTTP 429)")]
    RateLimited { retry_after: Option<Duration> },
    /// The session expired (HTTP 404) and the pager opened a new one;
    /// cursors of the old session mean nothing now.
    #[error("session expired and was re-established")]
    SessionRenewed,
}

impl PageError {
    /// The walker's error label for this failure: the one mapping from a
    /// failed page to `ErrorKind`.
    pub fn error_kind(&self) -> ErrorKind {
        match self {
            // Whether a cursor was sent decides between this and
            // `invalid_cursor`; the walker knows, see `step_on_error`.
            PageError::Rpc { code, .. } if *code == INVALID_PARAMS => ErrorKind::InvalidParams,
            PageError::Rpc { .. } => ErrorKind::RpcError,
            PageError::Timeout(_) => ErrorKind::Timeout,
            PageError::Transport { .. } | PageError::SessionRenewed => ErrorKind::TransportError,
            PageError::Unauthorized { .. } => ErrorKind::Unauthorized,
            PageError::TooLarge { .. } => ErrorKind::ResponseTooLarge,
            PageError::Malformed(_) => ErrorKind::MalformedResult,
            PageError::RateLimited { .. } => ErrorKind::RateLimited,
        }
    }

    /// The error label of this failure on a request that did (`true`) or
    /// did not carry a cursor: -32602 is a rejected cursor only when one
    /// was sent.
    pub fn error_kind_for(&self, cursor_sent: bool) -> ErrorKind {
        match self.error_kind() {
            ErrorKind::InvalidParams if cursor_sent => ErrorKind::InvalidCursor,
            other => other,
        }
    }

    /// The HTTP status the failure carried, if any.
    pub fn http_status(&self) -> Option<u16> {
        match self {
            PageError::Transport { http_status, .. } => *http_status,
            PageError::Unauthorized { status } => Some(*status),
            PageError::RateLimited { .. } => Some(429),
            _ => None,
        }
    }
}

/// Fetches one page of one kind. Implemented by the MCP session; tests
/// implement it with scripted pages.
pub trait Pager {
    /// Send `method` with `cursor` (None = first page) and wait at most
    /// `timeout` for the answer.
    fn fetch_page(
        &mut self,
        kind: Kind,
        cursor: Option<&str>,
        timeout: Duration,
    ) -> impl Future<Output = PageResult> + Send;
}

/// Bounds of one walk.
#[derive(Debug, Clone)]
pub struct WalkLimits {
    pub max_pages: u32,
    pub max_items: u64,
    /// Restarts allowed after -32602 on a continuation page.
    pub invalid_cursor_restarts: u32,
    /// Restarts allowed after a list_changed notification mid-walk.
    pub list_changed_restarts: u32,
    /// Restarts allowed after the session was renewed (HTTP 404).
    pub session_restarts: u32,
    pub page_timeout: Duration,
    /// The whole listing, restarts included.
    pub listing_timeout: Duration,
    /// Protocol 2026-07-28 or later: `""` is a cursor and a constant cursor
    /// is legal while it brings new items.
    pub modern: bool,
}

impl Default for WalkLimits {
    fn default() -> Self {
        WalkLimits {
            max_pages: 1000,
            max_items: 100_000,
            invalid_cursor_restarts: 1,
            list_changed_restarts: 1,
            session_restarts: 1,
            page_timeout: Duration::from_secs(10),
            listing_timeout: Duration::from_secs(60),
            modern: false,
        }
    }
}

/// Per-attempt state: restarting throws all of it away.
#[derive(Default)]
struct Attempt {
    pages: u32,
    raw: u64,
    seen: HashSet<String>,
    duplicates: BTreeSet<String>,
    invalid_items: u64,
    sent_cursors: HashSet<String>,
    /// First occurrence of each identity key wins.
    fingerprints: BTreeMap<String, ItemFingerprint>,
}

enum Step {
    Next(String),
    Done(Outcome),
    Restart(RestartReason),
}

/// Walk `kind` to completion (or to a guard or error) through `pager`.
pub async fn walk<P: Pager>(pager: &mut P, kind: Kind, limits: &WalkLimits) -> ListingReport {
    let started = Instant::now();
    let deadline = started + limits.listing_timeout;
    let mut report = ListingReport::empty(kind, Outcome::Complete);
    let mut attempt = Attempt::default();
    let mut cursor: Option<String> = None;
    let mut attempt_no = 0u32;
    let mut page_index = 0u32;

    let outcome = loop {
        let now = Instant::now();
        if now >= deadline {
            report.detail = Some(format!(
                "listing deadline of {:?} passed",
                limits.listing_timeout
            ));
            break Outcome::Error(ErrorKind::Timeout);
        }
        let timeout = limits.page_timeout.min(deadline - now);
        let sent_hash = cursor.as_deref().map(short_hash);
        // The pager owns the clock (this crate has no runtime): it must answer
        // within `timeout`, and the session's pager in the exporter holds a
        // hard bound on top of it.
        let result = pager.fetch_page(kind, cursor.as_deref(), timeout).await;
        let list_changed = result.list_changed;
        report.list_changed_notifications += list_changed;
        let mut record = PageRecord {
            index: page_index,
            attempt: attempt_no,
            sent_cursor: sent_hash,
            items: 0,
            new_items: 0,
            bytes: result.bytes,
            duration: result.duration,
            started: result.started,
            span_id: result.span_id,
            next_cursor: CursorState::None,
            request_id: result.request_id,
            error: None,
            rpc_code: None,
            http_status: None,
        };
        page_index += 1;

        let step = match result.outcome {
            Err(err) => {
                record.error = Some(err.error_kind_for(cursor.is_some()));
                if let PageError::Rpc { code, .. } = &err {
                    record.rpc_code = Some(*code);
                }
                record.http_status = err.http_status();
                step_on_error(&mut report, &err, cursor.is_some(), record.index, limits)
            }
            Ok(result) => step_on_page(
                &mut report,
                &mut attempt,
                &mut record,
                kind,
                &result,
                limits,
            ),
        };
        // A list_changed mid-walk means the set moved under the cursor.
        let step = match step {
            Step::Next(_)
                if list_changed > 0
                    && report.restarts_for(RestartReason::ListChanged)
                        < limits.list_changed_restarts as usize =>
            {
                Step::Restart(RestartReason::ListChanged)
            }
            other => other,
        };
        report.pages.push(record);

        match step {
            Step::Next(next) => cursor = Some(next),
            Step::Done(outcome) => break outcome,
            Step::Restart(reason) => {
                report.restarts.push(Restart {
                    reason,
                    at_page: page_index - 1,
                });
                attempt = Attempt::default();
                attempt_no += 1;
                cursor = None;
            }
        }
    };

    report.outcome = outcome;
    report.reason = EndReason::of(outcome, report.blank_cursor_end);
    report.final_pages = attempt.pages;
    report.raw_items = attempt.raw;
    report.unique_items = attempt.seen.len() as u64;
    report.duplicate_items = attempt.raw - report.unique_items;
    report.invalid_items = attempt.invalid_items;
    report.duplicate_names = attempt.duplicates.into_iter().collect();
    let mut names: Vec<String> = attempt.seen.into_iter().collect();
    names.sort_unstable();
    report.names = names;
    report.fingerprints = attempt.fingerprints;
    report.duration = started.elapsed();
    report
}

fn step_on_error(
    report: &mut ListingReport,
    err: &PageError,
    continuation: bool,
    index: u32,
    limits: &WalkLimits,
) -> Step {
    report.detail = Some(err.to_string());
    match err {
        PageError::Rpc { code, .. } => {
            report.rpc_error_code = Some(*code);
            if *code == INVALID_PARAMS && continuation {
                report.invalid_cursor_errors += 1;
                if report.restarts_for(RestartReason::InvalidCursor)
                    < limits.invalid_cursor_restarts as usize
                {
                    return Step::Restart(RestartReason::InvalidCursor);
                }
                report.detail = Some(format!(
                    "-32602 for the cursor of page {index} after {} restart(s)",
                    limits.invalid_cursor_restarts
                ));
            }
        }
        PageError::SessionRenewed
            if report.restarts_for(RestartReason::SessionExpired)
                < limits.session_restarts as usize =>
        {
            return Step::Restart(RestartReason::SessionExpired);
        }
        PageError::RateLimited { retry_after } => {
            report.http_status = err.http_status();
            report.retry_after = *retry_after;
        }
        _ => report.http_status = err.http_status(),
    }
    Step::Done(Outcome::Error(err.error_kind_for(continuation)))
}

fn step_on_page(
    report: &mut ListingReport,
    attempt: &mut Attempt,
    record: &mut PageRecord,
    kind: Kind,
    result: &Value,
    limits: &WalkLimits,
) -> Step {
    let Some(obj) = result.as_object() else {
        report.detail = Some("result is not an object".into());
        return Step::Done(Outcome::Error(ErrorKind::MalformedResult));
    };
    if let Some(rt) = obj.get("resultType") {
        if rt.as_str() != Some("complete") {
            report.detail = Some(format!("unexpected resultType {rt}"));
            return Step::Done(Outcome::Error(ErrorKind::MalformedResult));
        }
    }
    let Some(items) = obj.get(kind.array_field()).and_then(Value::as_array) else {
        report.detail = Some(format!(
            "result.{} is missing or not an array",
            kind.array_field()
        ));
        return Step::Done(Outcome::Error(ErrorKind::MalformedResult));
    };
    attempt.pages += 1;
    if attempt.pages == 1 {
        report.ttl_ms = obj.get("ttlMs").and_then(Value::as_u64);
        report.cache_scope = obj
            .get("cacheScope")
            .and_then(Value::as_str)
            .map(str::to_string);
    }

    record.items = items.len() as u32;
    let key = kind.identity_key();
    for item in items {
        match item.get(key).and_then(Value::as_str) {
            Some(id) => {
                attempt.raw += 1;
                if attempt.seen.contains(id) {
                    attempt.duplicates.insert(id.to_string());
                } else {
                    attempt.seen.insert(id.to_string());
                    record.new_items += 1;
                    let with_shape = attempt.fingerprints.len() < MAX_SHAPES_PER_LISTING;
                    attempt
                        .fingerprints
                        .insert(id.to_string(), fingerprint(kind, item, with_shape));
                }
            }
            None => attempt.invalid_items += 1,
        }
    }

    // Rule 1-3: what does the page say about the next one?
    let next = match obj.get("nextCursor") {
        None => {
            record.next_cursor = CursorState::Absent;
            None
        }
        Some(Value::Null) => {
            record.next_cursor = CursorState::Null;
            None
        }
        Some(Value::String(s)) if s.is_empty() => {
            record.next_cursor = CursorState::Blank;
            if limits.modern {
                Some(String::new())
            } else {
                report.blank_cursor_end = true;
                None
            }
        }
        Some(Value::String(s)) => {
            record.next_cursor = CursorState::Present(short_hash(s));
            Some(s.clone())
        }
        Some(other) => {
            record.next_cursor = CursorState::Invalid;
            report.detail = Some(format!(
                "nextCursor is a {}, not a string",
                json_type(other)
            ));
            return Step::Done(Outcome::Error(ErrorKind::MalformedResult));
        }
    };

    // Rule 5 (items): checked on every page, the last one included.
    if attempt.seen.len() as u64 > limits.max_items {
        report.detail = Some(format!("more than {} unique items", limits.max_items));
        return Step::Done(Outcome::Aborted(Guard::ItemCap));
    }
    let Some(next) = next else {
        return Step::Done(Outcome::Complete);
    };

    // Rule 4: a cursor we already sent in this attempt.
    if attempt.sent_cursors.contains(&next) {
        if !limits.modern {
            report.detail = Some(format!(
                "page {} returned a cursor already sent in this walk",
                record.index
            ));
            return Step::Done(Outcome::Aborted(Guard::CursorCycle));
        }
        if record.new_items == 0 {
            report.detail = Some(format!(
                "page {} repeated a cursor and brought no new items",
                record.index
            ));
            return Step::Done(Outcome::Aborted(Guard::NoProgress));
        }
    }

    // Rule 5 (pages): a listing of exactly max_pages completes; needing one
    // more aborts without sending it.
    if attempt.pages >= limits.max_pages {
        report.detail = Some(format!("more than {} pages", limits.max_pages));
        return Step::Done(Outcome::Aborted(Guard::PageCap));
    }
    attempt.sent_cursors.insert(next.clone());
    Step::Next(next)
}

fn json_type(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

#[cfg(test)]
#[path = "walk_tests.rs"]
mod tests;
