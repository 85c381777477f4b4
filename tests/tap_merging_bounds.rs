//! Merging under attack (issue 39): what clients send (credentials rotated
//! on every request, no session, answers never read) and what upstreams
//! send (pages of millions of tiny items, notifications before the answer)
//! cannot take a tap past its documented bounds (docs/reliability.md,
//! "Byte budgets"; docs/clients.md, "Fixing clients: merging"): peak RSS
//! of `mcp-exporter tap` read from the kernel, upstream requests counted at
//! the upstream, a walk's slot never held by a client that does not read,
//! and no client ever given an answer made for other credentials.

use mcp_tap::{Cut, MergeClients, MergeCount, MergeOutcome, TapEvent, TapSettings};
use mcp_testkit::clients::TapCommand;
use mcp_testkit::http::RawResponse;
use mcp_testkit::simulator::simulate_args;
use mcp_testkit::tap::{
    tool_names, write_answer, RawConn, RunningTap, Scripted, Seen, JSON_BODY, MCP_ACCEPT,
};
use mcp_testkit::{sample, wait_for, Proc};
use serde_json::{json, Value};
use std::net::{SocketAddr, TcpStream};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// What merging may hold per tap (`MergeSettings::max_bytes`).
const MERGE_BUDGET_KIB: u64 = 128 * 1024;
/// What else a tap's peak may rise by while it merges: the observer's
/// queue (16 MiB) and copies of the merged answers it reads, the
/// runtime's buffers, the allocator's slack.
const OTHER_KIB: u64 = 48 * 1024;
/// Page requests of merging's own a tap sends at once, then per second
/// (the defaults of `--merge-page-burst`, `--merge-pages-per-second`).
const PAGE_BURST: u64 = 200;
const PAGES_PER_SECOND: f64 = 10.0;

fn status_kib(pid: u32, field: &str) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("/proc status");
    status
        .lines()
        .find_map(|l| l.strip_prefix(field))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or_else(|| panic!("{field} of {pid}"))
}

/// Starts measuring a process's peak from its resident size now.
fn reset_peak(pid: u32) -> u64 {
    let _ = std::fs::write(format!("/proc/{pid}/clear_refs"), "5");
    status_kib(pid, "VmRSS:")
}

fn tap_addr(tap: &TapCommand) -> SocketAddr {
    let host = tap.tap_url.trim_start_matches("http://");
    host.parse().unwrap_or_else(|e| panic!("{host}: {e}"))
}

/// `tools/list` without a cursor, id `id`, with `headers` besides the
/// usual ones.
fn send_list(conn: &mut RawConn, id: u64, headers: &[(&str, &str)]) {
    let body = format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/list","params":{{}}}}"#);
    let mut all = vec![
        MCP_ACCEPT,
        JSON_BODY,
        ("Mcp-Protocol-Version", "2025-11-25"),
    ];
    all.extend_from_slice(headers);
    conn.send("POST", "/mcp", &all, Some(body.as_bytes()));
}

fn list(conn: &mut RawConn, id: u64, headers: &[(&str, &str)]) -> (RawResponse, Value) {
    send_list(conn, id, headers);
    let answer = conn.answer();
    let message = answer.message();
    assert_eq!(message["id"], id, "{}", answer.text());
    (answer, message)
}

/// The data of each event of an event stream, in order.
fn events(text: &str) -> Vec<String> {
    let text = text.replace("\r\n", "\n").replace('\r', "\n");
    text.split("\n\n")
        .filter_map(|event| {
            let data: Vec<&str> = event
                .lines()
                .filter_map(|l| l.strip_prefix("data: "))
                .collect();
            (!data.is_empty()).then(|| data.join("\n"))
        })
        .collect()
}

// ------------------------------------------------------------- upstreams

/// The JSON-RPC request a scripted upstream read.
fn request_of(seen: &Seen) -> Value {
    serde_json::from_slice(&seen.body).unwrap_or(Value::Null)
}

fn is_list(seen: &Seen) -> bool {
    request_of(seen)["method"] == "tools/list"
}

/// Answer `initialize` (a new session each time) and notifications as an
/// MCP server does; `None` for other requests.
fn handshake(seen: &Seen, out: &mut TcpStream, sessions: &AtomicUsize) -> Option<bool> {
    let request = request_of(seen);
    if request["method"] == "initialize" {
        let session = format!("s-{}", sessions.fetch_add(1, Ordering::Relaxed));
        let answer = json!({"jsonrpc": "2.0", "id": request["id"], "result": {
            "protocolVersion": "2025-11-25", "capabilities": {"tools": {"listChanged": true}},
            "serverInfo": {"name": "scripted", "version": "1"}}});
        let headers = [
            ("Content-Type", "application/json"),
            ("Mcp-Session-Id", session.as_str()),
        ];
        write_answer(out, "200 OK", &headers, answer.to_string().as_bytes());
        return Some(true);
    }
    if request.get("id").is_none() {
        write_answer(out, "202 Accepted", &[], b"");
        return Some(true);
    }
    None
}

/// `pages` pages of `per_page` tools, each tool's name saying which page
/// it is on and the values of the `echo` request headers it was listed
/// with (as a server that echoes credentials would), its description
/// `pad` bytes long.
fn catalogue(pages: usize, per_page: usize, pad: usize, echo: &'static [&'static str]) -> Scripted {
    let sessions = AtomicUsize::new(1);
    let description = "d".repeat(pad);
    Scripted::start(move |seen, out| {
        if let Some(keep) = handshake(seen, out, &sessions) {
            return keep;
        }
        let request = request_of(seen);
        let page: usize = request["params"]["cursor"]
            .as_str()
            .and_then(|c| c.parse().ok())
            .unwrap_or(0);
        let said: String = echo
            .iter()
            .map(|h| format!(" [{h}: {}]", seen.header(h).unwrap_or("-")))
            .collect();
        let tools: Vec<Value> = (0..per_page)
            .map(|i| json!({"name": format!("tool-{page}-{i}{said}"), "description": description, "inputSchema": {"type": "object"}}))
            .collect();
        let mut result = json!({ "tools": tools });
        if page + 1 < pages {
            result["nextCursor"] = json!((page + 1).to_string());
        }
        let answer = json!({"jsonrpc": "2.0", "id": request["id"], "result": result});
        write_answer(
            out,
            "200 OK",
            &[("Content-Type", "application/json")],
            answer.to_string().as_bytes(),
        );
        true
    })
}

// ----------------------------------------------------------------- tests

#[test]
fn rotating_credentials_against_5000_tools_stay_within_the_byte_budget() {
    // Every request a new Authorization, on one session: every answer a
    // new reuse key. The page rate is lifted so that each one is walked:
    // what is kept, not how often, is under test.
    let args = simulate_args(
        "http",
        &[
            "--items",
            "5000",
            "--page-size",
            "500",
            "--kinds",
            "tools",
            "--echo-header",
            "Authorization",
        ],
    );
    let sim = Proc::start(&args);
    let tap = TapCommand::start(
        &sim.at("/mcp"),
        &[
            "--merge-pages",
            "mcp",
            "--merge-page-burst",
            "1000000",
            "--merge-pages-per-second",
            "1000000",
        ],
    );
    let pid = tap.web.pid();
    let mut conn = RawConn::connect(tap_addr(&tap));
    let session = conn.open_session("mcp");
    let before = reset_peak(pid);
    const REQUESTS: u64 = 120;
    for n in 0..REQUESTS {
        let token = format!("Bearer tok-{n}");
        let headers = [
            ("Mcp-Session-Id", session.as_str()),
            ("Authorization", token.as_str()),
        ];
        let (_, message) = list(&mut conn, 100 + n, &headers);
        let names = tool_names(&message);
        assert_eq!(names.len(), 5000, "request {n}: the whole catalogue");
        let own = format!("[echo: {token}]");
        assert!(
            names.iter().all(|name| name.ends_with(&own)),
            "request {n} got an answer made for other credentials"
        );
    }
    let peak = status_kib(pid, "VmHWM:");
    let rise = peak.saturating_sub(before);
    eprintln!(
        "{REQUESTS} rotating tokens against 5,000 tools: tap RSS {before} KiB before, peak {peak} KiB (+{rise} KiB)"
    );
    let merged = sample(
        &tap.metrics(),
        "mcp_tap_merges_total",
        &[("tap", "tap"), ("outcome", "merged")],
    );
    assert_eq!(merged, Some(REQUESTS as f64), "each one walked and merged");
    assert!(
        rise <= MERGE_BUDGET_KIB + OTHER_KIB,
        "peak RSS rose by {rise} KiB (budget {MERGE_BUDGET_KIB} KiB + {OTHER_KIB} KiB)"
    );
}

/// An upstream whose every first page is `bytes` of `0` items (no cursor):
/// a page within every cap that costs sixteen times its bytes as a tree.
fn zeros(bytes: usize) -> Scripted {
    let sessions = AtomicUsize::new(1);
    let zeros: Arc<Vec<u8>> = Arc::new(b"0,".repeat(bytes / 2));
    Scripted::start(move |seen, out| {
        if let Some(keep) = handshake(seen, out, &sessions) {
            return keep;
        }
        let id = request_of(seen)["id"].to_string();
        let head = format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{{"tools":["#);
        let tail = b"0]}}";
        let length = head.len() + zeros.len() + tail.len();
        let top = format!(
            "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {length}\r\n\r\n"
        );
        use std::io::Write;
        out.write_all(top.as_bytes()).is_ok()
            && out.write_all(head.as_bytes()).is_ok()
            && out.write_all(&zeros).is_ok()
            && out.write_all(tail).is_ok()
    })
}

#[test]
fn pages_of_millions_of_zeros_cost_their_bytes_not_sixteen_times() {
    const PAGE_BYTES: usize = 3_800_000;
    const SESSIONS: usize = 32;
    let upstream = zeros(PAGE_BYTES);
    // The default `--inspect-bytes`: the observer reads each page whole
    // too, and must hold no slot per item while it does.
    let flags = ["--merge-pages", "all"];
    let tap = TapCommand::start(&upstream.url("/mcp"), &flags);
    let pid = tap.web.pid();
    let addr = tap_addr(&tap);
    let before = reset_peak(pid);
    let clients: Vec<_> = (0..SESSIONS)
        .map(|n| {
            std::thread::spawn(move || {
                let mut conn = RawConn::connect(addr);
                let session = conn.open_session("app");
                send_list(&mut conn, 7, &[("Mcp-Session-Id", session.as_str())]);
                let answer = conn.answer();
                assert_eq!(answer.status, 200, "client {n}: {}", answer.text());
                let text = answer.text();
                // Merged or page 1 as it came: every item, untouched.
                assert!(text.starts_with(r#"{"jsonrpc":"2.0","id":7,"result":{"tools":[0,0,"#));
                // Every zero item, and the one of `"2.0"`.
                assert_eq!(text.matches('0').count(), PAGE_BYTES / 2 + 2, "client {n}");
                assert!(!text.contains("nextCursor"));
            })
        })
        .collect();
    for client in clients {
        client.join().expect("a client");
    }
    let peak = status_kib(pid, "VmHWM:");
    let rise = peak.saturating_sub(before);
    let metrics = tap.metrics();
    let count = |outcome: &str| {
        sample(
            &metrics,
            "mcp_tap_merges_total",
            &[("tap", "tap"), ("outcome", outcome)],
        )
        .unwrap_or(0.0)
    };
    eprintln!(
        "{SESSIONS} sessions of one {PAGE_BYTES}-byte page of zeros: tap RSS {before} KiB before, peak {peak} KiB (+{rise} KiB); merged {}, busy {}",
        count("merged"),
        count("busy")
    );
    assert_eq!(count("merged") + count("busy"), SESSIONS as f64);
    assert!(count("merged") >= 1.0);
    assert!(
        rise <= MERGE_BUDGET_KIB + OTHER_KIB,
        "peak RSS rose by {rise} KiB (budget {MERGE_BUDGET_KIB} KiB + {OTHER_KIB} KiB)"
    );
}

/// Page-1 requests `send` makes 20 times through a default tap in front
/// of a 100-page catalogue: the tools/list requests the upstream got, and
/// the bound they must stay within for the time they took.
fn upstream_lists(send: impl Fn(&mut RawConn, u64, Option<&str>)) -> (u64, u64) {
    const REQUESTS: u64 = 20;
    let upstream = catalogue(100, 2, 0, &[]);
    let tap = TapCommand::start(&upstream.url("/mcp"), &["--merge-pages", "all"]);
    let mut conn = RawConn::connect(tap_addr(&tap));
    let session = conn.open_session("app");
    let started = Instant::now();
    for n in 0..REQUESTS {
        send(&mut conn, n, Some(&session));
    }
    let seconds = started.elapsed().as_secs_f64().ceil();
    let lists = upstream.seen().iter().filter(|s| is_list(s)).count() as u64;
    let bound = REQUESTS + PAGE_BURST + (PAGES_PER_SECOND * seconds) as u64;
    let throttled = sample(
        &tap.metrics(),
        "mcp_tap_merges_total",
        &[("tap", "tap"), ("outcome", "throttled")],
    );
    eprintln!(
        "{REQUESTS} page-1 requests: {lists} upstream list requests in {seconds} s (bound {bound}; {} without one); throttled {throttled:?}",
        REQUESTS * 100
    );
    (lists, bound)
}

#[test]
fn sessionless_loops_and_rotating_tokens_cannot_multiply_upstream_load() {
    let sessionless = |conn: &mut RawConn, n: u64, _: Option<&str>| {
        let (answer, message) = list(conn, n + 10, &[]);
        assert_eq!(answer.status, 200);
        assert!(!tool_names(&message).is_empty());
    };
    let (lists, bound) = upstream_lists(sessionless);
    assert!(lists <= bound, "{lists} upstream requests, bound {bound}");
    let rotating = |conn: &mut RawConn, n: u64, session: Option<&str>| {
        let token = format!("Bearer rotated-{n}");
        let headers = [
            ("Mcp-Session-Id", session.unwrap_or_default()),
            ("Authorization", token.as_str()),
        ];
        let (answer, _) = list(conn, n + 10, &headers);
        assert_eq!(answer.status, 200);
    };
    let (lists, bound) = upstream_lists(rotating);
    assert!(lists <= bound, "{lists} upstream requests, bound {bound}");
}

/// A tap merging for everyone in front of a catalogue whose merged answer
/// is 6 MB (more than loopback's socket buffers absorb for a client that
/// never reads), writing held answers within `write_timeout`. Slots and
/// deadlines are under test, not bytes: the byte budget is lifted.
fn six_megabyte_answers(write_timeout: Duration) -> (Scripted, RunningTap) {
    let upstream = catalogue(10, 100, 6000, &[]);
    let mut settings = TapSettings::new(upstream.url("/mcp").parse().unwrap());
    settings.merge.clients = MergeClients::All;
    settings.limits.write_timeout = write_timeout;
    settings.merge.max_bytes = 1 << 30;
    (upstream, RunningTap::start(settings))
}

/// `n` clients, each in its own session, that ask page 1 and never read.
fn silent_readers(tap: &RunningTap, n: usize) -> Vec<RawConn> {
    (0..n)
        .map(|_| {
            let mut conn = RawConn::connect_small_window(tap.addr);
            let session = conn.open_session("app");
            send_list(&mut conn, 9, &[("Mcp-Session-Id", session.as_str())]);
            conn
        })
        .collect()
}

fn merged_count(tap: &RunningTap) -> usize {
    let merged = |e: &&TapEvent| {
        matches!(
            e,
            TapEvent::Merged {
                outcome: MergeOutcome::Merged,
                ..
            }
        )
    };
    tap.recorder.events().iter().filter(merged).count()
}

#[test]
fn clients_that_never_read_hold_no_walk_slot() {
    // More silent readers than walks at once (16), each its own walk; the
    // deadline far away: all of them are still being written to.
    const SILENT: usize = 20;
    let (_upstream, tap) = six_megabyte_answers(Duration::from_secs(600));
    let _silent = silent_readers(&tap, SILENT);
    wait_for(
        Duration::from_secs(300),
        "every silent reader merged",
        || (merged_count(&tap) >= SILENT).then_some(()),
    );
    let mut reader = RawConn::connect(tap.addr);
    let session = reader.open_session("app");
    let (answer, message) = list(&mut reader, 3, &[("Mcp-Session-Id", session.as_str())]);
    assert_eq!(tool_names(&message).len(), 1000, "merged: every page");
    assert!(answer.body.len() > 6_000_000, "{} bytes", answer.body.len());
    assert_eq!(tap.stats.merges(MergeCount::Busy), 0);
    assert_eq!(merged_count(&tap), SILENT + 1);
    assert_eq!(tap.stats.cuts(Cut::ClientWrite), 0, "all still held");
}

#[test]
fn clients_that_never_read_are_cut_at_the_write_deadline() {
    const SILENT: usize = 3;
    let (_upstream, tap) = six_megabyte_answers(Duration::from_secs(2));
    let mut silent = silent_readers(&tap, SILENT);
    wait_for(Duration::from_secs(300), "the silent readers cut", || {
        (tap.stats.cuts(Cut::ClientWrite) == SILENT as u64).then_some(())
    });
    assert_eq!(merged_count(&tap), SILENT);
    for conn in &mut silent {
        let (answer, cut) = conn.answer_maybe_cut();
        assert_eq!(answer.status, 200);
        assert!(cut.is_some(), "a silent reader's answer was cut");
    }
}

#[test]
fn another_api_key_or_cookie_never_gets_a_kept_answer() {
    let upstream = catalogue(2, 2, 0, &["x-api-key", "cookie", "x-tenant"]);
    let mut settings = TapSettings::new(upstream.url("/mcp").parse().unwrap());
    settings.merge.clients = MergeClients::All;
    settings.merge.credential_headers = vec![http::HeaderName::from_static("x-tenant")];
    let tap = RunningTap::start(settings);
    let mut conn = RawConn::connect(tap.addr);
    let session = conn.open_session("app");
    let lists = || upstream.seen().iter().filter(|s| is_list(s)).count();
    let mut id = 20;
    let mut ask = |api_key: &str, cookie: &str, tenant: &str| {
        id += 1;
        let headers = [
            ("Mcp-Session-Id", session.as_str()),
            ("X-Api-Key", api_key),
            ("Cookie", cookie),
            ("X-Tenant", tenant),
        ];
        let (_, message) = list(&mut conn, id, &headers);
        let names = tool_names(&message);
        assert_eq!(names.len(), 4, "{message}");
        let own = format!(" [x-api-key: {api_key}] [cookie: {cookie}] [x-tenant: {tenant}]");
        assert!(
            names.iter().all(|n| n.ends_with(&own)),
            "{names:?} for {own}"
        );
    };
    ask("a", "sid=1", "t1");
    assert_eq!(lists(), 2, "walked");
    ask("a", "sid=1", "t1");
    assert_eq!(lists(), 2, "reused: the same credentials");
    ask("b", "sid=1", "t1");
    assert_eq!(lists(), 4, "another API key reaches the upstream");
    ask("a", "sid=2", "t1");
    assert_eq!(lists(), 6, "another cookie reaches the upstream");
    ask("a", "sid=1", "t2");
    assert_eq!(lists(), 8, "another value of a header the operator named");
    ask("b", "sid=1", "t1");
    assert_eq!(lists(), 8, "b's own answer, reused");
    assert_eq!(tap.stats.merges(MergeCount::Reused), 2);
}

/// An upstream answering every list request as an event stream: the
/// client's own first page (numeric id) is preceded by a log message and a
/// `list_changed` for tools; two pages.
fn noisy_stream() -> Scripted {
    let sessions = AtomicUsize::new(1);
    Scripted::start(move |seen, out| {
        if let Some(keep) = handshake(seen, out, &sessions) {
            return keep;
        }
        let request = request_of(seen);
        let second = request["params"]["cursor"] == "2";
        let tools: Vec<Value> = (0..3)
            .map(|i| json!({"name": format!("tool-{}-{i}", u8::from(second) + 1)}))
            .collect();
        let mut result = json!({ "tools": tools });
        if !second {
            result["nextCursor"] = json!("2");
        }
        let answer = json!({"jsonrpc": "2.0", "id": request["id"], "result": result});
        let mut body = String::new();
        if request["id"].is_number() {
            body.push_str("event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{\"level\":\"info\",\"data\":\"hello\"}}\n\n");
            body.push_str(": keep-alive\n\n");
            body.push_str("id: 7\r\nevent: message\r\ndata: {\"jsonrpc\":\"2.0\",\r\ndata: \"method\":\"notifications/tools/list_changed\"}\r\n\r\n");
        }
        body.push_str(&format!("event: message\ndata: {answer}\n\n"));
        write_answer(
            out,
            "200 OK",
            &[("Content-Type", "text/event-stream")],
            body.as_bytes(),
        );
        true
    })
}

#[test]
fn notifications_before_page_1s_answer_reach_the_merged_client_first() {
    let upstream = noisy_stream();
    let mut settings = TapSettings::new(upstream.url("/mcp").parse().unwrap());
    settings.merge.clients = MergeClients::All;
    let tap = RunningTap::start(settings);
    let mut conn = RawConn::connect(tap.addr);
    let session = conn.open_session("app");
    let (answer, message) = list(&mut conn, 5, &[("Mcp-Session-Id", session.as_str())]);
    assert_eq!(answer.header("content-type"), Some("text/event-stream"));
    let sent = events(&answer.text());
    assert_eq!(sent.len(), 3, "{}", answer.text());
    let first: Value = serde_json::from_str(&sent[0]).unwrap();
    assert_eq!(first["method"], "notifications/message");
    let second: Value = serde_json::from_str(&sent[1]).unwrap();
    assert_eq!(second["method"], "notifications/tools/list_changed");
    assert_eq!(tool_names(&message).len(), 6, "both pages, merged last");
    assert!(message["result"].get("nextCursor").is_none());
    assert_eq!(tap.stats.merges(MergeCount::Merged), 1);
    // The list_changed in page 1 restarted the walk: page 1 again (ours),
    // then page 2.
    assert_eq!(upstream.seen().iter().filter(|s| is_list(s)).count(), 3);
    // The answer made after it is kept: asked again, it is reused.
    let (_, again) = list(&mut conn, 6, &[("Mcp-Session-Id", session.as_str())]);
    assert_eq!(tool_names(&again), tool_names(&message));
    assert_eq!(tap.stats.merges(MergeCount::Reused), 1);
}
