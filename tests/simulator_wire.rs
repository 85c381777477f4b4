//! The simulator seen from the wire: real `mcp-exporter simulate` processes
//! driven with raw JSON-RPC over stdio, Streamable HTTP (JSON and SSE
//! answers) and legacy HTTP+SSE. Every child is killed when its guard drops.

#[path = "common/simulator.rs"]
mod simulator;

use serde_json::{json, Value};
use simulator::*;
use std::sync::mpsc;
use std::time::Duration;

// ---------------------------------------------------------------- stdio tests

#[test]
fn stdio_healthy_serves_every_kind_and_answers_like_a_legacy_server() {
    let mut sim = StdioSim::start(&["--scenario", "healthy"]);
    let init = sim.init();
    assert_eq!(init["result"]["protocolVersion"], "2025-11-25");
    assert_eq!(
        init["result"]["serverInfo"]["name"],
        "mcp-exporter-simulator"
    );
    assert_eq!(init["result"]["capabilities"]["tools"]["listChanged"], true);

    let tools = stdio_walk(&mut sim, 0, 50);
    assert_eq!(tools.sizes(), [5, 5, 5, 5]);
    assert_eq!(tools.all(), names("tool-", 1..=20));
    assert!(
        tools.cursors.last().unwrap().is_none(),
        "no nextCursor at the end"
    );
    let prompts = stdio_walk(&mut sim, 1, 50);
    assert_eq!(prompts.all(), names("prompt-", 1..=20));
    let resources = stdio_walk(&mut sim, 2, 50);
    assert_eq!(resources.all()[0], "sim://resources/001");
    assert_eq!(resources.unique(), 20);
    let templates = stdio_walk(&mut sim, 3, 50);
    assert_eq!(templates.all()[19], "sim://templates/020/{id}");

    let (_, pong) = sim.call("ping", json!({}));
    assert_eq!(pong["result"], json!({}));
    let (_, discover) = sim.call("server/discover", json!({}));
    assert_eq!(discover["error"]["code"], -32601);
    let (_, unknown) = sim.call("tools/call", json!({"name": "x"}));
    assert_eq!(unknown["error"]["code"], -32601);
    let (_, garbage) = sim.call("tools/list", json!({"cursor": "garbage"}));
    assert_eq!(garbage["error"]["code"], -32602);
    // A tools cursor is not a prompts cursor.
    let tools_cursor = tools.cursors[0].clone().unwrap();
    let (_, foreign) = sim.call("prompts/list", json!({"cursor": tools_cursor}));
    assert_eq!(foreign["error"]["code"], -32602);
}

#[test]
fn stdio_negotiates_legacy_versions_and_honours_a_forced_one() {
    let mut sim = StdioSim::start(&["--scenario", "healthy"]);
    let (_, v) = sim.call("initialize", json!({"protocolVersion": "2025-06-18"}));
    assert_eq!(v["result"]["protocolVersion"], "2025-06-18");
    let (_, v) = sim.call("initialize", json!({"protocolVersion": "1999-01-01"}));
    assert_eq!(v["result"]["protocolVersion"], "2025-11-25");
    let mut forced = StdioSim::start(&["--scenario", "healthy", "--protocol", "2024-11-05"]);
    let (_, v) = forced.call("initialize", json!({"protocolVersion": "2025-06-18"}));
    assert_eq!(v["result"]["protocolVersion"], "2024-11-05");
}

#[test]
fn stdio_pagination_scenarios_shape_the_walk_as_documented() {
    let w = run_stdio(&["--scenario", "single-page"], 0, 50);
    assert_eq!(w.sizes(), [20]);

    let w = run_stdio(&["--scenario", "truncate"], 0, 50);
    assert_eq!(w.sizes(), [5, 5, 5]);
    assert_eq!(w.all(), names("tool-", 1..=15));

    let w = run_stdio(&["--scenario", "overlap"], 0, 50);
    assert_eq!(w.sizes(), [5, 5, 5, 5, 4]);
    assert_eq!(w.unique(), 20);
    assert_eq!(
        w.pages[1][0], "tool-005",
        "page 2 repeats page 1's last item"
    );

    let w = run_stdio(&["--scenario", "repeat-cursor"], 0, 50);
    assert_eq!(w.pages.len(), 2);
    assert_eq!(w.cursors[0], w.cursors[1], "page 2 repeats page 1's cursor");
    assert_eq!(w.unique(), 10);

    let w = run_stdio(&["--scenario", "cycle"], 0, 50);
    assert_eq!(w.pages.len(), 3);
    assert_eq!(w.cursors[2], w.cursors[0], "A -> B -> A");
    assert_ne!(w.cursors[1], w.cursors[0]);
    assert_eq!(w.unique(), 15);

    let w = run_stdio(&["--scenario", "endless"], 0, 12);
    assert_eq!(w.pages.len(), 12, "still handing out cursors");
    assert_eq!(w.unique(), 20);
    assert_eq!(w.all().len(), 60);

    let w = run_stdio(&["--scenario", "blank-cursor"], 0, 50);
    assert_eq!(w.sizes(), [5]);
    assert_eq!(w.cursors[0], Some(json!("")));

    let w = run_stdio(&["--scenario", "null-cursor"], 0, 50);
    assert_eq!(w.sizes(), [5, 5, 5, 5]);
    assert_eq!(w.cursors[3], Some(Value::Null), "explicit null at the end");

    let w = run_stdio(&["--scenario", "number-cursor"], 0, 50);
    assert_eq!(w.sizes(), [5]);
    assert_eq!(w.cursors[0], Some(json!(5)));

    let w = run_stdio(&["--scenario", "missing-keys"], 0, 50);
    assert_eq!(w.sizes(), [4, 4, 4, 4]);
    assert_eq!(w.keyless, 4);
    assert!(!w.all().contains(&"tool-005".to_string()));
}

#[test]
fn stdio_faults_hit_the_configured_page_only() {
    let w = run_stdio(&["--scenario", "rpc-error", "--code", "-32000"], 0, 50);
    assert_eq!(w.sizes(), [5]);
    assert_eq!(w.error.unwrap()["code"], -32000);

    let w = run_stdio(&["--scenario", "rpc-error", "--page", "3"], 0, 50);
    assert_eq!(w.sizes(), [5, 5]);
    assert_eq!(w.error.unwrap()["code"], -32603);

    // Faults apply to --kinds only: prompts stay healthy.
    let w = run_stdio(&["--scenario", "rpc-error", "--kinds", "tools"], 1, 50);
    assert_eq!(w.sizes(), [5, 5, 5, 5]);

    // Malformed: page 2 is a line that is not JSON.
    let mut sim = StdioSim::start(&["--scenario", "malformed"]);
    sim.init();
    let (_, p1) = sim.call("tools/list", json!({}));
    let cursor = p1["result"]["nextCursor"].clone();
    sim.send("tools/list", json!({"cursor": cursor}));
    let line = sim.lines.recv_timeout(WAIT).unwrap();
    assert!(serde_json::from_str::<Value>(&line).is_err(), "{line}");

    // Wrong shape: page 2's `tools` is an object.
    let mut sim = StdioSim::start(&["--scenario", "wrong-shape"]);
    sim.init();
    let (_, p1) = sim.call("tools/list", json!({}));
    let (_, p2) = sim.call(
        "tools/list",
        json!({"cursor": p1["result"]["nextCursor"].clone()}),
    );
    assert!(p2["result"]["tools"].is_object(), "{p2}");
}

#[test]
fn stdio_stale_and_silent_restart_cursors() {
    // The first continuation is rejected once; the retried walk completes.
    let mut sim = StdioSim::start(&["--scenario", "stale-cursor"]);
    sim.init();
    let w = stdio_walk(&mut sim, 0, 50);
    assert_eq!(w.sizes(), [5]);
    assert_eq!(w.error.unwrap()["code"], -32602);
    let w = stdio_walk(&mut sim, 0, 50);
    assert_eq!(w.sizes(), [5, 5, 5, 5]);

    // Age mode: a cursor presented after --delay-ms is rejected.
    let mut sim = StdioSim::start(&["--scenario", "stale-cursor", "--delay-ms", "200"]);
    sim.init();
    let (_, p1) = sim.call("tools/list", json!({}));
    let fresh = sim.call(
        "tools/list",
        json!({"cursor": p1["result"]["nextCursor"].clone()}),
    );
    assert!(fresh.1.get("result").is_some());
    std::thread::sleep(Duration::from_millis(400));
    let (_, stale) = sim.call(
        "tools/list",
        json!({"cursor": p1["result"]["nextCursor"].clone()}),
    );
    assert_eq!(stale["error"]["code"], -32602);

    // Silent restart: page 1's cursor is unknown, so page 1 comes again.
    let w = run_stdio(&["--scenario", "silent-restart"], 0, 50);
    assert_eq!(w.sizes(), [5, 5, 5, 5, 5]);
    assert_eq!(w.pages[0], w.pages[1]);
    assert_eq!(w.unique(), 20);
    let mut sim = StdioSim::start(&["--scenario", "silent-restart"]);
    let (_, v) = sim.call("tools/list", json!({"cursor": "garbage"}));
    assert_eq!(v["result"]["tools"][0]["name"], "tool-001");
}

#[test]
fn stdio_catalogue_changes_and_notifications() {
    let mut sim = StdioSim::start(&["--scenario", "shrink"]);
    sim.init();
    assert_eq!(stdio_walk(&mut sim, 0, 50).unique(), 20);
    let second = stdio_walk(&mut sim, 0, 50);
    assert_eq!(second.unique(), 19);
    assert!(!second.all().contains(&"tool-020".to_string()));
    assert!(second.notes.is_empty(), "silent without --notify");

    let mut sim = StdioSim::start(&["--scenario", "grow", "--notify", "--change-by", "3"]);
    sim.init();
    assert_eq!(stdio_walk(&mut sim, 0, 50).unique(), 20);
    let second = stdio_walk(&mut sim, 0, 50);
    assert_eq!(second.unique(), 23);
    assert_eq!(
        second.notes,
        [json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})]
    );

    let w = run_stdio(&["--scenario", "list-changed-storm"], 1, 50);
    assert_eq!(w.sizes(), [5, 5, 5, 5]);
    assert_eq!(w.notes.len(), 4);
    assert_eq!(w.notes[0]["method"], "notifications/prompts/list_changed");
}

#[test]
fn stdio_reorder_is_deterministic_under_the_seed() {
    let order = |seed: &str| {
        let mut sim = StdioSim::start(&["--scenario", "reorder", "--seed", seed]);
        sim.init();
        let a = stdio_walk(&mut sim, 0, 50);
        let b = stdio_walk(&mut sim, 0, 50);
        assert_eq!(a.unique(), 20);
        assert_eq!(b.unique(), 20);
        assert_ne!(a.all(), b.all(), "each listing reorders");
        (a.all(), b.all())
    };
    assert_eq!(order("7"), order("7"));
    assert_ne!(order("7").0, order("8").0);

    // Healthy cursors are stable across runs with the same seed.
    let cursors = |seed: &str| run_stdio(&["--scenario", "healthy", "--seed", seed], 0, 50).cursors;
    assert_eq!(cursors("1"), cursors("1"));
    assert_ne!(cursors("1"), cursors("2"));
}

#[test]
fn stdio_hang_slow_and_crash() {
    // Hang: page 2 is never answered, but the process keeps serving.
    let mut sim = StdioSim::start(&["--scenario", "hang"]);
    sim.init();
    let (_, p1) = sim.call("tools/list", json!({}));
    let hung = sim.send(
        "tools/list",
        json!({"cursor": p1["result"]["nextCursor"].clone()}),
    );
    let (_, pong) = sim.call("ping", json!({}));
    assert_eq!(pong["result"], json!({}));
    assert!(sim.lines.recv_timeout(Duration::from_millis(300)).is_err());
    let _ = hung;

    // Slow page: a later request is answered before the slow one.
    let mut sim = StdioSim::start(&["--scenario", "slow-page", "--delay-ms", "500"]);
    sim.init();
    let (_, p1) = sim.call("tools/list", json!({}));
    let slow = sim.send(
        "tools/list",
        json!({"cursor": p1["result"]["nextCursor"].clone()}),
    );
    let ping = sim.send("ping", json!({}));
    let first: Value = serde_json::from_str(&sim.lines.recv_timeout(WAIT).unwrap()).unwrap();
    assert_eq!(first["id"], ping);
    let (_, page2) = sim.answer(slow);
    assert_eq!(page2["result"]["tools"][0]["name"], "tool-006");

    // Crash: the process exits on page 2 without answering.
    let mut sim = StdioSim::start(&["--scenario", "crash"]);
    sim.init();
    let (_, p1) = sim.call("tools/list", json!({}));
    sim.send(
        "tools/list",
        json!({"cursor": p1["result"]["nextCursor"].clone()}),
    );
    let status = sim.child.wait().unwrap();
    assert_eq!(status.code(), Some(3));
    assert!(
        sim.lines.recv_timeout(WAIT).is_err(),
        "nothing after the crash"
    );
}

#[test]
fn stdio_exits_on_stdin_eof() {
    let mut sim = StdioSim::start(&["--scenario", "healthy"]);
    sim.init();
    drop(sim.stdin.take());
    let status = sim.child.wait().unwrap();
    assert!(status.success());
}

#[test]
fn stdio_protocol_2026_is_stateless_with_blank_and_constant_cursors() {
    let meta = json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                      "io.modelcontextprotocol/clientCapabilities": {}});
    let mut sim = StdioSim::start(&["--scenario", "protocol-2026"]);
    let (_, init) = sim.call("initialize", json!({"protocolVersion": "2025-11-25"}));
    assert_eq!(init["error"]["code"], -32022);
    assert_eq!(init["error"]["data"]["supported"], json!(["2026-07-28"]));
    let (_, d) = sim.call("server/discover", json!({"_meta": meta}));
    assert_eq!(d["result"]["supportedVersions"], json!(["2026-07-28"]));
    assert_eq!(d["result"]["serverInfo"]["name"], "mcp-exporter-simulator");
    let (_, bare) = sim.call("tools/list", json!({}));
    assert_eq!(bare["error"]["code"], -32602);
    let (_, old) = sim.call(
        "tools/list",
        json!({"_meta": {"io.modelcontextprotocol/protocolVersion": "2025-11-25",
                         "io.modelcontextprotocol/clientCapabilities": {}}}),
    );
    assert_eq!(old["error"]["code"], -32022);

    // The modern walk: "" then a constant "tail" that still brings items.
    let mut cursor: Option<String> = None;
    let mut got = Vec::new();
    let mut cursors = Vec::new();
    for _ in 0..10 {
        let mut params = json!({"_meta": meta});
        if let Some(c) = &cursor {
            params["cursor"] = json!(c);
        }
        let (_, page) = sim.call("tools/list", params);
        let r = &page["result"];
        assert_eq!(r["resultType"], "complete");
        assert!(r["ttlMs"].is_u64() && r["cacheScope"].is_string());
        for t in r["tools"].as_array().unwrap() {
            got.push(t["name"].as_str().unwrap().to_string());
        }
        cursors.push(r.get("nextCursor").cloned());
        match r.get("nextCursor").and_then(Value::as_str) {
            Some(c) => cursor = Some(c.to_string()),
            None => break,
        }
    }
    assert_eq!(got, names("tool-", 1..=20));
    assert_eq!(
        cursors,
        [
            Some(json!("")),
            Some(json!("tail")),
            Some(json!("tail")),
            None
        ]
    );
}

#[tokio::test]
async fn http_json_sessions_and_healthy_walk() {
    let sim = HttpSim::start(&["--scenario", "healthy", "--transport", "http"], &[]);
    let url = format!("{}/mcp", sim.base);
    let mut c = HttpClient::new(url.clone());

    // Before initialize: server/discover is an unknown method.
    let (status, _, v) = c.call("server/discover", json!({})).await;
    assert_eq!((status, v["error"]["code"].as_i64()), (400, Some(-32601)));

    c.init().await;
    let w = c.walk(0, 50).await;
    assert_eq!(w.sizes(), [5, 5, 5, 5]);
    assert_eq!(w.all(), names("tool-", 1..=20));
    let (status, _, v) = c.call("server/discover", json!({})).await;
    assert_eq!((status, v["error"]["code"].as_i64()), (200, Some(-32601)));

    // GET is the standing notification stream: it needs a session.
    let get = reqwest::get(&url).await.unwrap();
    assert_eq!(get.status().as_u16(), 400);

    let mut stranger = HttpClient::new(url.clone());
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
    let sim = HttpSim::start(
        &[
            "--scenario",
            "shrink",
            "--notify",
            "--transport",
            "http",
            "--kinds",
            "tools",
        ],
        &[],
    );
    let url = format!("{}/mcp", sim.base);
    let mut c = HttpClient::new(url.clone());
    c.init().await;
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

    assert_eq!(c.walk(0, 50).await.unique(), 20);
    let second = c.walk(0, 50).await;
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
    let sim = HttpSim::start(
        &[
            "--scenario",
            "list-changed-storm",
            "--transport",
            "http",
            "--response",
            "sse",
        ],
        &[],
    );
    let mut c = HttpClient::new(format!("{}/mcp", sim.base));
    c.init().await;
    let w = c.walk(0, 50).await;
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
    let sim = HttpSim::start(
        &[
            "--scenario",
            "drip",
            "--transport",
            "http",
            "--delay-ms",
            "5",
            "--chunk-bytes",
            "64",
        ],
        &[],
    );
    let mut c = HttpClient::new(format!("{}/mcp", sim.base));
    c.init().await;
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
    let sim = HttpSim::start(
        &[
            "--scenario",
            "oversize",
            "--transport",
            "http",
            "--size-mib",
            "1",
        ],
        &[],
    );
    let mut c = HttpClient::new(format!("{}/mcp", sim.base));
    c.init().await;
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
    let sim = HttpSim::start(&["--scenario", "crash", "--transport", "http"], &[]);
    let mut c = HttpClient::new(format!("{}/mcp", sim.base));
    c.init().await;
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
    let sim = HttpSim::start(
        &[
            "--scenario",
            "session-expiry",
            "--transport",
            "http",
            "--expire-after",
            "2",
        ],
        &[],
    );
    let mut c = HttpClient::new(format!("{}/mcp", sim.base));
    c.init().await;
    let w = c.walk(0, 50).await;
    assert_eq!(w.sizes(), [5, 5]);
    let (status, _, _) = c.call("tools/list", json!({})).await;
    assert_eq!(status, 404, "session expired after 2 list requests");
    c.session = None;
    c.init().await;
    let (status, _, v) = c.call("tools/list", json!({})).await;
    assert_eq!(status, 200, "{v}");

    let sim = HttpSim::start(
        &[
            "--scenario",
            "auth",
            "--transport",
            "http",
            "--token-env",
            "SIM_TOKEN",
        ],
        &[("SIM_TOKEN", "s3cret")],
    );
    let mut c = HttpClient::new(format!("{}/mcp", sim.base));
    let resp = c
        .post(
            &json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}}),
            &[],
        )
        .await;
    assert_eq!(resp.status().as_u16(), 401);
    let challenge = resp.headers()["www-authenticate"].to_str().unwrap();
    assert!(challenge.starts_with("Bearer ") && challenge.contains("resource_metadata="));
    c.token = Some("wrong".into());
    let resp = c
        .post(
            &json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}}),
            &[],
        )
        .await;
    assert_eq!(resp.status().as_u16(), 401);
    c.token = Some("s3cret".into());
    c.init().await;
    assert_eq!(c.walk(0, 50).await.unique(), 20);
}

#[tokio::test]
async fn http_protocol_2026_checks_headers_and_meta() {
    let sim = HttpSim::start(&["--scenario", "protocol-2026", "--transport", "http"], &[]);
    let mut c = HttpClient::new(format!("{}/mcp", sim.base));
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

    let mut got = Vec::new();
    let mut cursor: Option<String> = None;
    for _ in 0..10 {
        let mut params = json!({"_meta": meta});
        if let Some(cur) = &cursor {
            params["cursor"] = json!(cur);
        }
        let (status, _, v) = c
            .call_with("tools/list", params, &modern("tools/list"))
            .await;
        assert_eq!(status, 200, "{v}");
        for t in v["result"]["tools"].as_array().unwrap() {
            got.push(t["name"].as_str().unwrap().to_string());
        }
        match v["result"].get("nextCursor").and_then(Value::as_str) {
            Some(n) => cursor = Some(n.to_string()),
            None => break,
        }
    }
    assert_eq!(got, names("tool-", 1..=20));
}

#[tokio::test]
async fn legacy_sse_transport_answers_on_the_stream() {
    use futures_util::StreamExt;
    let sim = HttpSim::start(&["--scenario", "healthy", "--transport", "sse"], &[]);
    let http = reqwest::Client::new();
    let resp = http
        .get(format!("{}/sse", sim.base))
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
    let post_url = format!("{}{}", sim.base, endpoint);

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

    let mut got = Vec::new();
    let mut cursor: Option<String> = None;
    for id in 2..20 {
        let params = match &cursor {
            Some(c) => json!({"cursor": c}),
            None => json!({}),
        };
        assert_eq!(
            post(json!({"jsonrpc": "2.0", "id": id, "method": "prompts/list", "params": params}))
                .await,
            202
        );
        let (event, data) = next_event().await;
        assert_eq!(event, "message");
        let v: Value = serde_json::from_str(&data).unwrap();
        assert_eq!(v["id"], id);
        for p in v["result"]["prompts"].as_array().unwrap() {
            got.push(p["name"].as_str().unwrap().to_string());
        }
        match v["result"].get("nextCursor").and_then(Value::as_str) {
            Some(n) => cursor = Some(n.to_string()),
            None => break,
        }
    }
    assert_eq!(got, names("prompt-", 1..=20));
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
    let sim = HttpSim::start(
        &["--transport", "http", "--scenarios", path.to_str().unwrap()],
        &[],
    );
    for name in ["fleet-0001", "fleet-0150", "fleet-0300"] {
        let mut c = HttpClient::new(format!("{}/mcp/{name}", sim.base));
        c.init().await;
        let w = c.walk(2, 50).await;
        assert_eq!(w.sizes(), [3, 3, 2], "{name}");
    }
    let mut c = HttpClient::new(format!("{}/mcp/broken", sim.base));
    c.init().await;
    assert_eq!(c.walk(0, 50).await.sizes(), [3, 3]);

    // A session belongs to its server.
    let mut other = HttpClient::new(format!("{}/mcp/fleet-0002", sim.base));
    other.session = c.session.clone();
    let (status, _, _) = other.call("tools/list", json!({})).await;
    assert_eq!(status, 404);
    let resp = reqwest::Client::new()
        .post(format!("{}/mcp/nope", sim.base))
        .json(&json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}}))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status().as_u16(), 404);
}

// ---------------------------------------------------------------- the walker

/// The crate's own walker against a stdio simulator: checks that
/// docs/simulator.md states what a correct client reports.
mod walker {
    use super::*;
    use mcp_listing::{
        walk, ErrorKind, Guard, Kind, ListingReport, Outcome, PageError, PageResult, Pager,
        WalkLimits,
    };
    use std::time::{Instant, SystemTime};

    struct StdioPager {
        sim: StdioSim,
        modern: bool,
    }

    impl Pager for StdioPager {
        fn fetch_page(
            &mut self,
            kind: Kind,
            cursor: Option<&str>,
            timeout: Duration,
        ) -> impl std::future::Future<Output = PageResult> + Send {
            let mut params = json!({});
            if let Some(c) = cursor {
                params["cursor"] = json!(c);
            }
            if self.modern {
                params["_meta"] = json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                                         "io.modelcontextprotocol/clientCapabilities": {}});
            }
            let started = SystemTime::now();
            let t0 = Instant::now();
            let id = self.sim.send(kind.method(), params);
            let mut list_changed = 0;
            let mut bytes = 0;
            let outcome = loop {
                let left = timeout.saturating_sub(t0.elapsed());
                let line = match self.sim.lines.recv_timeout(left) {
                    Ok(l) => l,
                    Err(mpsc::RecvTimeoutError::Timeout) => break Err(PageError::Timeout(timeout)),
                    Err(mpsc::RecvTimeoutError::Disconnected) => {
                        break Err(PageError::Transport {
                            message: "process exited".into(),
                            http_status: None,
                        })
                    }
                };
                bytes += line.len() as u64;
                // One request in flight: an unparsable line is its answer.
                let Ok(v) = serde_json::from_str::<Value>(&line) else {
                    break Err(PageError::Malformed("not JSON".into()));
                };
                if v.get("id") != Some(&json!(id)) {
                    if v["method"] == kind.list_changed_method() {
                        list_changed += 1;
                    }
                    continue;
                }
                if let Some(e) = v.get("error") {
                    break Err(PageError::Rpc {
                        code: e["code"].as_i64().unwrap(),
                        message: e["message"].as_str().unwrap_or("").into(),
                    });
                }
                break Ok(v["result"].clone());
            };
            let duration = t0.elapsed();
            async move {
                PageResult {
                    outcome,
                    request_id: id,
                    bytes,
                    duration,
                    started,
                    span_id: None,
                    list_changed,
                }
            }
        }
    }

    async fn report(args: &[&str], limits: WalkLimits) -> ListingReport {
        let mut sim = StdioSim::start(args);
        if !limits.modern {
            sim.init();
        }
        let mut pager = StdioPager {
            sim,
            modern: limits.modern,
        };
        walk(&mut pager, Kind::Tools, &limits).await
    }

    async fn legacy(args: &[&str]) -> ListingReport {
        report(args, WalkLimits::default()).await
    }

    fn modern() -> WalkLimits {
        WalkLimits {
            modern: true,
            ..WalkLimits::default()
        }
    }

    fn items(r: &ListingReport) -> Vec<u32> {
        r.pages.iter().map(|p| p.items).collect()
    }

    #[tokio::test(flavor = "multi_thread")]
    async fn documented_outcomes_hold_for_the_walker() {
        let r = legacy(&["--scenario", "healthy"]).await;
        assert_eq!(
            (r.outcome, r.requests(), r.unique_items),
            (Outcome::Complete, 4, 20)
        );

        let r = legacy(&["--scenario", "truncate"]).await;
        assert_eq!(
            (r.outcome, items(&r), r.unique_items),
            (Outcome::Complete, vec![5, 5, 5], 15)
        );

        let r = legacy(&["--scenario", "overlap"]).await;
        assert_eq!(
            (r.raw_items, r.unique_items, r.duplicate_items),
            (24, 20, 4)
        );
        assert_eq!(
            r.duplicate_names,
            ["tool-005", "tool-009", "tool-013", "tool-017"]
        );

        let r = legacy(&["--scenario", "repeat-cursor"]).await;
        assert_eq!(
            (r.outcome, r.requests()),
            (Outcome::Aborted(Guard::CursorCycle), 2)
        );
        let r = report(
            &["--scenario", "repeat-cursor", "--protocol", "2026-07-28"],
            modern(),
        )
        .await;
        assert_eq!(
            (r.outcome, r.requests()),
            (Outcome::Aborted(Guard::NoProgress), 3)
        );
        assert_eq!((r.raw_items, r.unique_items), (15, 10));

        let r = legacy(&["--scenario", "cycle"]).await;
        assert_eq!(
            (r.outcome, r.requests(), r.unique_items),
            (Outcome::Aborted(Guard::CursorCycle), 3, 15)
        );
        let r = report(
            &["--scenario", "cycle", "--protocol", "2026-07-28"],
            modern(),
        )
        .await;
        assert_eq!(
            (r.outcome, r.requests(), r.raw_items),
            (Outcome::Aborted(Guard::NoProgress), 4, 20)
        );

        let limits = WalkLimits {
            max_pages: 10,
            ..WalkLimits::default()
        };
        let r = report(&["--scenario", "endless"], limits).await;
        assert_eq!(
            (r.outcome, r.requests(), r.raw_items, r.unique_items),
            (Outcome::Aborted(Guard::PageCap), 10, 50, 20)
        );
        let limits = WalkLimits {
            max_items: 12,
            ..WalkLimits::default()
        };
        let r = report(&["--scenario", "endless"], limits).await;
        assert_eq!(
            (r.outcome, r.requests()),
            (Outcome::Aborted(Guard::ItemCap), 3)
        );

        let r = legacy(&["--scenario", "blank-cursor"]).await;
        assert_eq!(
            (r.outcome, r.reason, r.unique_items),
            (
                Outcome::Complete,
                Some(mcp_listing::EndReason::BlankCursor),
                5
            )
        );
        let r = report(
            &["--scenario", "blank-cursor", "--protocol", "2026-07-28"],
            modern(),
        )
        .await;
        assert_eq!(
            (r.outcome, r.requests(), r.duplicate_items),
            (Outcome::Aborted(Guard::NoProgress), 2, 5)
        );

        let r = legacy(&["--scenario", "null-cursor"]).await;
        assert_eq!((r.outcome, r.requests()), (Outcome::Complete, 4));
        let r = legacy(&["--scenario", "number-cursor"]).await;
        assert_eq!(
            (r.outcome, r.requests()),
            (Outcome::Error(ErrorKind::MalformedResult), 1)
        );

        let r = legacy(&["--scenario", "stale-cursor"]).await;
        assert_eq!(
            (
                r.outcome,
                r.requests(),
                r.final_pages,
                r.invalid_cursor_errors
            ),
            (Outcome::Complete, 6, 4, 1)
        );
        let r = legacy(&["--scenario", "stale-cursor", "--times", "2"]).await;
        assert_eq!(
            (r.outcome, r.requests(), r.invalid_cursor_errors),
            (Outcome::Error(ErrorKind::InvalidCursor), 4, 2)
        );

        let r = legacy(&["--scenario", "silent-restart"]).await;
        assert_eq!(
            (r.outcome, r.requests(), r.raw_items, r.unique_items),
            (Outcome::Complete, 5, 25, 20)
        );
        assert_eq!(r.duplicate_names, names("tool-", 1..=5));

        let r = legacy(&["--scenario", "missing-keys"]).await;
        assert_eq!(
            (r.outcome, r.invalid_items, r.unique_items),
            (Outcome::Complete, 4, 16)
        );

        for (scenario, error) in [
            ("wrong-shape", ErrorKind::MalformedResult),
            ("malformed", ErrorKind::MalformedResult),
            ("rpc-error", ErrorKind::RpcError),
            ("crash", ErrorKind::TransportError),
        ] {
            let r = legacy(&["--scenario", scenario]).await;
            assert_eq!(
                (r.outcome, r.requests(), r.unique_items),
                (Outcome::Error(error), 2, 5),
                "{scenario}"
            );
        }
        let limits = WalkLimits {
            page_timeout: Duration::from_millis(300),
            ..WalkLimits::default()
        };
        let r = report(&["--scenario", "hang"], limits).await;
        assert_eq!(
            (r.outcome, r.requests()),
            (Outcome::Error(ErrorKind::Timeout), 2)
        );

        let r = legacy(&["--scenario", "list-changed-storm"]).await;
        assert_eq!(
            (
                r.outcome,
                r.requests(),
                r.final_pages,
                r.list_changed_notifications,
                r.restarts.len()
            ),
            (Outcome::Complete, 5, 4, 5, 1)
        );

        let r = report(&["--scenario", "protocol-2026"], modern()).await;
        assert_eq!(
            (r.outcome, r.requests(), r.unique_items),
            (Outcome::Complete, 4, 20)
        );
        assert_eq!(
            (r.ttl_ms, r.cache_scope.as_deref()),
            (Some(30000), Some("public"))
        );
    }

    #[tokio::test(flavor = "multi_thread")]
    async fn shrink_with_notify_restarts_the_second_listing_once() {
        let mut sim = StdioSim::start(&["--scenario", "shrink", "--notify"]);
        sim.init();
        let mut pager = StdioPager { sim, modern: false };
        let limits = WalkLimits::default();
        let first = walk(&mut pager, Kind::Tools, &limits).await;
        assert_eq!((first.outcome, first.unique_items), (Outcome::Complete, 20));
        let second = walk(&mut pager, Kind::Tools, &limits).await;
        assert_eq!(
            (
                second.outcome,
                second.requests(),
                second.final_pages,
                second.unique_items
            ),
            (Outcome::Complete, 5, 4, 19)
        );
        assert_eq!(second.list_changed_notifications, 1);
        assert_eq!(second.restarts[0].at_page, 0);
    }

    /// A Streamable HTTP (JSON) pager that re-initializes on 404.
    struct HttpPager {
        http: reqwest::Client,
        url: String,
        session: Option<String>,
        next_id: i64,
    }

    impl HttpPager {
        async fn initialize(&mut self) {
            self.next_id += 1;
            let resp = self
                .http
                .post(&self.url)
                .json(
                    &json!({"jsonrpc": "2.0", "id": self.next_id, "method": "initialize",
                              "params": {"protocolVersion": "2025-11-25", "capabilities": {}}}),
                )
                .send()
                .await
                .unwrap();
            self.session = Some(
                resp.headers()["mcp-session-id"]
                    .to_str()
                    .unwrap()
                    .to_string(),
            );
            let resp = self
                .http
                .post(&self.url)
                .header("mcp-session-id", self.session.clone().unwrap())
                .json(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
                .send()
                .await
                .unwrap();
            assert_eq!(resp.status().as_u16(), 202);
        }
    }

    impl Pager for HttpPager {
        fn fetch_page(
            &mut self,
            kind: Kind,
            cursor: Option<&str>,
            timeout: Duration,
        ) -> impl std::future::Future<Output = PageResult> + Send {
            let cursor = cursor.map(str::to_string);
            async move {
                self.next_id += 1;
                let id = self.next_id;
                let params = match cursor {
                    Some(c) => json!({"cursor": c}),
                    None => json!({}),
                };
                let started = SystemTime::now();
                let t0 = Instant::now();
                let sent = self
                    .http
                    .post(&self.url)
                    .header("mcp-session-id", self.session.clone().unwrap())
                    .timeout(timeout)
                    .json(&json!({"jsonrpc": "2.0", "id": id, "method": kind.method(), "params": params}))
                    .send()
                    .await;
                let outcome = match sent {
                    Err(e) => Err(PageError::Transport {
                        message: e.to_string(),
                        http_status: None,
                    }),
                    Ok(r) if r.status().as_u16() == 404 => {
                        self.initialize().await;
                        Err(PageError::SessionRenewed)
                    }
                    Ok(r) => {
                        let v: Value = r.json().await.unwrap();
                        match v.get("error") {
                            Some(e) => Err(PageError::Rpc {
                                code: e["code"].as_i64().unwrap(),
                                message: String::new(),
                            }),
                            None => Ok(v["result"].clone()),
                        }
                    }
                };
                PageResult {
                    outcome,
                    request_id: id,
                    bytes: 0,
                    duration: t0.elapsed(),
                    started,
                    span_id: None,
                    list_changed: 0,
                }
            }
        }
    }

    #[tokio::test(flavor = "multi_thread")]
    async fn session_expiry_restarts_later_kinds_as_documented() {
        use mcp_listing::report::RestartReason;
        let sim = HttpSim::start(
            &["--scenario", "session-expiry", "--transport", "http"],
            &[],
        );
        let mut pager = HttpPager {
            http: reqwest::Client::new(),
            url: format!("{}/mcp", sim.base),
            session: None,
            next_id: 0,
        };
        pager.initialize().await;
        let limits = WalkLimits::default();
        let tools = walk(&mut pager, Kind::Tools, &limits).await;
        assert_eq!((tools.outcome, tools.requests()), (Outcome::Complete, 4));
        assert!(tools.restarts.is_empty());
        for kind in [Kind::Prompts, Kind::Resources, Kind::ResourceTemplates] {
            let r = walk(&mut pager, kind, &limits).await;
            assert_eq!(
                (r.outcome, r.requests(), r.final_pages, r.unique_items),
                (Outcome::Complete, 7, 4, 20),
                "{kind}"
            );
            assert_eq!(r.restarts.len(), 1);
            assert_eq!(r.restarts[0].reason, RestartReason::SessionExpired);
            assert_eq!(r.restarts[0].at_page, 2);
        }

        // Fewer list requests than one listing needs: the renewed session
        // expires too.
        let sim = HttpSim::start(
            &[
                "--scenario",
                "session-expiry",
                "--transport",
                "http",
                "--expire-after",
                "3",
            ],
            &[],
        );
        pager.url = format!("{}/mcp", sim.base);
        pager.initialize().await;
        let r = walk(&mut pager, Kind::Tools, &limits).await;
        assert_eq!(r.outcome, Outcome::Error(ErrorKind::TransportError));
    }
}
