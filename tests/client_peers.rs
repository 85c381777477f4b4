//! The real SDK clients of `tests/peers/clients`, straight against the
//! simulator paging 14 tools by 8 (no tap): what each shows its users.
//! Python `mcp` and the TypeScript SDK 1.x read page 1 (8 tools); the
//! TypeScript SDK 2.x and fastmcp walk (14). The tap's end-to-end tests
//! rely on exactly this split, so it is pinned here first, over Streamable
//! HTTP with JSON and with SSE answers and over legacy HTTP+SSE; and the
//! demo's own `mcp-exporter simulate-client` is held to the same split.

use mcp_testkit::clients::{ClientSaw, ClientTransport, SdkClient};
use mcp_testkit::gateways::in_parallel;
use mcp_testkit::simulator::http_scenario;
use mcp_testkit::Proc;

const PAGING: [&str; 6] = ["--items", "14", "--page-size", "8", "--kinds", "tools"];

fn tools(n: usize) -> Vec<String> {
    (1..=n).map(|i| format!("tool-{i:03}")).collect()
}

/// Every installed client once against `url`: 8 tools for the ones that read
/// page 1, 14 for the walkers; the clients run side by side.
fn each_client_sees_its_share(url: &str, transport: ClientTransport) {
    let clients: Vec<SdkClient> = SdkClient::ALL
        .into_iter()
        .filter(|c| c.installed("client_peers"))
        .collect();
    type Job<'a> = Box<dyn FnOnce() -> (SdkClient, ClientSaw) + Send + 'a>;
    let jobs = clients
        .iter()
        .map(|&client| Box::new(move || (client, client.list_tools(url, transport, None))) as Job)
        .collect();
    for (client, saw) in in_parallel(jobs) {
        let expected = if client.walks() { tools(14) } else { tools(8) };
        assert_eq!(
            saw.names, expected,
            "{client:?} over {transport:?} at {url}"
        );
        assert_eq!(saw.count, expected.len(), "{client:?} over {transport:?}");
    }
}

fn simulator(flags: &[&str]) -> Proc {
    let mut all = PAGING.to_vec();
    all.extend_from_slice(flags);
    http_scenario("healthy", &all)
}

#[test]
fn streamable_http_json_answers() {
    let sim = simulator(&[]);
    each_client_sees_its_share(&sim.at("/mcp"), ClientTransport::Http);
}

#[test]
fn streamable_http_sse_answers() {
    let sim = simulator(&["--response", "sse"]);
    each_client_sees_its_share(&sim.at("/mcp"), ClientTransport::Http);
}

#[test]
fn legacy_http_sse() {
    let mut all = PAGING.to_vec();
    all.extend_from_slice(&["--transport", "sse"]);
    let sim = Proc::start(&[&["simulate", "--scenario", "healthy"][..], &all[..]].concat());
    each_client_sees_its_share(&sim.at("/sse"), ClientTransport::Sse);
}

/// `mcp-exporter simulate-client` (the demo's clients) behaves as the real
/// clients it stands for: `--walk` as the walkers, `--first-page-only` as
/// the ones that read page 1, and `--garbage-cursor` gets the simulator's
/// -32602.
#[test]
fn simulated_clients_match_the_real_ones() {
    let sim = simulator(&["--response", "sse"]);
    let url = sim.at("/mcp");
    let listing = |behaviour: &str| -> serde_json::Value {
        let run = mcp_testkit::process::run_exporter(&[
            "simulate-client",
            "--url",
            &url,
            "--name",
            "drill",
            behaviour,
        ]);
        assert!(run.success(), "{behaviour}: {}", run.describe());
        let line: serde_json::Value = serde_json::from_str(run.stdout.trim())
            .unwrap_or_else(|e| panic!("{behaviour}: not one JSON line ({e}): {}", run.describe()));
        assert_eq!(line["client"], "drill");
        line["listing"].clone()
    };
    let walk = listing("--walk");
    assert_eq!(
        (walk["items"].as_u64(), walk["pages"].as_u64()),
        (Some(14), Some(2)),
        "{walk}"
    );
    assert_eq!(walk["left_cursor"], false);
    let first = listing("--first-page-only");
    assert_eq!(
        (first["items"].as_u64(), first["pages"].as_u64()),
        (Some(8), Some(1)),
        "{first}"
    );
    assert_eq!(first["left_cursor"], true);
    let garbage = listing("--garbage-cursor");
    assert_eq!(garbage["error_code"].as_i64(), Some(-32602), "{garbage}");
    assert_eq!(garbage["pages"].as_u64(), Some(2));
}
