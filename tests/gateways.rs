//! Real gateways and a real Python `mcp` 1.x server in front of the exporter.
//!
//! - A plain `mcp` 1.x `FastMCP` server run with `transport="streamable-http"`
//!   (stateful): the default (negotiating) probe and scheduled mode list it
//!   completely. Before the negotiation fix every kind was `transport_error`
//!   "session expired (HTTP 404)" and `mcp_up` stayed 0.
//! - The gateway zoo: npm `supergateway` (SSE, Streamable HTTP stateless and
//!   stateful), npm `mcp-proxy`, PyPI `mcp-proxy`, PyPI `fastmcp`
//!   (`create_proxy`, `mount`), each in front of `mcp-exporter simulate`
//!   origins that behave and misbehave. For each gateway × scenario the test
//!   pins what `probe --json` reports, and `serve` (the gateway as a target,
//!   each origin as a `reference:`) pins what only the reference comparison
//!   reveals.
//!
//! Everything is driven through the binary. Peers are installed, pinned, by
//! `scripts/install-peers.sh`; a missing peer skips loudly, or fails with
//! `INTEROP_REQUIRE_PEERS=1`. docs/gateways.md explains every case.

#[path = "common/zoo.rs"]
mod zoo;

use std::time::Duration;
use zoo::{
    api_target, exporter_bin, in_parallel, installed, listing, names, peer_path, probe, sample,
    seen, simulate_stdio, Exporter, Seen, Server,
};

/// A gateway to start (see [`in_parallel`]).
type Job<'a> = Box<dyn FnOnce() -> Server + Send + 'a>;

const SUPERGATEWAY: &str = "node_modules/supergateway/dist/index.js";
const NPM_MCP_PROXY: &str = "node_modules/mcp-proxy/dist/bin/mcp-proxy.mjs";
const LOOPBACK: &str = "node/loopback.cjs";
const PYTHON_V1: &str = "python-v1/.venv/bin/python";
const PYPI_MCP_PROXY: &str = "python-v1/.venv/bin/mcp-proxy";
const FASTMCP_PYTHON: &str = "fastmcp/.venv/bin/python";
const PYTHON_V2: &str = "python/.venv/bin/python";

/// How long a `serve` run may take to show what a case waits for.
const SERVE_LIMIT: Duration = Duration::from_secs(120);

fn s(v: &str) -> String {
    v.to_string()
}

/// What a listing must look like (see [`Seen`]).
fn expect(
    protocol: &str,
    outcome: &str,
    reason: Option<&str>,
    unique: u64,
    pages: u64,
    rpc_code: Option<i64>,
) -> Seen {
    Seen {
        protocol: s(protocol),
        outcome: s(outcome),
        reason: reason.map(s),
        unique,
        pages,
        rpc_code,
    }
}

/// One probe of one gateway endpoint, and what it must report for tools.
struct Case {
    name: String,
    url: String,
    flags: Vec<&'static str>,
    expect: Seen,
}

/// Probes every case (tools only) and fails once with the whole table of
/// mismatches, so one run shows every difference.
fn run_cases(cases: &[Case]) {
    let mut wrong = Vec::new();
    for case in cases {
        let mut args = vec!["--kind", "tools", "--timeout", "30s", "--url", &case.url];
        args.extend(case.flags.iter().copied());
        let (_, report) = probe(&args);
        let got = seen(&report, "tools");
        eprintln!("case {:<40} {got:?}", case.name);
        if got != case.expect {
            wrong.push(format!(
                "{}:\n  expected {:?}\n  got      {got:?}\n  report   {}",
                case.name, case.expect, report["listings"][0]
            ));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

// ---------------------------------------------------------------------------
// Launchers
// ---------------------------------------------------------------------------

fn node_gateway(what: &str, script: &str, args: Vec<String>) -> Server {
    let mut argv = vec![
        s("node"),
        s("--require"),
        peer_path(LOOPBACK),
        peer_path(script),
    ];
    argv.extend(args);
    Server::start(what, &argv, &[])
}

#[derive(Clone, Copy, Debug)]
enum SgMode {
    Sse,
    Stateless,
    Stateful,
}

/// supergateway in front of a stdio simulator; forced onto loopback by the
/// preload, which also announces the port (`--port 0`).
fn supergateway(mode: SgMode, origin: &str) -> Server {
    let mut args = vec![
        s("--stdio"),
        simulate_stdio(origin).join(" "),
        s("--port"),
        s("0"),
        s("--logLevel"),
        s("none"),
    ];
    match mode {
        SgMode::Sse => {}
        SgMode::Stateless => args.extend([s("--outputTransport"), s("streamableHttp")]),
        SgMode::Stateful => {
            args.extend([s("--outputTransport"), s("streamableHttp"), s("--stateful")])
        }
    }
    node_gateway(
        &format!("supergateway {mode:?} {origin}"),
        SUPERGATEWAY,
        args,
    )
}

fn npm_mcp_proxy(origin: &str) -> Server {
    let mut args = vec![s("--port"), s("0"), s("--host"), s("127.0.0.1"), s("--")];
    args.extend(simulate_stdio(origin));
    node_gateway(&format!("npm mcp-proxy {origin}"), NPM_MCP_PROXY, args)
}

fn pypi_mcp_proxy(origin: &str) -> Server {
    let mut argv = vec![
        peer_path(PYPI_MCP_PROXY),
        s("--port"),
        s("0"),
        s("--host"),
        s("127.0.0.1"),
        exporter_bin(),
        s("--"),
    ];
    argv.extend(simulate_stdio(origin).into_iter().skip(1));
    Server::start(&format!("PyPI mcp-proxy {origin}"), &argv, &[])
}

fn fastmcp_gateway(args: &[String]) -> Server {
    let mut argv = vec![peer_path(FASTMCP_PYTHON), peer_path("fastmcp/gateway.py")];
    argv.extend(args.iter().cloned());
    Server::start(&format!("fastmcp gateway {args:?}"), &argv, &[])
}

/// One HTTP simulator serving the named virtual servers (`--scenarios`).
fn http_origins(servers: &str) -> (Server, tempfile::NamedTempFile) {
    let file = tempfile::NamedTempFile::new().expect("temp file");
    std::fs::write(file.path(), format!("servers:\n{servers}")).expect("write scenarios");
    let argv = vec![
        exporter_bin(),
        s("simulate"),
        s("--transport"),
        s("http"),
        s("--scenarios"),
        file.path().to_string_lossy().into_owned(),
    ];
    (Server::start("simulator", &argv, &[]), file)
}

/// YAML for a stdio origin target running the simulator.
fn stdio_target(name: &str, origin: &str) -> String {
    let args: Vec<String> = simulate_stdio(origin)
        .into_iter()
        .skip(1)
        .map(|a| format!("\"{a}\""))
        .collect();
    format!(
        "  - name: {name}\n    command: \"{}\"\n    args: [{}]\n",
        exporter_bin(),
        args.join(", ")
    )
}

fn url_target(name: &str, url: &str, extra: &str) -> String {
    format!("  - name: {name}\n    url: {url}\n{extra}")
}

/// A scheduled exporter: tools only, every 3 s, no jitter, no garbage-cursor probe.
fn serve(targets: &str) -> Exporter {
    Exporter::start(&format!(
        "global:\n  schedule: {{every: 3s}}\n  jitter: 0s\n  kinds: [tools]\n  page_timeout: 30s\n  invalid_cursor_probe: false\ntargets:\n{targets}"
    ))
}

fn tools(target: &str) -> [(&str, &str); 2] {
    [("target", target), ("kind", "tools")]
}

fn missing(text: &str, target: &str, reference: &str) -> Option<f64> {
    sample(
        text,
        "mcp_reference_missing_items",
        &[
            ("target", target),
            ("kind", "tools"),
            ("reference", reference),
        ],
    )
}

fn listings(text: &str, target: &str) -> f64 {
    sample(text, "mcp_listings_total", &tools(target)).unwrap_or(0.0)
}

// ---------------------------------------------------------------------------
// Python `mcp` 1.x stateful Streamable HTTP server
// ---------------------------------------------------------------------------

fn fastmcp1_server() -> Server {
    let argv = vec![
        peer_path(PYTHON_V1),
        peer_path("python-v1/paginating_fastmcp1.py"),
        s("0"),
    ];
    Server::start("mcp 1.x FastMCP", &argv, &[])
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
        &[PYTHON_V1],
    ) {
        return;
    }
    let server = fastmcp1_server();
    let url = format!("{}/mcp", server.url);
    let (code, report) = probe(&["--timeout", "30s", "--url", &url]);
    assert_eq!(report["session_error"], serde_json::Value::Null, "{report}");
    assert_eq!(code, Some(0), "{report}");
    assert_eq!(report["protocol_version"], "2025-11-25");
    assert_eq!(report["transport"], "streamable_http");
    assert_eq!(report["server"]["name"], "paginating-fastmcp1");
    assert_eq!(report["server"]["version"], "1.30.0");
    for (kind, unique, pages) in PAGINATING {
        assert_eq!(
            seen(&report, kind),
            expect("2025-11-25", "complete", None, unique, pages, None),
            "{kind}: {report}"
        );
    }
    let tool_names: Vec<String> = (0..23).map(|i| format!("tool_{i:02}")).collect();
    assert_eq!(names(&report, "tools"), tool_names);
}

#[test]
fn mcp1_fastmcp_scheduled_is_up() {
    if !installed("mcp1_fastmcp_scheduled_is_up", &[PYTHON_V1]) {
        return;
    }
    let server = fastmcp1_server();
    let exporter = Exporter::start(&format!(
        "global:\n  schedule: {{every: 2s}}\n  jitter: 0s\ntargets:\n  - name: fastmcp1\n    url: {}/mcp\n",
        server.url
    ));
    let text = exporter.wait_until(SERVE_LIMIT, "two polls of fastmcp1", |t| {
        sample(t, "mcp_listings_total", &tools("fastmcp1")).is_some_and(|v| v >= 2.0)
    });
    assert_eq!(
        sample(&text, "mcp_up", &[("target", "fastmcp1")]),
        Some(1.0),
        "{text}"
    );
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
// supergateway: pass-through
// ---------------------------------------------------------------------------

const HEALTHY: &str = "--scenario healthy";
const CYCLE: &str = "--scenario cycle";
const STALE: &str = "--scenario stale-cursor";
/// 260 pages of 5, through a pass-through gateway.
const BIG: &str = "--scenario healthy --items 1300";

#[test]
fn zoo_supergateway_passes_pages_through() {
    if !installed("zoo_supergateway_passes_pages_through", &[SUPERGATEWAY]) {
        return;
    }
    let legacy = "2025-11-25";
    let mut cases = Vec::new();
    let mut gateways = Vec::new();
    for mode in [SgMode::Sse, SgMode::Stateless, SgMode::Stateful] {
        let (endpoint, flags): (&str, Vec<&'static str>) = match mode {
            SgMode::Sse => ("/sse", vec![]),
            _ => ("/mcp", vec![]),
        };
        let scenarios: Vec<(&str, &str, Seen)> = vec![
            (
                "healthy",
                HEALTHY,
                expect(legacy, "complete", None, 20, 4, None),
            ),
            // The loop is the origin's and it reaches the exporter intact.
            (
                "cycle",
                CYCLE,
                expect(legacy, "aborted", Some("cursor_cycle"), 15, 3, None),
            ),
            (
                "stale-cursor",
                STALE,
                match mode {
                    // One origin process per request: every continuation meets a
                    // fresh origin whose first continuation is refused, so the
                    // restart fails too.
                    SgMode::Stateless => {
                        expect(legacy, "error", Some("invalid_cursor"), 5, 1, Some(-32602))
                    }
                    // One origin for the gateway (SSE) or per session (stateful):
                    // -32602 once, restart, complete.
                    _ => expect(legacy, "complete", None, 20, 4, Some(-32602)),
                },
            ),
        ];
        let started = in_parallel(
            scenarios
                .iter()
                .map(|&(_, origin, _)| Box::new(move || supergateway(mode, origin)) as Job)
                .collect(),
        );
        for ((name, _, want), gateway) in scenarios.into_iter().zip(started) {
            cases.push(Case {
                name: format!("supergateway {mode:?} × {name}"),
                url: format!("{}{endpoint}", gateway.url),
                flags: flags.clone(),
                expect: want,
            });
            gateways.push(gateway);
        }
    }
    let big = supergateway(SgMode::Sse, BIG);
    cases.push(Case {
        name: s("supergateway Sse × 1300 items (260 pages)"),
        url: format!("{}/sse", big.url),
        flags: vec![],
        expect: expect(legacy, "complete", None, 1300, 260, None),
    });
    run_cases(&cases);

    // Scheduled, with each origin as a reference: pass-through hides nothing.
    let sse_healthy = supergateway(SgMode::Sse, HEALTHY);
    let stateful_cycle = supergateway(SgMode::Stateful, CYCLE);
    let exporter = serve(&format!(
        "{}{}{}{}",
        stdio_target("origin-healthy", HEALTHY),
        stdio_target("origin-cycle", CYCLE),
        url_target(
            "sg-sse-healthy",
            &format!("{}/sse", sse_healthy.url),
            "    reference: [{target: origin-healthy}]\n"
        ),
        url_target(
            "sg-stateful-cycle",
            &format!("{}/mcp", stateful_cycle.url),
            "    reference: [{target: origin-cycle}]\n"
        ),
    ));
    let text = exporter.wait_until(SERVE_LIMIT, "the healthy gateway compared", |t| {
        missing(t, "sg-sse-healthy", "origin-healthy").is_some()
            && listings(t, "sg-stateful-cycle") >= 2.0
    });
    assert_eq!(
        missing(&text, "sg-sse-healthy", "origin-healthy"),
        Some(0.0)
    );
    assert_eq!(
        sample(&text, "mcp_up", &[("target", "sg-sse-healthy")]),
        Some(1.0)
    );
    assert_eq!(
        sample(&text, "mcp_up", &[("target", "sg-stateful-cycle")]),
        Some(0.0)
    );
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
// npm mcp-proxy: merges pages, 64-page limit
// ---------------------------------------------------------------------------

#[test]
fn zoo_npm_mcp_proxy_merges_pages() {
    if !installed("zoo_npm_mcp_proxy_merges_pages", &[NPM_MCP_PROXY]) {
        return;
    }
    // Its SDK 2 front answers 2026-07-28 (`--modern` is on by default) and
    // speaks 2025-era to the stdio origin.
    let modern = "2026-07-28";
    let scenarios: Vec<(&str, String, Seen)> = vec![
        (
            "healthy",
            s(HEALTHY),
            expect(modern, "complete", None, 20, 1, None),
        ),
        // The gateway walks the loop itself until its page limit.
        (
            "cycle",
            s(CYCLE),
            expect(modern, "error", Some("rpc_error"), 0, 0, Some(-32603)),
        ),
        // The origin's -32602 on page 2 comes back as the answer to our page 1
        // (no cursor sent): `invalid_params`, not `invalid_cursor`.
        (
            "stale-cursor",
            s(STALE),
            expect(modern, "error", Some("invalid_params"), 0, 0, Some(-32602)),
        ),
        // 64 upstream pages: the limit, still whole.
        (
            "320 items (64 pages)",
            s("--scenario healthy --items 320"),
            expect(modern, "complete", None, 320, 1, None),
        ),
        // 65 upstream pages: -32603 "exceeded listMaxPages (64)".
        (
            "325 items (65 pages)",
            s("--scenario healthy --items 325"),
            expect(modern, "error", Some("rpc_error"), 0, 0, Some(-32603)),
        ),
        (
            "endless",
            s("--scenario endless"),
            expect(modern, "error", Some("rpc_error"), 0, 0, Some(-32603)),
        ),
    ];
    let mut cases = Vec::new();
    let mut gateways = Vec::new();
    let started = in_parallel(
        scenarios
            .iter()
            .map(|(_, origin, _)| Box::new(move || npm_mcp_proxy(origin)) as Job)
            .collect(),
    );
    for ((name, _, want), gateway) in scenarios.into_iter().zip(started) {
        cases.push(Case {
            name: format!("npm mcp-proxy × {name}"),
            url: format!("{}/mcp", gateway.url),
            flags: vec![],
            expect: want,
        });
        gateways.push(gateway);
    }
    run_cases(&cases);

    let healthy = npm_mcp_proxy(HEALTHY);
    let exporter = serve(&format!(
        "{}{}",
        stdio_target("origin-healthy", HEALTHY),
        url_target(
            "npm-proxy-healthy",
            &format!("{}/mcp", healthy.url),
            "    reference: [{target: origin-healthy}]\n"
        ),
    ));
    let text = exporter.wait_until(SERVE_LIMIT, "the gateway compared", |t| {
        missing(t, "npm-proxy-healthy", "origin-healthy").is_some()
    });
    assert_eq!(
        missing(&text, "npm-proxy-healthy", "origin-healthy"),
        Some(0.0)
    );
    assert_eq!(
        sample(&text, "mcp_up", &[("target", "npm-proxy-healthy")]),
        Some(1.0)
    );
}

// ---------------------------------------------------------------------------
// PyPI mcp-proxy (Python `mcp` 1.x): pass-through
// ---------------------------------------------------------------------------

#[test]
fn zoo_pypi_mcp_proxy_passes_pages_through() {
    if !installed("zoo_pypi_mcp_proxy_passes_pages_through", &[PYPI_MCP_PROXY]) {
        return;
    }
    let legacy = "2025-11-25";
    let scenarios: Vec<(&str, &str, Seen)> = vec![
        (
            "healthy",
            HEALTHY,
            expect(legacy, "complete", None, 20, 4, None),
        ),
        (
            "cycle",
            CYCLE,
            expect(legacy, "aborted", Some("cursor_cycle"), 15, 3, None),
        ),
        (
            "stale-cursor",
            STALE,
            expect(legacy, "complete", None, 20, 4, Some(-32602)),
        ),
    ];
    let mut cases = Vec::new();
    let mut gateways = Vec::new();
    let mut started = in_parallel(
        scenarios
            .iter()
            .map(|&(_, origin, _)| Box::new(move || pypi_mcp_proxy(origin)) as Job)
            .chain([Box::new(|| pypi_mcp_proxy(STALE)) as Job])
            .collect(),
    );
    let sse = started.pop().expect("the SSE gateway");
    for ((name, _, want), gateway) in scenarios.into_iter().zip(started) {
        // Streamable HTTP, negotiated: the stateful `mcp` 1.x front that made
        // the exporter fail before the negotiation fix.
        cases.push(Case {
            name: format!("PyPI mcp-proxy /mcp × {name}"),
            url: format!("{}/mcp", gateway.url),
            flags: vec![],
            expect: want.clone(),
        });
        gateways.push(gateway);
    }
    // Legacy SSE front of a fresh gateway (its origin's stale count is fresh too).
    cases.push(Case {
        name: s("PyPI mcp-proxy /sse × stale-cursor"),
        url: format!("{}/sse", sse.url),
        flags: vec![],
        expect: expect(legacy, "complete", None, 20, 4, Some(-32602)),
    });
    run_cases(&cases);
}

// ---------------------------------------------------------------------------
// FastMCP create_proxy and mount: merge, page limit, per-protocol catalogues
// ---------------------------------------------------------------------------

/// `limit` is exactly FastMCP's 250 upstream pages, `big` one page more.
const FASTMCP_ORIGINS: &str = "  - {name: healthy, scenario: healthy}\n  - {name: cycle, scenario: cycle}\n  - {name: stale, scenario: stale-cursor}\n  - {name: limit, scenario: healthy, items: 1250}\n  - {name: big, scenario: healthy, items: 1255}\n  - {name: endless, scenario: endless}\n  - {name: modern, scenario: healthy, protocol: \"2026-07-28\"}\n";

#[test]
fn zoo_fastmcp_create_proxy_merges_and_drops() {
    if !installed(
        "zoo_fastmcp_create_proxy_merges_and_drops",
        &[FASTMCP_PYTHON],
    ) {
        return;
    }
    let (sim, _scenarios) = http_origins(FASTMCP_ORIGINS);
    let proxy = |name: &str| fastmcp_gateway(&[s("proxy"), format!("{}/mcp/{name}", sim.url)]);
    let (modern, legacy) = ("2026-07-28", "2025-11-25");
    let pin = vec!["--protocol", "2025-11-25"];
    // (origin, flags, expected). The stale origin is probed at 2025-11-25
    // first, so that probe meets its one -32602.
    let table: Vec<(&str, Vec<&'static str>, Seen)> = vec![
        // A legacy-only origin serves a 2026-07-28 client nothing.
        (
            "healthy",
            vec![],
            expect(modern, "complete", None, 0, 1, None),
        ),
        (
            "healthy",
            pin.clone(),
            expect(legacy, "complete", None, 20, 1, None),
        ),
        // The origin's cycle becomes a short `complete`.
        (
            "cycle",
            pin.clone(),
            expect(legacy, "complete", None, 15, 1, None),
        ),
        // -32602 on the origin's page 2: an empty `complete` (logged only).
        (
            "stale",
            pin.clone(),
            expect(legacy, "complete", None, 0, 1, None),
        ),
        (
            "stale",
            pin.clone(),
            expect(legacy, "complete", None, 20, 1, None),
        ),
        // 250 upstream pages: its limit, still whole.
        (
            "limit",
            pin.clone(),
            expect(legacy, "complete", None, 1250, 1, None),
        ),
        // 251 upstream pages: past its limit, an empty `complete`.
        (
            "big",
            pin.clone(),
            expect(legacy, "complete", None, 0, 1, None),
        ),
        // An endless origin: 250 upstream pages, then an empty `complete`.
        (
            "endless",
            pin.clone(),
            expect(legacy, "complete", None, 0, 1, None),
        ),
        // A modern-only origin serves a 2025-11-25 client nothing.
        (
            "modern",
            vec![],
            expect(modern, "complete", None, 20, 1, None),
        ),
        (
            "modern",
            pin.clone(),
            expect(legacy, "complete", None, 0, 1, None),
        ),
    ];
    let origins = [
        "healthy", "cycle", "stale", "limit", "big", "endless", "modern",
    ];
    let started = in_parallel(
        origins
            .iter()
            .map(|&origin| Box::new(move || proxy(origin)) as Job)
            .collect(),
    );
    let gateways: std::collections::BTreeMap<&str, Server> =
        origins.into_iter().zip(started).collect();
    let mut cases = Vec::new();
    for (origin, flags, want) in table {
        let gateway = &gateways[origin];
        cases.push(Case {
            name: format!("fastmcp create_proxy × {origin} {flags:?}"),
            url: format!("{}/mcp", gateway.url),
            flags,
            expect: want,
        });
    }
    run_cases(&cases);

    // Scheduled, each origin a reference: only the comparison shows the
    // negotiated gateway's empty catalogue and the truncated big one.
    let healthy = &gateways["healthy"];
    let big = &gateways["big"];
    let cycle = &gateways["cycle"];
    let pinned = "    protocol_version: \"2025-11-25\"\n";
    let exporter = serve(&format!(
        "{}{}{}{}{}{}",
        url_target("origin-healthy", &format!("{}/mcp/healthy", sim.url), ""),
        url_target("origin-big", &format!("{}/mcp/big", sim.url), ""),
        url_target("origin-cycle", &format!("{}/mcp/cycle", sim.url), ""),
        url_target(
            "fm-proxy-healthy",
            &format!("{}/mcp", healthy.url),
            "    reference: [{target: origin-healthy}]\n"
        ),
        url_target(
            "fm-proxy-big",
            &format!("{}/mcp", big.url),
            &format!("{pinned}    reference: [{{target: origin-big}}]\n")
        ),
        url_target(
            "fm-proxy-cycle",
            &format!("{}/mcp", cycle.url),
            &format!("{pinned}    reference: [{{target: origin-cycle}}]\n")
        ),
    ));
    let text = exporter.wait_until(SERVE_LIMIT, "both gateways compared", |t| {
        missing(t, "fm-proxy-healthy", "origin-healthy").is_some()
            && missing(t, "fm-proxy-big", "origin-big").is_some()
            && listings(t, "fm-proxy-cycle") >= 2.0
            && listings(t, "origin-cycle") >= 2.0
    });
    let up = |t: &str| sample(&text, "mcp_up", &[("target", t)]);
    // Up and complete with 0 items; the reference says 20 are missing.
    assert_eq!(up("fm-proxy-healthy"), Some(1.0));
    assert_eq!(
        sample(&text, "mcp_listing_items", &tools("fm-proxy-healthy")),
        Some(0.0)
    );
    assert_eq!(
        missing(&text, "fm-proxy-healthy", "origin-healthy"),
        Some(20.0)
    );
    // Pinned to 2025-11-25, past the page limit: up, 0 items, 1255 missing.
    assert_eq!(up("fm-proxy-big"), Some(1.0));
    assert_eq!(
        sample(&text, "mcp_listing_items", &tools("fm-proxy-big")),
        Some(0.0)
    );
    assert_eq!(missing(&text, "fm-proxy-big", "origin-big"), Some(1255.0));
    // The verdict says both: the empty answer of a server that advertises
    // tools, and what the origin comparison found.
    let api = exporter.wait_api(SERVE_LIMIT, "the big proxy judged", |api| {
        api_target(api, "fm-proxy-big")["verdict"]["reasons"]
            .as_array()
            .is_some_and(|r| r.len() >= 2)
    });
    let codes: Vec<String> = api_target(&api, "fm-proxy-big")["verdict"]["reasons"]
        .as_array()
        .map(|rs| {
            rs.iter()
                .map(|r| r["code"].as_str().unwrap_or_default().to_string())
                .collect()
        })
        .unwrap_or_default();
    assert_eq!(codes, vec!["reference_missing", "empty_but_advertised"]);
    // The cycle: the gateway is up with 15 items, the origin target aborts
    // (cursor_cycle), and with no complete origin listing there is no comparison.
    assert_eq!(up("fm-proxy-cycle"), Some(1.0));
    assert_eq!(
        sample(&text, "mcp_listing_items", &tools("fm-proxy-cycle")),
        Some(15.0)
    );
    assert_eq!(up("origin-cycle"), Some(0.0));
    let origin_aborts = [
        ("target", "origin-cycle"),
        ("kind", "tools"),
        ("guard", "cursor_cycle"),
    ];
    assert!(sample(&text, "mcp_listing_aborts_total", &origin_aborts).unwrap_or(0.0) >= 1.0);
    assert_eq!(missing(&text, "fm-proxy-cycle", "origin-cycle"), None);
}

/// The Python `mcp` 2.x paginating peer (speaks 2026-07-28 and 2025-era).
fn dual_era_origin() -> Server {
    let argv = vec![
        peer_path(PYTHON_V2),
        peer_path("python/paginating_server.py"),
        s("http"),
        s("0"),
    ];
    Server::start("python mcp 2.x peer", &argv, &[])
}

#[test]
fn zoo_fastmcp_mount_catalogue_depends_on_protocol() {
    if !installed(
        "zoo_fastmcp_mount_catalogue_depends_on_protocol",
        &[FASTMCP_PYTHON, PYTHON_V2],
    ) {
        return;
    }
    let (sim, _scenarios) = http_origins("  - {name: legacy, scenario: healthy}\n");
    let dual = dual_era_origin();
    let mount = fastmcp_gateway(&[
        s("mount"),
        format!("dual={}/mcp", dual.url),
        format!("legacy={}/mcp/legacy", sim.url),
    ]);
    let url = format!("{}/mcp", mount.url);
    let dual_names: Vec<String> = (0..23).map(|i| format!("dual_tool_{i:02}")).collect();
    let legacy_names: Vec<String> = (1..=20).map(|i| format!("legacy_tool-{i:03}")).collect();

    // 2026-07-28 (negotiated): only the dual-era origin, 23 tools.
    let (_, report) = probe(&["--kind", "tools", "--timeout", "30s", "--url", &url]);
    assert_eq!(
        seen(&report, "tools"),
        expect("2026-07-28", "complete", None, 23, 1, None),
        "{report}"
    );
    assert_eq!(names(&report, "tools"), dual_names);
    // 2025-11-25: both origins, 43 tools, renamed `<namespace>_<name>`.
    let (_, report) = probe(&[
        "--kind",
        "tools",
        "--timeout",
        "30s",
        "--protocol",
        "2025-11-25",
        "--url",
        &url,
    ]);
    assert_eq!(
        seen(&report, "tools"),
        expect("2025-11-25", "complete", None, 43, 1, None),
        "{report}"
    );
    let mut both = dual_names.clone();
    both.extend(legacy_names);
    both.sort();
    assert_eq!(names(&report, "tools"), both);

    // References with today's `prefix:` see the renamed tools; the
    // negotiated gateway misses all 20 of the legacy origin's.
    let exporter = serve(&format!(
        "{}{}{}{}",
        url_target("origin-dual", &format!("{}/mcp", dual.url), ""),
        url_target("origin-legacy", &format!("{}/mcp/legacy", sim.url), ""),
        url_target(
            "mount-negotiated",
            &url,
            "    reference:\n      - {target: origin-dual, prefix: dual_}\n      - {target: origin-legacy, prefix: legacy_}\n"
        ),
        url_target(
            "mount-2025",
            &url,
            "    protocol_version: \"2025-11-25\"\n    reference:\n      - {target: origin-dual, prefix: dual_}\n      - {target: origin-legacy, prefix: legacy_}\n"
        ),
    ));
    let text = exporter.wait_until(SERVE_LIMIT, "both mounts compared with both origins", |t| {
        ["mount-negotiated", "mount-2025"].iter().all(|g| {
            missing(t, g, "origin-dual").is_some() && missing(t, g, "origin-legacy").is_some()
        })
    });
    assert_eq!(missing(&text, "mount-negotiated", "origin-dual"), Some(0.0));
    assert_eq!(
        missing(&text, "mount-negotiated", "origin-legacy"),
        Some(20.0)
    );
    assert_eq!(missing(&text, "mount-2025", "origin-dual"), Some(0.0));
    assert_eq!(missing(&text, "mount-2025", "origin-legacy"), Some(0.0));
    assert_eq!(
        sample(&text, "mcp_up", &[("target", "mount-negotiated")]),
        Some(1.0)
    );
    // Against the union of both origins' renamed names: 43 expected; the
    // negotiated side lacks 20; nothing the gateway lists is unaccounted for.
    let union_of = |api: &serde_json::Value, target: &str| {
        api_target(api, target)["history"][0]["kinds"][0]["reference_union"].clone()
    };
    let api = exporter.wait_api(SERVE_LIMIT, "both unions in the API", |api| {
        ["mount-2025", "mount-negotiated"].iter().all(|t| {
            union_of(api, t)["references"]
                .as_array()
                .is_some_and(|r| r.len() == 2)
        })
    });
    let union = |target: &str| union_of(&api, target);
    for (target, lacking) in [("mount-2025", 0), ("mount-negotiated", 20)] {
        let u = union(target);
        assert_eq!(u["expected_items"], 43, "{target}: {u}");
        assert_eq!(u["missing_total"], lacking, "{target}: {u}");
        assert_eq!(u["unexpected_total"], 0, "{target}: {u}");
        assert_eq!(
            u["references"],
            serde_json::json!(["origin-dual", "origin-legacy"])
        );
    }
}

// ---------------------------------------------------------------------------
// Reference mapping, per-protocol catalogues, -32602 without a cursor
// ---------------------------------------------------------------------------

/// FastMCP `mount` renames tools `<namespace>_<name>` and rewrites resource
/// URIs `sim://resources/001` → `sim://legacy/resources/001` (namespace
/// after the scheme), which a plain `prefix:` cannot describe: a per-kind
/// `map:` with a regular expression does.
#[test]
fn zoo_fastmcp_mount_reference_maps_rewritten_uris() {
    if !installed(
        "zoo_fastmcp_mount_reference_maps_rewritten_uris",
        &[FASTMCP_PYTHON],
    ) {
        return;
    }
    let (sim, _scenarios) = http_origins("  - {name: legacy, scenario: healthy}\n");
    let mount = fastmcp_gateway(&[s("mount"), format!("legacy={}/mcp/legacy", sim.url)]);
    let global = "global:\n  schedule: {every: 3s}\n  jitter: 0s\n  kinds: [tools, resources, resource_templates]\n  invalid_cursor_probe: false\n";
    let mapped = "    protocol_version: \"2025-11-25\"\n    reference:\n      - target: origin-legacy\n        map:\n          tools: {prefix: legacy, separator: _}\n          resources: {regex: '^sim://(.*)$', replace: 'sim://legacy/$1'}\n          resource_templates: {regex: '^sim://', replace: 'sim://legacy/'}\n";
    // The same gateway compared with `prefix:` only: the URIs cannot match.
    let prefixed = "    protocol_version: \"2025-11-25\"\n    reference:\n      - {target: origin-legacy, prefix: legacy_}\n";
    let exporter = Exporter::start(&format!(
        "{global}targets:\n{}{}{}",
        url_target("origin-legacy", &format!("{}/mcp/legacy", sim.url), ""),
        url_target("mount", &format!("{}/mcp", mount.url), mapped),
        url_target("mount-prefix", &format!("{}/mcp", mount.url), prefixed),
    ));
    let gap = |t: &str, target: &str, kind: &str| {
        sample(
            t,
            "mcp_reference_missing_items",
            &[
                ("target", target),
                ("kind", kind),
                ("reference", "origin-legacy"),
            ],
        )
    };
    let text = exporter.wait_until(SERVE_LIMIT, "both mounts compared", |t| {
        ["mount", "mount-prefix"]
            .iter()
            .all(|g| gap(t, g, "resources").is_some() && gap(t, g, "resource_templates").is_some())
    });
    for kind in ["tools", "resources", "resource_templates"] {
        assert_eq!(gap(&text, "mount", kind), Some(0.0), "{kind}\n{text}");
    }
    // Without the map every resource and template looks missing.
    assert_eq!(gap(&text, "mount-prefix", "tools"), Some(0.0));
    let resources = sample(
        &text,
        "mcp_listing_items",
        &[("target", "origin-legacy"), ("kind", "resources")],
    );
    assert!(resources.is_some_and(|n| n > 0.0), "{text}");
    assert_eq!(gap(&text, "mount-prefix", "resources"), resources);
}

/// FastMCP `mount` of a dual-era origin (23 tools) and a legacy-only origin
/// (20 tools): 23 tools for a 2026-07-28 client, 43 for a 2025-11-25 client.
/// With `protocols:` the exporter lists both and reports the difference:
/// the gauge per version, the verdict naming the 20 tools the modern side
/// lacks, every name in `/api/targets`.
#[test]
fn zoo_fastmcp_mount_per_protocol_difference() {
    if !installed(
        "zoo_fastmcp_mount_per_protocol_difference",
        &[FASTMCP_PYTHON, PYTHON_V2],
    ) {
        return;
    }
    let (sim, _scenarios) = http_origins("  - {name: legacy, scenario: healthy}\n");
    let dual = dual_era_origin();
    let mount = fastmcp_gateway(&[
        s("mount"),
        format!("dual={}/mcp", dual.url),
        format!("legacy={}/mcp/legacy", sim.url),
    ]);
    let exporter = serve(&url_target(
        "mount",
        &format!("{}/mcp", mount.url),
        "    protocols: [\"2025-11-25\", \"2026-07-28\"]\n",
    ));
    let per = |t: &str, v: &str| {
        sample(
            t,
            "mcp_protocol_catalogue_missing_items",
            &[
                ("target", "mount"),
                ("kind", "tools"),
                ("protocol_version", v),
            ],
        )
    };
    let text = exporter.wait_until(SERVE_LIMIT, "both protocols listed", |t| {
        per(t, "2025-11-25").is_some() && per(t, "2026-07-28").is_some()
    });
    assert_eq!(per(&text, "2025-11-25"), Some(0.0), "{text}");
    assert_eq!(per(&text, "2026-07-28"), Some(20.0), "{text}");
    // The primary (newest) version feeds the usual series.
    assert_eq!(
        sample(&text, "mcp_listing_items", &tools("mount")),
        Some(23.0)
    );
    assert_eq!(sample(&text, "mcp_up", &[("target", "mount")]), Some(1.0));
    assert!(
        text.contains("protocol_version=\"2026-07-28\",transport="),
        "server info of the primary: {text}"
    );
    // Only `protocols:` targets carry the family.
    assert_eq!(
        text.lines()
            .filter(|l| l.starts_with("mcp_protocol_catalogue_missing_items{"))
            .count(),
        2,
        "{text}"
    );

    let api = exporter.wait_api(SERVE_LIMIT, "the per-protocol verdict", |api| {
        api_target(api, "mount")["history"][0]["protocols"].is_array()
    });
    let target = api_target(&api, "mount");
    assert_eq!(target["verdict"]["level"], "degraded", "{target}");
    let reason = &target["verdict"]["reasons"][0];
    assert_eq!(reason["code"], "protocol_catalogue_differs", "{target}");
    assert_eq!(reason["kind"], "tools");
    let message = reason["message"].as_str().unwrap_or_default();
    assert!(
        message.starts_with("20 tools missing at protocol 2026-07-28 (23 listed there, 43 under every configured version together): legacy_tool-001, "),
        "{message}"
    );
    let protocols = target["history"][0]["protocols"]
        .as_array()
        .unwrap_or_else(|| panic!("no protocols in {target}"));
    let at = |v: &str| {
        protocols
            .iter()
            .find(|p| p["protocol_version"] == v)
            .unwrap_or_else(|| panic!("no {v} in {protocols:?}"))
    };
    assert_eq!(at("2026-07-28")["primary"], true);
    assert_eq!(at("2025-11-25")["primary"], false);
    assert_eq!(at("2025-11-25")["kinds"][0]["unique_items"], 43);
    let missing: Vec<String> = at("2026-07-28")["kinds"][0]["missing"]
        .as_array()
        .map(|m| {
            m.iter()
                .map(|n| n.as_str().unwrap_or_default().to_string())
                .collect()
        })
        .unwrap_or_default();
    let legacy: Vec<String> = (1..=20).map(|i| format!("legacy_tool-{i:03}")).collect();
    assert_eq!(missing, legacy);
    // The target page names them too.
    let page = zoo::http_get(&format!("{}/targets/mount", exporter.server.url));
    assert!(page.contains("Per protocol version"), "{page}");
    assert!(page.contains("legacy_tool-001, legacy_tool-002"), "{page}");
    assert!(page.contains("legacy_tool-020"), "{page}");

    // `probe --config.file` polls the target as `serve` does: both
    // versions, compared, and the same verdict.
    let config = exporter.config_path.to_string_lossy().into_owned();
    let (code, report) = zoo::probe(&["--config.file", &config, "--target", "mount"]);
    assert_eq!(code, Some(0), "{report}");
    assert_eq!(report["verdict"]["level"], "degraded", "{report}");
    assert_eq!(
        report["verdict"]["reasons"][0]["code"], "protocol_catalogue_differs",
        "{report}"
    );
    let versions = report["protocol_catalogues"]
        .as_array()
        .unwrap_or_else(|| panic!("no protocol_catalogues in {report}"));
    assert_eq!(versions.len(), 2, "{report}");
    let modern = versions
        .iter()
        .find(|p| p["protocol_version"] == "2026-07-28")
        .unwrap_or_else(|| panic!("no 2026-07-28 in {versions:?}"));
    assert_eq!(modern["primary"], true);
    assert_eq!(modern["kinds"][0]["missing_total"], 20, "{modern}");
}

/// npm mcp-proxy answers the origin's -32602 (for its own page-2 cursor) as
/// the answer to our first page, which carried no cursor: `invalid_params`,
/// not an invalid cursor of ours.
#[test]
fn zoo_npm_mcp_proxy_first_page_invalid_params_label() {
    if !installed(
        "zoo_npm_mcp_proxy_first_page_invalid_params_label",
        &[NPM_MCP_PROXY],
    ) {
        return;
    }
    let gateway = npm_mcp_proxy(STALE);
    let url = format!("{}/mcp", gateway.url);
    let (_, report) = probe(&["--kind", "tools", "--timeout", "30s", "--url", &url]);
    let got = seen(&report, "tools");
    assert_eq!(got.outcome, "error", "{report}");
    assert_eq!(got.rpc_code, Some(-32602));
    assert_eq!(got.reason.as_deref(), Some("invalid_params"), "{report}");
    assert_eq!(
        listing(&report, "tools")["pages"][0]["error"],
        "invalid_params"
    );
}
