//! The walker's `Pager` for a merged walk: page requests made on the
//! client's behalf — the first is the client's own request as it sent it,
//! the next ones the same request with our id and the cursor — over a
//! transport (the upstream over HTTP, or a stdio server). Each page's text
//! goes to the merge being built (a restart starts it over); the walker
//! reads a skeleton of it. What the walk spends is taken before it is
//! spent: its tap's bytes for each page read, its tap's page requests for
//! each page after the first; past either the walk stops and page 1 goes.

use crate::event::MergeFallback;
use crate::merge::ask::ListRequest;
use crate::merge::budget::{ByteBudget, Charge, PageRate, Room};
use crate::merge::result::{Builder, Merged};
use crate::merge::PAGE_READ_FACTOR;
use bytes::Bytes;
use mcp_listing::{
    ExchangeFailure, Kind, Outcome, PageError, PageResult, PageShape, Pager, WalkLimits,
};
use mcp_wire::jsonrpc::RawMessage;
use serde_json::{Map, Value};
use std::borrow::Cow;
use std::future::Future;
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

/// What a transport got for one page request.
pub(crate) struct Exchanged {
    /// The JSON-RPC answer to the request's id, as its text.
    pub(crate) answer: Bytes,
    /// `list_changed` notifications for the walked kind seen meanwhile.
    pub(crate) list_changed: u32,
    /// Bytes read for it.
    pub(crate) bytes: u64,
}

/// One page request of a walk.
pub(crate) struct PageRequest<'r> {
    /// The request as sent: the client's own, or ours with a cursor.
    pub(crate) body: Bytes,
    /// Its JSON-RPC id, which its answer carries.
    pub(crate) id: Value,
    /// The kind walked.
    pub(crate) kind: Kind,
    /// What reading its answer may take of the tap's bytes: the transport
    /// takes each part as it reads it, and stops when refused.
    pub(crate) room: &'r Room<'r>,
}

/// How page requests reach the upstream.
pub(crate) trait PageTransport: Send {
    /// Send `request` and read until its answer.
    fn exchange(
        &mut self,
        request: PageRequest<'_>,
    ) -> impl Future<Output = Result<Exchanged, PageError>> + Send;
}

/// A merged walk's pages as the walker reads them: the guards' fields and
/// one string per new identity key (the merge keeps the items themselves).
#[derive(Debug, Clone, Copy)]
pub(crate) struct MergeShape(pub(crate) Kind);

impl PageShape for MergeShape {
    fn array_field(self) -> &'static str {
        self.0.array_field()
    }

    fn identity(self, item: &Value) -> Option<Cow<'_, str>> {
        item.as_str().map(Cow::Borrowed)
    }

    fn next_cursor(self, page: &Map<String, Value>) -> Option<&Value> {
        page.get("nextCursor")
    }

    fn fingerprint(
        self,
        _item: &Value,
        _with_shape: bool,
    ) -> Option<mcp_listing::fingerprint::ItemFingerprint> {
        None
    }
}

/// What a walk may spend: its charge on the tap's bytes, the tap's page
/// requests, how many bytes reading page 1 may take (charged before it is
/// asked for: page 1 must be readable whole), and how
/// long page 1 may take (the client's own request: as long as it may
/// without the tap, not just a page's time — a slow page 1 is not a
/// failure the client would otherwise see).
pub(crate) struct Spend<'a> {
    pub(crate) charge: Charge,
    pub(crate) pages: &'a PageRate,
    pub(crate) page_read_bytes: usize,
    pub(crate) first_page_timeout: Duration,
}

/// How a walk ended.
pub(crate) struct WalkEnd<'a, T> {
    pub(crate) merged: Result<Merged, MergeFallback>,
    pub(crate) transport: T,
    pub(crate) spend: Spend<'a>,
}

pub(crate) struct WalkPager<'a, T> {
    pub(crate) transport: T,
    ask: &'a ListRequest,
    /// The client's request, sent as the walk's first page request.
    original: Option<Bytes>,
    builder: Builder,
    pub(crate) spend: Spend<'a>,
    budget: Arc<ByteBudget>,
    /// Bytes of page 1 as it came, which the transport keeps.
    first_bytes: usize,
    /// Why the walk was stopped before its end, if it was.
    stopped: Option<MergeFallback>,
    requests: u32,
}

impl<'a, T: PageTransport> WalkPager<'a, T> {
    pub(crate) fn new(
        transport: T,
        ask: &'a ListRequest,
        original: Bytes,
        limits: &WalkLimits,
        max_merged_bytes: usize,
        spend: Spend<'a>,
    ) -> Self {
        WalkPager {
            transport,
            ask,
            original: Some(original),
            builder: Builder::new(ask.kind, limits.max_items, max_merged_bytes),
            budget: spend.charge.budget(),
            spend,
            first_bytes: 0,
            stopped: None,
            requests: 0,
        }
    }

    /// What the walk that ended with `outcome` gives the client — the
    /// merged result, or why page 1 goes — with the transport (page 1 as
    /// it came) and the walk's charge.
    pub(crate) fn end(self, outcome: Outcome) -> WalkEnd<'a, T> {
        let merged = match (self.stopped, outcome) {
            (Some(reason), _) => Err(reason),
            (None, Outcome::Complete) => self.builder.finish(),
            (None, outcome) => Err(MergeFallback::Walk(outcome)),
        };
        WalkEnd {
            merged,
            transport: self.transport,
            spend: self.spend,
        }
    }

    /// Bytes the walk holds now (page 1 as it came, the merge so far).
    fn held(&self) -> usize {
        self.first_bytes + self.builder.held()
    }

    /// Take what the next page request spends before it is sent; why not,
    /// when it cannot.
    fn spend_on_page(&mut self) -> Result<(), MergeFallback> {
        if self.requests > 1 && !self.spend.pages.take() {
            return Err(MergeFallback::Throttled);
        }
        let room = self.held() + self.prepaid();
        if !self.spend.charge.resize(room) {
            return Err(MergeFallback::Busy);
        }
        Ok(())
    }

    /// What reading this page has paid for beforehand.
    fn prepaid(&self) -> usize {
        match self.requests {
            1 => self.spend.page_read_bytes,
            _ => 0,
        }
    }

    async fn page(&mut self, cursor: Option<&str>, timeout: Duration) -> PageResult {
        let started = SystemTime::now();
        let clock = Instant::now();
        if cursor.is_none() {
            self.builder.restart();
        }
        self.requests += 1;
        if let Err(reason) = self.spend_on_page() {
            return self.stop(reason, started);
        }
        let (id, body) = match self.original.take() {
            Some(original) => (self.ask.id().clone(), original),
            None => {
                let id = crate::merge::request_id::next();
                let body = Bytes::from(self.ask.page(&id, cursor));
                (Value::String(id), body)
            }
        };
        let timeout = match self.requests {
            1 => timeout.max(self.spend.first_page_timeout),
            _ => timeout,
        };
        let budget = self.budget.clone();
        let room = Room::new(&budget, PAGE_READ_FACTOR, self.prepaid());
        let asked = id.clone();
        let kind = self.ask.kind;
        let request = PageRequest {
            body,
            id,
            kind,
            room: &room,
        };
        let exchanged = tokio::time::timeout(timeout, self.transport.exchange(request)).await;
        let (outcome, list_changed, bytes) = match exchanged {
            Err(_) => (
                Err(PageError::Failed(ExchangeFailure::Timeout(timeout))),
                0,
                0,
            ),
            Ok(Err(e)) => (Err(e), 0, 0),
            Ok(Ok(ex)) => (self.read(&ex.answer, &asked), ex.list_changed, ex.bytes),
        };
        if self.requests == 1 {
            self.first_bytes = usize::try_from(bytes).unwrap_or(usize::MAX);
        }
        // The page is read and taken in: only what is kept stays charged.
        let refused = room.refused();
        drop(room);
        let held = self.held();
        if refused || !self.spend.charge.resize(held) {
            return self.stop(MergeFallback::Busy, started);
        }
        if self.builder.too_large() {
            return self.stop(MergeFallback::TooLarge, started);
        }
        PageResult {
            outcome,
            request_id: i64::from(self.requests),
            bytes,
            duration: clock.elapsed(),
            started,
            span_id: None,
            list_changed,
        }
    }

    /// A JSON-RPC answer's result as the walker reads it (its items taken
    /// into the merge), or its error.
    fn read(&mut self, answer: &[u8], id: &Value) -> Result<Value, PageError> {
        let malformed = |what: &str| PageError::Failed(ExchangeFailure::Malformed(what.into()));
        let Some(message) = RawMessage::read(answer).filter(|m| m.answers(id)) else {
            return Err(malformed("no answer to the page request"));
        };
        match message.outcome() {
            Some(Err(error)) => Err(PageError::Rpc {
                code: error.code,
                message: error.message,
            }),
            Some(Ok(result)) if result.get().starts_with('{') => self
                .builder
                .page(result)
                .ok_or_else(|| malformed("a result that is not an object")),
            _ => Err(malformed("an answer without a result object")),
        }
    }

    /// End the walk here: page 1 goes, for `reason`.
    fn stop(&mut self, reason: MergeFallback, started: SystemTime) -> PageResult {
        self.stopped.get_or_insert(reason);
        PageResult {
            outcome: Err(PageError::Failed(ExchangeFailure::TooLarge {
                limit: self.spend.charge.bytes() as u64,
            })),
            request_id: i64::from(self.requests),
            bytes: 0,
            duration: Duration::ZERO,
            started,
            span_id: None,
            list_changed: 0,
        }
    }
}

impl<T: PageTransport> Pager<MergeShape> for WalkPager<'_, T> {
    fn fetch_page(
        &mut self,
        _shape: MergeShape,
        cursor: Option<&str>,
        timeout: Duration,
    ) -> impl Future<Output = PageResult> + Send {
        let cursor = cursor.map(str::to_string);
        async move { self.page(cursor.as_deref(), timeout).await }
    }
}

/// Walk `ask`'s kind through `pager` with `limits`, in the request's
/// protocol era: the walk's outcome and how many pages it asked for.
pub(crate) async fn walk<T: PageTransport>(
    pager: &mut WalkPager<'_, T>,
    limits: &WalkLimits,
) -> (Outcome, u32) {
    let (kind, era) = (pager.ask.kind, pager.ask.era);
    let report = mcp_listing::walk(pager, MergeShape(kind), limits, era).await;
    (report.outcome, report.pages.len() as u32)
}

/// Finds the answer to one id among the messages of a page's answer (one
/// JSON body, or an event stream read as it arrives), counting the walked
/// kind's `list_changed` notifications on the way, and where in an event
/// stream the answer's event began (the events before it are the
/// upstream's own messages to the client).
pub(crate) struct AnswerFinder<'a> {
    id: &'a Value,
    list_changed_method: &'static str,
    /// The answer's text.
    pub(crate) answer: Option<Bytes>,
    pub(crate) list_changed: u32,
    events: Option<mcp_wire::transport::sse_parser::SseParser>,
    /// Bytes of the stream read so far.
    read: usize,
    /// Where the event being read began.
    event_start: usize,
    /// Where the answer's event began.
    pub(crate) answer_at: Option<usize>,
}

impl<'a> AnswerFinder<'a> {
    pub(crate) fn new(id: &'a Value, kind: Kind, event_stream: bool) -> AnswerFinder<'a> {
        AnswerFinder {
            id,
            list_changed_method: kind.list_changed_method(),
            answer: None,
            list_changed: 0,
            events: event_stream.then(mcp_wire::transport::sse_parser::SseParser::new),
            read: 0,
            event_start: 0,
            answer_at: None,
        }
    }

    /// Read the next bytes of an event stream; true once the answer came.
    pub(crate) fn push(&mut self, mut bytes: &[u8]) -> bool {
        while !bytes.is_empty() && self.answer.is_none() {
            // Line by line: an event ends at a line, and where it began is
            // where the line after the last event's end began.
            let end = match bytes.iter().position(|&b| b == b'\n' || b == b'\r') {
                Some(at) if bytes[at..].starts_with(b"\r\n") => at + 2,
                Some(at) => at + 1,
                None => bytes.len(),
            };
            let (line, rest) = bytes.split_at(end);
            bytes = rest;
            let Some(parser) = self.events.as_mut() else {
                return false;
            };
            let events = parser.push(line);
            self.read += line.len();
            for event in events {
                let start = self.event_start;
                self.message(Bytes::from(event.data.into_bytes()));
                if self.answer.is_some() && self.answer_at.is_none() {
                    self.answer_at = Some(start);
                }
                self.event_start = self.read;
            }
        }
        self.answer.is_some()
    }

    /// A JSON body: the one message the answer is (whoever reads it
    /// checks it answers the request; read once, not twice).
    pub(crate) fn whole(&mut self, text: Bytes) {
        self.answer = Some(text);
    }

    /// One whole message (an event's data).
    fn message(&mut self, text: Bytes) {
        let Some(message) = RawMessage::read(&text) else {
            return;
        };
        if message.is(self.list_changed_method) {
            self.list_changed += 1;
        } else if self.answer.is_none() && message.answers(self.id) {
            self.answer = Some(text);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_answer_is_found_in_a_stream_with_where_its_event_began() {
        let id = json!(3);
        let mut finder = AnswerFinder::new(&id, Kind::Tools, true);
        let stream = b": hi\n\nevent: message\ndata: {\"method\":\"notifications/tools/list_changed\"}\n\ndata: {\"method\":\"notifications/message\",\"params\":{}}\r\n\r\ndata: {\"id\":3,\"result\":{\"tools\":[]}}\n\ndata: after\n\n";
        // Cut anywhere: the same.
        let (a, b) = stream.split_at(37);
        assert!(!finder.push(a));
        assert!(finder.push(b));
        assert_eq!(finder.list_changed, 1);
        let answer = finder.answer.clone().unwrap();
        assert_eq!(&answer[..], br#"{"id":3,"result":{"tools":[]}}"#);
        let at = finder.answer_at.unwrap();
        assert!(stream[..at].ends_with(b"\r\n\r\n"), "{at}");
        assert!(stream[at..].starts_with(b"data: {\"id\":3"));
        let mut json = AnswerFinder::new(&id, Kind::Tools, false);
        json.whole(Bytes::from_static(br#"{"id":3,"result":{}}"#));
        assert!(json.answer.is_some());
        assert_eq!(json.answer_at, None);
    }
}
