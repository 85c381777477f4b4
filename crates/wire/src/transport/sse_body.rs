//! Server-sent events from a HTTP body, with a byte cap: we stop reading at
//! the cap instead of buffering an unbounded stream.

use super::http_client::HttpResponse;
use futures_util::{Stream, StreamExt};
pub use mcp_listing::sse_parser::Event;
use mcp_listing::sse_parser::SseParser;
use std::collections::VecDeque;
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
/// Parsing is linear in the bytes read (see `crates/listing/src/sse_parser.rs`), so the cap,
/// not the CPU, decides how a huge event ends.
pub fn events(response: HttpResponse, limit: u64, counter: ByteCounter) -> EventStream {
    events_from_chunks(response.into_stream(), limit, counter)
}

/// [`events`] over any stream of body chunks (the fuzz harness feeds it
/// chunks cut where the fuzzer chooses).
pub fn events_from_chunks<S, E>(body: S, limit: u64, counter: ByteCounter) -> EventStream
where
    S: Stream<Item = Result<bytes::Bytes, E>> + Send + 'static,
    E: std::fmt::Display + 'static,
{
    let state = Reader {
        body: Box::pin(body.map(|chunk| chunk.map_err(|e| e.to_string()))),
        parser: SseParser::new(),
        ready: VecDeque::new(),
        done: false,
    };
    let stream = futures_util::stream::unfold(state, move |mut st| {
        let counter = counter.clone();
        async move {
            loop {
                if let Some(ev) = st.ready.pop_front() {
                    return Some((Ok(ev), st));
                }
                if st.done {
                    return None;
                }
                match st.body.next().await {
                    // An event not ended by a blank line is dropped (spec).
                    None => return None,
                    Some(Err(e)) => {
                        st.done = true;
                        return Some((Err(SseReadError::Body(e)), st));
                    }
                    Some(Ok(chunk)) => {
                        let n = chunk.len() as u64;
                        let total = counter.0.fetch_add(n, Ordering::Relaxed) + n;
                        if total > limit {
                            st.done = true;
                            return Some((Err(SseReadError::TooLarge), st));
                        }
                        st.ready.extend(st.parser.push(&chunk));
                    }
                }
            }
        }
    });
    Box::pin(stream)
}

type BodyStream = Pin<Box<dyn Stream<Item = Result<bytes::Bytes, String>> + Send>>;

struct Reader {
    body: BodyStream,
    parser: SseParser,
    ready: VecDeque<Event>,
    done: bool,
}
