//! The tap's data path under the fourth attack (issue 39, breaks 1, 2 and
//! 5), against real processes: request smuggling through the shared
//! upstream pool in front of uvicorn with h11 (the Python SDK's HTTP
//! stack), interim 1xx answers during a merged walk, bytes an upstream
//! sends while its kept connection idles, and clients and upstreams that
//! hold connections by trickling a body or never reading. Each asserts
//! that no client ever receives another's answer or token.

use mcp_tap::{Cut, MergeClients, MergeCount, TapSettings};
use mcp_testkit::peers::{installed, peer_path};
use mcp_testkit::tap::{write_answer, RawConn, RunningTap, Scripted, Seen, JSON_BODY, MCP_ACCEPT};
use mcp_testkit::{http_get, wait_for, Proc};
use serde_json::{json, Value};
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

const LIMIT: Duration = Duration::from_secs(60);

fn tap_with(upstream: &str, tune: impl FnOnce(&mut TapSettings)) -> RunningTap {
    let mut settings = TapSettings::new(upstream.parse().expect("upstream URL"));
    tune(&mut settings);
    RunningTap::start(settings)
}

/// The next final answer on `conn`, interim 1xx ones read past.
fn final_answer(conn: &mut RawConn) -> mcp_testkit::http::RawResponse {
    loop {
        let answer = conn.answer();
        if !(100..200).contains(&answer.status) {
            return answer;
        }
    }
}

/// Everything a connection sends until it closes (or 60 s pass).
fn read_to_end(stream: &mut TcpStream) -> Vec<u8> {
    stream
        .set_read_timeout(Some(LIMIT))
        .expect("a read timeout");
    let mut all = Vec::new();
    let _ = stream.read_to_end(&mut all);
    all
}

fn status_of(raw: &[u8]) -> Option<u16> {
    let line = raw.split(|&b| b == b'\n').next()?;
    std::str::from_utf8(line)
        .ok()?
        .split_whitespace()
        .nth(1)?
        .parse()
        .ok()
}

// ------------------------------------------------------ break 1: smuggling

/// A chunked request whose trailer (or chunk extension) hides a second
/// request behind a bare LF: h11 ends trailers at LF LF and would read
/// `GET /smuggled` as the next request on the pooled connection.
const TRAILER_ATTACK: &[u8] = b"POST /attack HTTP/1.1\r\nHost: tap\r\nAuthorization: Bearer attacker-token\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\nX-Pad: a\n\nGET /smuggled HTTP/1.1\r\nHost: up\r\nAuthorization: Bearer attacker-smuggled\r\n\r\n";
const EXTENSION_ATTACK: &[u8] = b"POST /attack HTTP/1.1\r\nHost: tap\r\nAuthorization: Bearer attacker-token\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n2;a\nGET /smuggled HTTP/1.1\r\n{}\r\n0\r\n\r\n";
/// Trailers within the grammar: the request passes, its trailers do not.
const CLEAN_TRAILERS: &[u8] = b"POST /trailers HTTP/1.1\r\nHost: tap\r\nAuthorization: Bearer attacker-token\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\nX-Pad: a\r\n\r\n";

fn uvicorn_echo() -> Option<Proc> {
    let test = "bare_lf_trailers_and_extensions_smuggle_nothing_through_uvicorn";
    if !installed(test, &["python/.venv/bin/python"]) {
        return None;
    }
    let argv = [
        peer_path("python/.venv/bin/python"),
        peer_path("python/echo_server.py"),
        "0".to_string(),
    ];
    Some(Proc::start_argv("uvicorn echo server", &argv, &[]))
}

/// A request with `token` on `conn`; the echo it got back.
fn echoed(conn: &mut RawConn, path: &str, token: &str) -> Value {
    let auth = format!("Bearer {token}");
    let answer = conn
        .send(
            "POST",
            path,
            &[
                ("Authorization", &auth),
                ("Content-Type", "application/json"),
            ],
            Some(b"{}"),
        )
        .answer();
    assert_eq!(answer.status, 200, "{path}: {}", answer.text());
    serde_json::from_str(&answer.text()).expect("the echo is JSON")
}

#[test]
fn bare_lf_trailers_and_extensions_smuggle_nothing_through_uvicorn() {
    let Some(upstream) = uvicorn_echo() else {
        return;
    };
    let tap = tap_with(&upstream.at("/"), |_| {});
    let mut victim = RawConn::connect(tap.addr);
    let mut attacker = RawConn::connect(tap.addr);
    let rounds = 6;
    for round in 0..rounds {
        for attack in [TRAILER_ATTACK, EXTENSION_ATTACK] {
            let mut conn = TcpStream::connect(tap.addr).expect("connect");
            conn.write_all(attack).expect("send the attack");
            let answer = read_to_end(&mut conn);
            assert_eq!(
                status_of(&answer),
                Some(400),
                "round {round}: {}",
                String::from_utf8_lossy(&answer)
            );
        }
        let mut clean = TcpStream::connect(tap.addr).expect("connect");
        clean.write_all(CLEAN_TRAILERS).expect("send");
        clean
            .write_all(b"GET /close HTTP/1.1\r\nHost: tap\r\nConnection: close\r\n\r\n")
            .expect("send");
        let answers = String::from_utf8_lossy(&read_to_end(&mut clean)).into_owned();
        assert!(answers.starts_with("HTTP/1.1 200"), "{answers}");
        assert!(answers.contains("\"path\":\"/trailers\""), "{answers}");
        // Victim and attacker alternate on kept-alive connections: each
        // gets its own answer with its own token, never the other's.
        let victim_token = format!("victim-token-{round}");
        let got = echoed(&mut victim, "/victim", &victim_token);
        assert_eq!(got["path"], "/victim", "round {round}: {got}");
        assert_eq!(got["authorization"], format!("Bearer {victim_token}"));
        let got = echoed(&mut attacker, "/attacker", "attacker-token");
        assert_eq!(got["path"], "/attacker", "round {round}: {got}");
        assert_eq!(got["authorization"], "Bearer attacker-token");
    }
    // What uvicorn itself parsed off the wire: never the smuggled request.
    let (status, body) = http_get(&upstream.at("/seen"));
    assert_eq!(status, 200);
    let seen: Vec<Value> = serde_json::from_str(&body).expect("the record");
    let paths: Vec<&str> = seen.iter().filter_map(|r| r["path"].as_str()).collect();
    assert!(!paths.contains(&"/smuggled"), "smuggled: {paths:?}");
    assert!(!body.contains("attacker-smuggled"), "{body}");
    let count = |p: &str| paths.iter().filter(|x| **x == p).count();
    assert_eq!(count("/victim"), rounds);
    assert_eq!(count("/attacker"), rounds);
    assert_eq!(count("/trailers"), rounds);
    for record in &seen {
        if record["path"] == "/victim" {
            assert!(record["authorization"]
                .as_str()
                .is_some_and(|a| a.starts_with("Bearer victim-token-")));
        }
    }
    assert_eq!(tap.stats.cuts(Cut::BadFraming), 2 * rounds as u64);
}

/// An answer's trailers never reach the client, and an answer whose
/// trailer holds a bare LF is cut, not passed.
#[test]
fn answer_trailers_are_dropped_and_bare_lf_ones_cut_the_answer() {
    let upstream = Scripted::start(|seen, out| {
        let trailer = if seen.request_line.contains("/bad") {
            "X-Secret: a\n\nHTTP/1.1 200 OK\r\n"
        } else {
            "X-Secret: s3cr3t\r\n"
        };
        let answer = format!(
            "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\nTrailer: X-Secret\r\n\r\n2\r\n{{}}\r\n0\r\n{trailer}\r\n"
        );
        let _ = out.write_all(answer.as_bytes());
        true
    });
    let tap = tap_with(&upstream.url("/mcp"), |_| {});
    let mut conn = TcpStream::connect(tap.addr).expect("connect");
    conn.write_all(
        b"POST /mcp HTTP/1.1\r\nHost: t\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}",
    )
    .expect("send");
    let answer = String::from_utf8_lossy(&read_to_end(&mut conn)).into_owned();
    assert!(
        answer.ends_with("\r\n\r\n2\r\n{}\r\n0\r\n\r\n"),
        "{answer:?}"
    );
    assert!(!answer.contains("s3cr3t") && !answer.to_ascii_lowercase().contains("trailer"));
    let mut conn = TcpStream::connect(tap.addr).expect("connect");
    conn.write_all(b"POST /bad HTTP/1.1\r\nHost: t\r\nContent-Length: 2\r\n\r\n{}")
        .expect("send");
    let answer = String::from_utf8_lossy(&read_to_end(&mut conn)).into_owned();
    // A 502 when the broken trailer came with the head; else the answer is
    // cut before its last chunk. Never what followed the bare LF.
    assert!(
        answer.starts_with("HTTP/1.1 502")
            || (answer.starts_with("HTTP/1.1 200") && !answer.ends_with("0\r\n\r\n")),
        "{answer:?}"
    );
    assert_eq!(answer.matches("HTTP/1.1").count(), 1, "{answer:?}");
    assert!(!answer.contains("X-Secret"), "{answer:?}");
    assert_eq!(tap.stats.cuts(Cut::BadFraming), 1);
}

// ------------------------------------------------- break 2: 1xx and the pool

/// A list page from the scripted upstream: two tools named for the
/// caller's token and the page, `nextCursor` on page 1.
fn page_answer(seen: &Seen) -> Vec<u8> {
    let request: Value = serde_json::from_slice(&seen.body).unwrap_or_default();
    let token = seen
        .header("authorization")
        .unwrap_or("none")
        .trim_start_matches("Bearer ")
        .to_string();
    let second = request["params"]["cursor"] == "page-2";
    let page = if second { 2 } else { 1 };
    let mut result = json!({
        "tools": [
            {"name": format!("{token}-p{page}-a"), "inputSchema": {"type": "object"}},
            {"name": format!("{token}-p{page}-b"), "inputSchema": {"type": "object"}},
        ]
    });
    if !second {
        result["nextCursor"] = json!("page-2");
    }
    serde_json::to_vec(&json!({"jsonrpc": "2.0", "id": request["id"], "result": result}))
        .expect("JSON")
}

fn tool_names(answer: &mcp_testkit::http::RawResponse) -> Vec<String> {
    let message: Value = serde_json::from_str(&answer.text()).expect("JSON answer");
    mcp_testkit::tap::tool_names(&message)
}

#[test]
fn interim_answers_during_a_merge_shift_no_answer() {
    let upstream = Scripted::start(|seen, out| {
        let _ =
            out.write_all(b"HTTP/1.1 103 Early Hints\r\nLink: </style.css>; rel=preload\r\n\r\n");
        let _ = out.write_all(b"HTTP/1.1 100 Continue\r\n\r\n");
        let body = page_answer(seen);
        write_answer(
            out,
            "200 OK",
            &[("Content-Type", "application/json")],
            &body,
        );
        true
    });
    let tap = tap_with(&upstream.url("/mcp"), |s| {
        s.merge.clients = MergeClients::Named(vec!["desk".to_string()]);
    });
    let mut desk = RawConn::connect(tap.addr);
    let mut other = RawConn::connect(tap.addr);
    let list = br#"{"jsonrpc":"2.0","id":7,"method":"tools/list","params":{}}"#;
    let rounds = 5;
    for round in 0..rounds {
        let (desk_auth, desk_session) = (format!("Bearer desk-{round}"), format!("desk-s{round}"));
        let headers = [
            ("User-Agent", "desk/1.0"),
            ("Content-Type", "application/json"),
            ("Authorization", desk_auth.as_str()),
            ("Mcp-Session-Id", desk_session.as_str()),
        ];
        let answer = final_answer(desk.send("POST", "/mcp", &headers, Some(list)));
        assert_eq!(answer.status, 200, "round {round}: {}", answer.text());
        let want: Vec<String> = ["p1-a", "p1-b", "p2-a", "p2-b"]
            .iter()
            .map(|s| format!("desk-{round}-{s}"))
            .collect();
        assert_eq!(tool_names(&answer), want, "round {round}: merged, its own");
        let other_auth = format!("Bearer other-{round}");
        let headers = [
            ("User-Agent", "other/1.0"),
            ("Content-Type", "application/json"),
            ("Authorization", other_auth.as_str()),
        ];
        let answer = final_answer(other.send("POST", "/mcp", &headers, Some(list)));
        assert_eq!(answer.status, 200, "round {round}: {}", answer.text());
        let names = tool_names(&answer);
        assert_eq!(
            names,
            [format!("other-{round}-p1-a"), format!("other-{round}-p1-b")],
            "round {round}: page 1, its own"
        );
    }
    assert_eq!(tap.stats.merges(MergeCount::Merged), rounds as u64);
    // Two page requests per merge and one pass-through per round.
    assert_eq!(upstream.seen().len(), 3 * rounds);
}

/// An upstream that writes an answer nobody asked for on a kept connection
/// while it idles: that connection is never handed to the next client.
#[test]
fn bytes_an_idle_kept_connection_receives_reach_no_client() {
    let extra_sent = Arc::new(AtomicBool::new(false));
    let flag = extra_sent.clone();
    let upstream = Scripted::start(move |seen, out| {
        let path = seen.request_line.split_whitespace().nth(1).unwrap_or("");
        let body = format!("{{\"for\":\"{path}\"}}");
        write_answer(
            out,
            "200 OK",
            &[("Content-Type", "application/json")],
            body.as_bytes(),
        );
        if path == "/first" {
            std::thread::sleep(Duration::from_millis(50));
            let _ =
                out.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 17\r\n\r\n{\"for\":\"/bogus\"}");
            flag.store(true, Ordering::SeqCst);
        }
        true
    });
    let tap = tap_with(&upstream.url("/"), |_| {});
    let mut first = RawConn::connect(tap.addr);
    let answer = first.send("POST", "/first", &[], Some(b"{}")).answer();
    assert_eq!(answer.text(), "{\"for\":\"/first\"}");
    wait_for(LIMIT, "the unasked answer written", || {
        extra_sent.load(Ordering::SeqCst).then_some(())
    });
    // Right away: well within the half second a kept connection used to be
    // trusted unchecked.
    let mut second = RawConn::connect(tap.addr);
    for _ in 0..3 {
        let answer = second.send("POST", "/second", &[], Some(b"{}")).answer();
        assert_eq!(answer.text(), "{\"for\":\"/second\"}");
    }
    assert_eq!(upstream.connections.load(Ordering::SeqCst), 2);
}

// ------------------------------------------------- break 5: deadlines

/// Clients sending their body a byte at a time until the tap answers;
/// what each got and when, from the moment its head went.
fn trickle(
    addr: SocketAddr,
    clients: usize,
    head: &str,
    every: Duration,
) -> Vec<(Vec<u8>, Duration)> {
    let threads: Vec<_> = (0..clients)
        .map(|_| {
            let head = head.to_string();
            std::thread::spawn(move || {
                let mut conn = TcpStream::connect(addr).expect("connect");
                conn.set_read_timeout(Some(every)).expect("timeout");
                let started = Instant::now();
                conn.write_all(head.as_bytes()).expect("head");
                let mut got = Vec::new();
                let mut buf = [0u8; 4096];
                while started.elapsed() < LIMIT {
                    match conn.read(&mut buf) {
                        Ok(0) => break,
                        Ok(n) => got.extend_from_slice(&buf[..n]),
                        Err(e)
                            if e.kind() == std::io::ErrorKind::WouldBlock
                                || e.kind() == std::io::ErrorKind::TimedOut => {}
                        Err(_) => break,
                    }
                    if got.is_empty() && conn.write_all(b"x").is_err() {
                        // Cut: what was answered is still to read.
                        let _ = conn.read_to_end(&mut got);
                        break;
                    }
                }
                (got, started.elapsed())
            })
        })
        .collect();
    threads
        .into_iter()
        .map(|t| t.join().expect("a client"))
        .collect()
}

#[test]
fn trickling_bodies_hold_no_upstream_connection_and_are_cut() {
    let upstream = Scripted::start(|_, out| {
        write_answer(out, "200 OK", &[], b"{}");
        true
    });
    let body_timeout = Duration::from_secs(3);
    let tap = tap_with(&upstream.url("/mcp"), |s| {
        s.limits.body_timeout = body_timeout
    });
    let head = "POST /mcp HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n";
    let got = trickle(tap.addr, 50, head, Duration::from_secs(1));
    for (answer, _) in &got {
        assert_eq!(
            status_of(answer),
            Some(408),
            "{}",
            String::from_utf8_lossy(answer)
        );
    }
    let slowest = got.iter().map(|(_, t)| *t).max().unwrap_or_default();
    eprintln!(
        "50 trickling clients cut, the last after {slowest:?} (body_timeout {body_timeout:?})"
    );
    assert_eq!(tap.stats.cuts(Cut::BodyTimeout), 50);
    assert_eq!(
        upstream.connections.load(Ordering::SeqCst),
        0,
        "a small body is held before an upstream connection is taken"
    );
    // A body too large to hold goes as it comes, on an upstream connection
    // that the same deadline lets go.
    let head = "POST /mcp HTTP/1.1\r\nHost: t\r\nContent-Length: 1000000\r\n\r\n";
    let got = trickle(tap.addr, 1, head, Duration::from_secs(1));
    assert_eq!(status_of(&got[0].0), Some(408));
    eprintln!("a large trickling body cut after {:?}", got[0].1);
    assert_eq!(upstream.connections.load(Ordering::SeqCst), 1);
    wait_for(LIMIT, "its upstream connection closed", || {
        (upstream.closed_by_peer.load(Ordering::SeqCst) == 1).then_some(())
    });
    assert_eq!(tap.stats.cuts(Cut::BodyTimeout), 51);
}

#[test]
fn a_client_that_never_reads_is_cut_at_the_write_deadline() {
    let upstream_gone = Arc::new(AtomicUsize::new(0));
    let gone = upstream_gone.clone();
    let upstream = Scripted::start(move |_, out| {
        let _ = out.write_all(b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n");
        let event = format!(
            "{:x}\r\ndata: {}\n\n\r\n",
            64 * 1024 + 8,
            "x".repeat(64 * 1024)
        );
        while out.write_all(event.as_bytes()).is_ok() {}
        gone.fetch_add(1, Ordering::SeqCst);
        false
    });
    let write_timeout = Duration::from_secs(1);
    let tap = tap_with(&upstream.url("/mcp"), |s| {
        s.limits.write_timeout = write_timeout
    });
    let mut silent = TcpStream::connect(tap.addr).expect("connect");
    let started = Instant::now();
    silent
        .write_all(b"GET /mcp HTTP/1.1\r\nHost: t\r\nAccept: text/event-stream\r\n\r\n")
        .expect("send");
    wait_for(LIMIT, "the silent reader cut", || {
        (tap.stats.cuts(Cut::ClientWrite) == 1).then_some(())
    });
    eprintln!(
        "a client that never reads cut after {:?} (write_timeout {write_timeout:?})",
        started.elapsed()
    );
    wait_for(LIMIT, "the upstream's stream let go", || {
        (upstream_gone.load(Ordering::SeqCst) == 1).then_some(())
    });
    assert_eq!(tap.stats.open_streams(), 0);
    drop(silent);
}

#[test]
fn an_upstream_that_never_reads_is_cut_at_the_write_deadline() {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let addr = listener.local_addr().expect("address");
    let held = std::thread::spawn(move || {
        // Accepts and never reads.
        let (mut conn, _) = listener.accept().expect("accept");
        let mut rest = Vec::new();
        let _ = conn.set_read_timeout(Some(LIMIT));
        std::thread::sleep(Duration::from_secs(3));
        let _ = conn.read_to_end(&mut rest);
    });
    let tap = tap_with(&format!("http://{addr}/mcp"), |s| {
        s.limits.write_timeout = Duration::from_secs(1);
    });
    let mut client = TcpStream::connect(tap.addr).expect("connect");
    let size = 64 * 1024 * 1024;
    let sender = {
        let mut client = client.try_clone().expect("clone");
        std::thread::spawn(move || {
            let head = format!("POST /mcp HTTP/1.1\r\nHost: t\r\nContent-Length: {size}\r\n\r\n");
            let _ = client.write_all(head.as_bytes());
            let chunk = vec![b'x'; 64 * 1024];
            for _ in 0..size / chunk.len() {
                if client.write_all(&chunk).is_err() {
                    return;
                }
            }
        })
    };
    wait_for(LIMIT, "the upstream cut", || {
        (tap.stats.cuts(Cut::UpstreamWrite) == 1).then_some(())
    });
    let _ = client.shutdown(std::net::Shutdown::Write);
    let answer = read_to_end(&mut client);
    // The client gets 502 when it can still read it; either way it is let go.
    if !answer.is_empty() {
        assert_eq!(
            status_of(&answer),
            Some(502),
            "{}",
            String::from_utf8_lossy(&answer)
        );
    }
    let _ = sender.join();
    let _ = held.join();
}

// ------------------------------------- break 5: the exporter's descriptors

/// What `serve` under `ulimit -n 1024` may peak at while 1,100 connections
/// idle at its tap (the other hostile-input tests' budget).
const LOW_FD_PEAK_RSS_BUDGET_KIB: u64 = 64 * 1024;

/// `serve` under `ulimit -n 1024` (the shell `exec`s it: same pid).
fn low_fd_serve(config: &std::path::Path) -> Proc {
    let mut command = std::process::Command::new("sh");
    command.args([
        "-c",
        "ulimit -n 1024 && exec \"$0\" \"$@\"",
        mcp_testkit::exporter_bin().to_str().expect("a UTF-8 path"),
        "--config.file",
        config.to_str().expect("a UTF-8 path"),
        "--web.listen-address",
        "127.0.0.1:0",
    ]);
    Proc::spawn("mcp-exporter serve under ulimit -n 1024", command)
}

fn proc_status_kib(pid: u32, field: &str) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("/proc status");
    status
        .lines()
        .find_map(|l| l.strip_prefix(field))
        .and_then(|v| v.split_whitespace().next())
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("{field} of {pid}"))
}

fn open_fds(pid: u32) -> usize {
    std::fs::read_dir(format!("/proc/{pid}/fd")).map_or(0, |d| d.count())
}

/// A sample of the exporter's `/metrics`, by its exact series.
fn sample(metrics: &str, series: &str) -> Option<f64> {
    metrics
        .lines()
        .find_map(|l| l.strip_prefix(series)?.trim().parse().ok())
}

#[test]
fn idle_connections_at_a_tap_leave_the_exporter_its_descriptors() {
    let sim = mcp_testkit::simulator::http_scenario("healthy", &["--kinds", "tools"]);
    let dir = tempfile::tempdir().expect("a temporary directory");
    let config = dir.path().join("c.yaml");
    let upstream = sim.at("/mcp");
    std::fs::write(
        &config,
        format!(
            "global:\n  schedule: {{every: 1s}}\n  jitter: 0s\ntargets:\n  - name: healthy\n    http: {{url: \"{upstream}\"}}\n    kinds: [tools]\ntaps:\n  - name: edge\n    listen: 127.0.0.1:0\n    upstream: {{url: \"{upstream}\"}}\n"
        ),
    )
    .expect("write the config");
    let exp = low_fd_serve(&config);
    let polls = || -> u64 {
        let (_, body) = http_get(&exp.at("/api/targets/healthy"));
        serde_json::from_str::<Value>(&body)
            .ok()
            .and_then(|v| v["polls"].as_u64())
            .unwrap_or(0)
    };
    wait_for(LIMIT, "a first poll", || (polls() >= 1).then_some(()));
    let tap = mcp_testkit::clients::tap_url_in(&exp.stderr(), Some("edge")).expect("the tap's url");
    let tap_addr: SocketAddr = tap
        .trim_start_matches("http://")
        .parse()
        .expect("an address");

    // Past the cap the tap stops accepting and connections wait in the
    // kernel's backlog; past that, connecting waits (the SYN goes
    // unanswered): those are given up after 2 s.
    let held: Vec<TcpStream> = (0..110)
        .map(|_| {
            std::thread::spawn(move || {
                let mut held = Vec::new();
                for i in 0..10 {
                    let Ok(mut conn) =
                        TcpStream::connect_timeout(&tap_addr, Duration::from_secs(2))
                    else {
                        continue;
                    };
                    if i % 2 == 0 {
                        // Half-sent: a request line and no end of headers.
                        let _ = conn.write_all(b"POST /mcp HTTP/1.1\r\nHost: x\r\n");
                    }
                    held.push(conn);
                }
                held
            })
        })
        .collect::<Vec<_>>()
        .into_iter()
        .flat_map(|t| t.join().expect("a connecting thread"))
        .collect();
    eprintln!("{} of 1,100 connections made to the tap", held.len());
    assert!(
        held.len() > 112 + 100,
        "only {} connections made",
        held.len()
    );
    let before = polls();
    let (status, metrics) = http_get(&exp.at("/metrics"));
    assert_eq!(status, 200, "{metrics}");
    wait_for(LIMIT, "3 more polls while the connections are held", || {
        (polls() >= before + 3).then_some(())
    });
    let metrics = mcp_testkit::http_get_ok(&exp.at("/metrics"));
    let cap = sample(&metrics, "mcp_tap_max_connections{tap=\"edge\"}").expect("the cap");
    let open = sample(&metrics, "mcp_tap_connections{tap=\"edge\"}").expect("open ones");
    let full = sample(&metrics, "mcp_tap_listener_full_total{tap=\"edge\"}").expect("full");
    let fds = open_fds(exp.pid());
    eprintln!(
        "1,100 idle connections under ulimit -n 1024: tap cap {cap}, held {open}, listener full {full} times, exporter fds {fds}"
    );
    // A quarter of 1,024 descriptors: 32 kept upstream, 112 clients.
    assert_eq!(cap, 112.0);
    assert!(open <= cap, "{open} open past the cap {cap}");
    assert!(full >= 1.0, "the cap was met");
    assert!(fds < 1024 / 2, "{fds} descriptors open");
    let (_, target) = http_get(&exp.at("/api/targets/healthy"));
    assert!(!target.contains("Too many open files"), "{target}");
    let target: Value = serde_json::from_str(&target).expect("JSON");
    assert_ne!(target["verdict"]["status"], "down", "{target}");
    drop(held);
    // Freed: the tap serves again.
    let mut client = RawConn::connect(tap_addr);
    let answer = client
        .send(
            "POST",
            "/mcp",
            &[JSON_BODY, MCP_ACCEPT],
            Some(br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#),
        )
        .answer();
    assert!(answer.status < 500, "{}", answer.text());
    let peak = proc_status_kib(exp.pid(), "VmHWM:");
    eprintln!("serve peaked at {peak} KiB");
    assert!(
        peak <= LOW_FD_PEAK_RSS_BUDGET_KIB,
        "serve peaked at {peak} KiB, budget {LOW_FD_PEAK_RSS_BUDGET_KIB} KiB"
    );
}
