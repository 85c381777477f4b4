//! The guarded walk over `nextCursor`. Pure logic over a [`Pager`]: it owns
//! every termination rule (docs/guards.md) and turns
//! whatever the pager returns into a [`ListingReport`].

use super::cursor::{short_hash, CursorDigest};
use super::failure::ExchangeFailure;
use super::fingerprint::{ItemFingerprint, MAX_SHAPES_PER_LISTING};
use super::kind::Kind;
use super::report::{
    page_number, CacheHints, CursorState, EndReason, ErrorKind, Guard, ListingReport, Outcome,
    PageRecord, Restart, RestartReason,
};
use super::shape::{item_key, PageShape};
use super::text;
use super::trace::SpanId;
use super::version::Era;
use serde_json::{Map, Value};
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
    pub span_id: Option<SpanId>,
    /// `list_changed` notifications for the walked kind that arrived while
    /// this request was outstanding (or since the previous one).
    pub list_changed: u32,
}

/// Why a page request failed.
#[derive(Debug, Clone, thiserror::Error)]
pub enum PageError {
    #[error("JSON-RPC error {code}: {message}")]
    Rpc { code: i64, message: String },
    /// A failure every layer names alike (timeout, transport, HTTP status).
    #[error(transparent)]
    Failed(#[from] ExchangeFailure),
    /// The session expired (HTTP 404) and the pager opened a new one;
    /// cursors of the old session mean nothing now.
    #[error("session expired and was re-established")]
    SessionRenewed,
    /// The server named a URL (a message endpoint, a redirect) outside the
    /// URLs this target's credentials may go to; nothing was sent there.
    #[error("{0}")]
    UrlNotAllowed(String),
}

impl PageError {
    /// The walker's error label for this failure: the one mapping from a
    /// failed page to `ErrorKind`.
    pub fn error_kind(&self) -> ErrorKind {
        use ExchangeFailure as F;
        match self {
            // Whether a cursor was sent decides between this and
            // `invalid_cursor`; the walker knows, see `step_on_error`.
            PageError::Rpc { code, .. } if *code == INVALID_PARAMS => ErrorKind::InvalidParams,
            PageError::Rpc { .. } => ErrorKind::RpcError,
            PageError::Failed(F::Timeout(_)) => ErrorKind::Timeout,
            PageError::Failed(F::Transport { .. }) | PageError::SessionRenewed => {
                ErrorKind::TransportError
            }
            PageError::Failed(F::Unauthorized { .. }) => ErrorKind::Unauthorized,
            PageError::Failed(F::TooLarge { .. }) => ErrorKind::ResponseTooLarge,
            PageError::Failed(F::Malformed(_)) => ErrorKind::MalformedResult,
            PageError::Failed(F::RateLimited { .. }) => ErrorKind::RateLimited,
            PageError::UrlNotAllowed(_) => ErrorKind::UrlNotAllowed,
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
            PageError::Failed(failure) => failure.http_status(),
            _ => None,
        }
    }
}

/// Fetches one page of one kind. Implemented by the MCP session; tests
/// implement it with scripted pages. `S` is the catalogue's page shape:
/// an MCP [`Kind`] unless said otherwise (a registry of servers is another).
pub trait Pager<S: PageShape = Kind> {
    /// Send `method` with `cursor` (None = first page) and wait at most
    /// `timeout` for the answer.
    fn fetch_page(
        &mut self,
        kind: S,
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
}

impl WalkLimits {
    /// The bounds of a walk where nobody says otherwise; the exporter's
    /// configuration defaults (`limits:`) and flags are these.
    pub const DEFAULT: WalkLimits = WalkLimits {
        max_pages: 1000,
        max_items: 100_000,
        invalid_cursor_restarts: 1,
        list_changed_restarts: 1,
        session_restarts: 1,
        page_timeout: Duration::from_secs(10),
        listing_timeout: Duration::from_secs(60),
    };
}

impl Default for WalkLimits {
    fn default() -> Self {
        WalkLimits::DEFAULT
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
    /// Digests, not cursors: a server choosing 1 MiB cursors must not
    /// make a walk of 1,000 pages hold 1 GiB.
    sent_cursors: HashSet<CursorDigest>,
    /// First occurrence of each identity key wins.
    fingerprints: BTreeMap<String, ItemFingerprint>,
}

enum Step {
    Next(String),
    Done(Outcome),
    Restart(RestartReason),
}

/// Walk `kind` to completion (or to a guard or error) through `pager`,
/// within `limits`, by the rules of the protocol `era` the pager speaks
/// (from 2026-07-28 `""` is a cursor and a constant cursor is legal while
/// it brings new items). Generic over the page shape: every guard applies
/// whatever the catalogue.
pub async fn walk<S: PageShape, P: Pager<S>>(
    pager: &mut P,
    kind: S,
    limits: &WalkLimits,
    era: Era,
) -> ListingReport<S> {
    let started = Instant::now();
    // None: a timeout past what the clock can hold, never reached.
    let deadline = started.checked_add(limits.listing_timeout);
    let mut walk = Walk::new(kind, limits, era);
    let outcome = loop {
        // Rule 7: the whole-listing deadline, and no page waits past it.
        let now = Instant::now();
        let left = deadline.map_or(Duration::MAX, |d| d.saturating_duration_since(now));
        if left.is_zero() {
            walk.report.detail = Some(format!(
                "listing deadline of {:?} passed",
                limits.listing_timeout
            ));
            break Outcome::Error(ErrorKind::Timeout);
        }
        let timeout = limits.page_timeout.min(left);
        // The pager owns the clock (this crate has no runtime): it must answer
        // within `timeout`, and the session's pager in the exporter holds a
        // hard bound on top of it.
        let result = pager
            .fetch_page(kind, walk.cursor.as_deref(), timeout)
            .await;
        let step = walk.take_page(result);
        if let Some(outcome) = walk.follow(step) {
            break outcome;
        }
    };
    walk.finish(outcome, started.elapsed())
}

/// A walk in progress: the report so far, the current attempt, and the
/// cursor the next request sends.
struct Walk<'a, S: PageShape> {
    kind: S,
    limits: &'a WalkLimits,
    era: Era,
    report: ListingReport<S>,
    attempt: Attempt,
    /// `None` asks for the first page.
    cursor: Option<String>,
    attempt_no: u32,
    page_index: u32,
}

impl<'a, S: PageShape> Walk<'a, S> {
    fn new(kind: S, limits: &'a WalkLimits, era: Era) -> Walk<'a, S> {
        Walk {
            kind,
            limits,
            era,
            report: ListingReport::empty(kind, Outcome::Complete),
            attempt: Attempt::default(),
            cursor: None,
            attempt_no: 0,
            page_index: 0,
        }
    }

    /// Record one page in the report and decide what comes next.
    fn take_page(&mut self, result: PageResult) -> Step {
        let list_changed = result.list_changed;
        self.report.list_changed_notifications += list_changed;
        let mut record = PageRecord {
            index: self.page_index,
            attempt: self.attempt_no,
            sent_cursor: self.cursor.as_deref().map(short_hash),
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
        self.page_index += 1;
        let continuation = self.cursor.is_some();
        let step = match result.outcome {
            Err(err) => {
                record_failure(&mut record, &err, continuation);
                step_on_error(
                    &mut self.report,
                    &err,
                    continuation,
                    record.index,
                    self.limits,
                )
            }
            Ok(page) => step_on_page(
                &mut self.report,
                &mut self.attempt,
                &mut record,
                self.kind,
                &page,
                (self.limits, self.era),
            )
            .unwrap_or_else(|stop| stop.end(&mut self.report)),
        };
        let step = self.restart_on_list_changed(step, list_changed);
        self.report.pages.push(record);
        step
    }

    /// Rule 9: a list_changed mid-walk means the set moved under the
    /// cursor; start over rather than continue (while restarts are left).
    fn restart_on_list_changed(&self, step: Step, list_changed: u32) -> Step {
        match step {
            Step::Next(_)
                if list_changed > 0
                    && self.report.restarts_for(RestartReason::ListChanged)
                        < self.limits.list_changed_restarts as usize =>
            {
                Step::Restart(RestartReason::ListChanged)
            }
            other => other,
        }
    }

    /// Go where `step` says: the outcome when the walk is over.
    fn follow(&mut self, step: Step) -> Option<Outcome> {
        match step {
            Step::Next(next) => self.cursor = Some(next),
            Step::Done(outcome) => return Some(outcome),
            Step::Restart(reason) => {
                self.report.restarts.push(Restart {
                    reason,
                    at_page: self.page_index - 1,
                });
                self.attempt = Attempt::default();
                self.attempt_no += 1;
                self.cursor = None;
            }
        }
        None
    }

    /// The report of a walk that ended with `outcome`: its items are the
    /// last attempt's.
    fn finish(self, outcome: Outcome, duration: Duration) -> ListingReport<S> {
        let Walk {
            mut report,
            attempt,
            ..
        } = self;
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
        report.duration = duration;
        report
    }
}

/// What a failed page's record keeps: its error label and codes.
fn record_failure(record: &mut PageRecord, err: &PageError, continuation: bool) {
    record.error = Some(err.error_kind_for(continuation));
    if let PageError::Rpc { code, .. } = err {
        record.rpc_code = Some(*code);
    }
    record.http_status = err.http_status();
}

fn step_on_error<S>(
    report: &mut ListingReport<S>,
    err: &PageError,
    continuation: bool,
    index: u32,
    limits: &WalkLimits,
) -> Step {
    report.detail = Some(text::echo(&err.to_string()).into_owned());
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
                    "-32602 for the cursor of page {} after {} restart(s)",
                    page_number(index),
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
        PageError::Failed(ExchangeFailure::RateLimited { retry_after }) => {
            report.http_status = err.http_status();
            report.retry_after = *retry_after;
        }
        _ => report.http_status = err.http_status(),
    }
    Step::Done(Outcome::Error(err.error_kind_for(continuation)))
}

/// A page that ends the walk: how, and what the report's detail says.
struct Stop {
    outcome: Outcome,
    detail: String,
}

impl Stop {
    fn malformed(detail: String) -> Stop {
        Stop {
            outcome: Outcome::Error(ErrorKind::MalformedResult),
            detail,
        }
    }

    fn guard(guard: Guard, detail: String) -> Stop {
        Stop {
            outcome: Outcome::Aborted(guard),
            detail,
        }
    }

    fn end<S>(self, report: &mut ListingReport<S>) -> Step {
        report.detail = Some(text::echo(&self.detail).into_owned());
        Step::Done(self.outcome)
    }
}

/// The checks of one well-answered page, in the contract's order: its
/// shape, its items, what it says about the next page (rules 1-3), the
/// item cap (rule 5, on every page, the last one included), a repeated
/// cursor (rule 4), the page cap (rule 5).
fn step_on_page<S: PageShape>(
    report: &mut ListingReport<S>,
    attempt: &mut Attempt,
    record: &mut PageRecord,
    kind: S,
    result: &Value,
    (limits, era): (&WalkLimits, Era),
) -> Result<Step, Stop> {
    let (obj, items) = page_items(kind, result)?;
    attempt.pages += 1;
    if attempt.pages == 1 {
        report.cache = CacheHints {
            ttl_ms: obj.get("ttlMs").and_then(Value::as_u64),
            cache_scope: obj
                .get("cacheScope")
                .and_then(Value::as_str)
                .map(|scope| text::echo(scope).into_owned()),
        };
    }
    count_items(attempt, record, kind, items);
    let next = next_cursor(report, record, kind.next_cursor(obj), era)?;
    if attempt.seen.len() as u64 > limits.max_items {
        let detail = format!("more than {} unique items", limits.max_items);
        return Err(Stop::guard(Guard::ItemCap, detail));
    }
    let Some(next) = next else {
        return Ok(Step::Done(Outcome::Complete));
    };
    check_repeat(attempt, record, &next, era)?;
    // A listing of exactly max_pages completes; needing one more aborts
    // without sending it.
    if attempt.pages >= limits.max_pages {
        let detail = format!("more than {} pages", limits.max_pages);
        return Err(Stop::guard(Guard::PageCap, detail));
    }
    attempt.sent_cursors.insert(CursorDigest::of(&next));
    Ok(Step::Next(next))
}

/// The result object and its array of items, if the page has that shape.
fn page_items<S: PageShape>(
    kind: S,
    result: &Value,
) -> Result<(&Map<String, Value>, &[Value]), Stop> {
    let Some(obj) = result.as_object() else {
        return Err(Stop::malformed("result is not an object".into()));
    };
    if let Some(rt) = obj.get("resultType") {
        if rt.as_str() != Some("complete") {
            let rt = text::echo(&rt.to_string()).into_owned();
            return Err(Stop::malformed(format!("unexpected resultType {rt}")));
        }
    }
    let Some(items) = obj.get(kind.array_field()).and_then(Value::as_array) else {
        return Err(Stop::malformed(format!(
            "result.{} is missing or not an array",
            kind.array_field()
        )));
    };
    Ok((obj, items))
}

/// Count the page's items into the attempt: raw, new, duplicate, and
/// invalid (no identity key); the first occurrence of a key is kept.
fn count_items<S: PageShape>(
    attempt: &mut Attempt,
    record: &mut PageRecord,
    kind: S,
    items: &[Value],
) {
    record.items = items.len() as u32;
    for item in items {
        match kind.identity(item) {
            Some(id) => {
                // Kept names are bounded in bytes; a longer one keeps a
                // hash of the whole, so identity survives the cut.
                let id = item_key(id);
                attempt.raw += 1;
                if attempt.seen.contains(id.as_ref()) {
                    attempt.duplicates.insert(id.into_owned());
                } else {
                    record.new_items += 1;
                    let with_shape = attempt.fingerprints.len() < MAX_SHAPES_PER_LISTING;
                    if let Some(print) = kind.fingerprint(item, with_shape) {
                        attempt.fingerprints.insert(id.to_string(), print);
                    }
                    attempt.seen.insert(id.into_owned());
                }
            }
            None => attempt.invalid_items += 1,
        }
    }
}

/// Rules 1-3: what the page says about the next one (`written`, where the
/// page's shape keeps it). `None` ends the listing; a `nextCursor` that is
/// not a string is malformed.
fn next_cursor<S>(
    report: &mut ListingReport<S>,
    record: &mut PageRecord,
    written: Option<&Value>,
    era: Era,
) -> Result<Option<String>, Stop> {
    match written {
        None => {
            record.next_cursor = CursorState::Absent;
            Ok(None)
        }
        Some(Value::Null) => {
            record.next_cursor = CursorState::Null;
            Ok(None)
        }
        Some(Value::String(s)) if s.is_empty() => {
            record.next_cursor = CursorState::Blank;
            if era.is_modern() {
                Ok(Some(String::new()))
            } else {
                report.blank_cursor_end = true;
                Ok(None)
            }
        }
        Some(Value::String(s)) => {
            record.next_cursor = CursorState::Present(short_hash(s));
            Ok(Some(s.clone()))
        }
        Some(other) => {
            record.next_cursor = CursorState::Invalid;
            Err(Stop::malformed(format!(
                "nextCursor is a {}, not a string",
                json_type(other)
            )))
        }
    }
}

/// Rule 4: a cursor already sent in this attempt is a cycle, except where
/// a constant cursor is legal (2026-07-28) and the page brought new items.
fn check_repeat(attempt: &Attempt, record: &PageRecord, next: &str, era: Era) -> Result<(), Stop> {
    if !attempt.sent_cursors.contains(&CursorDigest::of(next)) {
        return Ok(());
    }
    if !era.is_modern() {
        return Err(Stop::guard(
            Guard::CursorCycle,
            format!(
                "page {} returned a cursor already sent in this walk",
                page_number(record.index)
            ),
        ));
    }
    if record.new_items == 0 {
        return Err(Stop::guard(
            Guard::NoProgress,
            format!(
                "page {} repeated a cursor and brought no new items",
                page_number(record.index)
            ),
        ));
    }
    Ok(())
}

/// The JSON type name of a value, as error texts and reports name it.
pub fn json_type(v: &Value) -> &'static str {
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
