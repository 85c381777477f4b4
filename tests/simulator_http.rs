//! The simulator over HTTP, seen from the wire: Streamable HTTP (JSON and
//! SSE answers, sessions, auth, 2026-07-28 headers), legacy HTTP+SSE, and
//! many virtual servers from one scenarios file, driven with raw JSON-RPC
//! from a plain HTTP client. Every child is killed when its guard drops.

use mcp_listing::Kind;
use mcp_testkit::simulator::{follow, http_scenario, numbered, sse_events, SessionClient, WAIT};
use mcp_testkit::Proc;
use serde_json::{json, Value};

/// A client of the simulator's endpoint at `path`, initialized.
async fn initialized(sim: &Proc, path: &str) -> SessionClient {
    let mut c = SessionClient::new(sim.at(path));
    c.init().await;
    c
}

/// `mcp-exporter simulate ARGS` serving HTTP, once it listens.
fn http_sim(args: &[&str]) -> Proc {
    let mut all = vec!["simulate"];
    all.extend_from_slice(args);
    Proc::start(&all)
}

#[tokio::test]
async fn http_json_sessions_and_healthy_walk() {
    let sim = http_scenario("healthy", &[]);
    let url = format!("{}/mcp", sim.url);
    let mut c = SessionClient::new(url.clone());

    // Before initialize: server/discover is an unknown method.
    let (status, _, v) = c.call("server/discover", json!({})).await;
    assert_eq!((status, v["error"]["code"].as_i64()), (400, Some(-32601)));

    c.init().await;
    let w = c.walk(Kind::Tools, 50).await;
    assert_eq!(w.sizes(), [5, 5, 5, 5]);
    assert_eq!(w.all(), numbered("tool-", 1..=20));
    let (status, _, v) = c.call("server/discover", json!({})).await;
    assert_eq!((status, v["error"]["code"].as_i64()), (200, Some(-32601)));

    // GET is the standing notification stream: it needs a session.
    let get = reqwest::get(&url).await.unwrap();
    assert_eq!(get.status().as_u16(), 400);

    let mut stranger = SessionClient::new(url.clone());
    stranger.session = Some("not-a-session".into());
    let (status, _, _) = stranger.call("tools/list", json!({})).await;
    assert_eq!(status, 404);

    let http = reqwest::Client::new();
    let del = http
        .delete(&url)
        .header("mcp-session-id", c.session.clone().unwrap())
        .send()
        .await
        .unwrap();
    assert_eq!(del.status().as_u16(), 200);
    let (status, _, _) = c.call("tools/list", json!({})).await;
    assert_eq!(status, 404, "deleted session is gone");
}

#[tokio::test]
async fn http_json_notifications_go_to_the_standing_get_stream() {
    use futures_util::StreamExt;
    let sim = http_scenario("shrink", &["--notify", "--kinds", "tools"]);
    let url = format!("{}/mcp", sim.url);
    let mut c = initialized(&sim, "/mcp").await;
    let resp = c
        .http
        .get(&url)
        .header("accept", "text/event-stream")
        .header("mcp-session-id", c.session.clone().unwrap())
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status().as_u16(), 200);
    let mut stream = resp.bytes_stream();

    assert_eq!(c.walk(Kind::Tools, 50).await.unique(), 20);
    let second = c.walk(Kind::Tools, 50).await;
    assert_eq!(second.unique(), 19);
    assert!(
        second.notes.is_empty(),
        "JSON answers carry no notifications"
    );

    let mut text = String::new();
    while !text.contains("list_changed") {
        let chunk = tokio::time::timeout(WAIT, stream.next())
            .await
            .expect("notification in time")
            .expect("stream open")
            .unwrap();
        text.push_str(std::str::from_utf8(&chunk).unwrap());
    }
    let events = sse_events(&text);
    assert_eq!(events[0].1, "", "priming event first");
    let note: Value = serde_json::from_str(&events[1].1).unwrap();
    assert_eq!(note["method"], "notifications/tools/list_changed");
}

#[tokio::test]
async fn http_sse_answers_prime_first_and_carry_notifications() {
    let sim = http_scenario("list-changed-storm", &["--response", "sse"]);
    let mut c = initialized(&sim, "/mcp").await;
    let w = c.walk(Kind::Tools, 50).await;
    assert_eq!(w.sizes(), [5, 5, 5, 5]);
    assert_eq!(w.notes.len(), 4);
    assert_eq!(w.notes[0]["method"], "notifications/tools/list_changed");

    // The raw stream: priming event (id, empty data), then the message.
    let resp = c
        .post(&json!({"jsonrpc": "2.0", "id": 99, "method": "ping"}), &[])
        .await;
    assert_eq!(resp.headers()["content-type"], "text/event-stream");
    let text = resp.text().await.unwrap();
    assert!(text.starts_with("id: "), "{text}");
    let events = sse_events(&text);
    assert_eq!(events.len(), 2);
    assert_eq!(events[0].1, "");
    assert_eq!(events[1].0, "message");
}

#[tokio::test]
async fn http_faults_drip_oversize_crash() {
    // Drip: page 2 arrives in many small chunks and still parses.
    let sim = http_scenario("drip", &["--delay-ms", "5", "--chunk-bytes", "64"]);
    let mut c = initialized(&sim, "/mcp").await;
    let (_, _, p1) = c.call("tools/list", json!({})).await;
    c.next_id += 1;
    let body = json!({"jsonrpc": "2.0", "id": c.next_id, "method": "tools/list",
                      "params": {"cursor": p1["result"]["nextCursor"].clone()}});
    let resp = c.post(&body, &[]).await;
    use futures_util::StreamExt;
    let mut chunks = 0;
    let mut bytes = Vec::new();
    let mut stream = resp.bytes_stream();
    while let Some(chunk) = stream.next().await {
        chunks += 1;
        bytes.extend_from_slice(&chunk.unwrap());
    }
    assert!(chunks > 3, "dripped in {chunks} chunk(s)");
    let page: Value = serde_json::from_slice(&bytes).unwrap();
    assert_eq!(page["result"]["tools"][0]["name"], "tool-006");

    // Oversize: page 2 is at least --size-mib.
    let sim = http_scenario("oversize", &["--size-mib", "1"]);
    let mut c = initialized(&sim, "/mcp").await;
    let (_, _, p1) = c.call("tools/list", json!({})).await;
    assert!(p1.to_string().len() < 10_000);
    let (_, _, p2) = c
        .call(
            "tools/list",
            json!({"cursor": p1["result"]["nextCursor"].clone()}),
        )
        .await;
    assert!(p2.to_string().len() >= 1024 * 1024);

    // Crash: the connection is cut during page 2.
    let sim = http_scenario("crash", &[]);
    let mut c = initialized(&sim, "/mcp").await;
    let (_, _, p1) = c.call("tools/list", json!({})).await;
    let body = json!({"jsonrpc": "2.0", "id": 50, "method": "tools/list",
                      "params": {"cursor": p1["result"]["nextCursor"].clone()}});
    let sent = c
        .http
        .post(&c.url)
        .header("mcp-session-id", c.session.clone().unwrap())
        .json(&body)
        .send()
        .await;
    let failed = match sent {
        Err(_) => true,
        Ok(resp) => resp.bytes().await.is_err(),
    };
    assert!(failed, "a crash must not look like a clean answer");
}

#[tokio::test]
async fn http_session_expiry_and_auth() {
    let sim = http_scenario("session-expiry", &["--expire-after", "2"]);
    let mut c = initialized(&sim, "/mcp").await;
    let w = c.walk(Kind::Tools, 50).await;
    assert_eq!(w.sizes(), [5, 5]);
    let (status, _, _) = c.call("tools/list", json!({})).await;
    assert_eq!(status, 404, "session expired after 2 list requests");
    c.session = None;
    c.init().await;
    let (status, _, v) = c.call("tools/list", json!({})).await;
    assert_eq!(status, 200, "{v}");

    let sim = Proc::start_with_env(
        &[
            "simulate",
            "--scenario",
            "auth",
            "--transport",
            "http",
            "--token-env",
            "SIM_TOKEN",
        ],
        &[("SIM_TOKEN", "s3cret")],
    );
    let mut c = SessionClient::new(sim.at("/mcp"));
    let initialize = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}});
    let resp = c.post(&initialize, &[]).await;
    assert_eq!(resp.status().as_u16(), 401);
    let challenge = resp.headers()["www-authenticate"].to_str().unwrap();
    assert!(challenge.starts_with("Bearer ") && challenge.contains("resource_metadata="));
    c.token = Some("wrong".into());
    let resp = c.post(&initialize, &[]).await;
    assert_eq!(resp.status().as_u16(), 401);
    c.token = Some("s3cret".into());
    c.init().await;
    assert_eq!(c.walk(Kind::Tools, 50).await.unique(), 20);
}

#[tokio::test]
async fn http_protocol_2026_checks_headers_and_meta() {
    let sim = http_scenario("protocol-2026", &[]);
    let mut c = SessionClient::new(format!("{}/mcp", sim.url));
    let meta = json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                      "io.modelcontextprotocol/clientCapabilities": {}});
    let modern = |m: &'static str| [("mcp-method", m), ("mcp-protocol-version", "2026-07-28")];

    let (status, _, v) = c
        .call("initialize", json!({"protocolVersion": "2025-11-25"}))
        .await;
    assert_eq!((status, v["error"]["code"].as_i64()), (400, Some(-32022)));

    let (status, _, v) = c
        .call_with(
            "server/discover",
            json!({"_meta": meta}),
            &modern("server/discover"),
        )
        .await;
    assert_eq!(status, 200, "{v}");
    assert_eq!(v["result"]["supportedVersions"], json!(["2026-07-28"]));
    assert!(c.session.is_none(), "no session ids in 2026-07-28");

    let (status, _, v) = c.call("tools/list", json!({"_meta": meta})).await;
    assert_eq!(
        (status, v["error"]["code"].as_i64()),
        (400, Some(-32020)),
        "no Mcp-Method"
    );
    let (status, _, v) = c
        .call_with(
            "tools/list",
            json!({"_meta": meta}),
            &modern("prompts/list"),
        )
        .await;
    assert_eq!((status, v["error"]["code"].as_i64()), (400, Some(-32020)));
    let (status, _, v) = c
        .call_with("tools/list", json!({}), &modern("tools/list"))
        .await;
    assert_eq!(
        (status, v["error"]["code"].as_i64()),
        (400, Some(-32602)),
        "no _meta"
    );

    let got = follow(Kind::Tools, async |cursor| {
        let mut params = json!({"_meta": meta});
        if let Some(cursor) = cursor {
            params["cursor"] = json!(cursor);
        }
        let (status, _, v) = c
            .call_with("tools/list", params, &modern("tools/list"))
            .await;
        assert_eq!(status, 200, "{v}");
        v
    })
    .await;
    assert_eq!(got, numbered("tool-", 1..=20));
}

#[tokio::test]
async fn legacy_sse_transport_answers_on_the_stream() {
    use futures_util::StreamExt;
    let sim = http_sim(&["--scenario", "healthy", "--transport", "sse"]);
    let http = reqwest::Client::new();
    let resp = http
        .get(format!("{}/sse", sim.url))
        .header("accept", "text/event-stream")
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status().as_u16(), 200);
    let mut stream = resp.bytes_stream();
    let mut buf = String::new();
    let mut next_event = async || -> (String, String) {
        loop {
            if let Some(end) = buf.find("\n\n") {
                let block: String = buf.drain(..end + 2).collect();
                return sse_events(&block).pop().unwrap();
            }
            let chunk = tokio::time::timeout(WAIT, stream.next())
                .await
                .expect("event in time")
                .expect("stream open")
                .unwrap();
            buf.push_str(std::str::from_utf8(&chunk).unwrap());
        }
    };
    let (event, endpoint) = next_event().await;
    assert_eq!(event, "endpoint");
    assert!(endpoint.starts_with("/messages?sessionId="), "{endpoint}");
    let post_url = format!("{}{}", sim.url, endpoint);

    let post = |body: Value| {
        let http = http.clone();
        let url = post_url.clone();
        async move {
            http.post(url)
                .json(&body)
                .send()
                .await
                .unwrap()
                .status()
                .as_u16()
        }
    };
    assert_eq!(
        post(json!({"jsonrpc": "2.0", "id": 1, "method": "initialize",
                    "params": {"protocolVersion": "2024-11-05"}}))
        .await,
        202
    );
    let (_, init) = next_event().await;
    let init: Value = serde_json::from_str(&init).unwrap();
    assert_eq!(init["result"]["protocolVersion"], "2024-11-05");
    assert_eq!(
        post(json!({"jsonrpc": "2.0", "method": "notifications/initialized"})).await,
        202
    );

    let mut id = 1;
    let got = follow(Kind::Prompts, async |cursor| {
        id += 1;
        let params = match cursor {
            Some(c) => json!({"cursor": c}),
            None => json!({}),
        };
        let request =
            json!({"jsonrpc": "2.0", "id": id, "method": "prompts/list", "params": params});
        assert_eq!(post(request).await, 202);
        let (event, data) = next_event().await;
        assert_eq!(event, "message");
        let v: Value = serde_json::from_str(&data).unwrap();
        assert_eq!(v["id"], id);
        v
    })
    .await;
    assert_eq!(got, numbered("prompt-", 1..=20));
}

#[tokio::test]
async fn scenarios_file_serves_many_virtual_servers() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("scale.yaml");
    std::fs::write(
        &path,
        "defaults:\n  items: 8\n  page_size: 3\nservers:\n  - name: fleet\n    count: 300\n    scenario: healthy\n  - name: broken\n    scenario: truncate\n    response: sse\n",
    )
    .unwrap();
    let sim = http_sim(&["--transport", "http", "--scenarios", path.to_str().unwrap()]);
    for name in ["fleet-0001", "fleet-0150", "fleet-0300"] {
        let mut c = initialized(&sim, &format!("/mcp/{name}")).await;
        let w = c.walk(Kind::Resources, 50).await;
        assert_eq!(w.sizes(), [3, 3, 2], "{name}");
    }
    let mut c = initialized(&sim, "/mcp/broken").await;
    assert_eq!(c.walk(Kind::Tools, 50).await.sizes(), [3, 3]);

    // A session belongs to its server.
    let mut other = SessionClient::new(format!("{}/mcp/fleet-0002", sim.url));
    other.session = c.session.clone();
    let (status, _, _) = other.call("tools/list", json!({})).await;
    assert_eq!(status, 404);
    let resp = reqwest::Client::new()
        .post(format!("{}/mcp/nope", sim.url))
        .json(&json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}}))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status().as_u16(), 404);
}
