//! A tap in front of a gateway: one simulator serving two servers at two
//! paths (`alpha`, 14 tools by 8, at `/mcp/alpha`; `beta`, 40 tools by 10,
//! at `/mcp/beta`), one tap in front of both — `mcp-exporter tap` and a
//! configured tap of `serve` — and on each path a walking client and a
//! page-1 client (`simulate-client`). Each verdict is of its own route: 8
//! of 14 (6 missed) and 10 of 40 (30 missed), on `/api/clients`,
//! `/metrics` and the page. Merging walks the client's own path. A page-1
//! listing before any walk is right as soon as the catalogue is known.

use mcp_testkit::clients::{tap_url_in, TapCommand};
use mcp_testkit::exporter::scenarios_simulator;
use mcp_testkit::process::run_exporter;
use mcp_testkit::simulator::SessionClient;
use mcp_testkit::{http_get_ok, sample, wait_for, Exporter, Proc};
use serde_json::Value;
use std::time::Duration;

const LIMIT: Duration = Duration::from_secs(60);

const SERVERS: &str = "  - {name: alpha, scenario: healthy, items: 14, page_size: 8, kinds: tools}\n  - {name: beta, scenario: healthy, items: 40, page_size: 10, kinds: tools}\n";

/// One simulator serving alpha and beta (and the scenario file it reads).
fn gateway() -> (Proc, tempfile::NamedTempFile) {
    scenarios_simulator(SERVERS)
}

/// `simulate-client` as `name` on `url`, walking or reading page 1: the
/// items it saw.
fn client(url: &str, name: &str, how: &str) -> u64 {
    let run = run_exporter(&["simulate-client", "--url", url, "--name", name, how]);
    assert!(run.success(), "{}", run.describe());
    let line: Value = serde_json::from_str(run.stdout.lines().next().unwrap_or_default())
        .unwrap_or_else(|e| panic!("{e}: {}", run.describe()));
    line["listing"]["items"].as_u64().expect("items")
}

/// The client `name` on `route` in the first tap of an `/api/clients`
/// answer, once `ready` holds for it.
fn judged(
    get: impl Fn() -> Value,
    name: &str,
    route: &str,
    ready: impl Fn(&Value) -> bool,
) -> Value {
    wait_for(LIMIT, &format!("{name} on {route} judged"), || {
        let answer = get();
        let found = answer["taps"][0]["clients"]
            .as_array()?
            .iter()
            .find(|c| c["client"] == name && c["route"] == route)?
            .clone();
        ready(&found).then_some(found)
    })
}

fn abandoned(c: &Value) -> bool {
    c["kinds"]["tools"]["since_start"]["abandoned"] == 1
}

fn first_reason(c: &Value) -> String {
    c["verdict"]["reasons"][0]["message"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

fn missed_on(metrics: &str, tap: &str, client: &str, route: &str) -> Option<f64> {
    let labels = [
        ("tap", tap),
        ("client", client),
        ("route", route),
        ("kind", "tools"),
    ];
    sample(metrics, "mcp_client_items_missed", &labels)
}

#[test]
fn a_standalone_tap_in_front_of_two_servers_judges_each_on_its_own_route() {
    let (sim, _scenarios) = gateway();
    let tap = TapCommand::start(&sim.at("/"), &["--name", "gw"]);
    let url = |route: &str| format!("{}{route}", tap.tap_url);
    for route in ["/mcp/alpha", "/mcp/beta"] {
        client(&url(route), "walker", "--walk");
    }
    assert_eq!(
        client(&url("/mcp/alpha"), "desk-app", "--first-page-only"),
        8
    );
    assert_eq!(
        client(&url("/mcp/beta"), "desk-app", "--first-page-only"),
        10
    );
    let api = || tap.api_clients();
    let alpha = judged(api, "desk-app", "/mcp/alpha", abandoned);
    assert_eq!(alpha["verdict"]["level"], "down", "{alpha:#}");
    assert_eq!(
        first_reason(&alpha),
        "desk-app 1.0.0 read page 1 of 2 of /mcp/alpha in 1 of 1 tools listings: sees 8 of 14 tools, missing tool-009 … tool-014"
    );
    assert_eq!(alpha["kinds"]["tools"]["items_missed"], 6);
    let beta = judged(api, "desk-app", "/mcp/beta", abandoned);
    assert_eq!(
        first_reason(&beta),
        "desk-app 1.0.0 read page 1 of 4 of /mcp/beta in 1 of 1 tools listings: sees 10 of 40 tools, missing tool-011 … tool-040"
    );
    assert_eq!(beta["kinds"]["tools"]["items_missed"], 30);
    for route in ["/mcp/alpha", "/mcp/beta"] {
        let walker = judged(api, "walker", route, |c| {
            c["kinds"]["tools"]["items_missed"] == 0
        });
        assert_eq!(walker["verdict"]["level"], "healthy", "{walker:#}");
    }
    let answer = tap.api_clients();
    let routes: Vec<(&str, u64)> = answer["taps"][0]["routes"]
        .as_array()
        .expect("routes")
        .iter()
        .map(|r| {
            let name = r["route"].as_str().unwrap_or_default();
            (name, r["catalogue"]["tools"]["items"].as_u64().unwrap_or(0))
        })
        .collect();
    assert_eq!(routes, [("/mcp/alpha", 14), ("/mcp/beta", 40)]);
    let metrics = tap.metrics();
    assert_eq!(
        missed_on(&metrics, "gw", "desk-app", "/mcp/alpha"),
        Some(6.0)
    );
    assert_eq!(
        missed_on(&metrics, "gw", "desk-app", "/mcp/beta"),
        Some(30.0)
    );
    assert_eq!(missed_on(&metrics, "gw", "walker", "/mcp/beta"), Some(0.0));
    let routes_seen = sample(&metrics, "mcp_tap_routes", &[("tap", "gw")]);
    assert_eq!(routes_seen, Some(2.0), "{metrics}");
    let page = http_get_ok(&tap.web.at("/"));
    for said in [
        "read page 1 of 2 of /mcp/alpha in 1 of 1 tools listings: sees 8 of 14 tools",
        "read page 1 of 4 of /mcp/beta in 1 of 1 tools listings: sees 10 of 40 tools",
        "catalogue of /mcp/beta: 40 tools in 4 page(s)",
    ] {
        assert!(page.contains(said), "the page says {said:?}:\n{page}");
    }
}

#[test]
fn merging_walks_the_clients_own_route() {
    let (sim, _scenarios) = gateway();
    let tap = TapCommand::start(&sim.at("/"), &["--name", "gw", "--merge-pages", "desk-app"]);
    let url = |route: &str| format!("{}{route}", tap.tap_url);
    assert_eq!(
        client(&url("/mcp/alpha"), "desk-app", "--first-page-only"),
        14
    );
    assert_eq!(
        client(&url("/mcp/beta"), "desk-app", "--first-page-only"),
        40
    );
    let api = || tap.api_clients();
    for (route, items) in [("/mcp/alpha", 14), ("/mcp/beta", 40)] {
        let c = judged(api, "desk-app", route, |c| {
            c["kinds"]["tools"]["since_start"]["complete"] == 1
        });
        assert_eq!(c["verdict"]["level"], "healthy", "{c:#}");
        assert_eq!(c["kinds"]["tools"]["last_complete"]["items"], items);
        assert_eq!(c["kinds"]["tools"]["last_merge"]["outcome"], "merged");
    }
}

#[test]
fn a_page_one_listing_before_any_walk_is_right_once_a_walk_makes_the_catalogue_known() {
    let (sim, _scenarios) = gateway();
    let tap = TapCommand::start(&sim.at("/"), &["--name", "gw"]);
    let url = format!("{}/mcp/beta", tap.tap_url);
    client(&url, "desk-app", "--first-page-only");
    let api = || tap.api_clients();
    let before = judged(api, "desk-app", "/mcp/beta", abandoned);
    assert!(
        first_reason(&before).ends_with("sees 10 tools (the whole catalogue is not known yet)"),
        "{before:#}"
    );
    client(&url, "walker", "--walk");
    let after = judged(api, "desk-app", "/mcp/beta", |c| {
        c["kinds"]["tools"]["items_missed"] == 30
    });
    assert_eq!(
        first_reason(&after),
        "desk-app 1.0.0 read page 1 of 4 of /mcp/beta in 1 of 1 tools listings: sees 10 of 40 tools, missing tool-011 … tool-040"
    );
    let metrics = tap.metrics();
    assert_eq!(
        missed_on(&metrics, "gw", "desk-app", "/mcp/beta"),
        Some(30.0)
    );
}

#[test]
fn a_standalone_tap_that_learns_its_catalogues_is_right_before_anyone_walks() {
    let (sim, _scenarios) = gateway();
    let tap = TapCommand::start(
        &sim.at("/"),
        &[
            "--name",
            "gw",
            "--route",
            "alpha=/mcp/alpha",
            "--learn-catalogue",
        ],
    );
    // alpha is named: walked at start. beta is learned when first used.
    let api = || tap.api_clients();
    wait_for(LIMIT, "alpha's catalogue learned", || {
        let answer = api();
        let routes = answer["taps"][0]["routes"].as_array()?.clone();
        let alpha = routes.iter().find(|r| r["route"] == "alpha")?;
        (alpha["catalogue"]["tools"]["source"] == "reference").then_some(())
    });
    client(
        &format!("{}/mcp/alpha", tap.tap_url),
        "desk-app",
        "--first-page-only",
    );
    let alpha = judged(api, "desk-app", "alpha", abandoned);
    assert_eq!(
        first_reason(&alpha),
        "desk-app 1.0.0 read page 1 of 2 of alpha in 1 of 1 tools listings: sees 8 of 14 tools, missing tool-009 … tool-014"
    );
    client(
        &format!("{}/mcp/beta", tap.tap_url),
        "desk-app",
        "--first-page-only",
    );
    let beta = judged(api, "desk-app", "/mcp/beta", |c| {
        c["kinds"]["tools"]["items_missed"] == 30
    });
    assert!(
        first_reason(&beta).contains("sees 10 of 40 tools"),
        "{beta:#}"
    );
    let metrics = tap.metrics();
    assert_eq!(missed_on(&metrics, "gw", "desk-app", "alpha"), Some(6.0));
    assert_eq!(
        missed_on(&metrics, "gw", "desk-app", "/mcp/beta"),
        Some(30.0)
    );
    let stderr = tap.web.stderr();
    assert!(!stderr.contains("config=\"\""), "{stderr}");
}

/// `serve` with a tap whose named routes each have a target: a page-1
/// reader is told what it missed of its own route's target, before any
/// client walked; walkers then make the tap's own catalogue.
#[test]
fn a_configured_tap_compares_each_route_with_its_own_target() {
    let (sim, _scenarios) = gateway();
    let config = format!(
        "global:\n  schedule: {{every: 1s}}\n  kinds: [tools]\ntargets:\n  - name: alpha\n    http: {{url: \"{a}\"}}\n  - name: beta\n    http: {{url: \"{b}\"}}\ntaps:\n  - name: gw\n    listen: 127.0.0.1:0\n    upstream: {{url: \"{up}\"}}\n    routes:\n      - {{name: alpha, path: /mcp/alpha, target: alpha}}\n      - {{name: beta, path: /mcp/beta, target: beta}}\n    learn_paths: false\n",
        a = sim.at("/mcp/alpha"),
        b = sim.at("/mcp/beta"),
        up = sim.at("/"),
    );
    let exporter = Exporter::start(&config);
    let api = || {
        let (_, body) = exporter.get("/api/clients");
        serde_json::from_str::<Value>(&body).unwrap_or_default()
    };
    wait_for(LIMIT, "both references", || {
        let answer = api();
        let routes = answer["taps"][0]["routes"].as_array()?.clone();
        let known = routes
            .iter()
            .filter(|r| r["catalogue"]["tools"]["source"] == "reference")
            .count();
        (known == 2).then_some(())
    });
    let tap_url = tap_url_in(&exporter.stderr(), Some("gw")).expect("tap line");
    for route in ["/mcp/alpha", "/mcp/beta"] {
        client(
            &format!("{tap_url}{route}"),
            "desk-app",
            "--first-page-only",
        );
        client(&format!("{tap_url}{route}"), "walker", "--walk");
    }
    let alpha = judged(api, "desk-app", "alpha", abandoned);
    assert!(
        first_reason(&alpha).contains(
            "of alpha in 1 of 1 tools listings: sees 8 of 14 tools, missing tool-009 … tool-014"
        ),
        "{alpha:#}"
    );
    let beta = judged(api, "desk-app", "beta", abandoned);
    assert!(
        first_reason(&beta).contains(
            "of beta in 1 of 1 tools listings: sees 10 of 40 tools, missing tool-011 … tool-040"
        ),
        "{beta:#}"
    );
    let metrics = exporter.metrics();
    assert_eq!(missed_on(&metrics, "gw", "desk-app", "alpha"), Some(6.0));
    assert_eq!(missed_on(&metrics, "gw", "desk-app", "beta"), Some(30.0));
    assert_eq!(missed_on(&metrics, "gw", "walker", "beta"), Some(0.0));
    let page = http_get_ok(&exporter.at("/"));
    assert!(page.contains("sees 10 of 40 tools"), "{page}");
    assert!(page.contains("catalogue of alpha: 14 tools"), "{page}");
}

/// A client inventing a path on every request: the tap keeps at most
/// `--max-routes` routes, counts the rest under `other`, and forwards
/// every request. A configured pattern no request matches is said, and the
/// tap goes on.
#[test]
fn a_route_flood_is_bounded_counted_and_forwarded() {
    let (sim, _scenarios) = gateway();
    let flags = [
        "--name",
        "gw",
        "--max-routes",
        "3",
        "--route",
        "/servers/{id}/mcp",
    ];
    let tap = TapCommand::start(&sim.at("/"), &flags);
    let rt = tokio::runtime::Runtime::new().expect("runtime");
    for i in 0..12 {
        // Sessionless list requests to unknown paths: the simulator answers
        // 404 and the tap forwards it.
        let mut flood = SessionClient::new(format!("{}/mcp/nobody-{i}?x={i}", tap.tap_url));
        let (status, _, _) = rt.block_on(flood.call("tools/list", serde_json::json!({})));
        assert_eq!(status, 404);
    }
    client(&format!("{}/mcp/alpha", tap.tap_url), "walker", "--walk");
    let metrics = wait_for(LIMIT, "the flood counted", || {
        let metrics = tap.metrics();
        let other = sample(
            &metrics,
            "mcp_tap_other_route_total",
            &[("tap", "gw"), ("reason", "max_routes")],
        )?;
        (other >= 1.0).then_some(metrics)
    });
    let routes = sample(&metrics, "mcp_tap_routes", &[("tap", "gw")]).expect("routes");
    assert!(routes <= 4.0, "3 and other: {routes}");
    let labels: std::collections::HashSet<&str> = metrics
        .lines()
        .filter_map(|l| l.split_once("route=\"")?.1.split_once('"').map(|(r, _)| r))
        .collect();
    assert!(labels.len() <= 4, "{labels:?}");
    let rules = tap.api_clients()["taps"][0]["route_rules"].clone();
    assert_eq!(
        rules,
        serde_json::json!([{"path": "/servers/{id}/mcp", "matched": 0}])
    );
    let said = "a configured route matched none of the first requests routed through the tap";
    assert!(tap.web.stderr().contains(said), "{}", tap.web.stderr());
    let page = http_get_ok(&tap.web.at("/"));
    assert!(page.contains("has matched no request yet"), "{page}");
}

/// The series budget (docs/metrics.md, "Series per tap, route and
/// client"): a tap in front of a gateway of 50 servers where each of 64
/// clients reads page 1 of tools on every server (3,200 pairs) holds at
/// most 53 samples of its own plus 9 per (client, route) pair told apart —
/// at most `max_client_routes` (256) pairs of their own and one `other`
/// per client — 2,933 in all.
#[test]
fn series_stay_within_the_budget_in_front_of_a_gateway_of_50_servers_and_64_clients() {
    const SERVERS: usize = 50;
    const CLIENTS: usize = 64;
    let (sim, _scenarios) = scenarios_simulator(
        "  - {name: s, count: 50, scenario: healthy, items: 14, page_size: 8, kinds: tools}\n",
    );
    let tap = TapCommand::start(&sim.at("/"), &["--name", "gw"]);
    let rt = tokio::runtime::Runtime::new().expect("runtime");
    let sessions: Vec<(usize, usize)> = (0..CLIENTS)
        .flat_map(|c| (1..=SERVERS).map(move |s| (c, s)))
        .collect();
    // One connection pool for every session: the tap's cost, not ours.
    let http = reqwest::Client::new();
    for batch in sessions.chunks(64) {
        let runs = batch.iter().map(|&(c, s)| {
            let url = format!("{}/mcp/s-{s:04}", tap.tap_url);
            page_one_as(&http, url, format!("app-{c:02}"))
        });
        rt.block_on(futures_util::future::join_all(runs));
    }
    let metrics = wait_for(LIMIT, "every page counted", || {
        let metrics = tap.metrics();
        let pages: f64 = metrics
            .lines()
            .filter(|l| l.starts_with("mcp_client_list_pages_total{"))
            .filter_map(|l| l.rsplit(' ').next()?.parse::<f64>().ok())
            .sum();
        (pages as usize == CLIENTS * SERVERS).then_some(metrics)
    });
    let samples: Vec<&str> = metrics
        .lines()
        .filter(|l| !l.starts_with('#'))
        .filter(|l| l.starts_with("mcp_client_") || l.starts_with("mcp_tap_"))
        .collect();
    let per_tap = 53;
    let pairs = 256 + CLIENTS;
    let budget = per_tap + 9 * pairs;
    println!("{} samples (budget {budget})", samples.len());
    assert!(samples.len() <= budget, "{} samples", samples.len());
    let routes: std::collections::HashSet<&str> = samples
        .iter()
        .filter_map(|l| l.split_once("route=\"")?.1.split_once('"').map(|(r, _)| r))
        .collect();
    assert_eq!(routes.len(), SERVERS + 1, "every server and other");
    let other = sample(
        &metrics,
        "mcp_tap_other_route_total",
        &[("tap", "gw"), ("reason", "max_client_routes")],
    );
    assert_eq!(other, Some((CLIENTS * SERVERS - 256) as f64));
}

/// One session of client `name` at `url`: initialize, page 1 of tools.
async fn page_one_as(http: &reqwest::Client, url: String, name: String) {
    let mut session = SessionClient {
        http: http.clone(),
        ..SessionClient::new(url)
    };
    let params = serde_json::json!({"protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": name, "version": "1"}});
    let (status, _, answer) = session.call("initialize", params).await;
    assert_eq!(status, 200, "{answer}");
    let note = serde_json::json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    session.post(&note, &[]).await;
    let (status, _, answer) = session.call("tools/list", serde_json::json!({})).await;
    assert_eq!(status, 200, "{answer}");
}
