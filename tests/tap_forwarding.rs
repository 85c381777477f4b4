//! The tap's data path against real upstreams: what a client receives
//! through the tap equals what it receives directly — statuses, headers
//! (less hop-by-hop and `Date`), bodies — for JSON and SSE answers and the
//! legacy HTTP+SSE transport; and the observer's copies are the messages
//! that passed. Twins: two simulators started alike (same seed, so the same
//! session ids, cursors and event ids), one reached directly, one through
//! the tap, driven by the same requests.

use mcp_tap::{CopyEnd, Direction, NotObserved, RequestMethod, TapEvent, TapSettings};
use mcp_testkit::http::RawResponse;
use mcp_testkit::simulator::simulate_args;
use mcp_testkit::tap::{RawConn, RunningTap, JSON_BODY, MCP_ACCEPT};
use mcp_testkit::Proc;
use std::net::SocketAddr;

fn addr_of(url: &str) -> SocketAddr {
    url.trim_start_matches("http://")
        .split('/')
        .next()
        .and_then(|a| a.parse().ok())
        .unwrap_or_else(|| panic!("no address in {url}"))
}

/// Two simulators alike; the second behind a tap (upstream `path` on it).
struct Twins {
    direct: Proc,
    _behind: Proc,
    tap: RunningTap,
}

impl Twins {
    fn start(transport: &str, flags: &[&str], path: &str, inspect_bytes: Option<usize>) -> Twins {
        let start = || {
            let mut args = simulate_args(transport, flags);
            args.extend_from_slice(&["--seed", "7"]);
            Proc::start(&args)
        };
        let (direct, behind) = (start(), start());
        let mut settings = TapSettings::new(behind.at(path).parse().expect("upstream URL"));
        if let Some(bytes) = inspect_bytes {
            settings.limits.inspect_bytes = bytes;
        }
        let tap = RunningTap::start(settings);
        Twins {
            direct,
            _behind: behind,
            tap,
        }
    }

    /// A connection to each: (direct, through the tap).
    fn connect(&self) -> (RawConn, RawConn) {
        (
            RawConn::connect(addr_of(&self.direct.url)),
            RawConn::connect(self.tap.addr),
        )
    }
}

/// The same request on both connections; the answers must agree.
fn both(
    conns: &mut (RawConn, RawConn),
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: Option<&[u8]>,
) -> RawResponse {
    let direct = conns.0.send(method, path, headers, body).answer();
    let tapped = conns.1.send(method, path, headers, body).answer();
    assert_same(&direct, &tapped, &format!("{method} {path}"));
    tapped
}

fn assert_same(direct: &RawResponse, tapped: &RawResponse, what: &str) {
    assert_eq!(direct.status, tapped.status, "{what}: status");
    assert_eq!(
        direct.end_to_end_headers(),
        tapped.end_to_end_headers(),
        "{what}: headers"
    );
    assert!(
        direct.body == tapped.body,
        "{what}: bodies differ ({} vs {} bytes):\n{}\n---\n{}",
        direct.body.len(),
        tapped.body.len(),
        direct.text(),
        tapped.text()
    );
}

fn rpc(id: u32, method: &str, params: &str) -> Vec<u8> {
    format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"{method}","params":{params}}}"#).into_bytes()
}

const INITIALIZE: &str = r#"{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"tap-test","version":"1"}}"#;

/// initialize, initialized, every tools page, the GET stream's first bytes,
/// DELETE; then garbage, a truncated body and a batch. Returns the bodies
/// the client got for its list requests.
fn streamable_session(twins: &Twins) -> Vec<RawResponse> {
    let mut conns = twins.connect();
    let init = both(
        &mut conns,
        "POST",
        "/mcp",
        &[MCP_ACCEPT, JSON_BODY],
        Some(&rpc(1, "initialize", INITIALIZE)),
    );
    assert_eq!(init.status, 200, "{}", init.text());
    let session = init
        .header("mcp-session-id")
        .expect("a session id")
        .to_string();
    let with = [
        MCP_ACCEPT,
        JSON_BODY,
        ("Mcp-Session-Id", &session),
        ("Mcp-Protocol-Version", "2025-11-25"),
    ];
    let note = br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
    assert_eq!(
        both(&mut conns, "POST", "/mcp", &with, Some(note)).status,
        202
    );
    let mut pages = Vec::new();
    let mut params = "{}".to_string();
    for id in 2.. {
        let page = both(
            &mut conns,
            "POST",
            "/mcp",
            &with,
            Some(&rpc(id, "tools/list", &params)),
        );
        let text = page.text();
        pages.push(page);
        let Some(at) = text.find("\"nextCursor\":\"") else {
            break;
        };
        let cursor = &text[at + 14..];
        let cursor = &cursor[..cursor.find('"').expect("a whole cursor")];
        params = format!(r#"{{"cursor":"{cursor}"}}"#);
        assert!(id < 10, "the walk does not end");
    }
    // The GET stream: its head and first chunk, then let go.
    let mut streams = twins.connect();
    for conn in [&mut streams.0, &mut streams.1] {
        conn.send(
            "GET",
            "/mcp",
            &[
                ("Accept", "text/event-stream"),
                ("Mcp-Session-Id", &session),
            ],
            None,
        );
    }
    let heads = (streams.0.head(), streams.1.head());
    assert_eq!(heads.0 .0, heads.1 .0, "GET stream status");
    let first = (streams.0.next_chunk(), streams.1.next_chunk());
    assert_eq!(first.0, first.1, "the GET stream's first bytes");
    drop(streams);
    for bad in [
        &b"{not json"[..],
        br#"{"jsonrpc":"2.0","id":9,"meth"#,
        br#"[{"jsonrpc":"2.0","id":1,"method":"ping"}]"#,
    ] {
        let answer = both(&mut conns, "POST", "/mcp", &with, Some(bad));
        assert_eq!(answer.status, 400, "{}", answer.text());
    }
    both(
        &mut conns,
        "DELETE",
        "/mcp",
        &[("Mcp-Session-Id", &session)],
        None,
    );
    pages
}

#[test]
fn json_answers_pass_byte_for_byte_and_are_copied_message_by_message() {
    let twins = Twins::start("http", &["--items", "14", "--page-size", "8"], "/mcp", None);
    let pages = streamable_session(&twins);
    assert_eq!(pages.len(), 2, "14 tools by 8");
    let recorder = &twins.tap.recorder;
    recorder.wait("every exchange closed", |events| {
        events
            .iter()
            .filter(|e| matches!(e, TapEvent::Closed { .. }))
            .count()
            == events
                .iter()
                .filter(|e| matches!(e, TapEvent::Opened { .. }))
                .count()
    });
    let answers = recorder.texts(Direction::FromUpstream);
    for page in &pages {
        assert!(
            answers.contains(&page.text()),
            "the copy of {}",
            page.text()
        );
    }
    let asked = recorder.texts(Direction::FromClient);
    assert!(asked
        .iter()
        .any(|m| m.contains("tools/list") && m.contains("cursor")));
    assert!(
        asked.contains(&"{not json".to_string()),
        "garbage is copied as it was"
    );
    assert!(recorder.messages().iter().all(|m| m.copy == CopyEnd::Whole));
    let stats = &twins.tap.stats;
    assert!(stats.requests(RequestMethod::Post) >= 7);
    assert_eq!(stats.requests(RequestMethod::Get), 1);
    assert_eq!(stats.requests(RequestMethod::Delete), 1);
    assert_eq!(stats.open_streams(), 0, "the GET stream was let go");
    assert!(stats.added_time().count >= 9);
    let sessions: Vec<_> = recorder
        .events()
        .into_iter()
        .filter_map(|e| match e {
            TapEvent::Opened { head, .. } => head.session,
            _ => None,
        })
        .collect();
    assert!(
        sessions.len() >= 6,
        "requests after initialize carry the session"
    );
}

#[test]
fn sse_answers_pass_byte_for_byte_and_each_event_is_one_message() {
    let twins = Twins::start(
        "http",
        &["--items", "14", "--page-size", "8", "--response", "sse"],
        "/mcp",
        None,
    );
    let pages = streamable_session(&twins);
    assert_eq!(pages.len(), 2);
    assert_eq!(pages[0].header("content-type"), Some("text/event-stream"));
    let answers = twins.tap.recorder.texts(Direction::FromUpstream);
    // Each answer: a priming event, then the message as its own event.
    for page in &pages {
        let text = page.text();
        let events: Vec<&str> = text.split("\n\n").filter(|e| !e.is_empty()).collect();
        assert_eq!(events.len(), 2, "{text}");
        for event in events {
            assert!(
                answers.contains(&format!("{event}\n")),
                "{event:?} in {answers:?}"
            );
        }
    }
}

#[test]
fn legacy_sse_streams_and_posts_pass_and_name_their_session() {
    let twins = Twins::start("sse", &["--items", "14", "--page-size", "8"], "/sse", None);
    let mut streams = twins.connect();
    for conn in [&mut streams.0, &mut streams.1] {
        conn.send("GET", "/sse", &[("Accept", "text/event-stream")], None);
    }
    let heads = (streams.0.head(), streams.1.head());
    assert_eq!(heads.0 .0, 200);
    let endpoint = (streams.0.next_chunk(), streams.1.next_chunk());
    // A relative endpoint already resolves to the tap: unchanged.
    assert_eq!(endpoint.0, endpoint.1);
    let endpoint = String::from_utf8(endpoint.1).expect("text");
    let url = endpoint
        .lines()
        .find_map(|l| l.strip_prefix("data: "))
        .expect("the endpoint event's data")
        .to_string();
    let session = url
        .split("sessionId=")
        .nth(1)
        .expect("a sessionId")
        .to_string();
    let mut posts = twins.connect();
    for (id, method, params) in [(1, "initialize", INITIALIZE), (2, "tools/list", "{}")] {
        let body = rpc(id, method, params);
        let answer = both(&mut posts, "POST", &url, &[JSON_BODY], Some(&body));
        assert_eq!(answer.status, 202);
        let events = (streams.0.next_chunk(), streams.1.next_chunk());
        assert_eq!(events.0, events.1, "the answer on the stream");
    }
    let events = twins.tap.recorder.events();
    assert!(events.iter().any(|e| matches!(e,
        TapEvent::LegacySession { session: s, .. } if s == session.as_str())));
    let posted: Vec<_> = events
        .iter()
        .filter_map(|e| match e {
            TapEvent::Opened { head, .. } if head.method == RequestMethod::Post => {
                head.session.clone()
            }
            _ => None,
        })
        .collect();
    assert_eq!(posted.len(), 2);
    assert!(posted.iter().all(|s| s == session.as_str()));
    let answers = twins.tap.recorder.texts(Direction::FromUpstream);
    assert!(
        answers.iter().any(|a| a.contains("\"tools\"")),
        "{answers:?}"
    );
}

#[test]
fn an_answer_larger_than_inspect_bytes_passes_whole_and_its_copy_stops_there() {
    let limit = 64 * 1024;
    let twins = Twins::start(
        "http",
        &[
            "--scenario",
            "oversize",
            "--size-mib",
            "1",
            "--kinds",
            "tools",
            "--page",
            "1",
        ],
        "/mcp",
        Some(limit),
    );
    let pages = streamable_session(&twins);
    assert!(pages[0].body.len() > 1024 * 1024, "a 1 MiB page");
    let recorder = &twins.tap.recorder;
    recorder.wait("the big answer's copy ended", |_| {
        recorder
            .messages()
            .iter()
            .any(|m| m.copy == CopyEnd::NotObserved(NotObserved::TooLarge))
    });
    let big = recorder
        .messages()
        .into_iter()
        .find(|m| m.copy == CopyEnd::NotObserved(NotObserved::TooLarge))
        .expect("a message too large");
    assert_eq!(big.bytes.len(), limit);
    assert_eq!(big.bytes, pages[0].body[..limit]);
    assert!(twins.tap.stats.not_observed_count(NotObserved::TooLarge) >= 1);
}
