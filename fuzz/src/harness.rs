//! The entry points of the fuzz targets, one function per target.
//!
//! Shared by the cargo-fuzz binaries (`fuzz/fuzz_targets/*.rs`, through
//! `fuzz/src/lib.rs`) and by the stable test suite (`tests/fuzz_corpora.rs`
//! includes this file), so the committed corpora are replayed through
//! exactly the code the fuzzer ran. Only the library's public API and its
//! ordinary dependencies are used here. Each function must return for every
//! input; a panic (ours or the library's) is a crash. Each also says what
//! the input gave, so the replay can hold every seed to its outcome (the
//! fuzzer ignores it).

use bytes::Bytes;
use futures_util::StreamExt;
use mcp_exporter::config;
use mcp_listing::scripted::{Answer, ScriptedPager};
use mcp_listing::{walk, Era, ExchangeFailure, Kind, Outcome, PageError, WalkLimits};
use mcp_wire::jsonrpc::{self, Incoming};
use mcp_wire::transport::sse_body::{self, ByteCounter, SseReadError};
use serde_json::Value;
use std::time::Duration;

/// One runtime per thread: building one per input would dominate the run.
fn block_on<F: std::future::Future>(future: F) -> F::Output {
    thread_local! {
        static RUNTIME: tokio::runtime::Runtime = tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
            .expect("a current-thread runtime builds on any machine tokio supports");
    }
    RUNTIME.with(|rt| rt.block_on(future))
}

/// What a transport made of one message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Message {
    NotJson,
    Result,
    ErrorAnswer,
    Request,
    Notification,
    /// JSON, but not a JSON-RPC message.
    Invalid,
}

/// A message as a transport receives it (one stdio line, one SSE `data`,
/// one JSON body): parse, classify, and do what the transport does next.
pub fn jsonrpc_message(data: &[u8]) -> Message {
    let Ok(value) = serde_json::from_slice::<Value>(data) else {
        return Message::NotJson;
    };
    match jsonrpc::classify(value) {
        Incoming::Response { id, result } => {
            let _ = jsonrpc::id_matches(&id, 1);
            match result {
                Ok(_) => Message::Result,
                Err(e) => {
                    assert!(e.message.chars().count() <= 512, "error message not capped");
                    Message::ErrorAnswer
                }
            }
        }
        Incoming::Request { id, method, .. } => {
            let answer = jsonrpc::answer_server_request(&id, &method);
            let parsed: Value = serde_json::from_slice(&answer).expect("our answer is always JSON");
            assert_eq!(parsed["id"], id, "the answer echoes the request id");
            Message::Request
        }
        Incoming::Notification { method, .. } => {
            let _ = jsonrpc::notification(&method, None);
            Message::Notification
        }
        Incoming::Invalid(_) => Message::Invalid,
    }
}

/// Split fuzz bytes into body chunks at 0xFF bytes (which SSE text never
/// holds), so the fuzzer controls where the chunk boundaries fall.
fn chunks(data: &[u8]) -> Vec<Bytes> {
    data.split(|&b| b == 0xFF)
        .map(Bytes::copy_from_slice)
        .collect()
}

/// What an SSE body gave: the events read, and whether the byte cap
/// stopped the read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SseRead {
    pub events: u64,
    pub too_large: bool,
}

/// An HTTP response body read as SSE with a byte cap. The first two bytes
/// set the cap (so the cap path is reached), the rest is the body. None
/// for an input too short to hold the cap.
pub fn sse_body(data: &[u8]) -> Option<SseRead> {
    let (limit, body) = match data {
        [hi, lo, rest @ ..] => (u64::from(u16::from_be_bytes([*hi, *lo])), rest),
        _ => return None,
    };
    let body_chunks = chunks(body);
    let total: u64 = body_chunks.iter().map(|c| c.len() as u64).sum();
    let stream = futures_util::stream::iter(
        body_chunks
            .into_iter()
            .map(Ok::<Bytes, std::convert::Infallible>),
    );
    let counter = ByteCounter::default();
    let mut events = sse_body::events_from_chunks(stream, limit, counter.clone());
    let (mut ok, mut too_large) = (0u64, false);
    block_on(async {
        while let Some(item) = events.next().await {
            match item {
                Ok(_) => ok += 1,
                Err(SseReadError::TooLarge) => {
                    too_large = true;
                    break;
                }
                Err(_) => {}
            }
        }
    });
    assert!(counter.get() <= total, "counted more bytes than were sent");
    // The cap and TooLarge go together: past the cap the stream says so,
    // and it never says so below it.
    assert_eq!(
        too_large,
        counter.get() > limit,
        "read {} of {total} bytes with a cap of {limit}",
        counter.get()
    );
    // An event needs at least a newline to end it.
    assert!(ok <= total, "more events than bytes");
    Some(SseRead {
        events: ok,
        too_large,
    })
}

/// What the loader made of a configuration file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ConfigText {
    NotUtf8,
    Loaded,
    Rejected,
}

/// What the state-file parser made of a file's bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StateFile {
    /// Ours: the target it is for and how many names it holds.
    Loaded { names: usize },
    /// Not ours (another version, not JSON, the wrong shape).
    Rejected,
}

/// A baseline file's bytes through the parser the state directory's
/// loader uses (after its regular-file and size checks).
pub fn state_file(data: &[u8]) -> StateFile {
    match mcp_exporter::baseline::parse_state_file(data) {
        Ok((_target, names)) => StateFile::Loaded { names },
        Err(why) => {
            assert!(why.len() <= 4096, "state-file error message not bounded");
            StateFile::Rejected
        }
    }
}

/// A configuration file's text through the loader, and its error message.
pub fn config_text(data: &[u8]) -> ConfigText {
    let Ok(text) = std::str::from_utf8(data) else {
        return ConfigText::NotUtf8;
    };
    match config::load_str(text, "fuzz.yaml") {
        Ok(loaded) => {
            let _ = loaded.config.defaults.settings.limits.walk_limits();
            ConfigText::Loaded
        }
        Err(err) => {
            let _ = err.to_string();
            let _ = err.position();
            ConfigText::Rejected
        }
    }
}

/// One scripted page from one line: the first byte picks an error, a
/// `list_changed` count, or a plain page; the rest is the page's JSON.
fn scripted(line: &[u8]) -> Answer {
    let (tag, rest) = match line.split_first() {
        Some((t, r)) => (*t, r),
        None => return Answer::page(Value::Null),
    };
    let error = match tag {
        b'T' => Some(PageError::Failed(ExchangeFailure::Timeout(
            Duration::from_secs(1),
        ))),
        b'X' => Some(PageError::Failed(ExchangeFailure::Transport {
            message: "fuzz".into(),
            http_status: Some(502),
        })),
        b'I' => Some(PageError::Rpc {
            code: -32602,
            message: "fuzz".into(),
        }),
        b'E' => Some(PageError::Rpc {
            code: -32603,
            message: "fuzz".into(),
        }),
        b'S' => Some(PageError::SessionRenewed),
        b'U' => Some(PageError::Failed(ExchangeFailure::Unauthorized {
            status: 401,
        })),
        b'L' => Some(PageError::Failed(ExchangeFailure::TooLarge { limit: 1 })),
        _ => None,
    };
    if let Some(e) = error {
        return Answer::error(e);
    }
    let list_changed = if tag == b'N' { 1 } else { 0 };
    let json = if tag == b'N' || tag == b'P' {
        rest
    } else {
        line
    };
    match serde_json::from_slice::<Value>(json) {
        Ok(v) => Answer {
            outcome: Ok(v),
            list_changed,
        },
        Err(e) => Answer::error(ExchangeFailure::Malformed(e.to_string())),
    }
}

/// The walker over an arbitrary page sequence. First byte: limits (kind,
/// modern, max_pages 1..=16); then one page per line (see [`scripted`]).
/// It must end within its page bounds and report consistent counts. The
/// walk's outcome; None for an input without a page.
pub fn walk_pages(data: &[u8]) -> Option<Outcome> {
    let (&head, body) = data.split_first()?;
    let kind = Kind::ALL[usize::from(head & 0b11)];
    let limits = WalkLimits {
        max_pages: u32::from((head >> 3) & 0b1111) + 1,
        max_items: 40,
        ..WalkLimits::default()
    };
    let era = Era::modern_if(head & 0b100 != 0);
    let script: Vec<Answer> = body
        .split(|&b| b == b'\n')
        .filter(|l| !l.is_empty())
        .map(scripted)
        .collect();
    if script.is_empty() {
        return None;
    }
    // The script answers whatever cursor is asked for and starts again
    // when it runs out, so endless, cycling and repeating servers can all
    // be expressed.
    let mut pager = ScriptedPager::answering(move |asked| {
        let at = usize::try_from(asked.number - 1).unwrap_or(usize::MAX);
        script[at % script.len()].clone()
    });
    let report = block_on(walk(&mut pager, kind, &limits, era));
    let attempts = 1
        + u64::from(limits.invalid_cursor_restarts)
        + u64::from(limits.list_changed_restarts)
        + u64::from(limits.session_restarts);
    let fetches = pager.requests() as u64;
    assert!(
        fetches <= attempts * u64::from(limits.max_pages),
        "{fetches} fetches with max_pages {} and {attempts} attempts",
        limits.max_pages
    );
    assert_eq!(report.pages.len() as u64, fetches, "a page went unrecorded");
    assert!(report.final_pages <= limits.max_pages);
    assert!(report.unique_items <= report.raw_items);
    assert_eq!(report.names.len() as u64, report.unique_items);
    if report.outcome.is_complete() {
        assert!(
            report.unique_items <= limits.max_items,
            "complete past item_cap"
        );
    }
    Some(report.outcome)
}
