//! Server-sent events from a HTTP body, with a byte cap: we stop reading at
//! the cap instead of buffering an unbounded stream.

use super::http_client::HttpResponse;
use bytes::Bytes;
use eventsource_stream::{Event, Eventsource};
use futures_util::{Stream, StreamExt};
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// Why reading events stopped.
#[derive(Debug)]
pub enum SseReadError {
    TooLarge,
    Body(String),
    Parse(String),
}

pub type EventStream = Pin<Box<dyn Stream<Item = Result<Event, SseReadError>> + Send>>;

/// Bytes read from the body; the owner may reset it (per event) or not
/// (per response).
#[derive(Clone, Default)]
pub struct ByteCounter(Arc<AtomicU64>);

impl ByteCounter {
    pub fn get(&self) -> u64 {
        self.0.load(Ordering::Relaxed)
    }
    pub fn reset(&self) {
        self.0.store(0, Ordering::Relaxed);
    }
}

/// Parse `response`'s body as SSE. The stream ends with `TooLarge` once
/// more than `limit` bytes were read since the counter was last reset.
pub fn events(response: HttpResponse, limit: u64, counter: ByteCounter) -> EventStream {
    let over = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let over_in = over.clone();
    let counted = response.into_stream().map(move |chunk| {
        let chunk: Bytes = chunk.map_err(|e| BodyError(e.to_string()))?;
        let total = counter.0.fetch_add(chunk.len() as u64, Ordering::Relaxed) + chunk.len() as u64;
        if total > limit {
            over_in.store(true, Ordering::Relaxed);
            return Err(BodyError("too large".into()));
        }
        Ok(chunk)
    });
    let stream = counted.eventsource().map(move |item| match item {
        Ok(ev) => Ok(ev),
        Err(_) if over.load(Ordering::Relaxed) => Err(SseReadError::TooLarge),
        Err(eventsource_stream::EventStreamError::Transport(e)) => Err(SseReadError::Body(e.0)),
        Err(e) => Err(SseReadError::Parse(e.to_string())),
    });
    Box::pin(stream)
}

#[derive(Debug)]
pub struct BodyError(pub String);

impl std::fmt::Display for BodyError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for BodyError {}
