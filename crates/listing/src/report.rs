//! The walker's output: plain data describing one listing, no I/O.

use super::fingerprint::ItemFingerprint;
use super::kind::Kind;
use super::trace::SpanId;
use serde::Serialize;
use std::collections::BTreeMap;
use std::fmt;
use std::time::{Duration, SystemTime};

crate::labelled_enum! {
    /// Why a walk stopped early although every response was well-formed.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
    pub enum Guard as "guard" {
        CursorCycle => "cursor_cycle",
        NoProgress => "no_progress",
        PageCap => "page_cap",
        ItemCap => "item_cap",
    }
}

crate::labelled_enum! {
    /// Why a walk failed: the one failure→label table (the `error` label,
    /// `PageRecord.error`, the conformance rules' wording).
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
    pub enum ErrorKind as "error" {
        Timeout => "timeout",
        InvalidCursor => "invalid_cursor",
        RpcError => "rpc_error",
        TransportError => "transport_error",
        MalformedResult => "malformed_result",
        ResponseTooLarge => "response_too_large",
        /// HTTP 401/403: a separate label because the fix (credentials) differs
        /// from every other transport failure.
        Unauthorized => "unauthorized",
        /// HTTP 429: the server (often a gateway) refused for load; the fix is
        /// polling less often, not the server.
        RateLimited => "rate_limited",
        /// -32602 to a request that carried no cursor: not a cursor problem
        /// (a merging gateway passes on its origin's error, or the server
        /// rejects our parameters).
        InvalidParams => "invalid_params",
        /// The server named a URL (the legacy SSE message endpoint, a
        /// redirect) outside where the target's credentials may go: its
        /// origin and path, or its module's `allow`. Nothing was sent there.
        UrlNotAllowed => "url_not_allowed",
    }
}

/// How a listing ended. Shown and serialised as its label (the guard or
/// error is the listing's `reason`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    Complete,
    Aborted(Guard),
    Error(ErrorKind),
    /// The server does not advertise the kind; nothing was sent.
    Unsupported,
}

impl Outcome {
    pub fn label(self) -> &'static str {
        match self {
            Outcome::Complete => "complete",
            Outcome::Aborted(_) => "aborted",
            Outcome::Error(_) => "error",
            Outcome::Unsupported => "unsupported",
        }
    }
    pub fn is_complete(self) -> bool {
        matches!(self, Outcome::Complete)
    }
}

crate::shown_as_label!(Outcome);

/// Why no session (and so no listing) could start: connect or handshake.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SessionFailure {
    pub error: ErrorKind,
    pub detail: String,
    pub http_status: Option<u16>,
}

/// `error: detail`, as pages and reasons show it.
impl fmt::Display for SessionFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.error, self.detail)
    }
}

/// What a listing's `reason` names: the guard or error of its outcome, or
/// the `""` that ended a legacy listing. Shown and serialised as its label.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum EndReason {
    Guard(Guard),
    Error(ErrorKind),
    /// A legacy listing (protocol < 2026-07-28) ended on `nextCursor: ""`.
    BlankCursor,
}

impl EndReason {
    /// The reason a walk that ended with `outcome` gives; `blank_cursor_end`
    /// says a complete legacy listing ended on `""`.
    pub fn of(outcome: Outcome, blank_cursor_end: bool) -> Option<EndReason> {
        match outcome {
            Outcome::Aborted(g) => Some(EndReason::Guard(g)),
            Outcome::Error(e) => Some(EndReason::Error(e)),
            Outcome::Complete if blank_cursor_end => Some(EndReason::BlankCursor),
            Outcome::Complete | Outcome::Unsupported => None,
        }
    }

    pub fn label(self) -> &'static str {
        match self {
            EndReason::Guard(g) => g.label(),
            EndReason::Error(e) => e.label(),
            EndReason::BlankCursor => "blank_cursor",
        }
    }
}

crate::shown_as_label!(EndReason);

/// What a page said about the next cursor.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case", tag = "state", content = "hash")]
pub enum CursorState {
    /// `nextCursor` missing.
    Absent,
    /// `nextCursor: null`.
    Null,
    /// `nextCursor: ""`.
    Blank,
    /// A non-empty string; only a short hash is kept, never the cursor.
    Present(String),
    /// Not a string at all (number, object, ...).
    Invalid,
    /// The page failed; no cursor was read.
    None,
}

impl CursorState {
    /// The state's name, as its JSON `state` tag says it.
    pub fn label(&self) -> &'static str {
        match self {
            CursorState::Absent => "absent",
            CursorState::Null => "null",
            CursorState::Blank => "blank",
            CursorState::Present(_) => "present",
            CursorState::Invalid => "invalid",
            CursorState::None => "none",
        }
    }

    pub fn is_present(&self) -> bool {
        matches!(self, CursorState::Present(_) | CursorState::Blank)
    }
    pub fn display(&self) -> String {
        match self {
            CursorState::Absent => "absent".into(),
            CursorState::Null => "null".into(),
            CursorState::Blank => "blank".into(),
            CursorState::Present(h) => h.clone(),
            CursorState::Invalid => "invalid".into(),
            CursorState::None => "-".into(),
        }
    }
}

/// One page round trip.
#[derive(Debug, Clone, Serialize)]
pub struct PageRecord {
    /// 0 for the first request of the listing; counts across restarts.
    /// Machines read the index (JSON, spans); people read [`Self::number`].
    pub index: u32,
    /// Which attempt (0 = first; a restart begins a new one).
    pub attempt: u32,
    /// Hash of the cursor sent (`None` for the first page of an attempt).
    pub sent_cursor: Option<String>,
    pub items: u32,
    /// Items whose identity key was not seen earlier in this attempt.
    pub new_items: u32,
    pub bytes: u64,
    /// The server's round trip, from request sent to last byte read.
    #[serde(serialize_with = "ser_secs", rename = "seconds")]
    pub duration: Duration,
    #[serde(serialize_with = "ser_unix", rename = "started_unix_seconds")]
    pub started: SystemTime,
    /// Span id sent to the server in `_meta.traceparent`, if any.
    #[serde(skip)]
    pub span_id: Option<SpanId>,
    pub next_cursor: CursorState,
    /// The JSON-RPC request id, for correlating with server logs and spans.
    pub request_id: i64,
    /// Why this page failed, if it did.
    pub error: Option<ErrorKind>,
    /// JSON-RPC error code, when the server sent one.
    pub rpc_code: Option<i64>,
    /// HTTP status, when a HTTP failure had one.
    pub http_status: Option<u16>,
}

crate::labelled_enum! {
    /// Why a walk started over from the first page.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
    pub enum RestartReason as "restart reason" {
        InvalidCursor => "invalid_cursor",
        ListChanged => "list_changed",
        SessionExpired => "session_expired",
    }
}

impl PageRecord {
    /// The page as people count it: 1 for the first request of the listing
    /// (every text says "page N" with this number; JSON keeps `index`).
    pub fn number(&self) -> u32 {
        page_number(self.index)
    }
}

/// The 1-based page number of a 0-based page index: the one convention for
/// people in `probe`, `check`, the status page and the verdict's messages.
pub fn page_number(index: u32) -> u32 {
    index.saturating_add(1)
}

#[derive(Debug, Clone, Serialize)]
pub struct Restart {
    pub reason: RestartReason,
    /// Index (0-based) of the page whose answer caused the restart.
    pub at_page: u32,
}

/// Everything one listing of one kind produced. `S` is what was listed:
/// an MCP [`Kind`] unless said otherwise (see [`crate::shape::PageShape`]).
#[derive(Debug, Clone, Serialize)]
pub struct ListingReport<S = Kind> {
    pub kind: S,
    pub outcome: Outcome,
    /// The guard or error behind the outcome; `blank_cursor` for a legacy
    /// listing ended by `""`.
    pub reason: Option<EndReason>,
    /// Human detail for errors (never contains a cursor or secret).
    pub detail: Option<String>,
    /// Every page requested, across restarts.
    pub pages: Vec<PageRecord>,
    /// Pages of the final attempt (what a complete listing needed).
    pub final_pages: u32,
    /// Items with an identity key on the final attempt's pages, repeats
    /// included.
    pub raw_items: u64,
    /// Distinct identity keys among them (`names` holds each).
    pub unique_items: u64,
    /// The repeats: `raw_items - unique_items`.
    pub duplicate_items: u64,
    /// Identity keys seen more than once (each once, sorted).
    pub duplicate_names: Vec<String>,
    /// Items without their identity key; left out of every count but this.
    pub invalid_items: u64,
    /// -32602 answers to a cursor.
    pub invalid_cursor_errors: u32,
    pub restarts: Vec<Restart>,
    /// Sorted unique identity keys of the final attempt.
    pub names: Vec<String>,
    /// list_changed notifications for this kind seen during the walk.
    pub list_changed_notifications: u32,
    /// A legacy listing that ended on `nextCursor: ""`.
    pub blank_cursor_end: bool,
    #[serde(flatten)]
    pub cache: CacheHints,
    pub rpc_error_code: Option<i64>,
    pub http_status: Option<u16>,
    /// The server's `Retry-After` with an HTTP 429 (already capped by the
    /// transport).
    #[serde(serialize_with = "ser_opt_secs", rename = "retry_after_seconds")]
    pub retry_after: Option<Duration>,
    #[serde(serialize_with = "ser_secs", rename = "duration_seconds")]
    pub duration: Duration,
    /// Per identity key of the final attempt: what callers depend on, as
    /// short hashes (item-content drift). Kept for the baseline, not shown.
    #[serde(skip)]
    pub fingerprints: BTreeMap<String, ItemFingerprint>,
}

/// The cache hints of a 2026-07-28 result (`ttlMs`, `cacheScope`), as the
/// first page of the final attempt gave them.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct CacheHints {
    pub ttl_ms: Option<u64>,
    /// Echoed (control characters escaped).
    pub cache_scope: Option<String>,
}

impl<S> ListingReport<S> {
    pub fn empty(kind: S, outcome: Outcome) -> Self {
        ListingReport {
            kind,
            outcome,
            reason: EndReason::of(outcome, false),
            detail: None,
            pages: Vec::new(),
            final_pages: 0,
            raw_items: 0,
            unique_items: 0,
            duplicate_items: 0,
            duplicate_names: Vec::new(),
            invalid_items: 0,
            invalid_cursor_errors: 0,
            restarts: Vec::new(),
            names: Vec::new(),
            list_changed_notifications: 0,
            blank_cursor_end: false,
            cache: CacheHints::default(),
            rpc_error_code: None,
            http_status: None,
            retry_after: None,
            duration: Duration::ZERO,
            fingerprints: BTreeMap::new(),
        }
    }

    /// Page requests actually sent.
    pub fn requests(&self) -> u32 {
        self.pages.len() as u32
    }

    pub fn restarts_for(&self, reason: RestartReason) -> usize {
        self.restarts.iter().filter(|r| r.reason == reason).count()
    }
}

fn ser_secs<S: serde::Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_f64(d.as_secs_f64())
}

fn ser_opt_secs<S: serde::Serializer>(d: &Option<Duration>, s: S) -> Result<S::Ok, S::Error> {
    match d {
        Some(d) => s.serialize_f64(d.as_secs_f64()),
        None => s.serialize_none(),
    }
}

fn ser_unix<S: serde::Serializer>(t: &SystemTime, s: S) -> Result<S::Ok, S::Error> {
    let secs = t
        .duration_since(SystemTime::UNIX_EPOCH)
        .map(|d| d.as_secs_f64())
        .unwrap_or(0.0);
    s.serialize_f64(secs)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_are_what_json_says() {
        for state in [
            CursorState::Absent,
            CursorState::Null,
            CursorState::Blank,
            CursorState::Present("abcd".into()),
            CursorState::Invalid,
            CursorState::None,
        ] {
            let json = serde_json::to_value(&state).unwrap();
            assert_eq!(json["state"], state.label());
        }
        for outcome in [
            Outcome::Complete,
            Outcome::Aborted(Guard::PageCap),
            Outcome::Error(ErrorKind::Timeout),
            Outcome::Unsupported,
        ] {
            assert_eq!(serde_json::to_value(outcome).unwrap(), outcome.label());
            let reason = EndReason::of(outcome, false);
            assert_eq!(
                serde_json::to_value(reason).unwrap(),
                serde_json::to_value(reason.map(EndReason::label)).unwrap()
            );
        }
        assert_eq!(
            EndReason::of(Outcome::Complete, true).map(EndReason::label),
            Some("blank_cursor")
        );
        let failure = SessionFailure {
            error: ErrorKind::Unauthorized,
            detail: "HTTP 401".into(),
            http_status: Some(401),
        };
        assert_eq!(failure.to_string(), "unauthorized: HTTP 401");
    }
}
