//! The observer's CPU per observed list page: one exchange's events (the
//! request, the answer head, the answer, the end) for an 8-tool page with
//! descriptions and schemas, answered as JSON and as an event stream
//! (priming event, then the answer). Pages alternate between page 1 (with
//! `nextCursor`) and page 2 (the end), so listings start and complete as
//! they would. Run: `cargo bench -p mcp-observer`.

use bytes::Bytes;
use criterion::{criterion_group, criterion_main, Criterion};
use http::HeaderValue;
use mcp_observer::{Fact, Observer, ObserverLimits};
use mcp_tap_contract::{
    BodyFraming, CopyEnd, Direction, ExchangeEnd, ExchangeId, RequestHead, RequestMethod,
    ResponseHead, TapEvent,
};
use serde_json::{json, Value};
use std::time::Instant;

fn page(id: u64, first: usize, next: Option<&str>) -> Value {
    let tools: Vec<Value> = (first..first + 8)
        .map(|i| {
            json!({"name": format!("tool-{i:03}"),
                   "description": "Looks a thing up in the catalogue and says what it found.",
                   "inputSchema": {"type": "object", "properties": {
                       "query": {"type": "string", "description": "what to look for"},
                       "limit": {"type": "integer", "minimum": 1}},
                   "required": ["query"]}})
        })
        .collect();
    let mut result = json!({"tools": tools});
    if let Some(next) = next {
        result["nextCursor"] = json!(next);
    }
    json!({"jsonrpc": "2.0", "id": id, "result": result})
}

/// The bodies of one exchange, as the tap would hand them over.
struct Exchange {
    request: Bytes,
    answer: Vec<Bytes>,
}

fn exchanges(sse: bool) -> [Exchange; 2] {
    let body = |v: &Value| {
        if sse {
            vec![
                Bytes::from_static(b"id: prime-1\ndata:\n"),
                Bytes::from(format!("event: message\ndata: {v}\n")),
            ]
        } else {
            vec![Bytes::from(v.to_string())]
        }
    };
    let request = |id: u64, cursor: Option<&str>| {
        let params = cursor.map_or(json!({}), |c| json!({"cursor": c}));
        Bytes::from(
            json!({"jsonrpc": "2.0", "id": id, "method": "tools/list", "params": params})
                .to_string(),
        )
    };
    [
        Exchange {
            request: request(1, None),
            answer: body(&page(1, 0, Some("cursor-of-page-2"))),
        },
        Exchange {
            request: request(2, Some("cursor-of-page-2")),
            answer: body(&page(2, 8, None)),
        },
    ]
}

fn feed(
    obs: &mut Observer,
    id: u64,
    ex: &Exchange,
    session: &HeaderValue,
    sse: bool,
    facts: &mut Vec<Fact>,
) {
    let exchange = ExchangeId(id);
    let at = Instant::now();
    let head = RequestHead {
        method: RequestMethod::Post,
        session: Some(session.clone()),
        user_agent: Some(HeaderValue::from_static("python-httpx/0.28.1")),
        client_header: None,
        framing: BodyFraming::Json,
        path: Some(http::uri::PathAndQuery::from_static("/mcp")),
        peer: None,
    };
    obs.observe(TapEvent::Opened { exchange, at, head }, facts);
    let client = Direction::FromClient;
    obs.observe(
        TapEvent::Chunk {
            exchange,
            direction: client,
            bytes: ex.request.clone(),
        },
        facts,
    );
    obs.observe(
        TapEvent::MessageEnd {
            exchange,
            direction: client,
            at,
            copy: CopyEnd::Whole,
        },
        facts,
    );
    let framing = if sse {
        BodyFraming::EventStream
    } else {
        BodyFraming::Json
    };
    let head = ResponseHead {
        status: 200,
        framing,
        session: None,
    };
    obs.observe(TapEvent::Answered { exchange, at, head }, facts);
    let upstream = Direction::FromUpstream;
    for message in &ex.answer {
        obs.observe(
            TapEvent::Chunk {
                exchange,
                direction: upstream,
                bytes: message.clone(),
            },
            facts,
        );
        obs.observe(
            TapEvent::MessageEnd {
                exchange,
                direction: upstream,
                at,
                copy: CopyEnd::Whole,
            },
            facts,
        );
    }
    obs.observe(
        TapEvent::Closed {
            exchange,
            at,
            end: ExchangeEnd::Completed,
        },
        facts,
    );
}

fn bench(c: &mut Criterion) {
    for (name, sse) in [
        ("observed list page, JSON answer", false),
        ("observed list page, SSE answer", true),
    ] {
        let mut obs = Observer::new(ObserverLimits::default());
        let session = HeaderValue::from_static("0f8e3c1a-session");
        let pair = exchanges(sse);
        let mut facts = Vec::new();
        let mut id = 0u64;
        c.bench_function(name, |b| {
            b.iter(|| {
                id += 1;
                feed(
                    &mut obs,
                    id,
                    &pair[(id % 2) as usize],
                    &session,
                    sse,
                    &mut facts,
                );
                facts.clear();
            })
        });
        assert!(obs.usage().listings <= 1);
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
