//! The simulator over stdio, seen from the wire: real `mcp-exporter
//! simulate` processes driven with raw JSON-RPC lines, every scenario's
//! pages, faults and notifications as docs/simulator.md describes them.
//! Every child is killed when its guard drops.

use mcp_listing::Kind;
use mcp_testkit::simulator::{numbered, page_of, run_stdio, stdio_walk, StdioSim, WAIT};
use serde_json::{json, Value};
use std::time::Duration;

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

    let tools = stdio_walk(&mut sim, Kind::Tools, 50);
    assert_eq!(tools.sizes(), [5, 5, 5, 5]);
    assert_eq!(tools.all(), numbered("tool-", 1..=20));
    assert!(
        tools.cursors.last().unwrap().is_none(),
        "no nextCursor at the end"
    );
    let prompts = stdio_walk(&mut sim, Kind::Prompts, 50);
    assert_eq!(prompts.all(), numbered("prompt-", 1..=20));
    let resources = stdio_walk(&mut sim, Kind::Resources, 50);
    assert_eq!(resources.all()[0], "sim://resources/001");
    assert_eq!(resources.unique(), 20);
    let templates = stdio_walk(&mut sim, Kind::ResourceTemplates, 50);
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
    let w = run_stdio(&["--scenario", "single-page"], Kind::Tools, 50);
    assert_eq!(w.sizes(), [20]);

    let w = run_stdio(&["--scenario", "truncate"], Kind::Tools, 50);
    assert_eq!(w.sizes(), [5, 5, 5]);
    assert_eq!(w.all(), numbered("tool-", 1..=15));

    let w = run_stdio(&["--scenario", "overlap"], Kind::Tools, 50);
    assert_eq!(w.sizes(), [5, 5, 5, 5, 4]);
    assert_eq!(w.unique(), 20);
    assert_eq!(
        w.pages[1][0], "tool-005",
        "page 2 repeats page 1's last item"
    );

    let w = run_stdio(&["--scenario", "repeat-cursor"], Kind::Tools, 50);
    assert_eq!(w.pages.len(), 2);
    assert_eq!(w.cursors[0], w.cursors[1], "page 2 repeats page 1's cursor");
    assert_eq!(w.unique(), 10);

    let w = run_stdio(&["--scenario", "cycle"], Kind::Tools, 50);
    assert_eq!(w.pages.len(), 3);
    assert_eq!(w.cursors[2], w.cursors[0], "A -> B -> A");
    assert_ne!(w.cursors[1], w.cursors[0]);
    assert_eq!(w.unique(), 15);

    let w = run_stdio(&["--scenario", "endless"], Kind::Tools, 12);
    assert_eq!(w.pages.len(), 12, "still handing out cursors");
    assert_eq!(w.unique(), 20);
    assert_eq!(w.all().len(), 60);

    let w = run_stdio(&["--scenario", "blank-cursor"], Kind::Tools, 50);
    assert_eq!(w.sizes(), [5]);
    assert_eq!(w.cursors[0], Some(json!("")));

    let w = run_stdio(&["--scenario", "null-cursor"], Kind::Tools, 50);
    assert_eq!(w.sizes(), [5, 5, 5, 5]);
    assert_eq!(w.cursors[3], Some(Value::Null), "explicit null at the end");

    let w = run_stdio(&["--scenario", "number-cursor"], Kind::Tools, 50);
    assert_eq!(w.sizes(), [5]);
    assert_eq!(w.cursors[0], Some(json!(5)));

    let w = run_stdio(&["--scenario", "missing-keys"], Kind::Tools, 50);
    assert_eq!(w.sizes(), [4, 4, 4, 4]);
    assert_eq!(w.keyless, 4);
    assert!(!w.all().contains(&"tool-005".to_string()));
}

#[test]
fn stdio_faults_hit_the_configured_page_only() {
    let w = run_stdio(
        &["--scenario", "rpc-error", "--code", "-32000"],
        Kind::Tools,
        50,
    );
    assert_eq!(w.sizes(), [5]);
    assert_eq!(w.error.unwrap()["code"], -32000);

    let w = run_stdio(&["--scenario", "rpc-error", "--page", "3"], Kind::Tools, 50);
    assert_eq!(w.sizes(), [5, 5]);
    assert_eq!(w.error.unwrap()["code"], -32603);

    // Faults apply to --kinds only: prompts stay healthy.
    let w = run_stdio(
        &["--scenario", "rpc-error", "--kinds", "tools"],
        Kind::Prompts,
        50,
    );
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
    let w = stdio_walk(&mut sim, Kind::Tools, 50);
    assert_eq!(w.sizes(), [5]);
    assert_eq!(w.error.unwrap()["code"], -32602);
    let w = stdio_walk(&mut sim, Kind::Tools, 50);
    assert_eq!(w.sizes(), [5, 5, 5, 5]);

    // Age mode: a cursor younger than --delay-ms is accepted, an older one
    // rejected. Orderings, not timings: presented at once against an
    // hour, and after a pause longer than a millisecond.
    let mut sim = StdioSim::start(&["--scenario", "stale-cursor", "--delay-ms", "3600000"]);
    sim.init();
    let (_, p1) = sim.call("tools/list", json!({}));
    let cursor = p1["result"]["nextCursor"].clone();
    let (_, fresh) = sim.call("tools/list", json!({ "cursor": cursor }));
    assert!(fresh.get("result").is_some(), "{fresh}");
    let mut sim = StdioSim::start(&["--scenario", "stale-cursor", "--delay-ms", "1"]);
    sim.init();
    let (_, p1) = sim.call("tools/list", json!({}));
    std::thread::sleep(Duration::from_millis(20));
    let cursor = p1["result"]["nextCursor"].clone();
    let (_, stale) = sim.call("tools/list", json!({ "cursor": cursor }));
    assert_eq!(stale["error"]["code"], -32602, "{stale}");

    // Silent restart: page 1's cursor is unknown, so page 1 comes again.
    let w = run_stdio(&["--scenario", "silent-restart"], Kind::Tools, 50);
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
    assert_eq!(stdio_walk(&mut sim, Kind::Tools, 50).unique(), 20);
    let second = stdio_walk(&mut sim, Kind::Tools, 50);
    assert_eq!(second.unique(), 19);
    assert!(!second.all().contains(&"tool-020".to_string()));
    assert!(second.notes.is_empty(), "silent without --notify");

    let mut sim = StdioSim::start(&["--scenario", "grow", "--notify", "--change-by", "3"]);
    sim.init();
    assert_eq!(stdio_walk(&mut sim, Kind::Tools, 50).unique(), 20);
    let second = stdio_walk(&mut sim, Kind::Tools, 50);
    assert_eq!(second.unique(), 23);
    assert_eq!(
        second.notes,
        [json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})]
    );

    let w = run_stdio(&["--scenario", "list-changed-storm"], Kind::Prompts, 50);
    assert_eq!(w.sizes(), [5, 5, 5, 5]);
    assert_eq!(w.notes.len(), 4);
    assert_eq!(w.notes[0]["method"], "notifications/prompts/list_changed");
}

#[test]
fn stdio_reorder_is_deterministic_under_the_seed() {
    let order = |seed: &str| {
        let mut sim = StdioSim::start(&["--scenario", "reorder", "--seed", seed]);
        sim.init();
        let a = stdio_walk(&mut sim, Kind::Tools, 50);
        let b = stdio_walk(&mut sim, Kind::Tools, 50);
        assert_eq!(a.unique(), 20);
        assert_eq!(b.unique(), 20);
        assert_ne!(a.all(), b.all(), "each listing reorders");
        (a.all(), b.all())
    };
    assert_eq!(order("7"), order("7"));
    assert_ne!(order("7").0, order("8").0);

    // Healthy cursors are stable across runs with the same seed.
    let cursors =
        |seed: &str| run_stdio(&["--scenario", "healthy", "--seed", seed], Kind::Tools, 50).cursors;
    assert_eq!(cursors("1"), cursors("1"));
    assert_ne!(cursors("1"), cursors("2"));
}

/// Page 2's request (sent after page 1's answer): its id.
fn send_page_two(sim: &mut StdioSim) -> i64 {
    let (_, p1) = sim.call("tools/list", json!({}));
    sim.send(
        "tools/list",
        json!({"cursor": p1["result"]["nextCursor"].clone()}),
    )
}

/// Every line the simulator writes until it exits after stdin closes.
fn lines_until_exit(sim: &mut StdioSim) -> Vec<Value> {
    drop(sim.stdin.take());
    let mut lines = Vec::new();
    while let Ok(line) = sim.lines.recv_timeout(WAIT) {
        lines.push(serde_json::from_str(&line).unwrap_or(Value::String(line)));
    }
    lines
}

#[test]
fn stdio_hang_slow_and_crash() {
    // Hang: page 2 is never answered, but the process keeps serving; at
    // stdin's end it finishes what it was asked and exits, and page 2's
    // answer is not among what it wrote (a count, not a wait).
    let mut sim = StdioSim::start(&["--scenario", "hang"]);
    sim.init();
    let hung = send_page_two(&mut sim);
    let (_, pong) = sim.call("ping", json!({}));
    assert_eq!(pong["result"], json!({}));
    let after = lines_until_exit(&mut sim);
    assert!(
        !after.iter().any(|v| v["id"] == hung),
        "the hung page was answered: {after:?}"
    );
    assert!(sim.exit_status().success());

    // Slow page: a later request is answered before the slow one. An
    // ordering: the slow page waits an hour, so it cannot come first.
    let mut sim = StdioSim::start(&["--scenario", "slow-page", "--delay-ms", "3600000"]);
    sim.init();
    send_page_two(&mut sim);
    let ping = sim.send("ping", json!({}));
    let first: Value = serde_json::from_str(&sim.lines.recv_timeout(WAIT).unwrap()).unwrap();
    assert_eq!(first["id"], ping);
    // And the slow page, once its delay is over, is the right one.
    let mut sim = StdioSim::start(&["--scenario", "slow-page", "--delay-ms", "1"]);
    sim.init();
    let slow = send_page_two(&mut sim);
    let (_, page2) = sim.answer(slow);
    assert_eq!(page2["result"]["tools"][0]["name"], "tool-006");

    // Crash: the process exits on page 2 without answering.
    let mut sim = StdioSim::start(&["--scenario", "crash"]);
    sim.init();
    send_page_two(&mut sim);
    let status = sim.exit_status();
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
    let status = sim.exit_status();
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
        cursors.push(r.get("nextCursor").cloned());
        let (names, next) = page_of(&page, Kind::Tools);
        got.extend(names);
        cursor = match next {
            Some(next) => Some(next),
            None => break,
        };
    }
    assert_eq!(got, numbered("tool-", 1..=20));
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
