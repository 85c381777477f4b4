//! The tap against upstreams and clients that misbehave: each case gets
//! exactly what the upstream sent or the error any proxy gives, is
//! counted, and never makes the tap contact anything but its upstream.
//! Upstreams here are scripted byte for byte over loopback sockets, or the
//! simulator.

use mcp_tap::{
    CopyEnd, Direction, ExchangeEnd, NotObserved, RequestMethod, TapEvent, TapSettings,
    UpstreamFailure,
};
use mcp_testkit::tap::{write_answer, RawConn, RunningTap, Scripted, Seen};
use mcp_testkit::ClosedPort;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::Duration;

fn tap_for(upstream: &str) -> RunningTap {
    RunningTap::start(TapSettings::new(upstream.parse().expect("upstream URL")))
}

fn json_ok(body: &'static [u8]) -> impl Fn(&Seen, &mut TcpStream) -> bool + Send + Sync {
    move |_, out| {
        write_answer(out, "200 OK", &[("Content-Type", "application/json")], body);
        true
    }
}

fn closed_with(tap: &RunningTap, end: ExchangeEnd) -> bool {
    tap.recorder
        .events()
        .iter()
        .any(|e| matches!(e, TapEvent::Closed { end: got, .. } if *got == end))
}

#[test]
fn an_upstream_that_closes_mid_answer_cuts_the_clients_answer_and_is_counted() {
    let upstream = Scripted::start(|_, out| {
        let _ = out.write_all(
            b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{\"jsonrpc\":\"2.0\",\"id\":1,",
        );
        false
    });
    let tap = tap_for(&upstream.url("/mcp"));
    let mut client = RawConn::connect(tap.addr);
    client.send("POST", "/mcp", &[], Some(b"{}"));
    let (answer, cut) = client.answer_maybe_cut();
    assert_eq!(answer.status, 200);
    assert_eq!(answer.body, b"{\"jsonrpc\":\"2.0\",\"id\":1,");
    assert!(cut.is_some(), "the client sees the answer cut short");
    tap.recorder.wait("the exchange closed", |_| {
        closed_with(&tap, ExchangeEnd::UpstreamFailed(UpstreamFailure::Reset))
    });
    assert_eq!(tap.stats.upstream_errors(UpstreamFailure::Reset), 1);
    assert_eq!(tap.stats.not_observed_count(NotObserved::Truncated), 1);
}

#[test]
fn a_stream_reaches_the_client_as_it_arrives() {
    // The second event is written only once the client has the first: a
    // tap that held the stream would never let this test finish.
    let (go, wait) = mpsc::channel::<()>();
    let wait = Mutex::new(wait);
    let upstream = Scripted::start(move |_, out| {
        let _ = out.write_all(
            b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n",
        );
        let _ = out.write_all(b"d\r\ndata: first\n\n\r\n");
        let _ = wait.lock().unwrap().recv_timeout(Duration::from_secs(60));
        let _ = out.write_all(b"e\r\ndata: second\n\n\r\n0\r\n\r\n");
        true
    });
    let tap = tap_for(&upstream.url("/mcp"));
    let mut client = RawConn::connect(tap.addr);
    client.send(
        "POST",
        "/mcp",
        &[("Accept", "text/event-stream")],
        Some(b"{}"),
    );
    let (status, _) = client.head();
    assert_eq!(status, 200);
    assert_eq!(client.next_chunk(), b"data: first\n\n");
    go.send(()).unwrap();
    assert_eq!(client.next_chunk(), b"data: second\n\n");
    assert!(client.next_chunk().is_empty(), "the end of the stream");
    tap.recorder.wait("two events copied", |_| {
        tap.recorder.texts(Direction::FromUpstream) == ["data: first\n", "data: second\n"]
    });
}

#[test]
fn no_upstream_is_a_502_and_a_silent_one_a_504() {
    let closed = ClosedPort::new();
    let tap = tap_for(&closed.url("/mcp"));
    let answer = RawConn::connect(tap.addr)
        .send("POST", "/mcp", &[], Some(b"{}"))
        .answer();
    assert_eq!(answer.status, 502, "{}", answer.text());
    assert_eq!(tap.stats.upstream_errors(UpstreamFailure::Connect), 1);
    tap.recorder.wait("closed as a connect failure", |_| {
        closed_with(&tap, ExchangeEnd::UpstreamFailed(UpstreamFailure::Connect))
    });

    let silent = Scripted::start(|_, _| {
        std::thread::sleep(Duration::from_secs(30));
        false
    });
    let mut settings = TapSettings::new(silent.url("/mcp").parse().unwrap());
    settings.limits.upstream_head_timeout = Duration::from_millis(300);
    let tap = RunningTap::start(settings);
    let answer = RawConn::connect(tap.addr)
        .send("POST", "/mcp", &[], Some(b"{}"))
        .answer();
    assert_eq!(answer.status, 504, "{}", answer.text());
    assert_eq!(tap.stats.upstream_errors(UpstreamFailure::Timeout), 1);

    // TLS spoken to a plain HTTP server: the handshake fails.
    let plain = Scripted::start(json_ok(b"{}"));
    let tap = tap_for(&format!("https://{}/mcp", plain.addr));
    let answer = RawConn::connect(tap.addr)
        .send("POST", "/mcp", &[], Some(b"{}"))
        .answer();
    assert_eq!(answer.status, 502);
    assert_eq!(tap.stats.upstream_errors(UpstreamFailure::Tls), 1);
}

#[test]
fn a_client_that_goes_away_cancels_its_upstream_request() {
    // The upstream never answers; it reads on until its connection ends.
    let (ended, upstream_saw_end) = mpsc::channel::<()>();
    let ended = Mutex::new(ended);
    let upstream = Scripted::start(move |_, out| {
        let mut byte = [0u8; 1];
        if matches!(out.read(&mut byte), Ok(0) | Err(_)) {
            let _ = ended.lock().unwrap().send(());
        }
        false
    });
    let tap = tap_for(&upstream.url("/mcp"));
    let mut client = RawConn::connect(tap.addr);
    client.send("POST", "/mcp", &[], Some(b"{}"));
    mcp_testkit::wait_for(Duration::from_secs(30), "the request upstream", || {
        (!upstream.seen().is_empty()).then_some(())
    });
    drop(client);
    upstream_saw_end
        .recv_timeout(Duration::from_secs(30))
        .expect("the upstream connection is closed once the client is gone");
    tap.recorder.wait("closed as gone", |_| {
        closed_with(&tap, ExchangeEnd::ClientGone)
    });
}

#[test]
fn the_tap_is_never_an_open_proxy() {
    // Anything a request says about another host: only the upstream is
    // ever contacted, with its own Host.
    let elsewhere = Scripted::start(json_ok(b"{\"elsewhere\":true}"));
    let upstream = Scripted::start(json_ok(b"{\"upstream\":true}"));
    let tap = tap_for(&upstream.url("/mcp"));
    let other = elsewhere.addr.to_string();
    let mut client = RawConn::connect(tap.addr);
    let absolute = format!("GET http://{other}/x HTTP/1.1\r\nHost: {other}\r\n\r\n");
    client.send_raw(absolute.as_bytes());
    assert_eq!(client.answer().text(), "{\"upstream\":true}");
    for path in [format!("//{other}/x"), format!("/http://{other}/x")] {
        let a = client
            .send("GET", &path, &[("Host", &other)], None)
            .answer();
        assert_eq!(a.text(), "{\"upstream\":true}");
    }
    client.send_raw(format!("CONNECT {other} HTTP/1.1\r\nHost: {other}\r\n\r\n").as_bytes());
    assert_eq!(client.answer().status, 405);
    let seen = upstream.seen();
    assert_eq!(seen.len(), 3);
    let upstream_host = upstream.addr.to_string();
    for request in &seen {
        assert_eq!(request.header("host"), Some(upstream_host.as_str()));
    }
    assert_eq!(seen[0].request_line, "GET /x HTTP/1.1");
    assert_eq!(seen[1].request_line, format!("GET //{other}/x HTTP/1.1"));
    assert_eq!(
        elsewhere
            .connections
            .load(std::sync::atomic::Ordering::SeqCst),
        0
    );
}

#[test]
fn a_legacy_endpoint_on_the_upstream_is_rewritten_and_one_elsewhere_is_not() {
    let upstream_addr = Arc::new(Mutex::new(String::new()));
    let named = upstream_addr.clone();
    let upstream = Scripted::start(move |seen, out| {
        let host = named.lock().unwrap().clone();
        let endpoint = if seen.request_line.contains("elsewhere") {
            "http://elsewhere.test/messages?sessionId=e1".to_string()
        } else {
            format!("http://{host}/messages?sessionId=s1")
        };
        let event = format!("event: endpoint\r\ndata: {endpoint}\r\n\r\n");
        let _ = out.write_all(
            format!(
                "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n{:x}\r\n{event}\r\n",
                event.len()
            )
            .as_bytes(),
        );
        std::thread::sleep(Duration::from_secs(30));
        false
    });
    *upstream_addr.lock().unwrap() = upstream.addr.to_string();
    let tap = tap_for(&upstream.url("/sse"));
    let mut stream = RawConn::connect(tap.addr);
    stream.send("GET", "/sse", &[("Accept", "text/event-stream")], None);
    assert_eq!(stream.head().0, 200);
    let event = String::from_utf8(stream.next_chunk()).unwrap();
    assert_eq!(
        event,
        format!(
            "event: endpoint\r\ndata: http://{}/messages?sessionId=s1\r\n\r\n",
            tap.addr
        )
    );
    let mut other = RawConn::connect(tap.addr);
    other.send(
        "GET",
        "/sse?elsewhere",
        &[("Accept", "text/event-stream")],
        None,
    );
    assert_eq!(other.head().0, 200);
    let event = String::from_utf8(other.next_chunk()).unwrap();
    assert_eq!(
        event,
        "event: endpoint\r\ndata: http://elsewhere.test/messages?sessionId=e1\r\n\r\n"
    );
    let sessions: Vec<String> = tap
        .recorder
        .events()
        .iter()
        .filter_map(|e| match e {
            TapEvent::LegacySession { session, .. } => Some(session.to_str().unwrap().to_string()),
            _ => None,
        })
        .collect();
    assert_eq!(sessions, ["s1"]);
    assert_eq!(tap.stats.open_streams(), 2);
}

#[test]
fn a_session_id_reused_by_another_client_is_forwarded_for_each() {
    let upstream = Scripted::start(|seen, out| {
        let body = format!(
            "{{\"for\":\"{}\"}}",
            seen.header("user-agent").unwrap_or("")
        );
        write_answer(
            out,
            "200 OK",
            &[("Content-Type", "application/json")],
            body.as_bytes(),
        );
        true
    });
    let tap = tap_for(&upstream.url("/mcp"));
    for agent in ["first/1", "second/2"] {
        let a = RawConn::connect(tap.addr)
            .send(
                "POST",
                "/mcp",
                &[("Mcp-Session-Id", "shared"), ("User-Agent", agent)],
                Some(b"{}"),
            )
            .answer();
        assert_eq!(a.text(), format!("{{\"for\":\"{agent}\"}}"));
    }
    let heads: Vec<_> = tap
        .recorder
        .events()
        .into_iter()
        .filter_map(|e| match e {
            TapEvent::Opened { head, .. } => Some(head),
            _ => None,
        })
        .collect();
    assert_eq!(heads.len(), 2);
    assert!(heads
        .iter()
        .all(|h| h.session.as_ref().unwrap() == "shared"));
    assert_ne!(heads[0].user_agent, heads[1].user_agent);
}

#[test]
fn a_chunked_request_on_a_kept_alive_connection_arrives_whole() {
    let upstream = Scripted::start(json_ok(b"{\"ok\":1}"));
    let tap = tap_for(&upstream.url("/mcp"));
    let mut client = RawConn::connect(tap.addr);
    for _ in 0..3 {
        client.send_raw(
            b"POST /mcp HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n5\r\n{\"a\":\r\n3\r\n 1}\r\n0\r\n\r\n",
        );
        assert_eq!(client.answer().text(), "{\"ok\":1}");
    }
    let seen = upstream.seen();
    assert_eq!(seen.len(), 3);
    assert!(seen.iter().all(|s| s.body == b"{\"a\": 1}"));
    assert_eq!(tap.stats.requests(RequestMethod::Post), 3);
    tap.recorder.wait("three requests copied", |_| {
        tap.recorder.texts(Direction::FromClient) == ["{\"a\": 1}"; 3]
    });
}

#[test]
fn pipelined_requests_are_answered_in_turn_and_http_1_0_gets_no_chunks() {
    let upstream = Scripted::start(|seen, out| {
        let body = seen
            .request_line
            .split(' ')
            .nth(1)
            .unwrap_or("")
            .to_string();
        let _ = out.write_all(
            format!(
                "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nTrailer: X-Done\r\n\r\n{:x}\r\n{body}\r\n0\r\nX-Done: yes\r\n\r\n",
                body.len()
            )
            .as_bytes(),
        );
        true
    });
    let tap = tap_for(&upstream.url("/mcp"));
    let mut client = RawConn::connect(tap.addr);
    client.send_raw(b"GET /one HTTP/1.1\r\nHost: t\r\n\r\nGET /two HTTP/1.1\r\nHost: t\r\n\r\n");
    assert_eq!(client.answer().text(), "/one");
    assert_eq!(client.answer().text(), "/two");
    let mut old = RawConn::connect(tap.addr);
    old.send_raw(b"GET /old HTTP/1.0\r\nHost: t\r\n\r\n");
    let answer = old.answer();
    assert_eq!(answer.header("transfer-encoding"), None);
    assert_eq!(answer.header("connection"), Some("close"));
    assert_eq!(answer.text(), "/old");
    assert!(old.closed());
}

#[test]
fn an_observer_that_refuses_loses_its_copy_never_the_clients_bytes() {
    let upstream = Scripted::start(json_ok(b"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}"));
    let tap = tap_for(&upstream.url("/mcp"));
    tap.recorder.refuse_chunks(true);
    let a = RawConn::connect(tap.addr)
        .send("POST", "/mcp", &[], Some(b"{\"id\":1}"))
        .answer();
    assert_eq!(a.text(), "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}");
    tap.recorder.wait("both messages ended", |_| {
        tap.recorder.messages().len() == 2
    });
    assert!(tap
        .recorder
        .messages()
        .iter()
        .all(|m| m.copy == CopyEnd::NotObserved(NotObserved::Dropped) && m.bytes.is_empty()));
    assert_eq!(tap.stats.not_observed_count(NotObserved::Dropped), 2);
}

#[test]
fn a_request_head_past_its_bound_is_refused() {
    let upstream = Scripted::start(json_ok(b"{}"));
    let mut settings = TapSettings::new(upstream.url("/mcp").parse().unwrap());
    settings.limits.max_head_bytes = 16 * 1024;
    let tap = RunningTap::start(settings);
    let big = "x".repeat(32 * 1024);
    let answer = RawConn::connect(tap.addr)
        .send("GET", "/mcp", &[("X-Big", &big)], None)
        .answer();
    assert_eq!(answer.status, 431);
    assert!(upstream.seen().is_empty());
}

/// A certificate for `localhost` and 127.0.0.1: (certificate PEM, key PEM).
fn certificate() -> (String, String) {
    let made = rcgen::generate_simple_self_signed(vec!["localhost".into(), "127.0.0.1".into()])
        .expect("a self-signed certificate");
    (made.cert.pem(), made.signing_key.serialize_pem())
}

fn server_config(cert: &str, key: &str) -> Arc<rustls::ServerConfig> {
    use rustls::pki_types::pem::PemObject;
    use rustls::pki_types::{CertificateDer, PrivateKeyDer};
    let certs = vec![CertificateDer::from_pem_slice(cert.as_bytes()).unwrap()];
    let key = PrivateKeyDer::from_pem_slice(key.as_bytes()).unwrap();
    let provider = Arc::new(rustls::crypto::aws_lc_rs::default_provider());
    Arc::new(
        rustls::ServerConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .unwrap()
            .with_no_client_auth()
            .with_single_cert(certs, key)
            .unwrap(),
    )
}

/// An HTTPS upstream answering every request with `body`, on `runtime`.
fn tls_upstream(runtime: &tokio::runtime::Runtime, config: Arc<rustls::ServerConfig>) -> u16 {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let listener = runtime
        .block_on(tokio::net::TcpListener::bind("127.0.0.1:0"))
        .unwrap();
    let port = listener.local_addr().unwrap().port();
    let acceptor = tokio_rustls::TlsAcceptor::from(config);
    runtime.spawn(async move {
        while let Ok((tcp, _)) = listener.accept().await {
            let acceptor = acceptor.clone();
            tokio::spawn(async move {
                let Ok(mut tls) = acceptor.accept(tcp).await else { return };
                let mut head = Vec::new();
                let mut byte = [0u8; 1];
                while !head.ends_with(b"\r\n\r\n") {
                    if tls.read(&mut byte).await.unwrap_or(0) == 0 {
                        return;
                    }
                    head.push(byte[0]);
                }
                let body = b"{\"over\":\"tls\"}";
                let answer = format!(
                    "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                    body.len()
                );
                let _ = tls.write_all(answer.as_bytes()).await;
                let _ = tls.write_all(body).await;
                let _ = tls.shutdown().await;
            });
        }
    });
    port
}

#[test]
fn tls_on_the_listener_and_to_the_upstream() {
    let (cert, key) = certificate();
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let port = tls_upstream(&runtime, server_config(&cert, &key));
    let dir = tempfile::tempdir().unwrap();
    let ca = dir.path().join("ca.pem");
    std::fs::write(&ca, &cert).unwrap();
    let mut settings = TapSettings::new(format!("https://localhost:{port}/mcp").parse().unwrap());
    settings.upstream_tls.ca_file = Some(ca);
    let listener_tls: Arc<dyn mcp_tap::ListenerTls> = Arc::new(server_config(&cert, &key));
    settings.listener_tls = Some(listener_tls);
    let tap = RunningTap::start(settings);
    let client = reqwest::Client::builder()
        .tls_certs_only([reqwest::Certificate::from_pem(cert.as_bytes()).unwrap()])
        .build()
        .unwrap();
    let url = format!("https://localhost:{}/mcp", tap.addr.port());
    let text = runtime.block_on(async {
        let answer = client
            .post(&url)
            .body("{}")
            .send()
            .await
            .expect("an answer over TLS");
        assert_eq!(answer.status(), 200);
        answer.text().await.unwrap()
    });
    assert_eq!(text, "{\"over\":\"tls\"}");
    // The upstream's certificate is checked: without the CA, no answer.
    let strict = tap_for(&format!("https://localhost:{port}/mcp"));
    let answer = RawConn::connect(strict.addr)
        .send("POST", "/mcp", &[], Some(b"{}"))
        .answer();
    assert_eq!(answer.status, 502);
    assert_eq!(strict.stats.upstream_errors(UpstreamFailure::Tls), 1);
}
