//! One exchange as followed: what its request head said, which session it
//! belongs to, and the message in progress each way, put back together
//! from the tap's chunks within `inspect_bytes` and the shared
//! `max_buffered_bytes`.

use crate::parse::RpcId;
use crate::session::{Introduction, SessionKey};
use bytes::{Bytes, BytesMut};
use mcp_listing::sse_parser::SseParser;
use mcp_listing::Kind;
use mcp_tap_contract::apps::Apps;
use mcp_tap_contract::identity::{self, Claims, ClientInfo};
use mcp_tap_contract::{
    BodyFraming, Direction, MergeOutcome, NotObserved, RequestHead, RequestMethod,
};
use std::borrow::Cow;
use std::sync::Arc;

/// Requests an exchange remembers having carried (a POST carries one; the
/// stdio tap's exchange carries them all, paired by session instead).
const SENT_KEPT: usize = 8;

/// Where a pending request's answer is looked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Scope {
    /// On its own exchange only (no session yet, or sessionless).
    Exchange(mcp_tap_contract::ExchangeId),
    /// Anywhere in the session with this serial (a GET stream, legacy
    /// HTTP+SSE, stdio).
    Session(u64),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct PendingKey {
    pub scope: Scope,
    pub id: RpcId,
}

/// A merged answer the tap announced for this exchange.
#[derive(Debug, Clone, Copy)]
pub(crate) struct MergeNote {
    pub kind: Kind,
    pub outcome: MergeOutcome,
    pub pages: u32,
}

/// Who a request's head says sent it: the operator's client header, the
/// app the operator's rules make of its address and User-Agent, and the
/// User-Agent product. With no session, this is what ties a stateless
/// server's caller to what its `initialize` said.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) struct Caller {
    pub header: Option<ClientInfo>,
    pub app: Option<ClientInfo>,
    pub user_agent: Option<ClientInfo>,
}

impl Caller {
    fn of(head: &RequestHead, apps: &Apps) -> Caller {
        let agent = head.user_agent.as_ref().map(|v| v.as_bytes());
        Caller {
            header: head
                .client_header
                .as_ref()
                .and_then(|v| identity::from_header(v.as_bytes())),
            app: apps.app_of(head.peer, agent),
            user_agent: agent.and_then(identity::from_user_agent),
        }
    }

    /// What the head says, with what the client says of itself.
    pub(crate) fn claims(self, client_info: Option<ClientInfo>) -> Claims {
        Claims {
            header: self.header,
            app: self.app,
            client_info,
            user_agent: self.user_agent,
        }
    }
}

#[derive(Debug)]
pub(crate) struct Exchange {
    pub method: RequestMethod,
    /// The request's path, normalised (its route is resolved when a session
    /// or a listing needs it); `None` for the stdio tap.
    pub path: Option<Arc<str>>,
    pub session: Option<SessionKey>,
    /// A legacy HTTP+SSE stream: its end ends its session.
    pub legacy_stream: bool,
    /// The session came with the request head (not from the answer).
    pub session_from_client: bool,
    pub caller: Caller,
    pub request_framing: BodyFraming,
    pub response_framing: Option<BodyFraming>,
    pub status: Option<u16>,
    pub from_client: Assembly,
    pub from_upstream: Assembly,
    pub sent: Vec<PendingKey>,
    /// `initialize`'s client info and version, held until the session is
    /// known (a Streamable HTTP `initialize` gets its session in the answer).
    pub initialize: Option<Introduction>,
    pub merged: Option<MergeNote>,
    /// An upstream message passed unread (too large, dropped, truncated).
    pub unobserved_answer: bool,
}

impl Exchange {
    pub(crate) fn new(head: &RequestHead, apps: &Apps) -> Exchange {
        Exchange {
            method: head.method,
            path: head
                .path
                .as_ref()
                .map(|p| Arc::from(crate::route::normalise(p.path()))),
            session: None,
            legacy_stream: false,
            session_from_client: false,
            caller: Caller::of(head, apps),
            request_framing: head.framing,
            response_framing: None,
            status: None,
            from_client: Assembly::default(),
            from_upstream: Assembly::default(),
            sent: Vec::new(),
            initialize: None,
            merged: None,
            unobserved_answer: false,
        }
    }

    pub(crate) fn assembly(&mut self, direction: Direction) -> &mut Assembly {
        match direction {
            Direction::FromClient => &mut self.from_client,
            Direction::FromUpstream => &mut self.from_upstream,
        }
    }

    pub(crate) fn framing(&self, direction: Direction) -> BodyFraming {
        match direction {
            Direction::FromClient => self.request_framing,
            // Before its head is seen: stdio is lines both ways.
            Direction::FromUpstream => self.response_framing.unwrap_or(match self.method {
                RequestMethod::Stdio => BodyFraming::Lines,
                _ => BodyFraming::Json,
            }),
        }
    }

    pub(crate) fn remember_sent(&mut self, key: PendingKey) {
        if self.sent.len() >= SENT_KEPT {
            self.sent.remove(0);
        }
        self.sent.push(key);
    }

    /// Give back what the unfinished messages held.
    pub(crate) fn release(&mut self, buffered: &mut usize) {
        self.from_client.clear(buffered);
        self.from_upstream.clear(buffered);
    }
}

/// The message in progress one way.
#[derive(Debug, Default)]
pub(crate) struct Assembly {
    parts: Parts,
    len: usize,
    skipped: Option<NotObserved>,
}

#[derive(Debug, Default)]
enum Parts {
    #[default]
    Empty,
    /// The common case, one chunk: kept as the tap handed it, not copied.
    One(Bytes),
    Many(BytesMut),
}

impl Assembly {
    /// Add the next bytes of the message, within `inspect_bytes` and what
    /// is left of the shared budget.
    pub(crate) fn push(&mut self, bytes: Bytes, inspect: usize, budget: (&mut usize, usize)) {
        let (buffered, max_buffered) = budget;
        if self.skipped.is_some() {
            return;
        }
        let skip = if self.len + bytes.len() > inspect {
            Some(NotObserved::TooLarge)
        } else if *buffered + bytes.len() > max_buffered {
            Some(NotObserved::ObserverFull)
        } else {
            None
        };
        if skip.is_some() {
            self.clear(buffered);
            self.skipped = skip;
            return;
        }
        *buffered += bytes.len();
        self.len += bytes.len();
        self.parts = match std::mem::take(&mut self.parts) {
            Parts::Empty => Parts::One(bytes),
            Parts::One(first) => {
                let mut many = BytesMut::with_capacity(first.len() + bytes.len());
                many.extend_from_slice(&first);
                many.extend_from_slice(&bytes);
                Parts::Many(many)
            }
            Parts::Many(mut many) => {
                many.extend_from_slice(&bytes);
                Parts::Many(many)
            }
        };
    }

    /// The whole message, or why it was skipped; the assembly is empty
    /// again either way.
    pub(crate) fn take(&mut self, buffered: &mut usize) -> Result<Bytes, NotObserved> {
        let skipped = self.skipped.take();
        *buffered = buffered.saturating_sub(self.len);
        self.len = 0;
        let parts = std::mem::take(&mut self.parts);
        if let Some(reason) = skipped {
            return Err(reason);
        }
        Ok(match parts {
            Parts::Empty => Bytes::new(),
            Parts::One(bytes) => bytes,
            Parts::Many(many) => many.freeze(),
        })
    }

    fn clear(&mut self, buffered: &mut usize) {
        *buffered = buffered.saturating_sub(self.len);
        self.len = 0;
        self.parts = Parts::Empty;
    }
}

/// The JSON-RPC text a whole message carries under its framing; `None` for
/// one that carries none (an SSE comment, a priming event with no data,
/// the legacy `endpoint` event, a blank line).
pub(crate) fn payload(framing: BodyFraming, raw: &[u8]) -> Option<Cow<'_, [u8]>> {
    let text: Cow<'_, [u8]> = match framing {
        BodyFraming::Json | BodyFraming::Lines => Cow::Borrowed(raw),
        BodyFraming::EventStream => {
            let mut parser = SseParser::new();
            let mut events = parser.push(raw);
            events.extend(parser.push(b"\n\n"));
            let event = events.into_iter().next()?;
            if event.event != "message" {
                return None;
            }
            Cow::Owned(event.data.into_bytes())
        }
        BodyFraming::Other => return None,
    };
    if text.iter().all(u8::is_ascii_whitespace) {
        return None;
    }
    Some(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_chunk_is_kept_as_is_and_many_are_joined() {
        let mut buffered = 0;
        let mut a = Assembly::default();
        let chunk = Bytes::from_static(b"{\"id\":1}");
        a.push(chunk.clone(), 100, (&mut buffered, 1000));
        assert_eq!(buffered, 8);
        let whole = a.take(&mut buffered).unwrap();
        assert_eq!(whole.as_ptr(), chunk.as_ptr(), "not copied");
        assert_eq!(buffered, 0);
        a.push(Bytes::from_static(b"ab"), 100, (&mut buffered, 1000));
        a.push(Bytes::from_static(b"cd"), 100, (&mut buffered, 1000));
        assert_eq!(&a.take(&mut buffered).unwrap()[..], b"abcd");
    }

    #[test]
    fn past_inspect_bytes_or_the_shared_budget_the_message_is_skipped() {
        let mut buffered = 0;
        let mut a = Assembly::default();
        a.push(Bytes::from_static(b"0123"), 6, (&mut buffered, 1000));
        a.push(Bytes::from_static(b"4567"), 6, (&mut buffered, 1000));
        assert_eq!(buffered, 0, "given back at once");
        a.push(Bytes::from_static(b"89"), 6, (&mut buffered, 1000));
        assert_eq!(a.take(&mut buffered), Err(NotObserved::TooLarge));
        let mut b = Assembly::default();
        buffered = 998;
        b.push(Bytes::from_static(b"xyz"), 100, (&mut buffered, 1000));
        assert_eq!(b.take(&mut buffered), Err(NotObserved::ObserverFull));
        assert_eq!(buffered, 998);
        assert_eq!(
            &b.take(&mut buffered).unwrap()[..],
            b"",
            "fresh after a skip"
        );
    }

    #[test]
    fn sse_events_give_their_data_and_nothing_else() {
        let es = BodyFraming::EventStream;
        let data = payload(
            es,
            b"event: message\r\nid: 4\r\ndata: {\"a\":\r\ndata: 1}\r\n",
        )
        .unwrap();
        assert_eq!(&data[..], b"{\"a\":\n1}");
        assert_eq!(&payload(es, b"data: {}\n").unwrap()[..], b"{}");
        assert!(payload(es, b"id: prime-1\ndata:\n").is_none(), "priming");
        assert!(payload(es, b": keep-alive\n").is_none());
        assert!(payload(es, b"event: endpoint\ndata: /m?sessionId=1\n").is_none());
        assert!(payload(BodyFraming::Lines, b"  \r").is_none());
        assert!(payload(BodyFraming::Other, b"{}").is_none());
        assert_eq!(&payload(BodyFraming::Json, b"{}").unwrap()[..], b"{}");
    }
}
