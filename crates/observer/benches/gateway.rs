//! The observer in front of a gateway: many sessions over many routes,
//! each reading page 1 of its route's `tools/list` on a random session.
//! Three legs per session count: sessions that all fit (`max_sessions`
//! above them), and churn (more sessions than `max_sessions`, so most
//! requests make a session and evict the one quiet longest, with its
//! listing). Churn should cost what a new session costs, no more.
//! Run: `cargo bench -p mcp-observer --bench gateway`.

use bytes::Bytes;
use criterion::{criterion_group, criterion_main, BatchSize, Criterion};
use http::HeaderValue;
use mcp_listing::Kind;
use mcp_observer::{Fact, Observer, ObserverLimits};
use mcp_tap::{
    BodyFraming, CopyEnd, Direction, ExchangeEnd, ExchangeId, RequestHead, RequestMethod,
    ResponseHead, TapEvent,
};
use serde_json::json;
use std::time::Instant;

const ROUTES: usize = 50;

/// Page 1 of a 40-tool catalogue in pages of 10.
fn page_one() -> Bytes {
    let tools: Vec<_> = (0..10)
        .map(|i| {
            json!({"name": format!("tool-{i:03}"), "description": "Looks a thing up.",
                        "inputSchema": {"type": "object"}})
        })
        .collect();
    let body = json!({"jsonrpc": "2.0", "id": 2,
                      "result": {"tools": tools, "nextCursor": "page-2"}});
    Bytes::from(body.to_string())
}

struct Gateway {
    obs: Observer,
    sessions: Vec<HeaderValue>,
    paths: Vec<http::uri::PathAndQuery>,
    request: Bytes,
    answer: Bytes,
    next_exchange: u64,
    rng: u64,
    facts: Vec<Fact>,
}

impl Gateway {
    fn new(sessions: usize, max_sessions: usize) -> Gateway {
        let obs = Observer::new(ObserverLimits {
            max_sessions,
            ..ObserverLimits::default()
        });
        let request = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {}});
        let mut gateway = Gateway {
            obs,
            sessions: (0..sessions)
                .map(|i| HeaderValue::from_str(&format!("session-{i:08}")).expect("value"))
                .collect(),
            paths: (1..=ROUTES)
                .map(|i| http::uri::PathAndQuery::try_from(format!("/mcp/s-{i:04}")).expect("path"))
                .collect(),
            request: Bytes::from(request.to_string()),
            answer: page_one(),
            next_exchange: 0,
            rng: 0x9e37_79b9_7f4a_7c15,
            facts: Vec::new(),
        };
        // Each route's catalogue is known (a walker went first, or a
        // target's reference), as in front of a real gateway: a first
        // request on each makes the route.
        for i in 0..sessions.min(ROUTES) {
            gateway.read_page_one(i);
        }
        let names: Vec<String> = (0..40).map(|i| format!("tool-{i:03}")).collect();
        let mut facts = Vec::new();
        for path in &gateway.paths {
            let route = gateway.obs.route_named(path.path());
            if let Some(route) = route {
                let (obs, now) = (&mut gateway.obs, Instant::now());
                obs.set_reference(&route, Kind::Tools, &names, Some(4), now, &mut facts);
            }
        }
        for i in ROUTES.min(sessions)..sessions {
            gateway.read_page_one(i);
        }
        gateway
    }

    fn random_session(&mut self) -> usize {
        // xorshift64: the same sequence every run.
        self.rng ^= self.rng << 13;
        self.rng ^= self.rng >> 7;
        self.rng ^= self.rng << 17;
        (self.rng % self.sessions.len() as u64) as usize
    }

    fn read_page_one(&mut self, session: usize) {
        self.next_exchange += 1;
        let exchange = ExchangeId(self.next_exchange);
        let at = Instant::now();
        let head = RequestHead {
            method: RequestMethod::Post,
            session: Some(self.sessions[session].clone()),
            user_agent: Some(HeaderValue::from_static("python-httpx/0.28.1")),
            client_header: None,
            framing: BodyFraming::Json,
            path: Some(self.paths[session % ROUTES].clone()),
            peer: None,
        };
        let facts = &mut self.facts;
        let obs = &mut self.obs;
        obs.observe(TapEvent::Opened { exchange, at, head }, facts);
        for (direction, bytes) in [
            (Direction::FromClient, self.request.clone()),
            (Direction::FromUpstream, self.answer.clone()),
        ] {
            if direction == Direction::FromUpstream {
                let head = ResponseHead {
                    status: 200,
                    framing: BodyFraming::Json,
                    session: None,
                };
                obs.observe(TapEvent::Answered { exchange, at, head }, facts);
            }
            obs.observe(
                TapEvent::Chunk {
                    exchange,
                    direction,
                    bytes,
                },
                facts,
            );
            let copy = CopyEnd::Whole;
            let end = TapEvent::MessageEnd {
                exchange,
                direction,
                at,
                copy,
            };
            obs.observe(end, facts);
        }
        let end = ExchangeEnd::Completed;
        obs.observe(TapEvent::Closed { exchange, at, end }, facts);
        facts.clear();
    }
}

fn bench(c: &mut Criterion) {
    for (name, sessions, max_sessions) in [
        ("page 1, 3,000 sessions, all kept", 3_000, 4_096),
        ("page 1, 10,000 sessions, all kept", 10_000, 10_000),
        ("page 1, 10,000 sessions, 4,096 kept (churn)", 10_000, 4_096),
    ] {
        let mut gateway = Gateway::new(sessions, max_sessions);
        c.bench_function(name, |b| {
            b.iter(|| {
                let session = gateway.random_session();
                gateway.read_page_one(session);
            })
        });
    }
    c.bench_function("a new session, made and read once (50 kept)", |b| {
        b.iter_batched(
            || Gateway::new(ROUTES, 4_096),
            |mut g| {
                g.sessions[0] = HeaderValue::from_static("fresh");
                g.read_page_one(0);
                g
            },
            BatchSize::SmallInput,
        )
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);
