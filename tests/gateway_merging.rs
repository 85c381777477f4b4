//! Gateways that merge an origin's pages into one answer, in front of the
//! exporter (docs/gateways.md explains every case): npm `mcp-proxy` (a
//! 64-page limit) and PyPI `fastmcp`'s `create_proxy` (250 pages, and a
//! catalogue per protocol version). What `probe --json` reports per gateway
//! × origin scenario, and in `serve` (each origin a `reference:`) what only
//! the reference comparison reveals.
//!
//! Everything is driven through the binary. Peers are installed, pinned, by
//! `scripts/install-peers.sh`; a missing peer skips loudly, or fails with
//! `INTEROP_REQUIRE_PEERS=1`.

use mcp_testkit::exporter::api_target;
use mcp_testkit::gateways::{
    behind, expect, fastmcp_gateway, gateway_cases, listings, missing, npm_mcp_proxy, probe,
    reason_codes, reference, run_cases, s, seen, serve, start_each, stdio_target, tools, up,
    url_target, Case, Seen, CYCLE, FASTMCP_PYTHON, HEALTHY, NPM_MCP_PROXY, SERVE_LIMIT, STALE,
};
use mcp_testkit::peers::installed;
use mcp_testkit::{listing, sample, scenarios_simulator, Proc};
use std::collections::BTreeMap;

const MODERN: &str = "2026-07-28";
const LEGACY: &str = "2025-11-25";

/// An `rpc_error` with `code` at 2026-07-28, nothing listed.
fn rpc_error(code: i64) -> Seen {
    expect(MODERN, "error", Some("rpc_error"), 0, 0, Some(code))
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
    let merged = |name, origin, want| behind(name, origin, "/mcp", want);
    let scenarios = vec![
        merged(
            "healthy",
            HEALTHY,
            expect(MODERN, "complete", None, 20, 1, None),
        ),
        // The gateway walks the loop itself until its page limit.
        merged("cycle", CYCLE, rpc_error(-32603)),
        // The origin's -32602 on page 2 comes back as the answer to our page 1
        // (no cursor sent): `invalid_params`, not `invalid_cursor`.
        merged(
            "stale-cursor",
            STALE,
            expect(MODERN, "error", Some("invalid_params"), 0, 0, Some(-32602)),
        ),
        // 64 upstream pages: the limit, still whole.
        merged(
            "320 items (64 pages)",
            "--scenario healthy --items 320",
            expect(MODERN, "complete", None, 320, 1, None),
        ),
        // 65 upstream pages: -32603 "exceeded listMaxPages (64)".
        merged(
            "325 items (65 pages)",
            "--scenario healthy --items 325",
            rpc_error(-32603),
        ),
        merged("endless", "--scenario endless", rpc_error(-32603)),
    ];
    let (cases, _gateways) = gateway_cases("npm mcp-proxy", scenarios, npm_mcp_proxy);
    run_cases(&cases);

    let healthy = npm_mcp_proxy(HEALTHY);
    let exporter = serve(&format!(
        "{}{}",
        stdio_target("origin-healthy", HEALTHY),
        url_target(
            "npm-proxy-healthy",
            &healthy.at("/mcp"),
            &reference("origin-healthy")
        ),
    ));
    let text = exporter.wait_metrics(SERVE_LIMIT, "the gateway compared", |t| {
        missing(t, "npm-proxy-healthy", "origin-healthy").is_some()
    });
    assert_eq!(
        missing(&text, "npm-proxy-healthy", "origin-healthy"),
        Some(0.0)
    );
    assert_eq!(up(&text, "npm-proxy-healthy"), Some(1.0));
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
    let url = gateway.at("/mcp");
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

// ---------------------------------------------------------------------------
// FastMCP create_proxy: merge, page limit, per-protocol catalogues
// ---------------------------------------------------------------------------

/// `limit` is exactly FastMCP's 250 upstream pages, `big` one page more.
const FASTMCP_ORIGINS: &str = "  - {name: healthy, scenario: healthy}\n  - {name: cycle, scenario: cycle}\n  - {name: stale, scenario: stale-cursor}\n  - {name: limit, scenario: healthy, items: 1250}\n  - {name: big, scenario: healthy, items: 1255}\n  - {name: endless, scenario: endless}\n  - {name: modern, scenario: healthy, protocol: \"2026-07-28\"}\n";

/// (origin, probe flags, expected). The stale origin is probed at
/// 2025-11-25 first, so that probe meets its one -32602.
fn create_proxy_table() -> Vec<(&'static str, Vec<&'static str>, Seen)> {
    let pin = vec!["--protocol", LEGACY];
    let complete = |protocol, unique| expect(protocol, "complete", None, unique, 1, None);
    vec![
        // A legacy-only origin serves a 2026-07-28 client nothing.
        ("healthy", vec![], complete(MODERN, 0)),
        ("healthy", pin.clone(), complete(LEGACY, 20)),
        // The origin's cycle becomes a short `complete`.
        ("cycle", pin.clone(), complete(LEGACY, 15)),
        // -32602 on the origin's page 2: an empty `complete` (logged only).
        ("stale", pin.clone(), complete(LEGACY, 0)),
        ("stale", pin.clone(), complete(LEGACY, 20)),
        // 250 upstream pages: its limit, still whole.
        ("limit", pin.clone(), complete(LEGACY, 1250)),
        // 251 upstream pages: past its limit, an empty `complete`.
        ("big", pin.clone(), complete(LEGACY, 0)),
        // An endless origin: 250 upstream pages, then an empty `complete`.
        ("endless", pin.clone(), complete(LEGACY, 0)),
        // A modern-only origin serves a 2025-11-25 client nothing.
        ("modern", vec![], complete(MODERN, 20)),
        ("modern", pin, complete(LEGACY, 0)),
    ]
}

#[test]
fn zoo_fastmcp_create_proxy_merges_and_drops() {
    if !installed(
        "zoo_fastmcp_create_proxy_merges_and_drops",
        &[FASTMCP_PYTHON],
    ) {
        return;
    }
    let (sim, _scenarios) = scenarios_simulator(FASTMCP_ORIGINS);
    let origins = [
        "healthy", "cycle", "stale", "limit", "big", "endless", "modern",
    ];
    let urls: Vec<String> = origins
        .iter()
        .map(|name| sim.at(&format!("/mcp/{name}")))
        .collect();
    let urls: Vec<&str> = urls.iter().map(String::as_str).collect();
    let started = start_each(&urls, |url| fastmcp_gateway(&[s("proxy"), s(url)]));
    let gateways: BTreeMap<&str, Proc> = origins.into_iter().zip(started).collect();
    let cases: Vec<Case> = create_proxy_table()
        .into_iter()
        .map(|(origin, flags, want)| Case {
            name: format!("fastmcp create_proxy × {origin} {flags:?}"),
            url: gateways[origin].at("/mcp"),
            flags,
            expect: want,
        })
        .collect();
    run_cases(&cases);
    only_the_reference_shows_what_create_proxy_dropped(&sim, &gateways);
}

/// Scheduled, each origin a reference: only the comparison shows the
/// negotiated gateway's empty catalogue and the truncated big one.
fn only_the_reference_shows_what_create_proxy_dropped(sim: &Proc, gateways: &BTreeMap<&str, Proc>) {
    let pinned = "    protocol_version: \"2025-11-25\"\n";
    let exporter = serve(&format!(
        "{}{}{}{}{}{}",
        url_target("origin-healthy", &sim.at("/mcp/healthy"), ""),
        url_target("origin-big", &sim.at("/mcp/big"), ""),
        url_target("origin-cycle", &sim.at("/mcp/cycle"), ""),
        url_target(
            "fm-proxy-healthy",
            &gateways["healthy"].at("/mcp"),
            &reference("origin-healthy")
        ),
        url_target(
            "fm-proxy-big",
            &gateways["big"].at("/mcp"),
            &format!("{pinned}{}", reference("origin-big"))
        ),
        url_target(
            "fm-proxy-cycle",
            &gateways["cycle"].at("/mcp"),
            &format!("{pinned}{}", reference("origin-cycle"))
        ),
    ));
    let text = exporter.wait_metrics(SERVE_LIMIT, "both gateways compared", |t| {
        missing(t, "fm-proxy-healthy", "origin-healthy").is_some()
            && missing(t, "fm-proxy-big", "origin-big").is_some()
            && listings(t, "fm-proxy-cycle") >= 2.0
            && listings(t, "origin-cycle") >= 2.0
    });
    let items = |target| sample(&text, "mcp_listing_items", &tools(target));
    // Up and complete with 0 items; the reference says 20 are missing.
    assert_eq!(up(&text, "fm-proxy-healthy"), Some(1.0));
    assert_eq!(items("fm-proxy-healthy"), Some(0.0));
    assert_eq!(
        missing(&text, "fm-proxy-healthy", "origin-healthy"),
        Some(20.0)
    );
    // Pinned to 2025-11-25, past the page limit: up, 0 items, 1255 missing.
    assert_eq!(up(&text, "fm-proxy-big"), Some(1.0));
    assert_eq!(items("fm-proxy-big"), Some(0.0));
    assert_eq!(missing(&text, "fm-proxy-big", "origin-big"), Some(1255.0));
    // The verdict says both: the empty answer of a server that advertises
    // tools, and what the origin comparison found.
    let api = exporter.wait_api(SERVE_LIMIT, "the big proxy judged", |api| {
        reason_codes(api_target(api, "fm-proxy-big")).len() >= 2
    });
    assert_eq!(
        reason_codes(api_target(&api, "fm-proxy-big")),
        vec!["reference_missing", "empty_but_advertised"]
    );
    // The cycle: the gateway is up with 15 items, the origin target aborts
    // (cursor_cycle), and with no complete origin listing there is no comparison.
    assert_eq!(up(&text, "fm-proxy-cycle"), Some(1.0));
    assert_eq!(items("fm-proxy-cycle"), Some(15.0));
    assert_eq!(up(&text, "origin-cycle"), Some(0.0));
    let origin_aborts = [
        ("target", "origin-cycle"),
        ("kind", "tools"),
        ("guard", "cursor_cycle"),
    ];
    assert!(sample(&text, "mcp_listing_aborts_total", &origin_aborts).unwrap_or(0.0) >= 1.0);
    assert_eq!(missing(&text, "fm-proxy-cycle", "origin-cycle"), None);
}
