//! The walker's `Pager` for a merged walk: page requests made on the
//! client's behalf — the first is the client's own request as it sent it,
//! the next ones the same request with our id and the cursor — over a
//! transport (the upstream over HTTP, or a stdio server). It keeps the
//! results of the walk's current attempt (a restart starts them over) and
//! bounds what they hold together.

use crate::event::MergeFallback;
use crate::merge::ask::ListRequest;
use crate::merge::result::{self, Merged};
use bytes::Bytes;
use mcp_listing::{ExchangeFailure, Kind, Outcome, PageError, PageResult, Pager};
use serde_json::Value;
use std::future::Future;
use std::time::{Duration, Instant, SystemTime};

/// What a transport got for one page request.
pub(crate) struct Exchanged {
    /// The JSON-RPC answer to the request's id.
    pub(crate) answer: Value,
    /// `list_changed` notifications for the walked kind seen meanwhile.
    pub(crate) list_changed: u32,
    /// Bytes read for it.
    pub(crate) bytes: u64,
}

/// One page request of a walk.
pub(crate) struct PageRequest {
    /// The request as sent: the client's own, or ours with a cursor.
    pub(crate) body: Bytes,
    /// Its JSON-RPC id, which its answer carries.
    pub(crate) id: Value,
    /// The kind walked.
    pub(crate) kind: Kind,
}

/// How page requests reach the upstream.
pub(crate) trait PageTransport: Send {
    /// Send `request` and read until its answer.
    fn exchange(
        &mut self,
        request: PageRequest,
    ) -> impl Future<Output = Result<Exchanged, PageError>> + Send;
}

pub(crate) struct WalkPager<'a, T> {
    pub(crate) transport: T,
    ask: &'a ListRequest,
    /// The client's request, sent as the walk's first page request.
    original: Option<Bytes>,
    /// Results of the current attempt, page 1 first.
    pub(crate) results: Vec<Value>,
    held: usize,
    max_held: usize,
    /// The pages together passed `max_held`: the walk was stopped.
    pub(crate) over_budget: bool,
    requests: u32,
}

impl<'a, T: PageTransport> WalkPager<'a, T> {
    pub(crate) fn new(
        transport: T,
        ask: &'a ListRequest,
        original: Bytes,
        max_held: usize,
    ) -> Self {
        WalkPager {
            transport,
            ask,
            original: Some(original),
            results: Vec::new(),
            held: 0,
            max_held,
            over_budget: false,
            requests: 0,
        }
    }

    /// What the walk that ended with `outcome` gives the client: the merged
    /// result and its answer, within `max_bytes`, or why page 1 goes.
    pub(crate) fn merged(
        &mut self,
        outcome: Outcome,
        max_bytes: usize,
    ) -> Result<(Merged, Vec<u8>), MergeFallback> {
        let merged = match (outcome, self.over_budget) {
            (_, true) => Err(MergeFallback::TooLarge),
            (Outcome::Complete, false) => {
                result::merge(self.ask.kind, std::mem::take(&mut self.results))
            }
            (outcome, false) => Err(MergeFallback::Walk(outcome)),
        }?;
        let body = result::envelope(self.ask.id(), &merged.result);
        if body.len() > max_bytes {
            return Err(MergeFallback::TooLarge);
        }
        Ok((merged, body))
    }

    async fn page(&mut self, kind: Kind, cursor: Option<&str>, timeout: Duration) -> PageResult {
        let started = SystemTime::now();
        let clock = Instant::now();
        if cursor.is_none() {
            self.results.clear();
            self.held = 0;
        }
        self.requests += 1;
        let (id, body) = match self.original.take() {
            Some(original) => (self.ask.id().clone(), original),
            None => {
                let id = crate::merge::request_id::next();
                let body = Bytes::from(self.ask.page(&id, cursor));
                (Value::String(id), body)
            }
        };
        let request = PageRequest { body, id, kind };
        let exchanged = tokio::time::timeout(timeout, self.transport.exchange(request)).await;
        let (mut outcome, list_changed, bytes) = match exchanged {
            Err(_) => (
                Err(PageError::Failed(ExchangeFailure::Timeout(timeout))),
                0,
                0,
            ),
            Ok(Err(e)) => (Err(e), 0, 0),
            Ok(Ok(ex)) => (result_of(ex.answer), ex.list_changed, ex.bytes),
        };
        self.held += bytes as usize;
        if self.held > self.max_held {
            self.over_budget = true;
            outcome = Err(PageError::Failed(ExchangeFailure::TooLarge {
                limit: self.max_held as u64,
            }));
        }
        if let Ok(result) = &outcome {
            self.results.push(result.clone());
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
}

impl<T: PageTransport> Pager for WalkPager<'_, T> {
    fn fetch_page(
        &mut self,
        kind: Kind,
        cursor: Option<&str>,
        timeout: Duration,
    ) -> impl Future<Output = PageResult> + Send {
        let cursor = cursor.map(str::to_string);
        async move { self.page(kind, cursor.as_deref(), timeout).await }
    }
}

/// A JSON-RPC answer's result, or its error.
fn result_of(answer: Value) -> Result<Value, PageError> {
    if let Some(error) = answer.get("error") {
        return Err(PageError::Rpc {
            code: error.get("code").and_then(Value::as_i64).unwrap_or(0),
            message: mcp_listing::text::echo(
                error.get("message").and_then(Value::as_str).unwrap_or(""),
            )
            .into_owned(),
        });
    }
    match answer.get("result") {
        Some(result) if result.is_object() => Ok(result.clone()),
        _ => Err(PageError::Failed(ExchangeFailure::Malformed(
            "an answer without a result object".into(),
        ))),
    }
}

/// Finds the answer to one id among the messages of a page's answer (one
/// JSON body, or an event stream read as it arrives), counting the walked
/// kind's `list_changed` notifications on the way.
pub(crate) struct AnswerFinder<'a> {
    id: &'a Value,
    list_changed_method: &'static str,
    pub(crate) answer: Option<Value>,
    pub(crate) list_changed: u32,
    events: Option<mcp_wire::transport::sse_parser::SseParser>,
}

impl<'a> AnswerFinder<'a> {
    pub(crate) fn new(id: &'a Value, kind: Kind, event_stream: bool) -> AnswerFinder<'a> {
        AnswerFinder {
            id,
            list_changed_method: kind.list_changed_method(),
            answer: None,
            list_changed: 0,
            events: event_stream.then(mcp_wire::transport::sse_parser::SseParser::new),
        }
    }

    /// Read the next bytes of an event stream; true once the answer came.
    pub(crate) fn push(&mut self, bytes: &[u8]) -> bool {
        let Some(parser) = self.events.as_mut() else {
            return false;
        };
        for event in parser.push(bytes) {
            if let Ok(message) = serde_json::from_str::<Value>(&event.data) {
                self.message(message);
            }
        }
        self.answer.is_some()
    }

    /// One whole message (a JSON body, a stdio line, an event's data).
    pub(crate) fn message(&mut self, message: Value) {
        if message.get("method").and_then(Value::as_str) == Some(self.list_changed_method) {
            self.list_changed += 1;
        } else if self.answer.is_none()
            && message.get("id") == Some(self.id)
            && message.get("method").is_none()
        {
            self.answer = Some(message);
        }
    }
}
