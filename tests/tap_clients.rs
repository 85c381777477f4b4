//! Real SDK clients through `mcp-exporter tap` in front of the simulator
//! paging 14 tools by 8: the Python SDK and the TypeScript SDK 1.x read page
//! 1 and are judged `down` with the missed tools named; the TypeScript SDK
//! 2.x client and fastmcp walk and are `healthy` — on `/api/clients` and in
//! `mcp_client_listings_total`. Over Streamable HTTP with JSON answers, with
//! SSE answers, and over legacy HTTP+SSE. One simulator and one tap per
//! test; the walkers go first so the tap knows the whole catalogue when the
//! page-1 readers come.

use mcp_testkit::clients::{ClientTransport, SdkClient, TapCommand};
use mcp_testkit::gateways::in_parallel;
use mcp_testkit::otlp::{OtlpReceiver, ReceivedSpan};
use mcp_testkit::process::run_exporter;
use mcp_testkit::sample;
use mcp_testkit::simulator::http_scenario;
use mcp_testkit::{wait_for, Proc};
use serde_json::Value;
use std::time::Duration;

const PAGING: [&str; 6] = ["--items", "14", "--page-size", "8", "--kinds", "tools"];

/// Each client's name as the tap sees it: the Python SDK's own default
/// (`mcp 0.1.0`), the others named by the test.
fn name(client: SdkClient) -> Option<&'static str> {
    match client {
        SdkClient::Python => None,
        SdkClient::TypeScript1 => Some("ts-sdk-1"),
        SdkClient::TypeScript2 => Some("ts-sdk-2"),
        SdkClient::FastMcp => Some("fastmcp-app"),
    }
}

fn label(client: SdkClient) -> &'static str {
    name(client).unwrap_or("mcp")
}

fn run_all(clients: &[SdkClient], url: &str, transport: ClientTransport) {
    type Job<'a> = Box<dyn FnOnce() -> usize + Send + 'a>;
    let jobs = clients
        .iter()
        .map(|&c| Box::new(move || c.list_tools(url, transport, name(c)).count) as Job)
        .collect();
    let seen = in_parallel(jobs);
    for (client, count) in clients.iter().zip(seen) {
        let expected = if client.walks() { 14 } else { 8 };
        assert_eq!(count, expected, "{client:?} through the tap");
    }
}

/// Every installed client through a tap in front of `upstream` (the
/// simulator's endpoint), then each judged as it behaved.
fn classified_right(upstream: &str, path: &str, transport: ClientTransport) {
    let installed: Vec<SdkClient> = SdkClient::ALL
        .into_iter()
        .filter(|c| c.installed("tap_clients"))
        .collect();
    // The TypeScript clients send no DELETE: their abandoned listing ends
    // by time.
    let tap = TapCommand::start(upstream, &["--name", "edge", "--abandon-after", "1s"]);
    let url = format!("{}{path}", tap.tap_url);
    let (walkers, readers): (Vec<SdkClient>, Vec<SdkClient>) =
        installed.iter().partition(|c| c.walks());
    run_all(&walkers, &url, transport);
    run_all(&readers, &url, transport);
    for client in &installed {
        let judged = tap.client_when(label(*client), |c| {
            c["kinds"]["tools"]["since_start"]["abandoned"]
                .as_u64()
                .unwrap_or(0)
                + c["kinds"]["tools"]["since_start"]["complete"]
                    .as_u64()
                    .unwrap_or(0)
                > 0
        });
        if client.walks() {
            walked(&judged);
        } else {
            read_page_one(&judged);
        }
    }
    listings_counted(&tap.metrics(), &installed);
}

fn walked(client: &Value) {
    assert_eq!(client["verdict"]["level"], "healthy", "{client:#}");
    let tools = &client["kinds"]["tools"];
    assert_eq!(tools["since_start"]["complete"], 1, "{client:#}");
    assert_eq!(tools["pages"], 2, "{client:#}");
    assert_eq!(tools["items_missed"], 0, "{client:#}");
}

fn read_page_one(client: &Value) {
    assert_eq!(client["verdict"]["level"], "down", "{client:#}");
    let reason = &client["verdict"]["reasons"][0];
    assert_eq!(reason["code"], "client_reads_prefix");
    let who = match client["versions"][0].as_str() {
        Some(v) => format!("{} {v}", client["client"].as_str().unwrap_or_default()),
        None => client["client"].as_str().unwrap_or_default().to_string(),
    };
    assert_eq!(
        reason["message"],
        format!(
            "{who} read page 1 of 2 in 1 of 1 tools listings: sees 8 of 14 tools, missing tool-009 … tool-014"
        ),
        "{client:#}"
    );
    let missed = &client["kinds"]["tools"]["last_abandoned"]["missed"];
    let names: Vec<String> = (9..=14).map(|i| format!("tool-{i:03}")).collect();
    assert_eq!(missed["names"], serde_json::json!(names), "{client:#}");
}

fn listings_counted(metrics: &str, clients: &[SdkClient]) {
    for client in clients {
        let outcome = if client.walks() {
            "complete"
        } else {
            "abandoned"
        };
        let labels = [
            ("tap", "edge"),
            ("client", label(*client)),
            ("kind", "tools"),
            ("outcome", outcome),
        ];
        assert_eq!(
            sample(metrics, "mcp_client_listings_total", &labels),
            Some(1.0),
            "{client:?}: {outcome}\n{metrics}"
        );
        let missed = sample(
            metrics,
            "mcp_client_items_missed",
            &[
                ("tap", "edge"),
                ("client", label(*client)),
                ("kind", "tools"),
            ],
        );
        let expected = if client.walks() { 0.0 } else { 6.0 };
        assert_eq!(missed, Some(expected), "{client:?}");
    }
}

/// With tracing on, each client listing the tap saw is a span of its own:
/// the walker's complete, the page-1 reader's abandoned with what it missed.
#[test]
fn a_span_per_client_listing() {
    let rt = tokio::runtime::Runtime::new().expect("runtime");
    let receiver = rt.block_on(OtlpReceiver::http());
    let sim = http_scenario("healthy", &PAGING);
    let endpoint = receiver.endpoint();
    let env = [
        ("OTEL_EXPORTER_OTLP_ENDPOINT", endpoint.as_str()),
        ("OTEL_BSP_SCHEDULE_DELAY", "200"),
    ];
    let tap = TapCommand::start_with_env(&sim.at("/mcp"), &["--name", "edge"], &env);
    let url = format!("{}/mcp", tap.tap_url);
    for (name, how) in [("agent-sdk", "--walk"), ("desk-app", "--first-page-only")] {
        let run = run_exporter(&["simulate-client", "--url", &url, "--name", name, how]);
        assert!(run.success(), "{}", run.describe());
    }
    let spans = wait_for(Duration::from_secs(60), "two client listing spans", || {
        let spans: Vec<ReceivedSpan> = receiver
            .spans()
            .into_iter()
            .filter(|s| s.span.name == "mcp.client.listing tools")
            .collect();
        (spans.len() == 2).then_some(spans)
    });
    let of = |client: &str| {
        spans
            .iter()
            .find(|s| s.attr("mcp.client.name").as_deref() == Some(client))
            .unwrap_or_else(|| panic!("no span of {client}: {spans:#?}"))
    };
    let walker = of("agent-sdk");
    assert_eq!(walker.attr("mcp.tap").as_deref(), Some("edge"));
    assert_eq!(
        walker.attr("mcp.pagination.outcome").as_deref(),
        Some("complete")
    );
    assert_eq!(walker.attr("mcp.pagination.pages").as_deref(), Some("2"));
    let reader = of("desk-app");
    assert_eq!(
        reader.attr("mcp.pagination.outcome").as_deref(),
        Some("abandoned")
    );
    assert_eq!(
        reader.attr("mcp.pagination.reason").as_deref(),
        Some("session_ended")
    );
    assert_eq!(reader.attr("mcp.client.items_missed").as_deref(), Some("6"));
    assert!(
        reader.event("mcp.client.items_missed").is_some(),
        "{reader:#?}"
    );
    assert_ne!(walker.trace_id(), reader.trace_id(), "a trace per listing");
}

/// Client names are label values a client chooses: past `--max-clients`
/// every new one is `other`, so the series stay bounded whatever names come.
#[test]
fn names_past_max_clients_are_other() {
    let sim = http_scenario("healthy", &PAGING);
    let tap = TapCommand::start(&sim.at("/mcp"), &["--name", "edge", "--max-clients", "3"]);
    let url = format!("{}/mcp", tap.tap_url);
    for i in 0..6 {
        let name = format!("app-{i}\u{1b}[31m");
        let run = run_exporter(&["simulate-client", "--url", &url, "--name", &name, "--walk"]);
        assert!(run.success(), "{}", run.describe());
    }
    let metrics = wait_for(Duration::from_secs(60), "six listings counted", || {
        let text = tap.metrics();
        let counted: f64 = text
            .lines()
            .filter(|l| {
                l.starts_with("mcp_client_listings_total{") && l.contains("outcome=\"complete\"")
            })
            .filter_map(|l| l.rsplit(' ').next()?.parse::<f64>().ok())
            .sum();
        (counted == 6.0).then_some(text)
    });
    let clients: std::collections::BTreeSet<&str> = metrics
        .lines()
        .filter(|l| l.starts_with("mcp_client_list_pages_total{"))
        .filter_map(|l| l.split("client=\"").nth(1)?.split('"').next())
        .collect();
    assert_eq!(clients.len(), 4, "three names and other: {clients:?}");
    assert!(clients.contains("other"), "{clients:?}");
    assert!(
        clients.iter().all(|c| !c.contains('\u{1b}')),
        "control characters are escaped: {clients:?}"
    );
    assert_eq!(
        sample(&metrics, "mcp_tap_clients", &[("tap", "edge")]),
        Some(4.0),
        "{metrics}"
    );
}

#[test]
fn streamable_http_json_answers() {
    let sim = http_scenario("healthy", &PAGING);
    classified_right(&sim.at("/mcp"), "/mcp", ClientTransport::Http);
}

#[test]
fn streamable_http_sse_answers() {
    let mut flags = PAGING.to_vec();
    flags.extend_from_slice(&["--response", "sse"]);
    let sim = http_scenario("healthy", &flags);
    classified_right(&sim.at("/mcp"), "/mcp", ClientTransport::Http);
}

#[test]
fn legacy_http_sse() {
    let mut args = vec!["simulate", "--scenario", "healthy", "--transport", "sse"];
    args.extend_from_slice(&PAGING);
    let sim = Proc::start(&args);
    classified_right(&sim.at("/sse"), "/sse", ClientTransport::Sse);
}

/// A report file that reached its bound leaves further listings out: each
/// one counted, the first one logged, nothing written past the bound.
#[test]
fn listings_left_out_of_a_full_report_are_counted() {
    let sim = http_scenario("healthy", &PAGING);
    let dir = tempfile::tempdir().expect("tempdir");
    let report = dir.path().join("listings.jsonl");
    let report_flag = report.display().to_string();
    let flags = [
        "--name",
        "edge",
        "--report",
        &report_flag,
        "--report.max-bytes",
        "1",
    ];
    let tap = TapCommand::start(&sim.at("/mcp"), &flags);
    let url = format!("{}/mcp", tap.tap_url);
    for _ in 0..3 {
        let run = run_exporter(&["simulate-client", "--url", &url, "--name", "app", "--walk"]);
        assert!(run.success(), "{}", run.describe());
    }
    let dropped = [("tap", "edge"), ("reason", "full")];
    let metrics = wait_for(Duration::from_secs(60), "three listings dropped", || {
        let text = tap.metrics();
        let n = sample(&text, "mcp_tap_report_lines_dropped_total", &dropped);
        (n == Some(3.0)).then_some(text)
    });
    assert_eq!(
        sample(
            &metrics,
            "mcp_tap_report_lines_dropped_total",
            &[("reason", "write_failed")]
        ),
        None,
        "created with the first drop of its reason: {metrics}"
    );
    let logged = tap.web.stderr().matches("report file full").count();
    assert_eq!(logged, 1, "logged once:\n{}", tap.web.stderr());
    let written = std::fs::metadata(&report).expect("the report file").len();
    assert_eq!(written, 0, "nothing past the bound");
}
