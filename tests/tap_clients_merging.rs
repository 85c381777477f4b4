//! Merging for named clients through `mcp-exporter tap --merge-pages`:
//! real SDK clients that read page 1 (Python SDK, TypeScript SDK 1.x) see
//! all 14 of 14 tools of the simulator paging 14 by 8, over JSON and SSE
//! answers, and are judged `healthy` with the merge shown; walkers not named
//! still walk and are not merged; against an upstream whose cursors cycle
//! the named client gets page 1 unchanged and the reason is on `/metrics`,
//! `/api/clients` and the status page.

use mcp_testkit::clients::{ClientTransport, SdkClient, TapCommand};
use mcp_testkit::simulator::http_scenario;
use mcp_testkit::{http_get_ok, sample};

const PAGING: [&str; 6] = ["--items", "14", "--page-size", "8", "--kinds", "tools"];

fn merged_for_named_readers(sim_flags: &[&str]) {
    let installed: Vec<SdkClient> = SdkClient::ALL
        .into_iter()
        .filter(|c| c.installed("tap_clients_merging"))
        .collect();
    let sim = http_scenario("healthy", sim_flags);
    let tap = TapCommand::start(
        &sim.at("/mcp"),
        &[
            "--name",
            "edge",
            "--merge-pages",
            "mcp",
            "--merge-pages",
            "ts-sdk-1",
        ],
    );
    let url = format!("{}/mcp", tap.tap_url);
    for client in &installed {
        let name = match client {
            SdkClient::Python => None,
            SdkClient::TypeScript1 => Some("ts-sdk-1"),
            SdkClient::TypeScript2 => Some("ts-sdk-2"),
            SdkClient::FastMcp => Some("fastmcp-app"),
        };
        let saw = client.list_tools(&url, ClientTransport::Http, name);
        assert_eq!(saw.count, 14, "{client:?} through a merging tap");
        let label = name.unwrap_or("mcp");
        let judged = tap.client_when(label, |c| {
            c["kinds"]["tools"]["since_start"]["complete"].as_u64() == Some(1)
        });
        assert_eq!(judged["verdict"]["level"], "healthy", "{judged:#}");
        let merge = &judged["kinds"]["tools"]["last_merge"];
        if client.walks() {
            assert!(merge.is_null(), "{client:?} is not named: {judged:#}");
        } else {
            assert_eq!(merge["outcome"], "merged", "{judged:#}");
            let labels = [("tap", "edge"), ("client", label), ("kind", "tools")];
            let merged = sample(&tap.metrics(), "mcp_client_merged_listings_total", &labels);
            assert_eq!(merged, Some(1.0), "{client:?}");
        }
    }
    let page = http_get_ok(&tap.web.at("/"));
    if SdkClient::Python.installed("tap_clients_merging") {
        assert!(
            page.contains("merged for mcp 0.1.0: 14 of 14 tools"),
            "the page says what merging gave the client:\n{page}"
        );
    }
}

#[test]
fn named_page_one_readers_see_everything_json_answers() {
    merged_for_named_readers(&PAGING);
}

#[test]
fn named_page_one_readers_see_everything_sse_answers() {
    let mut flags = PAGING.to_vec();
    flags.extend_from_slice(&["--response", "sse"]);
    merged_for_named_readers(&flags);
}

/// Against cycling cursors the tap's walk aborts: the client gets page 1 as
/// the upstream sent it, and every surface says why.
#[test]
fn a_cycling_upstream_gets_page_one_and_the_reason_shown() {
    if !SdkClient::Python.installed("tap_clients_merging") {
        return;
    }
    let sim = http_scenario("cycle", &["--kinds", "tools"]);
    let tap = TapCommand::start(
        &sim.at("/mcp"),
        &[
            "--name",
            "edge",
            "--merge-pages",
            "all",
            "--abandon-after",
            "1s",
        ],
    );
    let saw =
        SdkClient::Python.list_tools(&format!("{}/mcp", tap.tap_url), ClientTransport::Http, None);
    assert_eq!(saw.count, 5, "page 1 of the cycling server, unchanged");
    let judged = tap.client_when("mcp", |c| !c["kinds"]["tools"]["last_merge"].is_null());
    let merge = &judged["kinds"]["tools"]["last_merge"];
    assert_eq!(merge["outcome"], "first_page", "{judged:#}");
    assert_eq!(merge["fallback"], "cursor_cycle", "{judged:#}");
    let answer = tap.api_clients();
    assert_eq!(answer["taps"][0]["merges"]["incomplete"], 1, "{answer:#}");
    let metrics = tap.metrics();
    let incomplete = [("tap", "edge"), ("outcome", "incomplete")];
    assert_eq!(
        sample(&metrics, "mcp_tap_merges_total", &incomplete),
        Some(1.0)
    );
    let page = http_get_ok(&tap.web.at("/"));
    assert!(
        page.contains("merging fell back to page 1 (cursor_cycle)"),
        "{page}"
    );
}
