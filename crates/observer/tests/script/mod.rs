//! A scripted tap: the events a tap would offer for clients' requests and
//! an upstream's answers, fed to an observer, with the facts collected.
//! Time is a value here: `wait` moves it, nothing sleeps.

#![allow(dead_code)]

use bytes::Bytes;
use http::HeaderValue;
use mcp_observer::{
    ClientListing, ClientRoute, Fact, KindTally, Observer, ObserverLimits, Routing,
};
use mcp_tap_contract::{
    BodyFraming, CopyEnd, Direction, ExchangeEnd, ExchangeId, RequestHead, RequestMethod,
    ResponseHead, TapEvent,
};
use serde_json::{json, Value};
use std::time::{Duration, Instant};

pub struct Script {
    pub observer: Observer,
    pub facts: Vec<Fact>,
    pub now: Instant,
    next: u64,
}

/// What a request head says.
#[derive(Default, Clone)]
pub struct Head<'a> {
    /// The request's path (none: as the stdio tap's).
    pub path: Option<&'a str>,
    pub session: Option<&'a str>,
    pub user_agent: Option<&'a str>,
    pub client_header: Option<&'a str>,
    /// The address the client connected from.
    pub peer: Option<&'a str>,
}

impl Script {
    pub fn new(limits: ObserverLimits) -> Script {
        Script::with_routing(limits, Routing::learning(None))
    }

    /// A tap whose clients are named by the operator's `apps`.
    pub fn with_apps(limits: ObserverLimits, apps: mcp_tap_contract::apps::Apps) -> Script {
        Script {
            observer: Observer::new(limits).with_apps(apps),
            facts: Vec::new(),
            now: Instant::now(),
            next: 0,
        }
    }

    /// A tap whose requests become routes as `routing` says.
    pub fn with_routing(limits: ObserverLimits, routing: Routing) -> Script {
        Script {
            observer: Observer::with_routing(limits, routing),
            facts: Vec::new(),
            now: Instant::now(),
            next: 0,
        }
    }

    pub fn feed(&mut self, event: TapEvent) {
        self.observer.observe(event, &mut self.facts);
    }

    pub fn wait(&mut self, by: Duration) {
        self.now += by;
    }

    pub fn tick(&mut self) {
        self.observer.tick(self.now, &mut self.facts);
    }

    /// A new exchange with this head.
    pub fn open(
        &mut self,
        method: RequestMethod,
        head: &Head<'_>,
        framing: BodyFraming,
    ) -> ExchangeId {
        self.next += 1;
        let exchange = ExchangeId(self.next);
        let value = |s: Option<&str>| s.map(|s| HeaderValue::from_str(s).expect("header value"));
        self.feed(TapEvent::Opened {
            exchange,
            at: self.now,
            head: RequestHead {
                method,
                session: value(head.session),
                user_agent: value(head.user_agent),
                client_header: value(head.client_header),
                framing,
                path: head
                    .path
                    .map(|p| http::uri::PathAndQuery::try_from(p).expect("a path")),
                peer: head.peer.map(|p| p.parse().expect("an address")),
            },
        });
        exchange
    }

    /// A stdio process: one exchange of lines, open both ways at once.
    pub fn stdio(&mut self) -> ExchangeId {
        let x = self.open(RequestMethod::Stdio, &Head::default(), BodyFraming::Lines);
        self.answered(x, 0, BodyFraming::Lines, None);
        x
    }

    /// One stdio line holding `message`, in chunks of 50 bytes.
    pub fn line(&mut self, exchange: ExchangeId, direction: Direction, message: &Value) {
        self.message(exchange, direction, message.to_string().as_bytes(), 50);
    }

    /// One whole message, in chunks of `chunk` bytes.
    pub fn message(
        &mut self,
        exchange: ExchangeId,
        direction: Direction,
        raw: &[u8],
        chunk: usize,
    ) {
        for piece in raw.chunks(chunk.max(1)) {
            self.feed(TapEvent::Chunk {
                exchange,
                direction,
                bytes: Bytes::copy_from_slice(piece),
            });
        }
        self.end(exchange, direction, CopyEnd::Whole);
    }

    pub fn end(&mut self, exchange: ExchangeId, direction: Direction, copy: CopyEnd) {
        self.feed(TapEvent::MessageEnd {
            exchange,
            direction,
            at: self.now,
            copy,
        });
    }

    pub fn answered(
        &mut self,
        exchange: ExchangeId,
        status: u16,
        framing: BodyFraming,
        session: Option<&str>,
    ) {
        self.feed(TapEvent::Answered {
            exchange,
            at: self.now,
            head: ResponseHead {
                status,
                framing,
                session: session.map(|s| HeaderValue::from_str(s).expect("header value")),
            },
        });
    }

    pub fn close(&mut self, exchange: ExchangeId, end: ExchangeEnd) {
        self.feed(TapEvent::Closed {
            exchange,
            at: self.now,
            end,
        });
    }

    /// A POST carrying `request`, not answered yet.
    pub fn ask(&mut self, head: &Head<'_>, request: &Value) -> ExchangeId {
        let x = self.open(RequestMethod::Post, head, BodyFraming::Json);
        self.message(x, Direction::FromClient, request.to_string().as_bytes(), 99);
        x
    }

    /// A POST of `request` answered with `answer` as one JSON body.
    pub fn post(&mut self, head: &Head<'_>, request: &Value, answer: &Value) -> ExchangeId {
        self.post_with(head, request, 200, None, Some(answer))
    }

    pub fn post_with(
        &mut self,
        head: &Head<'_>,
        request: &Value,
        status: u16,
        assigned: Option<&str>,
        answer: Option<&Value>,
    ) -> ExchangeId {
        let x = self.open(RequestMethod::Post, head, BodyFraming::Json);
        self.message(x, Direction::FromClient, request.to_string().as_bytes(), 7);
        self.answered(x, status, BodyFraming::Json, assigned);
        if let Some(answer) = answer {
            self.message(
                x,
                Direction::FromUpstream,
                answer.to_string().as_bytes(),
                64,
            );
        }
        self.close(x, ExchangeEnd::Completed);
        x
    }

    /// `tools/list` page `page` (0-based) of `total` tools paged by 8, with
    /// request id `id`; past the first page the cursor is `"p<page>"`.
    pub fn tools(&mut self, head: &Head<'_>, id: u64, page: usize, total: usize) -> ExchangeId {
        let cursor = (page > 0).then(|| format!("p{page}"));
        let request = list_request(id, "tools/list", cursor.as_deref());
        self.post(head, &request, &tools_page(id, page, 8, total))
    }

    /// A POST of `request` answered with an event stream: a priming event,
    /// a notification, then the answer.
    pub fn post_sse(&mut self, head: &Head<'_>, request: &Value, answer: &Value) -> ExchangeId {
        let x = self.open(RequestMethod::Post, head, BodyFraming::Json);
        self.message(
            x,
            Direction::FromClient,
            request.to_string().as_bytes(),
            1000,
        );
        self.answered(x, 200, BodyFraming::EventStream, None);
        self.message(x, Direction::FromUpstream, b"id: prime\ndata:\n", 1000);
        let note = json!({"jsonrpc": "2.0", "method": "notifications/message", "params": {}});
        self.message(x, Direction::FromUpstream, sse(&note).as_bytes(), 5);
        self.message(x, Direction::FromUpstream, sse(answer).as_bytes(), 5);
        self.close(x, ExchangeEnd::Completed);
        x
    }

    /// `initialize` over Streamable HTTP: the upstream assigns `session`.
    pub fn initialize(&mut self, head: &Head<'_>, session: &str, name: &str, version: &str) {
        let request = initialize_request(name, version);
        let answer =
            json!({"jsonrpc": "2.0", "id": 0, "result": {"protocolVersion": "2025-11-25"}});
        self.post_with(head, &request, 200, Some(session), Some(&answer));
    }

    pub fn delete(&mut self, session: &str) {
        let head = Head {
            session: Some(session),
            ..Head::default()
        };
        let x = self.open(RequestMethod::Delete, &head, BodyFraming::Other);
        self.answered(x, 200, BodyFraming::Other, None);
        self.close(x, ExchangeEnd::Completed);
    }

    pub fn listings(&self) -> Vec<&ClientListing> {
        self.facts
            .iter()
            .filter_map(|f| match f {
                Fact::Listing(l) => Some(&**l),
                _ => None,
            })
            .collect()
    }

    /// The tally of `listing`'s client and route, for its kind.
    pub fn tally_of(&self, listing: &ClientListing) -> &KindTally {
        let key = ClientRoute {
            client: listing.client.clone(),
            route: listing.route.clone(),
        };
        self.observer
            .tally(&key)
            .expect("a tally for every told listing")
            .kind(listing.kind)
    }

    pub fn take_facts(&mut self) -> Vec<Fact> {
        std::mem::take(&mut self.facts)
    }
}

/// One SSE event carrying `message`.
pub fn sse(message: &Value) -> String {
    format!("event: message\r\ndata: {message}\r\n")
}

pub fn initialize_request(name: &str, version: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": name, "version": version}}})
}

pub fn list_request(id: u64, kind: &str, cursor: Option<&str>) -> Value {
    let params = match cursor {
        Some(cursor) => json!({"cursor": cursor}),
        None => json!({}),
    };
    json!({"jsonrpc": "2.0", "id": id, "method": kind, "params": params})
}

/// The simulator's catalogue: `total` tools paged by `per_page`, cursor
/// `"p<N>"` for page N (0-based).
pub fn tools_page(id: u64, page: usize, per_page: usize, total: usize) -> Value {
    let start = page * per_page;
    let end = (start + per_page).min(total);
    let tools: Vec<Value> = (start..end)
        .map(|i| {
            json!({"name": format!("tool-{:03}", i + 1), "description": "d",
                        "inputSchema": {"type": "object"}})
        })
        .collect();
    let mut result = json!({"tools": tools});
    if end < total {
        result["nextCursor"] = json!(format!("p{}", page + 1));
    }
    json!({"jsonrpc": "2.0", "id": id, "result": result})
}

pub fn error(id: u64, code: i64) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": "no"}})
}
