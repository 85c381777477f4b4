//! HTTP 429 is `rate_limited`, and `Retry-After` (seconds or an HTTP date)
//! is kept, shown, and moves the scheduler's next poll (capped at
//! `backoff_max`). The server is a small HTTP/1.1 MCP server on a real
//! loopback socket: `initialize` and the first `tools/list` page succeed,
//! a continuation page (or, in one mode, the handshake) gets 429.

use mcp_testkit::exporter::api_target;
use mcp_testkit::process::run_exporter;
use mcp_testkit::{probe_json, sample, Exporter};
use serde_json::{json, Value};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::{Duration, SystemTime};

/// Rounding of the exporter's reported seconds (milliseconds at worst):
/// the only slack in comparisons of its timestamps with ours.
const ROUNDING: f64 = 0.01;

/// The clock the exporter reads too, as Unix seconds.
fn unix_now() -> f64 {
    SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .expect("after 1970")
        .as_secs_f64()
}

#[derive(Clone, Copy)]
enum Refuse {
    /// 429 to every `tools/list` that carries a cursor.
    Continuation,
    /// 429 to `server/discover` (the first request).
    Handshake,
}

/// Requests seen, by method.
#[derive(Default)]
struct Seen {
    initialize: AtomicUsize,
    tools_list: AtomicUsize,
}

struct RateLimiter {
    url: String,
    seen: Arc<Seen>,
}

/// Serves until the test process ends (the thread holds only a socket).
fn rate_limiter(refuse: Refuse, retry_after: String) -> RateLimiter {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let url = format!("http://{}/mcp", listener.local_addr().expect("addr"));
    let seen = Arc::new(Seen::default());
    let counts = seen.clone();
    thread::spawn(move || {
        for stream in listener.incoming().map_while(Result::ok) {
            let counts = counts.clone();
            let retry_after = retry_after.clone();
            thread::spawn(move || answer(stream, refuse, &retry_after, &counts));
        }
    });
    RateLimiter { url, seen }
}

fn answer(stream: TcpStream, refuse: Refuse, retry_after: &str, seen: &Seen) {
    let _ = stream.set_read_timeout(Some(Duration::from_secs(30)));
    let mut reader = BufReader::new(stream);
    let mut line = String::new();
    if reader.read_line(&mut line).is_err() {
        return;
    }
    let post = line.starts_with("POST ");
    let mut length = 0usize;
    loop {
        let mut header = String::new();
        if reader.read_line(&mut header).is_err() || header.trim().is_empty() {
            break;
        }
        if let Some((k, v)) = header.split_once(':') {
            if k.trim().eq_ignore_ascii_case("content-length") {
                length = v.trim().parse().unwrap_or(0);
            }
        }
    }
    let mut body = vec![0u8; length.min(1 << 20)];
    if reader.read_exact(&mut body).is_err() {
        return;
    }
    let request: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    let id = request["id"].clone();
    let method = request["method"].as_str().unwrap_or_default();
    let ok = |result: Value| (200, json!({"jsonrpc": "2.0", "id": id, "result": result}));
    let (status, reply): (u16, Value) = match (post, method) {
        (false, _) => (405, Value::Null),
        (true, "server/discover") if matches!(refuse, Refuse::Handshake) => (429, Value::Null),
        (true, "server/discover") => (
            400,
            json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32601, "message": "Method not found"}}),
        ),
        (true, "initialize") => {
            seen.initialize.fetch_add(1, Ordering::SeqCst);
            ok(json!({
                "protocolVersion": "2025-11-25",
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "rate-limiter", "version": "1"}
            }))
        }
        (true, "tools/list") => {
            seen.tools_list.fetch_add(1, Ordering::SeqCst);
            if request["params"]["cursor"].is_string() {
                (429, Value::Null)
            } else {
                ok(json!({
                    "tools": [{"name": "first", "inputSchema": {"type": "object"}}],
                    "nextCursor": "page-2"
                }))
            }
        }
        (true, m) if m.starts_with("notifications/") => (202, Value::Null),
        (true, _) => ok(json!({})),
    };
    let body = if reply.is_null() {
        String::new()
    } else {
        reply.to_string()
    };
    let reason = match status {
        200 => "OK",
        202 => "Accepted",
        400 => "Bad Request",
        405 => "Method Not Allowed",
        _ => "Too Many Requests",
    };
    let mut head = format!(
        "HTTP/1.1 {status} {reason}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n",
        body.len()
    );
    if status == 429 {
        head.push_str(&format!("Retry-After: {retry_after}\r\n"));
    }
    head.push_str("\r\n");
    let mut stream = reader.into_inner();
    let _ = stream.write_all(head.as_bytes());
    let _ = stream.write_all(body.as_bytes());
}

fn tools(report: &Value) -> &Value {
    &report["listings"][0]
}

#[test]
fn a_429_page_is_rate_limited_with_its_retry_after_in_json_and_text() {
    let server = rate_limiter(Refuse::Continuation, "120".into());
    let (code, report) = probe_json(&["--kind", "tools", "--url", &server.url]);
    assert_eq!(code, 1, "{report}");
    let l = tools(&report);
    assert_eq!(l["outcome"], "error", "{report}");
    assert_eq!(l["reason"], "rate_limited", "{report}");
    assert_eq!(l["http_status"], 429);
    assert_eq!(l["retry_after_seconds"], 120.0);
    assert_eq!(l["pages"][1]["error"], "rate_limited");

    let out = run_exporter(&["probe", "--kind", "tools", "--url", &server.url]);
    let text = &out.stdout;
    assert!(
        text.contains("rate limited: the server asked to wait 120 s (Retry-After)"),
        "{text}"
    );
    assert!(text.contains("error (rate_limited)"), "{text}");
}

/// An ordering of clock readings, not a timing: the probe read the date
/// between `before` and `after`, so the wait it reports is the date less
/// some moment in between, however long the probe took.
#[test]
fn retry_after_as_an_http_date_is_read() {
    let at = chrono::Utc::now() + chrono::Duration::seconds(90);
    let date = at.format("%a, %d %b %Y %H:%M:%S GMT").to_string();
    // Whole seconds on the wire.
    let asked = at.timestamp() as f64;
    let server = rate_limiter(Refuse::Continuation, date);
    let before = unix_now();
    let (_, report) = probe_json(&["--kind", "tools", "--url", &server.url]);
    let after = unix_now();
    let wait = tools(&report)["retry_after_seconds"]
        .as_f64()
        .unwrap_or_else(|| panic!("no retry_after_seconds in {report}"));
    assert!(
        asked - after - ROUNDING <= wait && wait <= asked - before + ROUNDING,
        "{wait} s is not the date less a moment of the probe ({before}..{after}); {report}"
    );
}

#[test]
fn a_429_handshake_is_rate_limited_and_not_retried_as_initialize() {
    let server = rate_limiter(Refuse::Handshake, "30".into());
    let (_, report) = probe_json(&["--kind", "tools", "--url", &server.url]);
    assert_eq!(report["session_error"]["error"], "rate_limited", "{report}");
    assert_eq!(report["session_retry_after_seconds"], 30.0, "{report}");
    // Refused for load, not for the version: no fallback request.
    assert_eq!(server.seen.initialize.load(Ordering::SeqCst), 0);
}

/// Scheduled every 3 s; the server asks for 120 s, `backoff_max` caps the
/// wait at 30 s. Without Retry-After the next poll would be one backoff
/// tick (≈ 6 s) after the failed one; beyond the cap, 120 s. Orderings of
/// the exporter's own timestamps and of when we read them, not timings.
#[test]
fn the_scheduler_waits_as_asked_within_backoff_max() {
    let server = rate_limiter(Refuse::Continuation, "120".into());
    let exporter = Exporter::start(&format!(
        "global:\n  schedule: {{every: 3s}}\n  jitter: 0s\n  backoff_max: 30s\n  invalid_cursor_probe: false\n  kinds: [tools]\ntargets:\n  - name: limited\n    http:\n      url: {}\n",
        server.url
    ));
    let api = exporter.wait_api(
        Duration::from_secs(120),
        "the next poll after the first one",
        |api| {
            let t = api_target(api, "limited");
            match (
                t["history"][0]["started_unix_seconds"].as_f64(),
                t["next_poll_unix_seconds"].as_f64(),
            ) {
                (Some(started), Some(next)) => next > started,
                _ => false,
            }
        },
    );
    let read_at = unix_now();
    let t = api_target(&api, "limited");
    let poll = &t["history"][0];
    assert_eq!(poll["retry_after_seconds"], 120.0, "{t}");
    let seconds = |v: &Value| {
        v.as_f64()
            .unwrap_or_else(|| panic!("not a number: {v} in {t}"))
    };
    let ended = seconds(&poll["started_unix_seconds"]) + seconds(&poll["duration_seconds"]);
    let next = seconds(&t["next_poll_unix_seconds"]);
    // The next poll waits out the cap after the 429 poll ended …
    assert!(
        next >= ended + 30.0 - ROUNDING,
        "next poll {next}, the 429 poll ended {ended}: {t}"
    );
    // … and no longer: it was set when that poll ended, before we read it.
    assert!(
        next <= read_at + 30.0 + ROUNDING,
        "next poll {next}, read at {read_at}: {t}"
    );
    // One poll so far: one first page and one refused continuation.
    assert_eq!(server.seen.tools_list.load(Ordering::SeqCst), 2);
    let text = exporter.metrics();
    assert_eq!(
        sample(
            &text,
            "mcp_listing_errors_total",
            &[
                ("target", "limited"),
                ("kind", "tools"),
                ("error", "rate_limited")
            ]
        ),
        Some(1.0),
        "{text}"
    );
    // The status page shows the wait.
    let (_, page) = exporter.get("/");
    assert!(page.contains("Retry-After 2m"), "{page}");
}
