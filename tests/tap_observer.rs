//! Never silently blind: `mcp-exporter tap` (a debug build, whose test hook
//! makes the observer panic on a request to one path) in front of the
//! simulator. The observer is killed; the tap logs one event and counts it
//! (`mcp_tap_observer_restarts_total`), says it is not observing on
//! `/metrics`, `/api/clients` and its page while it forwards every request
//! unchanged, then a fresh observer starts and judges clients again; what
//! passed meanwhile is counted (`observer_restart`). And a client that
//! lists nothing for `--client-idle` is forgotten with its series.

use mcp_testkit::clients::TapCommand;
use mcp_testkit::process::run_exporter;
use mcp_testkit::simulator::{http_scenario, SessionClient};
use mcp_testkit::{http_get_ok, sample, wait_for};
use serde_json::{json, Value};
use std::time::Duration;

const LIMIT: Duration = Duration::from_secs(60);
const PAGING: [&str; 6] = ["--items", "14", "--page-size", "8", "--kinds", "tools"];

/// `simulate-client` as `name` reading page 1 at `url`: the items it saw.
fn page_one(url: &str, name: &str) -> u64 {
    let run = run_exporter(&[
        "simulate-client",
        "--url",
        url,
        "--name",
        name,
        "--first-page-only",
    ]);
    assert!(run.success(), "{}", run.describe());
    let line: Value = serde_json::from_str(run.stdout.lines().next().unwrap_or_default())
        .unwrap_or_else(|e| panic!("{e}: {}", run.describe()));
    line["listing"]["items"].as_u64().expect("items")
}

/// Page 1 of tools on a session of its own at `url`: the answer's result.
fn listed(rt: &tokio::runtime::Runtime, url: &str) -> Value {
    rt.block_on(async {
        let mut session = SessionClient::new(url.to_string());
        let params = json!({"protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "compare", "version": "1"}});
        let (status, _, answer) = session.call_with("initialize", params, &[]).await;
        assert_eq!(status, 200, "{answer}");
        let (status, _, answer) = session.call_with("tools/list", json!({}), &[]).await;
        assert_eq!(status, 200, "{answer}");
        answer["result"].clone()
    })
}

fn metric(metrics: &str, name: &str, labels: &[(&str, &str)]) -> f64 {
    sample(metrics, name, labels).unwrap_or_else(|| panic!("no {name} {labels:?}:\n{metrics}"))
}

/// The first tap of `/api/clients`, once `ready` holds for it.
fn tap_when(tap: &TapCommand, what: &str, ready: impl Fn(&Value) -> bool) -> Value {
    wait_for(LIMIT, what, || {
        let view = tap.api_clients()["taps"][0].clone();
        ready(&view).then_some(view)
    })
}

#[test]
fn a_killed_observer_is_said_counted_and_restarted_while_forwarding_goes_on() {
    let sim = http_scenario("healthy", &PAGING);
    let direct = sim.at("/mcp");
    // The hook's path, and a wait before the fresh observer long enough
    // to read the "not observing" state.
    let env = [
        ("MCP_EXPORTER_TEST_OBSERVER_PANIC", "/mcp/panic"),
        ("MCP_EXPORTER_TEST_OBSERVER_WAIT_MS", "6000"),
    ];
    let tap = TapCommand::start_with_env(&direct, &["--name", "edge"], &env);
    let url = format!("{}/mcp", tap.tap_url);
    let rt = tokio::runtime::Runtime::new().expect("runtime");
    let before = listed(&rt, &url);
    assert_eq!(before, listed(&rt, &direct), "forwarded unchanged");
    assert_eq!(page_one(&url, "before"), 8);
    let view = tap_when(&tap, "the first client judged", |t| {
        t["clients"].as_array().is_some_and(|c| !c.is_empty())
    });
    assert_eq!(view["observing"], true, "{view:#}");
    let metrics = tap.metrics();
    assert_eq!(
        metric(&metrics, "mcp_tap_observing", &[("tap", "edge")]),
        1.0
    );

    // The hook: the observer panics reading this request; the upstream
    // answers it all the same.
    let kill = rt.block_on(async {
        let mut session = SessionClient::new(format!("{}/mcp/panic", tap.tap_url));
        session
            .post(&json!({"jsonrpc": "2.0", "id": 1, "method": "ping"}), &[])
            .await
            .status()
    });
    assert_ne!(kill.as_u16(), 502, "forwarded to the upstream");
    let metrics = wait_for(LIMIT, "the end counted", || {
        let m = tap.metrics();
        (sample(&m, "mcp_tap_observer_restarts_total", &[("tap", "edge")]) == Some(1.0))
            .then_some(m)
    });
    assert_eq!(
        metric(&metrics, "mcp_tap_observing", &[("tap", "edge")]),
        0.0
    );
    let view = tap.api_clients()["taps"][0].clone();
    assert_eq!(view["observing"], false, "{view:#}");
    assert_eq!(view["observer_restarts"], 1, "{view:#}");
    let page = http_get_ok(&tap.web.at("/"));
    assert!(page.contains("not observing"), "{page}");
    // Forwarding never notices.
    assert_eq!(
        listed(&rt, &url),
        before,
        "forwarded unchanged while not observing"
    );
    assert_eq!(page_one(&url, "meanwhile"), 8);
    let stderr = tap.web.stderr();
    let ended: Vec<&str> = stderr
        .lines()
        .filter(|l| l.contains("tap observer ended"))
        .collect();
    assert_eq!(ended.len(), 1, "one event:\n{stderr}");
    assert!(ended[0].contains("asked to panic"), "{}", ended[0]);

    // A fresh observer: observing again, judging clients again.
    tap_when(&tap, "observing again", |t| t["observing"] == true);
    assert_eq!(page_one(&url, "after"), 8);
    tap.client_when("after", |c| c["kinds"]["tools"]["pages"] == 1);
    let metrics = tap.metrics();
    assert_eq!(
        metric(&metrics, "mcp_tap_observing", &[("tap", "edge")]),
        1.0
    );
    assert_eq!(
        metric(
            &metrics,
            "mcp_tap_observer_restarts_total",
            &[("tap", "edge")]
        ),
        1.0
    );
    let lost = [("tap", "edge"), ("reason", "observer_restart")];
    let lost = metric(&metrics, "mcp_tap_messages_not_observed_total", &lost);
    assert!(lost >= 1.0, "what passed unobserved is counted: {lost}");
    assert!(tap.web.stderr().contains("tap observer started afresh"));
    assert_eq!(
        listed(&rt, &url),
        listed(&rt, &direct),
        "forwarded unchanged"
    );
}

#[test]
fn a_client_quiet_for_client_idle_is_forgotten_with_its_series() {
    let sim = http_scenario("healthy", &PAGING);
    let tap = TapCommand::start(
        &sim.at("/mcp"),
        &[
            "--name",
            "edge",
            "--client-idle",
            "3s",
            "--max-clients",
            "1",
        ],
    );
    let url = format!("{}/mcp", tap.tap_url);
    page_one(&url, "gone-soon");
    tap.client_when("gone-soon", |c| c["kinds"]["tools"]["pages"] == 1);
    let pages = [("tap", "edge"), ("client", "gone-soon"), ("kind", "tools")];
    assert_eq!(
        sample(&tap.metrics(), "mcp_client_list_pages_total", &pages),
        Some(1.0)
    );
    wait_for(LIMIT, "the quiet client forgotten", || {
        let m = tap.metrics();
        let gone = sample(&m, "mcp_client_list_pages_total", &pages).is_none()
            && sample(&m, "mcp_tap_clients", &[("tap", "edge")]) == Some(0.0);
        let view = tap.api_clients()["taps"][0].clone();
        (gone && view["clients"].as_array().is_some_and(Vec::is_empty)).then_some(())
    });
    // Its slot is free: the next client gets its own label, not `other`.
    page_one(&url, "next");
    tap.client_when("next", |c| c["kinds"]["tools"]["pages"] == 1);
}
