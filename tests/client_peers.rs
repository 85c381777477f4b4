//! The real SDK clients of `tests/peers/clients`, straight against the
//! simulator paging 14 tools by 8 (no tap): what each shows its users.
//! Python `mcp` and the TypeScript SDK 1.x read page 1 (8 tools); the
//! TypeScript SDK 2.x and fastmcp walk (14). The tap's end-to-end tests
//! rely on exactly this split, so it is pinned here first, over Streamable
//! HTTP with JSON and with SSE answers and over legacy HTTP+SSE.

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
