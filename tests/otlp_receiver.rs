//! Poll reports exported through `TraceSink` to a real OTLP receiver on
//! 127.0.0.1, over HTTP/protobuf and over gRPC: span tree, names, kinds,
//! attributes, the exact ids the session sent in `traceparent`, and that no
//! cursor, credential or other secret leaves the process.

use mcp_exporter::baseline::{KindDiff, PolledTarget};
use mcp_exporter::config::{OtlpProtocol, Secret, TracingConfig};
use mcp_exporter::poll::{HandshakeRecord, SessionFailure};
use mcp_exporter::poll::{PollReport, ServerInfo};
use mcp_exporter::telemetry::spans::TraceSink;
use mcp_listing::cursor::short_hash;
use mcp_listing::report::{Restart, RestartReason};
use mcp_listing::{
    CursorState, ErrorKind, Guard, Kind, ListingReport, Outcome, PageRecord, TransportKind,
};
use mcp_testkit::otlp::{find_attr, OtlpReceiver, ReceivedSpan};
use mcp_testkit::ClosedPort;
use opentelemetry_proto::tonic::trace::v1::span::SpanKind;
use opentelemetry_proto::tonic::trace::v1::status::StatusCode;
use std::collections::BTreeMap;
use std::time::{Duration, SystemTime};

/// Generous bound for anything that crosses a socket; never a speed check.
const WAIT: Duration = Duration::from_secs(60);

/// Raw cursors and credentials the test plants where they must not leak
/// from. All contain "secret".
const RAW_CURSORS: [&str; 3] = [
    "secret-cursor-AAA",
    "secret-cursor-BBB",
    "secret-cursor-CCC",
];
const BEARER: &str = "Bearer secret-token-0123";

fn at(ms: u64) -> SystemTime {
    SystemTime::UNIX_EPOCH + Duration::from_secs(1_790_000_000) + Duration::from_millis(ms)
}

fn page(
    with_span_id: bool,
    index: u32,
    attempt: u32,
    sent: Option<&str>,
    items: u32,
    next: Option<&str>,
    started_ms: u64,
) -> PageRecord {
    PageRecord {
        index,
        attempt,
        sent_cursor: sent.map(short_hash),
        items,
        new_items: items,
        bytes: 100 + u64::from(items) * 50,
        duration: Duration::from_millis(20),
        started: at(started_ms),
        span_id: with_span_id.then(TraceSink::new_span_id),
        next_cursor: match next {
            Some(raw) => CursorState::Present(short_hash(raw)),
            None => CursorState::Absent,
        },
        request_id: 10 + i64::from(index),
        error: None,
        rpc_code: None,
        http_status: None,
    }
}

fn listing(kind: Kind, outcome: Outcome, pages: Vec<PageRecord>) -> ListingReport {
    let mut l = ListingReport::empty(kind, outcome);
    let raw: u64 = pages.iter().map(|p| u64::from(p.items)).sum();
    l.final_pages = pages.len() as u32;
    l.raw_items = raw;
    l.unique_items = raw;
    l.duration = Duration::from_millis(30 * pages.len() as u64);
    // A detail that quotes a raw cursor must never be exported.
    l.detail = Some(format!("server said cursor {} is odd", RAW_CURSORS[0]));
    l.pages = pages;
    l
}

fn poll(sink: &TraceSink, target: &str, listings: Vec<ListingReport>) -> PolledTarget {
    let trace = sink
        .start_poll()
        .expect("sink is enabled and samples everything");
    PolledTarget {
        report: PollReport {
            protocol_version: Some("2025-11-25".into()),
            server: Some(ServerInfo {
                name: "paging-server".into(),
                version: "1.2.3".into(),
            }),
            handshakes: vec![HandshakeRecord {
                method: "initialize".into(),
                started: at(1),
                duration: Duration::from_millis(5),
                request_id: 0,
                span_id: Some(TraceSink::new_span_id()),
            }],
            time_to_ready: Some(Duration::from_millis(400)),
            listings,
            server_address: Some("mcp.example.test".into()),
            server_port: Some(8443),
            session_id: Some("sess-42".into()),
            stderr_tail: Some(format!("Authorization: {BEARER}")),
            duration: Duration::from_millis(500),
            trace_id: Some(trace.trace_id),
            poll_span_id: Some(trace.poll_span_id),
            ..PollReport::new(target, TransportKind::StreamableHttp, at(0))
        },
        diffs: BTreeMap::new(),
        reference_missing: BTreeMap::new(),
        reference_union: BTreeMap::new(),
    }
}

/// Three pages, complete; 60 tools removed since the last listing; one
/// resource whose URI carries credentials removed too.
fn multi_page(sink: &TraceSink) -> PolledTarget {
    let pages = vec![
        page(true, 0, 0, None, 2, Some(RAW_CURSORS[0]), 10),
        page(
            true,
            1,
            0,
            Some(RAW_CURSORS[0]),
            2,
            Some(RAW_CURSORS[1]),
            40,
        ),
        page(true, 2, 0, Some(RAW_CURSORS[1]), 1, None, 70),
    ];
    let tools = listing(Kind::Tools, Outcome::Complete, pages);
    let resources = listing(
        Kind::Resources,
        Outcome::Complete,
        vec![page(true, 0, 0, None, 1, None, 100)],
    );
    let mut p = poll(sink, "multi-page", vec![tools, resources]);
    p.diffs.insert(
        Kind::Tools,
        KindDiff {
            had_baseline: true,
            added: vec!["fresh".into()],
            removed: (0..60).map(|i| format!("gone{i:02}")).collect(),
            silent_shrink: true,
            previous_items: 64,
            ..KindDiff::default()
        },
    );
    p.diffs.insert(
        Kind::Resources,
        KindDiff {
            had_baseline: true,
            added: vec![],
            removed: vec!["postgres://admin:secret-pw@db.internal/x?token=secret-q".into()],
            silent_shrink: false,
            previous_items: 2,
            ..KindDiff::default()
        },
    );
    p
}

/// Page 2 hands back page 0's cursor: the walker aborts on the cycle.
fn cursor_cycle(sink: &TraceSink) -> PolledTarget {
    let pages = vec![
        page(true, 0, 0, None, 3, Some(RAW_CURSORS[0]), 10),
        page(
            true,
            1,
            0,
            Some(RAW_CURSORS[0]),
            3,
            Some(RAW_CURSORS[1]),
            40,
        ),
        page(
            true,
            2,
            0,
            Some(RAW_CURSORS[1]),
            3,
            Some(RAW_CURSORS[0]),
            70,
        ),
    ];
    let mut l = listing(Kind::Tools, Outcome::Aborted(Guard::CursorCycle), pages);
    l.duplicate_items = 0;
    poll(sink, "cursor-cycle", vec![l])
}

/// Page 1 gets -32602 for its cursor; the walker restarts and completes.
fn invalid_cursor_restart(sink: &TraceSink) -> PolledTarget {
    let mut bad = page(true, 1, 0, Some(RAW_CURSORS[2]), 0, None, 40);
    bad.error = Some(ErrorKind::InvalidCursor);
    bad.rpc_code = Some(-32602);
    bad.next_cursor = CursorState::None;
    let pages = vec![
        page(true, 0, 0, None, 2, Some(RAW_CURSORS[2]), 10),
        bad,
        page(true, 2, 1, None, 2, None, 70),
    ];
    let mut l = listing(Kind::Prompts, Outcome::Complete, pages);
    l.final_pages = 1;
    l.invalid_cursor_errors = 1;
    l.restarts = vec![Restart {
        reason: RestartReason::InvalidCursor,
        at_page: 1,
    }];
    poll(sink, "restart", vec![l])
}

fn sink_for(endpoint: String, protocol: &str) -> TraceSink {
    let cfg = TracingConfig {
        endpoint: Some(endpoint),
        protocol: Some(protocol.parse().expect("an OTLP protocol")),
        headers: vec![("authorization".into(), Secret::new(BEARER))],
        service_name: Some("mcp-exporter-test".into()),
        sample_ratio: None,
    };
    // No process env: the test must not depend on the developer's OTEL_*.
    TraceSink::from_settings_with_env(&cfg, &|_| None).expect("valid settings")
}

fn count_spans(p: &PolledTarget) -> usize {
    1 + p.report.handshakes.len()
        + p.report
            .listings
            .iter()
            .map(|l| 1 + l.pages.len())
            .sum::<usize>()
}

fn of_trace<'a>(spans: &'a [ReceivedSpan], p: &PolledTarget) -> Vec<&'a ReceivedSpan> {
    let trace_id = p.report.trace_id.unwrap().to_string();
    spans.iter().filter(|s| s.trace_id() == trace_id).collect()
}

fn one<'a>(spans: &[&'a ReceivedSpan], name: &str) -> &'a ReceivedSpan {
    let found: Vec<_> = spans.iter().filter(|s| s.span.name == name).collect();
    assert_eq!(found.len(), 1, "exactly one span named {name:?}");
    found[0]
}

fn kind_of(s: &ReceivedSpan) -> SpanKind {
    SpanKind::try_from(s.span.kind).unwrap()
}

fn is_error(s: &ReceivedSpan) -> bool {
    s.span.status.as_ref().map(|st| st.code) == Some(StatusCode::Error as i32)
}

/// Checks shared by every poll: root, handshake, connection attributes.
fn check_poll_and_handshake<'a>(spans: &[&'a ReceivedSpan], p: &PolledTarget) -> &'a ReceivedSpan {
    let r = &p.report;
    let root = one(spans, "mcp.poll");
    assert_eq!(kind_of(root), SpanKind::Internal);
    assert_eq!(root.span_id(), r.poll_span_id.unwrap().to_string());
    assert!(root.span.parent_span_id.is_empty(), "mcp.poll is the root");
    assert_eq!(root.attr("mcp.target").as_deref(), Some(r.target.as_str()));
    assert_eq!(
        root.attr("mcp.transport").as_deref(),
        Some("streamable_http")
    );
    assert_eq!(root.span.start_time_unix_nano, nanos(r.started));
    assert!(root.span.end_time_unix_nano >= nanos(r.started + r.duration));
    assert_eq!(
        root.resource_attr("service.name").as_deref(),
        Some("mcp-exporter-test")
    );

    let hs = one(spans, "initialize");
    assert_eq!(kind_of(hs), SpanKind::Client);
    assert_eq!(hs.span_id(), r.handshakes[0].span_id.unwrap().to_string());
    assert_eq!(hs.parent_span_id(), root.span_id());
    assert_eq!(hs.attr("mcp.method.name").as_deref(), Some("initialize"));
    assert_eq!(hs.attr("jsonrpc.request.id").as_deref(), Some("0"));
    assert_eq!(hs.attr("network.transport").as_deref(), Some("tcp"));
    assert_eq!(
        hs.attr("server.address").as_deref(),
        Some("mcp.example.test")
    );
    assert_eq!(hs.attr("server.port").as_deref(), Some("8443"));
    assert_eq!(hs.attr("mcp.session.id").as_deref(), Some("sess-42"));
    root
}

fn nanos(t: SystemTime) -> u64 {
    t.duration_since(SystemTime::UNIX_EPOCH).unwrap().as_nanos() as u64
}

/// Page spans of a listing, in report order, each checked against its record.
fn check_pages(spans: &[&ReceivedSpan], listing_span: &ReceivedSpan, l: &ListingReport) {
    let pages: Vec<_> = spans
        .iter()
        .filter(|s| s.parent_span_id() == listing_span.span_id())
        .collect();
    assert_eq!(pages.len(), l.pages.len());
    for rec in &l.pages {
        let want_id = rec.span_id.unwrap().to_string();
        let s = pages
            .iter()
            .find(|s| s.span_id() == want_id)
            .unwrap_or_else(|| panic!("page {} span id {want_id} not exported", rec.index));
        assert_eq!(s.span.name, l.kind.method());
        assert_eq!(kind_of(s), SpanKind::Client);
        assert_eq!(s.attr("mcp.method.name").as_deref(), Some(l.kind.method()));
        assert_eq!(
            s.attr("mcp.protocol.version").as_deref(),
            Some("2025-11-25")
        );
        assert_eq!(s.attr("mcp.session.id").as_deref(), Some("sess-42"));
        assert_eq!(
            s.attr("jsonrpc.request.id"),
            Some(rec.request_id.to_string())
        );
        assert_eq!(s.attr("network.transport").as_deref(), Some("tcp"));
        assert_eq!(
            s.attr("server.address").as_deref(),
            Some("mcp.example.test")
        );
        assert_eq!(s.attr("server.port").as_deref(), Some("8443"));
        assert_eq!(
            s.attr("mcp.pagination.page_index"),
            Some(rec.index.to_string())
        );
        assert_eq!(s.attr("mcp.pagination.items"), Some(rec.items.to_string()));
        assert_eq!(
            s.attr("mcp.pagination.cursor_present"),
            Some(rec.next_cursor.is_present().to_string())
        );
        match &rec.next_cursor {
            CursorState::Present(h) => {
                assert_eq!(s.attr("mcp.pagination.cursor_hash").as_ref(), Some(h))
            }
            _ => assert_eq!(s.attr("mcp.pagination.cursor_hash"), None),
        }
        assert_eq!(s.span.start_time_unix_nano, nanos(rec.started));
        assert_eq!(s.span.end_time_unix_nano, nanos(rec.started + rec.duration));
        match rec.rpc_code {
            Some(code) => {
                assert_eq!(s.attr("error.type"), Some(code.to_string()));
                assert_eq!(s.attr("rpc.response.status_code"), Some(code.to_string()));
                assert!(is_error(s));
            }
            None => {
                assert_eq!(s.attr("error.type"), None);
                assert!(!is_error(s));
            }
        }
    }
}

/// No planted secret, raw cursor or credential appears in anything exported.
fn check_no_secrets(spans: &[ReceivedSpan]) {
    for s in spans {
        let text = s.all_text();
        for needle in ["secret", "Bearer", "admin", "token="] {
            assert!(
                !text.contains(needle),
                "{needle:?} leaked in span {:?}:\n{text}",
                s.span.name
            );
        }
        for raw in RAW_CURSORS {
            assert!(!text.contains(raw));
        }
    }
}

async fn export_three_scenarios(receiver: &OtlpReceiver, protocol: &str) {
    let sink = sink_for(receiver.endpoint(), protocol);
    assert!(sink.enabled());
    let polls = [
        multi_page(&sink),
        cursor_cycle(&sink),
        invalid_cursor_restart(&sink),
    ];
    for p in &polls {
        sink.export_poll(p);
    }
    let total: usize = polls.iter().map(count_spans).sum();
    sink.shutdown().await;
    let spans = receiver.wait_for_spans(total, WAIT).await;
    assert_eq!(spans.len(), total, "every span arrives exactly once");
    assert_eq!(sink.dropped_spans(), 0);
    assert_eq!(sink.exported_spans(), total as u64);

    // The configured header went to the collector as a header, not a span.
    let received = receiver.received();
    assert!(received.iter().all(|r| r
        .headers
        .iter()
        .any(|(k, v)| k == "authorization" && v == BEARER)));
    check_no_secrets(&spans);

    // 1. Multi-page complete listing.
    let p = &polls[0];
    let t = of_trace(&spans, p);
    assert_eq!(t.len(), count_spans(p));
    let root = check_poll_and_handshake(&t, p);
    assert_eq!(root.attr("mcp.poll.outcome").as_deref(), Some("complete"));
    assert!(!is_error(root));
    let tools = one(&t, "mcp.listing tools");
    assert_eq!(kind_of(tools), SpanKind::Internal);
    assert_eq!(tools.parent_span_id(), root.span_id());
    assert_eq!(
        tools.attr("mcp.pagination.outcome").as_deref(),
        Some("complete")
    );
    assert_eq!(tools.attr("mcp.pagination.pages").as_deref(), Some("3"));
    assert_eq!(tools.attr("mcp.pagination.raw_items").as_deref(), Some("5"));
    assert_eq!(
        tools.attr("mcp.pagination.unique_items").as_deref(),
        Some("5")
    );
    assert_eq!(
        tools.attr("mcp.pagination.duplicate_items").as_deref(),
        Some("0")
    );
    assert_eq!(
        tools.attr("mcp.pagination.silent_shrink").as_deref(),
        Some("true")
    );
    assert!(!is_error(tools));
    let removed = tools
        .event("mcp.pagination.items_removed")
        .expect("removed event");
    assert_eq!(
        find_attr(&removed.attributes, "mcp.pagination.item_count").as_deref(),
        Some("60")
    );
    assert_eq!(
        find_attr(&removed.attributes, "mcp.pagination.item_names_omitted").as_deref(),
        Some("10")
    );
    let names = find_attr(&removed.attributes, "mcp.pagination.item_names").unwrap();
    assert!(
        names.starts_with("[gone00,gone01,") && names.ends_with("gone49]"),
        "{names}"
    );
    let added = tools
        .event("mcp.pagination.items_added")
        .expect("added event");
    assert_eq!(
        find_attr(&added.attributes, "mcp.pagination.item_names").as_deref(),
        Some("[fresh]")
    );
    check_pages(&t, tools, &p.report.listings[0]);
    // Page spans sit inside the listing span, the listing inside the poll.
    assert!(tools.span.start_time_unix_nano >= root.span.start_time_unix_nano);
    assert!(tools.span.end_time_unix_nano <= root.span.end_time_unix_nano);

    let resources = one(&t, "mcp.listing resources");
    check_pages(&t, resources, &p.report.listings[1]);
    let removed = resources.event("mcp.pagination.items_removed").unwrap();
    assert_eq!(
        find_attr(&removed.attributes, "mcp.pagination.item_names").as_deref(),
        Some("[postgres://db.internal/x]"),
        "resource URIs lose credentials and query"
    );

    // 2. Cursor cycle abort.
    let p = &polls[1];
    let t = of_trace(&spans, p);
    assert_eq!(t.len(), count_spans(p));
    let root = check_poll_and_handshake(&t, p);
    assert_eq!(root.attr("mcp.poll.outcome").as_deref(), Some("incomplete"));
    let tools = one(&t, "mcp.listing tools");
    assert_eq!(tools.parent_span_id(), root.span_id());
    assert_eq!(
        tools.attr("mcp.pagination.outcome").as_deref(),
        Some("aborted")
    );
    assert_eq!(
        tools.attr("mcp.pagination.reason").as_deref(),
        Some("cursor_cycle")
    );
    assert!(is_error(tools));
    let abort = tools.event("mcp.pagination.abort").expect("abort event");
    assert_eq!(
        find_attr(&abort.attributes, "mcp.pagination.guard").as_deref(),
        Some("cursor_cycle")
    );
    assert_eq!(
        find_attr(&abort.attributes, "mcp.pagination.page_index").as_deref(),
        Some("2")
    );
    check_pages(&t, tools, &p.report.listings[0]);
    // The repeated cursor shows as the same short hash, never as itself.
    let last_page = t
        .iter()
        .find(|s| s.attr("mcp.pagination.page_index").as_deref() == Some("2"))
        .unwrap();
    assert_eq!(
        last_page.attr("mcp.pagination.cursor_hash"),
        Some(short_hash(RAW_CURSORS[0]))
    );

    // 3. -32602 then restart.
    let p = &polls[2];
    let t = of_trace(&spans, p);
    assert_eq!(t.len(), count_spans(p));
    let root = check_poll_and_handshake(&t, p);
    assert_eq!(root.attr("mcp.poll.outcome").as_deref(), Some("complete"));
    let prompts = one(&t, "mcp.listing prompts");
    assert_eq!(
        prompts.attr("mcp.pagination.outcome").as_deref(),
        Some("complete")
    );
    assert_eq!(
        prompts.attr("mcp.pagination.restarts").as_deref(),
        Some("1")
    );
    assert_eq!(
        prompts
            .attr("mcp.pagination.invalid_cursor_errors")
            .as_deref(),
        Some("1")
    );
    assert!(!is_error(prompts));
    let restart = prompts
        .event("mcp.pagination.restart")
        .expect("restart event");
    assert_eq!(
        find_attr(&restart.attributes, "mcp.pagination.restart.reason").as_deref(),
        Some("invalid_cursor")
    );
    assert_eq!(
        find_attr(&restart.attributes, "mcp.pagination.page_index").as_deref(),
        Some("1")
    );
    check_pages(&t, prompts, &p.report.listings[0]);
    let failed = t
        .iter()
        .find(|s| s.attr("error.type").as_deref() == Some("-32602"))
        .expect("the failed page");
    assert_eq!(
        failed.attr("mcp.pagination.error").as_deref(),
        Some("invalid_cursor")
    );
    assert_eq!(
        failed.attr("mcp.pagination.page_index").as_deref(),
        Some("1")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn http_protobuf_receiver_gets_the_span_tree() {
    let receiver = OtlpReceiver::http().await;
    tokio::time::timeout(WAIT * 2, export_three_scenarios(&receiver, "http/protobuf"))
        .await
        .expect("no hang");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn grpc_receiver_gets_the_span_tree() {
    let receiver = OtlpReceiver::grpc().await;
    tokio::time::timeout(WAIT * 2, export_three_scenarios(&receiver, "grpc"))
        .await
        .expect("no hang");
}

/// A session that never came up: the handshake and the poll carry the
/// error label, and the failure's free-text detail stays home.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn session_failure_marks_handshake_and_poll() {
    let receiver = OtlpReceiver::http().await;
    let sink = sink_for(receiver.endpoint(), "http/protobuf");
    let mut p = poll(
        &sink,
        "down",
        vec![ListingReport::empty(
            Kind::Tools,
            Outcome::Error(ErrorKind::Unauthorized),
        )],
    );
    p.report.session_error = Some(SessionFailure {
        error: ErrorKind::Unauthorized,
        detail: format!("401 from https://user:secret@host/mcp?api_key=secret with {BEARER}"),
        http_status: Some(401),
    });
    p.report.server_address = Some("https://user:secret@mcp.example.test:8443/mcp?k=secret".into());
    sink.export_poll(&p);
    sink.shutdown().await;
    let spans = receiver.wait_for_spans(count_spans(&p), WAIT).await;
    assert_eq!(spans.len(), 3);
    check_no_secrets(&spans);
    let t: Vec<&ReceivedSpan> = spans.iter().collect();
    let root = check_poll_and_handshake(&t, &p);
    assert_eq!(
        root.attr("mcp.poll.outcome").as_deref(),
        Some("session_error")
    );
    assert_eq!(root.attr("error.type").as_deref(), Some("unauthorized"));
    assert!(is_error(root));
    let hs = one(&t, "initialize");
    assert_eq!(hs.attr("error.type").as_deref(), Some("unauthorized"));
    assert_eq!(hs.attr("http.response.status_code").as_deref(), Some("401"));
    assert!(is_error(hs));
    let tools = one(&t, "mcp.listing tools");
    assert_eq!(
        tools.attr("mcp.pagination.outcome").as_deref(),
        Some("error")
    );
    assert!(is_error(tools));
}

/// A poll that was not traced (no ids) exports nothing; a disabled sink
/// ignores everything.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn untraced_polls_and_disabled_sinks_send_nothing() {
    let receiver = OtlpReceiver::http().await;
    let sink = sink_for(receiver.endpoint(), "http/protobuf");
    let mut p = multi_page(&sink);
    p.report.trace_id = None;
    sink.export_poll(&p);
    let disabled = TraceSink::disabled();
    disabled.export_poll(&multi_page(&sink));
    disabled.shutdown().await;
    sink.flush(WAIT).await;
    // A traced poll after the untraced one proves the pipe works and
    // that nothing else came before it.
    let traced = cursor_cycle(&sink);
    sink.export_poll(&traced);
    sink.shutdown().await;
    let spans = receiver.wait_for_spans(count_spans(&traced), WAIT).await;
    assert_eq!(spans.len(), count_spans(&traced));
    assert!(spans
        .iter()
        .all(|s| Some(s.trace_id()) == traced.report.trace_id.map(|t| t.to_string())));
}

/// With the collector unreachable, export_poll returns at once every time
/// and the lost spans are counted; nothing waits on the dead collector.
async fn unreachable_collector(protocol: &str) {
    let collector = ClosedPort::new();
    let cfg = TracingConfig {
        endpoint: Some(collector.url("")),
        protocol: Some(protocol.parse().expect("an OTLP protocol")),
        ..Default::default()
    };
    // A small queue so that drops by "queue full" happen too.
    let env = |name: &str| (name == "OTEL_BSP_MAX_QUEUE_SIZE").then(|| "64".to_string());
    let sink = TraceSink::from_settings_with_env(&cfg, &env).unwrap();
    let template = multi_page(&sink);
    let per_poll = count_spans(&template) as u64;
    let polls = 300u64;
    for _ in 0..polls {
        let mut p = template.clone();
        let t = sink.start_poll().unwrap();
        p.report.trace_id = Some(t.trace_id);
        p.report.poll_span_id = Some(t.poll_span_id);
        sink.export_poll(&p);
    }
    // Everything queued is either exported (impossible here) or dropped.
    sink.flush(WAIT).await;
    assert_eq!(sink.exported_spans(), 0);
    assert_eq!(sink.dropped_spans(), polls * per_poll);
    sink.shutdown().await;
    // After shutdown, exports are dropped and counted too, still at once.
    sink.export_poll(&template);
    assert_eq!(sink.dropped_spans(), (polls + 1) * per_poll);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unreachable_http_collector_never_blocks_polls() {
    tokio::time::timeout(WAIT * 2, unreachable_collector("http/protobuf"))
        .await
        .expect("no hang");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unreachable_grpc_collector_never_blocks_polls() {
    tokio::time::timeout(WAIT * 2, unreachable_collector("grpc"))
        .await
        .expect("no hang");
}

/// A collector that accepts connections and never answers: the export
/// thread is stuck in its first request, yet every `export_poll` returns at
/// once, the queue stays bounded and everything beyond it is counted.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn black_hole_collector_never_blocks_polls() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let hole = tokio::spawn(async move {
        let mut held = Vec::new();
        while let Ok((socket, _)) = listener.accept().await {
            held.push(socket);
        }
    });
    let queue = 64u64;
    let cfg = TracingConfig {
        endpoint: Some(format!("http://{addr}")),
        protocol: Some(OtlpProtocol::HttpProtobuf),
        ..Default::default()
    };
    let env = |name: &str| (name == "OTEL_BSP_MAX_QUEUE_SIZE").then(|| queue.to_string());
    let sink = TraceSink::from_settings_with_env(&cfg, &env).unwrap();
    let template = multi_page(&sink);
    let per_poll = count_spans(&template) as u64;
    let polls = 300u64;
    tokio::time::timeout(WAIT, async {
        for _ in 0..polls {
            sink.export_poll(&template);
        }
    })
    .await
    .expect("export_poll never waits on the collector");
    // Nothing can have been exported; at most `queue` spans are waiting,
    // every other one is already counted as dropped.
    assert_eq!(sink.exported_spans(), 0);
    assert!(
        sink.dropped_spans() >= polls * per_poll - queue,
        "dropped {} of {}",
        sink.dropped_spans(),
        polls * per_poll
    );
    // Shutdown gives up after its own short bound instead of hanging.
    tokio::time::timeout(WAIT, sink.shutdown())
        .await
        .expect("shutdown is bounded");
    hole.abort();
}
