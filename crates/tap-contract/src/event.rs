//! What the data path tells whoever observes it: copies, in order, never the
//! traffic itself. These are plain data; the observer (crates/observer)
//! turns them into sessions and client listings without a runtime.
//!
//! One *exchange* is one client request and its answer: a POST and its JSON
//! or SSE answer, a GET stream, a DELETE, or — for the stdio tap — the whole
//! life of the server process (one session, newline-delimited both ways).
//! Bodies are handed over as the chunks that were forwarded (`Bytes` clones:
//! reference counts, not copies), cut into *messages* by the data path: a
//! JSON body is one message, an SSE event is one message, a stdio line is
//! one message. A message's copy stops at `inspect_bytes`; the rest is still
//! forwarded, and its end says so.

use bytes::Bytes;
use http::uri::PathAndQuery;
use http::HeaderValue;
use mcp_listing::{Kind, Outcome};
use std::net::IpAddr;
use std::time::Instant;

/// Which exchange an event belongs to; unique for the life of one tap.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ExchangeId(pub u64);

/// Which way a message travelled.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Direction {
    /// From the client to the upstream (a request body, a stdio line on stdin).
    FromClient,
    /// From the upstream to the client (an answer body, an SSE event, a
    /// stdio line on stdout).
    FromUpstream,
}

mcp_listing::labelled_enum! {
    /// The client's HTTP method, as far as MCP cares; the label is the
    /// `method` label of the tap's request counter.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
    pub enum RequestMethod as "method" {
        Post => "POST",
        Get => "GET",
        Delete => "DELETE",
        /// Anything else (forwarded all the same).
        Other => "other",
        /// Not HTTP: the stdio tap's one exchange.
        Stdio => "stdio",
    }
}

/// How a body carries messages.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BodyFraming {
    /// `application/json` (or no type): the whole body is one message.
    Json,
    /// `text/event-stream`: every event is one message (its raw bytes,
    /// field lines included, without the blank line that ends it).
    EventStream,
    /// Newline-delimited JSON (stdio): every line is one message.
    Lines,
    /// Anything else: not observed.
    Other,
}

/// What identifies the client and its session on a request. Header values
/// are shared (`HeaderValue` is reference-counted bytes), never parsed here:
/// the observer cuts and digests them.
#[derive(Debug, Clone)]
pub struct RequestHead {
    pub method: RequestMethod,
    /// `Mcp-Session-Id` the client sent; for a legacy HTTP+SSE POST, the
    /// `sessionId` query value of the message URL.
    pub session: Option<HeaderValue>,
    pub user_agent: Option<HeaderValue>,
    /// The value of the operator's client-identity header (a gateway's
    /// `X-Client-Id`, say), when one is configured and present.
    pub client_header: Option<HeaderValue>,
    /// How the request body carries messages.
    pub framing: BodyFraming,
    /// The path (and query) the request was forwarded to: which of the
    /// upstream's endpoints (a gateway's route) it is for. `None` for the
    /// stdio tap.
    pub path: Option<PathAndQuery>,
    /// The address the client connected from (the operator's app rules
    /// name clients by it); `None` for the stdio tap.
    pub peer: Option<IpAddr>,
}

/// The upstream's answer head, as forwarded.
#[derive(Debug, Clone)]
pub struct ResponseHead {
    pub status: u16,
    /// How the answer body carries messages.
    pub framing: BodyFraming,
    /// `Mcp-Session-Id` the upstream assigned (on an `initialize` answer).
    pub session: Option<HeaderValue>,
}

/// How a message's copy ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CopyEnd {
    /// Every byte of the message was copied.
    Whole,
    /// The copy is not to be read, and why.
    NotObserved(NotObserved),
}

mcp_listing::labelled_enum! {
    /// Why a message that passed was not observed; the label is the
    /// `reason` label of `mcp_tap_messages_not_observed_total`. The data path
    /// decides the first three; the observer adds what it finds reading.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
    pub enum NotObserved as "reason" {
        /// Longer than `inspect_bytes`: the copy stopped there (the message
        /// itself was forwarded whole).
        TooLarge => "too_large",
        /// A chunk could not be handed over (the observer's queue was
        /// full): the copy has a hole.
        Dropped => "queue_full",
        /// The body ended or broke in the middle of the message.
        Truncated => "truncated",
        /// Not JSON, or not JSON-RPC.
        Unparsable => "unparsable",
        /// A JSON-RPC batch (not MCP since 2025-06-18).
        Batch => "batch",
        /// The observer's own bound (sessions, pending requests) was reached.
        ObserverFull => "observer_full",
        /// The tap's observer had ended and the fresh one had not started
        /// (the application's supervisor counts these).
        ObserverRestart => "observer_restart",
    }
}

/// How an exchange ended, as a proxy sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExchangeEnd {
    /// The answer was forwarded to its end.
    Completed,
    /// The client went away first (the upstream request was cancelled).
    ClientGone,
    /// The upstream could not be reached or failed mid-answer (the client
    /// got a 502 or a cut stream).
    UpstreamFailed(UpstreamFailure),
}

mcp_listing::labelled_enum! {
    /// Why the upstream failed an exchange; the label is the `cause` label
    /// of `mcp_tap_upstream_errors_total`.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
    pub enum UpstreamFailure as "cause" {
        /// No connection (refused, unreachable, DNS).
        Connect => "connect",
        /// The TLS handshake with the upstream failed.
        Tls => "tls",
        /// No answer head within the tap's upstream timeout.
        Timeout => "timeout",
        /// The connection broke in the middle of the answer.
        Reset => "reset",
    }
}

mcp_listing::labelled_enum! {
    /// Why the tap cut a connection; the label is the `reason` label of
    /// `mcp_tap_cuts_total`. Deadlines on what a peer controls, and framing
    /// no peer behind the tap may read differently.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
    pub enum Cut as "reason" {
        /// A request head begun and not finished within the header read
        /// timeout.
        HeadTimeout => "head_timeout",
        /// A request body not all there within its deadline (the client
        /// got 408).
        BodyTimeout => "body_timeout",
        /// A client that took none of an answer's bytes for the write
        /// deadline.
        ClientWrite => "client_write_timeout",
        /// An upstream that took none of a request's bytes for the write
        /// deadline.
        UpstreamWrite => "upstream_write_timeout",
        /// Framing a peer could read differently (a length and a coding,
        /// chunked twice, a bare LF or a control byte in a chunk line or
        /// trailer): a request got 400, an answer was cut.
        BadFraming => "bad_framing",
    }
}

/// How the tap answered a list request it was asked to merge: the walk it
/// made on the client's behalf, or why the client got page 1 as it came.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MergeOutcome {
    /// One answer with every item, no `nextCursor`.
    Merged,
    /// The merged answer of an earlier walk on this session, reused (no
    /// `list_changed` since).
    Reused,
    /// The upstream's first page, unchanged.
    FirstPage(MergeFallback),
}

/// Why a merge was not sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MergeFallback {
    /// The walk ended otherwise than complete: a guard (cycle, caps, no
    /// progress) or an error (-32602, a failed page, a timeout).
    Walk(Outcome),
    /// The pages' `cacheScope`s differ (2026-07-28 forbids merging them).
    ScopeChanged,
    /// The merged answer would be larger than `max_merged_bytes`.
    TooLarge,
    /// The tap's merged walks were all in use, or the bytes merging may
    /// hold (`MergeSettings::max_bytes`), or a walk of the same key did not
    /// end within a walk's deadline.
    Busy,
    /// The page requests merging may send the upstream were spent
    /// (`MergeSettings::page_burst`, `pages_per_second`).
    Throttled,
}

impl MergeOutcome {
    pub fn label(self) -> &'static str {
        match self {
            MergeOutcome::Merged => "merged",
            MergeOutcome::Reused => "reused",
            MergeOutcome::FirstPage(_) => "first_page",
        }
    }
}

impl MergeFallback {
    /// The reason as a label: the walker's guard or error label, or ours.
    pub fn label(self) -> &'static str {
        match self {
            MergeFallback::Walk(Outcome::Aborted(guard)) => guard.label(),
            MergeFallback::Walk(Outcome::Error(error)) => error.label(),
            MergeFallback::Walk(outcome) => outcome.label(),
            MergeFallback::ScopeChanged => "scope_change",
            MergeFallback::TooLarge => "too_large",
            MergeFallback::Busy => "busy",
            MergeFallback::Throttled => "throttled",
        }
    }
}

/// One thing the data path saw.
#[derive(Debug, Clone)]
pub enum TapEvent {
    /// A client request began (for stdio: the server was started).
    Opened {
        exchange: ExchangeId,
        at: Instant,
        head: RequestHead,
    },
    /// The upstream's answer head was forwarded.
    Answered {
        exchange: ExchangeId,
        at: Instant,
        head: ResponseHead,
    },
    /// The next bytes of the message in progress in `direction`.
    Chunk {
        exchange: ExchangeId,
        direction: Direction,
        bytes: Bytes,
    },
    /// The message in progress in `direction` ended.
    MessageEnd {
        exchange: ExchangeId,
        direction: Direction,
        at: Instant,
        copy: CopyEnd,
    },
    /// A legacy HTTP+SSE stream (`exchange`, the client's GET) named its
    /// message URL: POSTs carrying this `sessionId` belong to this stream.
    LegacySession {
        exchange: ExchangeId,
        session: HeaderValue,
    },
    /// The client's list request (this exchange's, without a cursor) was
    /// one the tap merges for: what it answered. Comes before the answer's
    /// messages, which are what the client got.
    Merged {
        exchange: ExchangeId,
        kind: Kind,
        outcome: MergeOutcome,
        /// Upstream pages walked (0 when reused or busy).
        pages: u32,
        /// Unique items in the merged answer (0 when page 1 went).
        items: u64,
    },
    /// The exchange is over.
    Closed {
        exchange: ExchangeId,
        at: Instant,
        end: ExchangeEnd,
    },
}

impl TapEvent {
    pub fn exchange(&self) -> ExchangeId {
        match self {
            TapEvent::Opened { exchange, .. }
            | TapEvent::Answered { exchange, .. }
            | TapEvent::Chunk { exchange, .. }
            | TapEvent::MessageEnd { exchange, .. }
            | TapEvent::LegacySession { exchange, .. }
            | TapEvent::Merged { exchange, .. }
            | TapEvent::Closed { exchange, .. } => *exchange,
        }
    }
}

/// Whoever observes a tap. `offer` must return at once, whatever happens:
/// it runs on the data path. It says whether the event was taken; the data
/// path marks a message whose chunk was refused as [`NotObserved::Dropped`] and
/// counts it, and goes on forwarding.
pub trait Tee: Send + Sync + 'static {
    fn offer(&self, event: TapEvent) -> bool;

    /// Whether anyone observes at all. When not, the data path makes no
    /// copies and counts nothing as not observed.
    fn observing(&self) -> bool {
        true
    }
}

/// Observing nothing: a tap run with no observer forwards all the same.
impl Tee for () {
    fn offer(&self, _event: TapEvent) -> bool {
        false
    }

    fn observing(&self) -> bool {
        false
    }
}
