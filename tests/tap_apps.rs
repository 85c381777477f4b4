//! Telling apps apart (docs/clients.md, "Telling apps apart"): two apps
//! built on the Python SDK, both announcing `mcp 0.1.0` with the same
//! User-Agent, connect to `mcp-exporter tap` from two loopback addresses
//! that the tap's address map names `desk` (127.0.0.2, reads page 1) and
//! `agents` (127.0.0.3, walks). The simulator pages 14 tools by 8. The tap
//! judges them apart — `desk` down with the six tools it never saw,
//! `agents` healthy, on `/api/clients` and `/metrics` — and merging named
//! for `desk` merges for `desk` alone: `agents`' requests are forwarded
//! unread (`mcp_tap_merge_reads_total` stays 0 while only it talks).

use mcp_testkit::clients::{ClientTransport, SdkClient, TapCommand};
use mcp_testkit::sample;
use mcp_testkit::simulator::http_scenario;
use serde_json::{json, Value};

const PAGING: [&str; 6] = ["--items", "14", "--page-size", "8", "--kinds", "tools"];
const DESK: &str = "127.0.0.2";
const AGENTS: &str = "127.0.0.3";
const APPS: [&str; 4] = ["--app", "desk=127.0.0.2", "--app", "agents=127.0.0.3/32"];

/// One run of the Python SDK app from `source` (the SDK's own default
/// `clientInfo`: `mcp 0.1.0`): how many tools it saw.
fn python_app(url: &str, source: &str, walks: bool) -> usize {
    let mut flags = vec!["--source-address", source];
    if walks {
        flags.push("--walk");
    }
    SdkClient::Python
        .list_tools_with(url, ClientTransport::Http, None, &flags)
        .count
}

fn tools_listings(client: &Value) -> u64 {
    let since = &client["kinds"]["tools"]["since_start"];
    since["complete"].as_u64().unwrap_or(0) + since["abandoned"].as_u64().unwrap_or(0)
}

#[test]
fn an_address_map_tells_two_python_sdk_apps_apart_and_merges_for_one() {
    if !SdkClient::Python.installed("tap_apps") {
        return;
    }
    let sim = http_scenario("healthy", &PAGING);
    let upstream = sim.at("/mcp");
    let mut flags = vec!["--name", "edge", "--abandon-after", "1s"];
    flags.extend_from_slice(&APPS);
    let tap = TapCommand::start(&upstream, &flags);
    let url = format!("{}/mcp", tap.tap_url);
    // The walker first: the tap knows the whole catalogue when the page-1
    // reader comes.
    assert_eq!(python_app(&url, AGENTS, true), 14, "agents walks");
    assert_eq!(python_app(&url, DESK, false), 8, "desk reads page 1");

    let desk = tap.client_when("desk", |c| tools_listings(c) > 0);
    assert_eq!(desk["verdict"]["level"], "down", "{desk:#}");
    let reason = &desk["verdict"]["reasons"][0];
    assert_eq!(reason["code"], "client_reads_prefix", "{desk:#}");
    assert_eq!(
        reason["message"],
        "desk read page 1 of 2 in 1 of 1 tools listings: sees 8 of 14 tools, missing tool-009 … tool-014",
        "{desk:#}"
    );
    let names: Vec<String> = (9..=14).map(|i| format!("tool-{i:03}")).collect();
    let missed = &desk["kinds"]["tools"]["last_abandoned"]["missed"];
    assert_eq!(missed["names"], json!(names), "{desk:#}");
    let agents = tap.client_when("agents", |c| tools_listings(c) > 0);
    assert_eq!(agents["verdict"]["level"], "healthy", "{agents:#}");
    assert_eq!(agents["kinds"]["tools"]["since_start"]["complete"], 1);
    let clients = tap.api_clients();
    let rows: Vec<&str> = clients["taps"][0]["clients"]
        .as_array()
        .expect("clients")
        .iter()
        .filter_map(|c| c["client"].as_str())
        .collect();
    assert!(
        !rows.contains(&"mcp"),
        "no row for the name both give: {rows:?}"
    );

    let metrics = tap.metrics();
    let of = |client: &'static str| [("tap", "edge"), ("client", client), ("kind", "tools")];
    let with = |client: &'static str, outcome: &'static str| {
        [
            ("tap", "edge"),
            ("client", client),
            ("kind", "tools"),
            ("outcome", outcome),
        ]
    };
    let listings = "mcp_client_listings_total";
    assert_eq!(
        sample(&metrics, listings, &with("desk", "abandoned")),
        Some(1.0),
        "{metrics}"
    );
    assert_eq!(
        sample(&metrics, listings, &with("agents", "complete")),
        Some(1.0),
        "{metrics}"
    );
    assert_eq!(
        sample(&metrics, listings, &with("agents", "abandoned")),
        Some(0.0)
    );
    assert_eq!(
        sample(&metrics, "mcp_client_items_missed", &of("desk")),
        Some(6.0)
    );
    assert_eq!(
        sample(&metrics, "mcp_client_items_missed", &of("agents")),
        Some(0.0)
    );
    assert_eq!(
        sample(&metrics, listings, &with("mcp", "complete")),
        None,
        "{metrics}"
    );
    drop(tap);

    merging_names_one_app(&upstream);
}

/// `--merge-pages desk`: desk gets the whole catalogue; agents, the same
/// SDK saying the same name from another address, gets page 1 as it came,
/// and none of its requests is read for merging.
fn merging_names_one_app(upstream: &str) {
    let mut flags = vec!["--name", "merging", "--merge-pages", "desk"];
    flags.extend_from_slice(&APPS);
    let tap = TapCommand::start(upstream, &flags);
    let url = format!("{}/mcp", tap.tap_url);
    let reads = |tap: &TapCommand| {
        sample(
            &tap.metrics(),
            "mcp_tap_merge_reads_total",
            &[("tap", "merging")],
        )
    };
    assert_eq!(
        python_app(&url, AGENTS, false),
        8,
        "agents is not merged for"
    );
    assert_eq!(
        reads(&tap),
        Some(0.0),
        "agents' requests were forwarded unread"
    );
    assert_eq!(python_app(&url, DESK, false), 14, "desk is merged for");
    let read = reads(&tap).unwrap_or(0.0);
    assert!(read >= 1.0, "desk's list request was read: {read}");
    let merged = |client: &'static str| {
        let labels = [("tap", "merging"), ("client", client), ("kind", "tools")];
        sample(&tap.metrics(), "mcp_client_merged_listings_total", &labels)
    };
    let desk = tap.client_when("desk", |c| tools_listings(c) > 0);
    assert_eq!(desk["verdict"]["level"], "healthy", "{desk:#}");
    assert_eq!(merged("desk"), Some(1.0));
    assert_eq!(merged("agents"), None, "never merged for");
    let metrics = tap.metrics();
    let merges = [("tap", "merging"), ("outcome", "merged")];
    assert_eq!(sample(&metrics, "mcp_tap_merges_total", &merges), Some(1.0));
}
