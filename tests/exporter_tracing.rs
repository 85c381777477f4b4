//! OTLP from the running exporter: spans arrive at a real receiver, the
//! histograms' exemplars point at exported traces, secrets and cursors never
//! leave, and a dead collector changes nothing about polling.

use mcp_testkit::exporter::scenarios_simulator_with_env;
use mcp_testkit::otlp::{OtlpReceiver, ReceivedSpan};
use mcp_testkit::{listing_attempts, sample, wait_for, ClosedPort, Exporter, Proc};
use std::collections::HashSet;
use std::time::Duration;

const TOKEN: &str = "tracing-secret-token-0815";

fn sim() -> (Proc, tempfile::NamedTempFile) {
    scenarios_simulator_with_env(
        "  - {name: ok, scenario: healthy}\n  - {name: cyc, scenario: cycle}\n  - {name: stale, scenario: stale-cursor, times: 1000}\n  - {name: locked, scenario: auth, token_env: SIM_TOKEN}\n",
        &[("SIM_TOKEN", TOKEN)],
    )
}

fn exporter(sim_url: &str, env: &[(&str, &str)]) -> Exporter {
    let mut all_env = vec![("SIM_TOKEN", TOKEN)];
    all_env.extend_from_slice(env);
    Exporter::start_with(
        &format!(
            "global:\n  schedule: {{every: 1s}}\n  jitter: 0s\n  kinds: [tools]\ntargets:\n  - {{name: ok, http: {{url: \"{u}/mcp/ok\"}}}}\n  - {{name: cyc, http: {{url: \"{u}/mcp/cyc\"}}}}\n  - {{name: stale, http: {{url: \"{u}/mcp/stale\"}}}}\n  - {{name: locked, http: {{url: \"{u}/mcp/locked\", bearer_token_env: SIM_TOKEN}}}}\n",
            u = sim_url
        ),
        &[],
        &all_env,
    )
}

/// Trace ids of every exemplar in an OpenMetrics text.
fn exemplar_trace_ids(text: &str) -> HashSet<String> {
    text.lines()
        .filter_map(|l| l.split_once("# {").map(|(_, e)| e))
        .filter_map(|e| e.split("trace_id=\"").nth(1))
        .filter_map(|e| e.split('"').next())
        .map(str::to_string)
        .collect()
}

fn check_protocol(protocol: &str) {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let receiver = rt.block_on(async {
        if protocol == "grpc" {
            OtlpReceiver::grpc().await
        } else {
            OtlpReceiver::http().await
        }
    });
    let (sim, _f) = sim();
    let endpoint = receiver.endpoint();
    let exp = exporter(
        &sim.url,
        &[
            ("OTEL_EXPORTER_OTLP_ENDPOINT", endpoint.as_str()),
            ("OTEL_EXPORTER_OTLP_PROTOCOL", protocol),
            ("OTEL_BSP_SCHEDULE_DELAY", "200"),
        ],
    );
    // Wait until a few polls of every target were exported.
    let spans = wait_for(Duration::from_secs(60), "spans of every target", || {
        let spans = receiver.spans();
        let targets: HashSet<String> = spans
            .iter()
            .filter(|s| s.span.name == "mcp.poll")
            .filter_map(|s| s.attr("mcp.target"))
            .collect();
        (targets.len() == 4 && spans.len() > 40).then_some(spans)
    });
    let by_id: std::collections::HashMap<String, &ReceivedSpan> =
        spans.iter().map(|s| (s.span_id(), s)).collect();

    // Page spans are CLIENT spans named by the method, under a listing
    // span under the poll.
    let page = spans
        .iter()
        .find(|s| {
            s.span.name == "tools/list"
                && s.attr("mcp.pagination.page_index").as_deref() == Some("1")
        })
        .expect("a second-page span");
    assert_eq!(page.attr("mcp.method.name").as_deref(), Some("tools/list"));
    assert_eq!(page.attr("network.transport").as_deref(), Some("tcp"));
    assert_eq!(page.attr("server.address").as_deref(), Some("127.0.0.1"));
    let listing = by_id
        .get(&page.parent_span_id())
        .expect("listing span exported");
    let poll = by_id
        .get(&listing.parent_span_id())
        .expect("poll span exported");
    assert_eq!(poll.span.name, "mcp.poll");
    assert_eq!(poll.trace_id(), page.trace_id());

    // A cycle abort and a -32602 restart are visible on their listings.
    assert!(spans
        .iter()
        .any(|s| s.attr("mcp.pagination.reason").as_deref() == Some("cursor_cycle")));
    assert!(spans
        .iter()
        .any(|s| s.span.events.iter().any(|e| e.name.contains("restart"))));

    // Nothing secret and no raw cursor anywhere in what was exported.
    for s in &spans {
        let text = s.all_text();
        assert!(
            !text.contains(TOKEN),
            "token leaked in span {}",
            s.span.name
        );
        assert!(
            !text.contains("\"cursor\""),
            "raw cursor in span {}",
            s.span.name
        );
    }
    for r in receiver.received() {
        let dump = format!("{:?}", r.request);
        assert!(!dump.contains(TOKEN));
    }

    // Every exemplar in /metrics names a trace the collector received.
    let text = exp.metrics();
    let exemplars = exemplar_trace_ids(&text);
    assert!(!exemplars.is_empty(), "no exemplars in:\n{text}");
    let exported: HashSet<String> = receiver.spans().iter().map(|s| s.trace_id()).collect();
    let missing: Vec<&String> = exemplars
        .iter()
        .filter(|t| !exported.contains(*t))
        .collect();
    // The newest poll may still be in the export queue: allow a short wait.
    if !missing.is_empty() {
        wait_for(Duration::from_secs(20), "exemplar traces exported", || {
            let exported: HashSet<String> = receiver.spans().iter().map(|s| s.trace_id()).collect();
            exemplars.iter().all(|t| exported.contains(t)).then_some(())
        });
    }
    drop(exp);
    drop(sim);
}

#[test]
fn spans_and_exemplars_over_http_protobuf() {
    check_protocol("http/protobuf");
}

#[test]
fn spans_and_exemplars_over_grpc() {
    check_protocol("grpc");
}

#[test]
fn an_unreachable_collector_does_not_disturb_polling() {
    let collector = ClosedPort::new();
    let endpoint = collector.url("");
    let (sim, _f) = sim();
    let exp = exporter(
        &sim.url,
        &[("OTEL_EXPORTER_OTLP_ENDPOINT", endpoint.as_str())],
    );
    let ok_tools = [("target", "ok"), ("kind", "tools")];
    let text = exp.wait_metrics(Duration::from_secs(60), "five polls of `ok`", |text| {
        listing_attempts(text, &ok_tools).is_some_and(|v| v >= 5.0)
    });
    assert_eq!(sample(&text, "mcp_up", &[("target", "ok")]), Some(1.0));
    assert_eq!(
        sample(
            &text,
            "mcp_listing_items",
            &[("target", "ok"), ("kind", "tools")]
        ),
        Some(20.0)
    );
    assert_eq!(sample(&text, "mcp_up", &[("target", "locked")]), Some(1.0));
    drop(exp);
    drop(sim);
}
