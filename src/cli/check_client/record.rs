//! What the client asked and what it was answered, request by request: the
//! detail a grade needs beyond the observer's listings (which cursor each
//! request carried, in what order, what each page handed out). Built from
//! the same bounded copies the observer reads; keeps digests, never cursors.

use super::message::{read_message, Message};
pub use super::message::{NextCursor, SentCursor};
use mcp_listing::cursor::CursorDigest;
use mcp_listing::Kind;
use mcp_tap::{CopyEnd, Direction, ExchangeId, RequestMethod, TapEvent};
use std::collections::HashMap;
use std::time::Instant;

/// Bytes of one message read; a longer one is skipped and counted.
const MAX_MESSAGE_BYTES: usize = 1 << 20;
/// Exchanges followed at once (HTTP exchanges end with their answer).
const MAX_EXCHANGES: usize = 1024;
/// Requests awaiting their answer.
const MAX_PENDING: usize = 1024;
/// Item keys kept per page (the scenarios' pages hold at most 10).
const MAX_KEYS_PER_PAGE: usize = 1000;

/// The answer to one list request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PageAnswer {
    Page {
        /// Items as sent.
        count: u32,
        /// 64-bit digests of their identity keys (at most 1000 a page).
        keys: Vec<u64>,
        next: NextCursor,
    },
    /// A JSON-RPC error, with its code when it has an integer one.
    Error(Option<i64>),
    /// A result the walker would refuse (no array for the kind).
    Malformed,
}

/// One list request and its answer.
#[derive(Debug, Clone)]
pub struct ListRequest {
    pub kind: Kind,
    pub cursor: SentCursor,
    pub at: Instant,
    pub answer: Option<PageAnswer>,
    /// When its answer came.
    pub answered: Option<Instant>,
    /// `list_changed` notifications of its kind the server had sent when
    /// this request was made.
    pub changes_before: u32,
}

/// Everything recorded in one scenario.
#[derive(Debug, Default, Clone)]
pub struct Record {
    /// List requests in order (at most `max_requests`).
    pub requests: Vec<ListRequest>,
    /// List requests, recorded or not.
    pub list_requests: u64,
    pub negotiation: Negotiation,
    /// Requests of other methods (`ping`, `server/discover`, calls).
    pub other_requests: u64,
    /// `notifications/<kind>/list_changed` the server sent, by kind.
    pub list_changed: HashMap<Kind, u32>,
    /// Messages that could not be read (too large, not JSON, cut).
    pub unreadable: u64,
    pub first_request: Option<Instant>,
}

/// How client and server settled on a protocol version: `initialize`
/// handshakes (legacy protocols), or the 2026-07-28 `_meta` every request
/// carries.
#[derive(Debug, Default, Clone)]
pub struct Negotiation {
    /// `initialize` requests (sessions opened, over legacy protocols).
    pub initializes: u32,
    /// The version the first `initialize` asked for.
    pub requested_version: Option<String>,
    /// An `initialize` answered with an error (a 2026-07-28-only server).
    pub initialize_refused: bool,
    /// The version the server answered (or the client's `_meta` said, 2026-07-28).
    pub negotiated: Option<String>,
    /// Requests carrying the 2026-07-28 `_meta` protocol version.
    pub modern_requests: u64,
}

/// Where a message belongs: its exchange, and how each side frames.
struct ExchangeState {
    session: Vec<u8>,
    buffers: [Vec<u8>; 2],
    skipping: [bool; 2],
}

/// Reads the tap's copies into a [`Record`].
pub struct Recorder {
    exchanges: HashMap<ExchangeId, ExchangeState>,
    pending: HashMap<(Vec<u8>, String), Pending>,
    framing: HashMap<(ExchangeId, usize), mcp_tap::BodyFraming>,
    max_requests: usize,
    pub record: Record,
}

/// A request awaiting its answer: a list request (its index), or `initialize`.
#[derive(Debug, Clone, Copy)]
enum Pending {
    List(Option<usize>),
    Initialize,
}

fn side(direction: Direction) -> usize {
    match direction {
        Direction::FromClient => 0,
        Direction::FromUpstream => 1,
    }
}

impl Recorder {
    pub fn new(max_requests: usize) -> Recorder {
        Recorder {
            exchanges: HashMap::new(),
            pending: HashMap::new(),
            framing: HashMap::new(),
            max_requests,
            record: Record::default(),
        }
    }

    pub fn take(&mut self, event: &TapEvent) {
        match event {
            TapEvent::Opened { exchange, head, .. } => {
                if self.exchanges.len() >= MAX_EXCHANGES {
                    return;
                }
                let session = match (&head.session, head.method) {
                    (Some(s), _) => s.as_bytes().to_vec(),
                    (None, RequestMethod::Stdio) => format!("stdio-{}", exchange.0).into_bytes(),
                    (None, _) => Vec::new(),
                };
                self.framing.insert((*exchange, 0), head.framing);
                self.exchanges.insert(
                    *exchange,
                    ExchangeState {
                        session,
                        buffers: [Vec::new(), Vec::new()],
                        skipping: [false, false],
                    },
                );
            }
            TapEvent::Answered { exchange, head, .. } => {
                if self.exchanges.contains_key(exchange) {
                    self.framing.insert((*exchange, 1), head.framing);
                }
            }
            TapEvent::Chunk {
                exchange,
                direction,
                bytes,
            } => self.chunk(*exchange, side(*direction), bytes),
            TapEvent::MessageEnd {
                exchange,
                direction,
                at,
                copy,
            } => self.message_end(*exchange, side(*direction), *copy, *at),
            TapEvent::LegacySession { exchange, session } => {
                if let Some(ex) = self.exchanges.get_mut(exchange) {
                    ex.session = session.as_bytes().to_vec();
                }
            }
            TapEvent::Closed { exchange, .. } => {
                self.exchanges.remove(exchange);
                self.framing.remove(&(*exchange, 0));
                self.framing.remove(&(*exchange, 1));
            }
            TapEvent::Merged { .. } => {}
        }
    }

    fn chunk(&mut self, exchange: ExchangeId, side: usize, bytes: &[u8]) {
        let Some(ex) = self.exchanges.get_mut(&exchange) else {
            return;
        };
        if ex.skipping[side] {
            return;
        }
        if ex.buffers[side].len() + bytes.len() > MAX_MESSAGE_BYTES {
            ex.skipping[side] = true;
            ex.buffers[side] = Vec::new();
            return;
        }
        ex.buffers[side].extend_from_slice(bytes);
    }

    fn message_end(&mut self, exchange: ExchangeId, side: usize, copy: CopyEnd, at: Instant) {
        let Some(ex) = self.exchanges.get_mut(&exchange) else {
            return;
        };
        let bytes = std::mem::take(&mut ex.buffers[side]);
        let skipped = std::mem::replace(&mut ex.skipping[side], false);
        let session = ex.session.clone();
        if skipped || copy != CopyEnd::Whole {
            self.record.unreadable += 1;
            return;
        }
        let framing = self
            .framing
            .get(&(exchange, side))
            .copied()
            .unwrap_or(mcp_tap::BodyFraming::Json);
        match read_message(&bytes, framing) {
            Some(Message::Empty) => {}
            Some(message) if side == 0 => self.client_message(session, message, at),
            Some(message) => self.server_message(session, message, at),
            None => self.record.unreadable += 1,
        }
    }

    fn client_message(&mut self, session: Vec<u8>, message: Message, at: Instant) {
        let Message::Request {
            id,
            method,
            cursor,
            modern,
            version,
        } = message
        else {
            return;
        };
        let record = &mut self.record;
        record.first_request.get_or_insert(at);
        let negotiation = &mut record.negotiation;
        if modern {
            negotiation.modern_requests += 1;
            negotiation
                .negotiated
                .get_or_insert_with(|| version.clone().unwrap_or_default());
        }
        let pending = if method == "initialize" {
            negotiation.initializes = negotiation.initializes.saturating_add(1);
            if negotiation.requested_version.is_none() {
                negotiation.requested_version = version;
            }
            Some(Pending::Initialize)
        } else if let Some(kind) = Kind::ALL.into_iter().find(|k| k.method() == method) {
            record.list_requests += 1;
            Some(Pending::List(self.list_request(kind, cursor, at)))
        } else {
            if id.is_some() {
                record.other_requests += 1;
            }
            None
        };
        if let (Some(id), Some(pending)) = (id, pending) {
            if self.pending.len() < MAX_PENDING {
                self.pending.insert((session, id), pending);
            }
        }
    }

    /// Record a list request; its index, when it was kept.
    fn list_request(&mut self, kind: Kind, cursor: SentCursor, at: Instant) -> Option<usize> {
        let record = &mut self.record;
        if record.requests.len() >= self.max_requests {
            return None;
        }
        record.requests.push(ListRequest {
            kind,
            cursor,
            at,
            answer: None,
            answered: None,
            changes_before: record.list_changed.get(&kind).copied().unwrap_or(0),
        });
        Some(record.requests.len() - 1)
    }

    fn server_message(&mut self, session: Vec<u8>, message: Message, at: Instant) {
        match message {
            Message::ListChanged(kind) => {
                *self.record.list_changed.entry(kind).or_insert(0) += 1;
            }
            Message::Answer { id, answer } => {
                let Some(pending) = self.pending.remove(&(session, id)) else {
                    return;
                };
                self.answered(pending, answer, at);
            }
            _ => {}
        }
    }

    fn answered(&mut self, pending: Pending, answer: super::message::Answer, at: Instant) {
        use super::message::Answer;
        match (pending, answer) {
            (Pending::Initialize, Answer::Result(result)) => {
                let version = result.get("protocolVersion").and_then(|v| v.as_str());
                if let Some(version) = version {
                    self.record.negotiation.negotiated =
                        Some(mcp_listing::text::echo(version).into_owned());
                }
            }
            (Pending::Initialize, Answer::Error(_)) => {
                self.record.negotiation.initialize_refused = true
            }
            (Pending::List(Some(index)), answer) => {
                let Some(request) = self.record.requests.get_mut(index) else {
                    return;
                };
                request.answer = Some(page_answer(request.kind, answer));
                request.answered = Some(at);
            }
            (Pending::List(None), _) => {}
        }
    }
}

/// A list answer as a page.
fn page_answer(kind: Kind, answer: super::message::Answer) -> PageAnswer {
    use super::message::Answer;
    let result = match answer {
        Answer::Error(code) => return PageAnswer::Error(code),
        Answer::Result(result) => result,
    };
    let Some(items) = result.get(kind.array_field()).and_then(|v| v.as_array()) else {
        return PageAnswer::Malformed;
    };
    let keys = items
        .iter()
        .filter_map(|item| item.get(kind.identity_key()).and_then(|k| k.as_str()))
        .take(MAX_KEYS_PER_PAGE)
        .map(key_digest)
        .collect();
    let next = match result.get("nextCursor") {
        None => NextCursor::Absent,
        Some(serde_json::Value::Null) => NextCursor::Null,
        Some(serde_json::Value::String(s)) => NextCursor::Str(CursorDigest::of(s)),
        Some(_) => NextCursor::Other,
    };
    PageAnswer::Page {
        count: u32::try_from(items.len()).unwrap_or(u32::MAX),
        keys,
        next,
    }
}

/// An item's identity key as kept: a 64-bit digest (equality is all a
/// grade needs of it).
pub fn key_digest(key: &str) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    key.hash(&mut hasher);
    hasher.finish()
}
