//! Gateways and servers that pass pages through, in front of the exporter
//! (docs/gateways.md explains every case):
//!
//! - a plain Python `mcp` 1.x `FastMCP` server run with
//!   `transport="streamable-http"` (stateful): the default (negotiating)
//!   probe and scheduled mode list it completely. Before the negotiation
//!   fix every kind was `transport_error` "session expired (HTTP 404)" and
//!   `mcp_up` stayed 0;
//! - npm `supergateway` (SSE, Streamable HTTP stateless and stateful) and
//!   PyPI `mcp-proxy` in front of `mcp-exporter simulate` origins that
//!   behave and misbehave: what `probe --json` reports per gateway ×
//!   scenario, and in `serve` (each origin a `reference:`) that
//!   pass-through hides nothing.
//!
//! Everything is driven through the binary. Peers are installed, pinned, by
//! `scripts/install-peers.sh`; a missing peer skips loudly, or fails with
//! `INTEROP_REQUIRE_PEERS=1`.

use mcp_testkit::gateways::{
    behind, expect, gateway_cases, listings, missing, probe, pypi_mcp_proxy, reference, run_cases,
    s, seen, serve, stdio_target, supergateway, up, url_target, Behind, SgMode, CYCLE, HEALTHY,
    PYPI_MCP_PROXY, PYTHON_MCP1, SERVE_LIMIT, STALE, SUPERGATEWAY,
};
use mcp_testkit::peers::{installed, peer_path};
use mcp_testkit::{listing, names, sample, Exporter, Proc};

const LEGACY: &str = "2025-11-25";

// ---------------------------------------------------------------------------
// Python `mcp` 1.x stateful Streamable HTTP server
// ---------------------------------------------------------------------------

fn fastmcp1_server() -> Proc {
    let argv = vec![
        peer_path(PYTHON_MCP1),
        peer_path("python-mcp1/paginating_fastmcp1.py"),
        s("0"),
    ];
    Proc::start_argv("mcp 1.x FastMCP", &argv, &[])
}

/// (kind, unique items, pages) of the paginating catalogue.
const PAGINATING: [(&str, u64, u64); 4] = [
    ("tools", 23, 5),
    ("prompts", 7, 3),
    ("resources", 12, 3),
    ("resource_templates", 4, 2),
];

#[test]
fn mcp1_fastmcp_default_negotiation_lists_everything() {
    if !installed(
        "mcp1_fastmcp_default_negotiation_lists_everything",
        &[PYTHON_MCP1],
    ) {
        return;
    }
    let server = fastmcp1_server();
    let (code, report) = probe(&["--timeout", "30s", "--url", &server.at("/mcp")]);
    assert_eq!(report["session_error"], serde_json::Value::Null, "{report}");
    assert_eq!(code, Some(0), "{report}");
    assert_eq!(report["protocol_version"], LEGACY);
    assert_eq!(report["transport"], "streamable_http");
    assert_eq!(report["server"]["name"], "paginating-fastmcp1");
    assert_eq!(report["server"]["version"], "1.30.0");
    for (kind, unique, pages) in PAGINATING {
        assert_eq!(
            seen(&report, kind),
            expect(LEGACY, "complete", None, unique, pages, None),
            "{kind}: {report}"
        );
    }
    let tool_names: Vec<String> = (0..23).map(|i| format!("tool_{i:02}")).collect();
    assert_eq!(names(listing(&report, "tools")), tool_names);
}

#[test]
fn mcp1_fastmcp_scheduled_is_up() {
    if !installed("mcp1_fastmcp_scheduled_is_up", &[PYTHON_MCP1]) {
        return;
    }
    let server = fastmcp1_server();
    let exporter = Exporter::start(&format!(
        "global:\n  schedule: {{every: 2s}}\n  jitter: 0s\ntargets:\n  - name: fastmcp1\n    http:\n      url: {}\n",
        server.at("/mcp")
    ));
    let text = exporter.wait_metrics(SERVE_LIMIT, "two polls of fastmcp1", |t| {
        listings(t, "fastmcp1") >= 2.0
    });
    assert_eq!(up(&text, "fastmcp1"), Some(1.0), "{text}");
    for (kind, unique, _) in PAGINATING {
        let labels = [("target", "fastmcp1"), ("kind", kind)];
        assert_eq!(
            sample(&text, "mcp_listing_items", &labels),
            Some(unique as f64),
            "{kind}"
        );
    }
    assert!(
        text.contains("protocol_version=\"2025-11-25\""),
        "negotiated 2025-11-25: {text}"
    );
}

// ---------------------------------------------------------------------------
// supergateway
// ---------------------------------------------------------------------------

/// 260 pages of 5, through a pass-through gateway.
const BIG: &str = "--scenario healthy --items 1300";

/// The origins behind supergateway in `mode`, and what it reports.
fn supergateway_scenarios(mode: SgMode) -> Vec<Behind> {
    let endpoint = match mode {
        SgMode::Sse => "/sse",
        _ => "/mcp",
    };
    let stale = match mode {
        // One origin process per request: every continuation meets a fresh
        // origin whose first continuation is refused, so the restart fails too.
        SgMode::Stateless => expect(LEGACY, "error", Some("invalid_cursor"), 5, 1, Some(-32602)),
        // One origin for the gateway (SSE) or per session (stateful):
        // -32602 once, restart, complete.
        _ => expect(LEGACY, "complete", None, 20, 4, Some(-32602)),
    };
    let mut scenarios = passed_through(endpoint);
    scenarios.push(behind("stale-cursor", STALE, endpoint, stale));
    if matches!(mode, SgMode::Sse) {
        scenarios.push(behind(
            "1300 items (260 pages)",
            BIG,
            endpoint,
            expect(LEGACY, "complete", None, 1300, 260, None),
        ));
    }
    scenarios
}

/// A healthy and a cycling origin, as a pass-through gateway shows them.
fn passed_through(endpoint: &'static str) -> Vec<Behind> {
    vec![
        behind(
            "healthy",
            HEALTHY,
            endpoint,
            expect(LEGACY, "complete", None, 20, 4, None),
        ),
        // The loop is the origin's and it reaches the exporter intact.
        behind(
            "cycle",
            CYCLE,
            endpoint,
            expect(LEGACY, "aborted", Some("cursor_cycle"), 15, 3, None),
        ),
    ]
}

#[test]
fn zoo_supergateway_passes_pages_through() {
    if !installed("zoo_supergateway_passes_pages_through", &[SUPERGATEWAY]) {
        return;
    }
    let mut cases = Vec::new();
    let mut gateways = Vec::new();
    for mode in [SgMode::Sse, SgMode::Stateless, SgMode::Stateful] {
        let (started_cases, started) = gateway_cases(
            &format!("supergateway {mode:?}"),
            supergateway_scenarios(mode),
            |origin| supergateway(mode, origin),
        );
        cases.extend(started_cases);
        gateways.extend(started);
    }
    run_cases(&cases);
    supergateway_hides_nothing_from_a_reference();
}

/// Scheduled, with each origin as a reference: pass-through hides nothing.
fn supergateway_hides_nothing_from_a_reference() {
    let sse_healthy = supergateway(SgMode::Sse, HEALTHY);
    let stateful_cycle = supergateway(SgMode::Stateful, CYCLE);
    let exporter = serve(&format!(
        "{}{}{}{}",
        stdio_target("origin-healthy", HEALTHY),
        stdio_target("origin-cycle", CYCLE),
        url_target(
            "sg-sse-healthy",
            &sse_healthy.at("/sse"),
            &reference("origin-healthy")
        ),
        url_target(
            "sg-stateful-cycle",
            &stateful_cycle.at("/mcp"),
            &reference("origin-cycle")
        ),
    ));
    let text = exporter.wait_metrics(SERVE_LIMIT, "the healthy gateway compared", |t| {
        missing(t, "sg-sse-healthy", "origin-healthy").is_some()
            && listings(t, "sg-stateful-cycle") >= 2.0
    });
    assert_eq!(
        missing(&text, "sg-sse-healthy", "origin-healthy"),
        Some(0.0)
    );
    assert_eq!(up(&text, "sg-sse-healthy"), Some(1.0));
    assert_eq!(up(&text, "sg-stateful-cycle"), Some(0.0));
    let cycle_aborts = [
        ("target", "sg-stateful-cycle"),
        ("kind", "tools"),
        ("guard", "cursor_cycle"),
    ];
    assert!(sample(&text, "mcp_listing_aborts_total", &cycle_aborts).unwrap_or(0.0) >= 1.0);
    // The origin never completes, so there is nothing to compare with.
    assert_eq!(missing(&text, "sg-stateful-cycle", "origin-cycle"), None);
}

// ---------------------------------------------------------------------------
// PyPI mcp-proxy (Python `mcp` 1.x)
// ---------------------------------------------------------------------------

#[test]
fn zoo_pypi_mcp_proxy_passes_pages_through() {
    if !installed("zoo_pypi_mcp_proxy_passes_pages_through", &[PYPI_MCP_PROXY]) {
        return;
    }
    // Streamable HTTP, negotiated: the stateful `mcp` 1.x front that made
    // the exporter fail before the negotiation fix.
    let mut scenarios = passed_through("/mcp");
    let stale = expect(LEGACY, "complete", None, 20, 4, Some(-32602));
    scenarios.push(behind("stale-cursor", STALE, "/mcp", stale.clone()));
    // Legacy SSE front of a fresh gateway (its origin's stale count is fresh too).
    scenarios.push(behind("stale-cursor", STALE, "/sse", stale));
    let (cases, _gateways) = gateway_cases("PyPI mcp-proxy", scenarios, pypi_mcp_proxy);
    run_cases(&cases);
}
