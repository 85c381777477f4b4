//! Interop: `mcp-exporter probe` against real MCP SDK servers.
//!
//! The peers live in `tests/peers` and are installed, pinned, by
//! `scripts/install-peers.sh` (`scripts/test` always runs it first):
//!
//! - `@modelcontextprotocol/server-everything` (TypeScript SDK, no pagination),
//! - `tests/peers/ts/paginating-server.mjs` (TypeScript SDK 1.x low-level `Server`),
//! - `tests/peers/python/paginating_server.py` (Python `mcp` 2.x low-level `Server`),
//! - `tests/peers/rmcp` (Rust `rmcp`).
//!
//! Every test starts real processes, runs the real binary and parses its
//! `--json` report; the table below is peer × transport × protocol. A test
//! whose peer is not installed is skipped loudly; set `INTEROP_REQUIRE_PEERS=1`
//! to make that a failure instead. docs/interop.md explains each cell. The
//! MCP conformance suite's client scenarios are in
//! tests/interop_conformance_suite.rs.

use mcp_testkit::peers::{run_probe, start_http_peer, Peer, PROBE_REQUEST_TIMEOUT};
use mcp_testkit::process::run_leaving_nothing;
use serde_json::Value;
use std::collections::BTreeSet;
use std::process::Command;

/// What the peer lists (the assertions' data).
fn catalogue(peer: Peer) -> Vec<KindExpect> {
    match peer {
        Peer::Everything => everything_catalogue(),
        Peer::TypeScript | Peer::Python | Peer::Rmcp => paginating_catalogue(),
    }
}

/// What one kind must list: items per page of the final attempt and every name.
struct KindExpect {
    kind: &'static str,
    pages: Vec<u64>,
    names: Vec<String>,
    /// server-everything registers client-dependent tools after
    /// `notifications/initialized` and announces them with
    /// `notifications/tools/list_changed`, which may land while tools are
    /// being listed; a restart for that reason is correct, any other is not.
    list_changed_may_restart: bool,
}

/// The catalogue of the three paginating peers (one rule, three SDKs).
fn paginating_catalogue() -> Vec<KindExpect> {
    let kind = |kind, pages: Vec<u64>, names: Vec<String>| KindExpect {
        kind,
        pages,
        names,
        list_changed_may_restart: false,
    };
    vec![
        kind(
            "tools",
            vec![5, 5, 5, 5, 3],
            (0..23).map(|i| format!("tool_{i:02}")).collect(),
        ),
        kind(
            "prompts",
            vec![3, 3, 1],
            (0..7).map(|i| format!("prompt_{i}")).collect(),
        ),
        kind(
            "resources",
            vec![5, 5, 2],
            (0..12)
                .map(|i| format!("test://paginating/resource/{i:02}"))
                .collect(),
        ),
        kind(
            "resource_templates",
            vec![3, 1],
            (0..4)
                .map(|i| format!("test://paginating/template/{i}/{{id}}"))
                .collect(),
        ),
    ]
}

/// What server-everything 2026.8.31 lists to a client that declares no
/// capabilities (roots, sampling or elicitation would add tools). No paging.
fn everything_catalogue() -> Vec<KindExpect> {
    let strings = |names: &[&str]| names.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    vec![
        KindExpect {
            kind: "tools",
            pages: vec![13],
            names: strings(&[
                "echo",
                "get-annotated-message",
                "get-env",
                "get-resource-links",
                "get-resource-reference",
                "get-structured-content",
                "get-sum",
                "get-tiny-image",
                "gzip-file-as-resource",
                "simulate-research-query",
                "toggle-simulated-logging",
                "toggle-subscriber-updates",
                "trigger-long-running-operation",
            ]),
            list_changed_may_restart: true,
        },
        KindExpect {
            kind: "prompts",
            pages: vec![4],
            names: strings(&[
                "args-prompt",
                "completable-prompt",
                "resource-prompt",
                "simple-prompt",
            ]),
            list_changed_may_restart: false,
        },
        KindExpect {
            kind: "resources",
            pages: vec![7],
            names: [
                "architecture",
                "extension",
                "features",
                "how-it-works",
                "instructions",
                "startup",
                "structure",
            ]
            .iter()
            .map(|doc| format!("demo://resource/static/document/{doc}.md"))
            .collect(),
            list_changed_may_restart: false,
        },
        KindExpect {
            kind: "resource_templates",
            pages: vec![2],
            names: strings(&[
                "demo://resource/dynamic/blob/{resourceId}",
                "demo://resource/dynamic/text/{resourceId}",
            ]),
            list_changed_may_restart: false,
        },
    ]
}

// ---------------------------------------------------------------------------
// The table: peer × transport × protocol
// ---------------------------------------------------------------------------

#[derive(Debug, Clone, Copy)]
enum Via {
    /// `probe --stdio -- CMD`: the probe starts the peer itself.
    Stdio,
    /// `probe --url http://…/mcp` with the default `--transport auto`.
    StreamableHttp,
    /// `probe --url http://…/sse --transport sse` (server-everything only).
    LegacySse,
    /// `probe --url http://…/sse` with `--transport auto`: the POST fails and
    /// the probe must fall back to the legacy GET stream by itself.
    LegacySseDetected,
}

struct Cell {
    name: &'static str,
    peer: Peer,
    via: Via,
    /// `--protocol` passed to the probe; None = let the probe negotiate
    /// (try `server/discover` for 2026-07-28, fall back to `initialize`).
    offer: Option<&'static str>,
    /// The protocol version the report must show.
    answer: &'static str,
}

impl Cell {
    fn transport_label(&self) -> &'static str {
        match self.via {
            Via::Stdio => "stdio",
            Via::StreamableHttp => "streamable_http",
            Via::LegacySse | Via::LegacySseDetected => "sse",
        }
    }
}

/// Runs one cell: start the peer (HTTP) or let the probe start it (stdio),
/// probe all four kinds, and check every page and name.
fn run_cell(cell: &Cell) {
    if !cell.peer.installed(cell.name) {
        return;
    }
    let mut args: Vec<String> = vec![
        "--json".into(),
        "--timeout".into(),
        PROBE_REQUEST_TIMEOUT.into(),
    ];
    if let Some(version) = cell.offer {
        args.extend(["--protocol".into(), version.into()]);
    }
    // Held until the probe is done; dropping it kills the server.
    let _server = match cell.via {
        Via::Stdio => {
            args.push("--stdio".into());
            args.push("--".into());
            args.extend(cell.peer.command());
            None
        }
        Via::StreamableHttp => {
            let server = start_http_peer(cell.peer, false);
            args.extend(["--url".into(), server.at("/mcp")]);
            Some(server)
        }
        Via::LegacySse | Via::LegacySseDetected => {
            let server = start_http_peer(cell.peer, true);
            args.extend(["--url".into(), server.at("/sse")]);
            if matches!(cell.via, Via::LegacySse) {
                args.extend(["--transport".into(), "sse".into()]);
            }
            Some(server)
        }
    };
    let (code, report, finished) = run_probe(&args, cell.name);
    let context = format!("cell {}\n{}", cell.name, finished.describe());
    assert_eq!(code, Some(0), "exit code; {context}");
    assert_report_header(
        &report,
        cell.peer,
        cell.transport_label(),
        cell.answer,
        &context,
    );
    let modern = cell.answer >= "2026-07-28";
    let listings = report["listings"]
        .as_array()
        .unwrap_or_else(|| panic!("no listings; {context}"));
    let expected = catalogue(cell.peer);
    let kinds: Vec<&str> = listings
        .iter()
        .map(|l| l["kind"].as_str().unwrap_or("?"))
        .collect();
    assert_eq!(
        kinds,
        ["tools", "prompts", "resources", "resource_templates"],
        "{context}"
    );
    for (listing, expect) in listings.iter().zip(&expected) {
        assert_complete_listing(listing, expect, &context);
        if modern {
            // 2026-07-28 list results carry caching hints; the Python SDK's
            // and rmcp's defaults are ttlMs 0 and cacheScope "private" (checked by hand).
            if matches!(cell.peer, Peer::Python | Peer::Rmcp) {
                assert_eq!(listing["ttl_ms"], 0, "{} ttl_ms; {context}", expect.kind);
                assert_eq!(
                    listing["cache_scope"], "private",
                    "{} cache_scope; {context}",
                    expect.kind
                );
            }
        }
    }
}

fn assert_report_header(
    report: &Value,
    peer: Peer,
    transport: &str,
    protocol: &str,
    context: &str,
) {
    let (name, version) = peer.server_info();
    assert_eq!(
        report["session_error"],
        Value::Null,
        "session_error; {context}"
    );
    assert_eq!(report["server"]["name"], name, "server name; {context}");
    assert_eq!(
        report["server"]["version"], version,
        "server version; {context}"
    );
    assert_eq!(
        report["protocol_version"], protocol,
        "protocol_version; {context}"
    );
    assert_eq!(report["transport"], transport, "transport; {context}");
    let ready = report["time_to_ready_seconds"].as_f64();
    assert!(
        ready.is_some_and(|s| s > 0.0),
        "time_to_ready_seconds {ready:?}; {context}"
    );
}

/// Exact pages, items and names of one complete listing.
fn assert_complete_listing(listing: &Value, expect: &KindExpect, context: &str) {
    let kind = expect.kind;
    let ctx = format!(
        "{kind}: {}; {context}",
        serde_json::to_string(listing).unwrap_or_default()
    );
    assert_eq!(listing["kind"], kind, "{ctx}");
    assert_eq!(listing["outcome"], "complete", "{ctx}");
    assert_eq!(listing["reason"], Value::Null, "{ctx}");

    let restarts = listing["restarts"].as_array().expect("restarts array");
    for restart in restarts {
        assert!(
            expect.list_changed_may_restart && restart["reason"] == "list_changed",
            "unexpected restart {restart}; {ctx}"
        );
    }

    let pages = listing["pages"].as_array().expect("pages array");
    let last_attempt = pages
        .iter()
        .filter_map(|p| p["attempt"].as_u64())
        .max()
        .expect("at least one page");
    let final_pages: Vec<&Value> = pages
        .iter()
        .filter(|p| p["attempt"] == last_attempt)
        .collect();
    let items: Vec<u64> = final_pages
        .iter()
        .map(|p| p["items"].as_u64().unwrap_or(u64::MAX))
        .collect();
    assert_eq!(items, expect.pages, "items per page; {ctx}");
    let mut cursor_hashes = BTreeSet::new();
    for (i, page) in final_pages.iter().enumerate() {
        assert_eq!(page["error"], Value::Null, "page {i} error; {ctx}");
        assert_eq!(
            page["new_items"], page["items"],
            "page {i} new_items; {ctx}"
        );
        assert!(
            page["seconds"].as_f64().is_some_and(|s| s >= 0.0),
            "page {i} seconds; {ctx}"
        );
        let cursor = &page["next_cursor"];
        if i + 1 < final_pages.len() {
            assert_eq!(cursor["state"], "present", "page {i} next_cursor; {ctx}");
            let hash = cursor["hash"]
                .as_str()
                .unwrap_or_else(|| panic!("page {i} cursor has no hash; {ctx}"));
            assert!(
                cursor_hashes.insert(hash.to_string()),
                "page {i} repeats a cursor hash; {ctx}"
            );
        } else {
            assert_eq!(cursor["state"], "absent", "last page next_cursor; {ctx}");
        }
    }
    let total: u64 = expect.pages.iter().sum();
    assert_eq!(
        listing["final_pages"],
        expect.pages.len(),
        "final_pages; {ctx}"
    );
    assert_eq!(listing["unique_items"], total, "unique_items; {ctx}");
    assert_eq!(listing["duplicate_items"], 0, "duplicate_items; {ctx}");
    assert_eq!(listing["invalid_items"], 0, "invalid_items; {ctx}");
    assert_eq!(
        listing["invalid_cursor_errors"], 0,
        "invalid_cursor_errors; {ctx}"
    );
    if restarts.is_empty() {
        assert_eq!(pages.len(), expect.pages.len(), "page requests; {ctx}");
        assert_eq!(listing["raw_items"], total, "raw_items; {ctx}");
    }
    let mut names = expect.names.clone();
    names.sort();
    let got: Vec<&str> = listing["names"]
        .as_array()
        .expect("names")
        .iter()
        .filter_map(Value::as_str)
        .collect();
    assert_eq!(got, names, "names; {ctx}");
}

macro_rules! interop_cells {
    ($($name:ident: $peer:ident over $via:ident offering $offer:expr => $answer:literal;)*) => {
        $(
            #[test]
            fn $name() {
                run_cell(&Cell {
                    name: stringify!($name),
                    peer: Peer::$peer,
                    via: Via::$via,
                    offer: $offer,
                    answer: $answer,
                });
            }
        )*
    };
}

interop_cells! {
    // server-everything: TypeScript SDK, no pagination, 2024-11-05 .. 2025-11-25.
    everything_stdio_negotiated: Everything over Stdio offering None => "2025-11-25";
    everything_stdio_2025_06_18: Everything over Stdio offering Some("2025-06-18") => "2025-06-18";
    everything_http_negotiated: Everything over StreamableHttp offering None => "2025-11-25";
    everything_http_2025_03_26: Everything over StreamableHttp offering Some("2025-03-26") => "2025-03-26";
    everything_sse_2024_11_05: Everything over LegacySse offering Some("2024-11-05") => "2024-11-05";
    everything_sse_detected_negotiated: Everything over LegacySseDetected offering None => "2025-11-25";

    // TypeScript SDK 1.32.2 low-level Server: 2024-10-07 .. 2025-11-25, no 2026-07-28.
    typescript_stdio_negotiated: TypeScript over Stdio offering None => "2025-11-25";
    typescript_stdio_2025_03_26: TypeScript over Stdio offering Some("2025-03-26") => "2025-03-26";
    typescript_http_negotiated: TypeScript over StreamableHttp offering None => "2025-11-25";
    typescript_http_2025_06_18: TypeScript over StreamableHttp offering Some("2025-06-18") => "2025-06-18";

    // Python mcp 2.3.0 low-level Server: 2024-11-05 .. 2025-11-25 and 2026-07-28.
    // Over stdio the version is always given: the Python SDK takes seconds to
    // import on a loaded machine, longer than the probe waits for an answer to
    // its server/discover try, so negotiation there depends on machine load.
    python_stdio_2025_11_25: Python over Stdio offering Some("2025-11-25") => "2025-11-25";
    python_stdio_2026_07_28: Python over Stdio offering Some("2026-07-28") => "2026-07-28";
    python_http_negotiated: Python over StreamableHttp offering None => "2026-07-28";
    python_http_2025_03_26: Python over StreamableHttp offering Some("2025-03-26") => "2025-03-26";

    // rmcp 3.11.0: 2024-11-05 .. 2025-11-25 and 2026-07-28.
    rmcp_stdio_2025_06_18: Rmcp over Stdio offering Some("2025-06-18") => "2025-06-18";
    rmcp_stdio_negotiated: Rmcp over Stdio offering None => "2026-07-28";
    rmcp_http_2025_11_25: Rmcp over StreamableHttp offering Some("2025-11-25") => "2025-11-25";
    rmcp_http_negotiated: Rmcp over StreamableHttp offering None => "2026-07-28";
}

// ---------------------------------------------------------------------------
// Flags and exit codes against a real paginating server
// ---------------------------------------------------------------------------

fn ts_stdio_args(extra: &[&str]) -> Vec<String> {
    let mut args: Vec<String> = [
        "--json",
        "--timeout",
        PROBE_REQUEST_TIMEOUT,
        "--protocol",
        "2025-11-25",
    ]
    .iter()
    .chain(extra)
    .map(|s| s.to_string())
    .collect();
    args.extend(["--stdio".into(), "--".into()]);
    args.extend(Peer::TypeScript.command());
    args
}

/// tools need exactly 5 pages: `--max-pages 5` completes, 4 aborts with
/// `page_cap` after 4 requests and exit code 1.
#[test]
fn typescript_page_cap_boundary() {
    if !Peer::TypeScript.installed("typescript_page_cap_boundary") {
        return;
    }
    let (code, report, finished) = run_probe(
        &ts_stdio_args(&["--kind", "tools", "--max-pages", "5"]),
        "max-pages 5",
    );
    let context = finished.describe();
    assert_eq!(code, Some(0), "{context}");
    let listings = report["listings"].as_array().expect("listings");
    assert_eq!(listings.len(), 1, "{context}");
    assert_complete_listing(&listings[0], &paginating_catalogue().remove(0), &context);

    let (code, report, finished) = run_probe(
        &ts_stdio_args(&["--kind", "tools", "--max-pages", "4"]),
        "max-pages 4",
    );
    let context = finished.describe();
    assert_eq!(code, Some(1), "{context}");
    let listing = &report["listings"][0];
    assert_eq!(listing["kind"], "tools", "{context}");
    assert_eq!(listing["outcome"], "aborted", "{context}");
    assert_eq!(listing["reason"], "page_cap", "{context}");
    let items: Vec<u64> = listing["pages"]
        .as_array()
        .expect("pages")
        .iter()
        .filter_map(|p| p["items"].as_u64())
        .collect();
    assert_eq!(items, [5, 5, 5, 5], "{context}");
}

/// `--kind` selects exactly the kinds asked for, in that order.
#[test]
fn typescript_selected_kinds_only() {
    if !Peer::TypeScript.installed("typescript_selected_kinds_only") {
        return;
    }
    let args = ts_stdio_args(&["--kind", "resource_templates", "--kind", "prompts"]);
    let (code, report, finished) = run_probe(&args, "--kind resource_templates --kind prompts");
    let context = finished.describe();
    assert_eq!(code, Some(0), "{context}");
    let listings = report["listings"].as_array().expect("listings");
    let kinds: Vec<&str> = listings.iter().filter_map(|l| l["kind"].as_str()).collect();
    assert_eq!(kinds, ["resource_templates", "prompts"], "{context}");
    let catalogue = paginating_catalogue();
    assert_complete_listing(&listings[0], &catalogue[3], &context);
    assert_complete_listing(&listings[1], &catalogue[1], &context);
}

/// Forcing 2026-07-28 on an SDK that only speaks `initialize` is a session
/// error (the TypeScript SDK answers `server/discover` with -32601), every
/// listing is an error, exit code 1, and the probe reaps the server.
#[test]
fn typescript_forced_modern_protocol_fails_cleanly() {
    if !Peer::TypeScript.installed("typescript_forced_modern_protocol_fails_cleanly") {
        return;
    }
    let mut args: Vec<String> = [
        "--json",
        "--timeout",
        PROBE_REQUEST_TIMEOUT,
        "--protocol",
        "2026-07-28",
        "--stdio",
        "--",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    args.extend(Peer::TypeScript.command());
    let (code, report, finished) = run_probe(&args, "forced 2026-07-28 against the TypeScript SDK");
    let context = finished.describe();
    assert_eq!(code, Some(1), "{context}");
    assert_eq!(report["session_error"]["error"], "rpc_error", "{context}");
    let listings = report["listings"].as_array().expect("listings");
    assert_eq!(listings.len(), 4, "{context}");
    for listing in listings {
        assert_eq!(listing["outcome"], "error", "{context}");
        assert_eq!(listing["reason"], "rpc_error", "{context}");
    }
}

/// Usage errors exit 2 and start nothing.
#[test]
fn usage_errors_exit_2() {
    for args in [
        vec!["--json"],
        vec![
            "--json",
            "--protocol",
            "1999-01-01",
            "--url",
            "http://127.0.0.1:9/mcp",
        ],
        vec![
            "--json",
            "--max-pages",
            "0",
            "--url",
            "http://127.0.0.1:9/mcp",
        ],
    ] {
        let mut command = Command::new(mcp_testkit::exporter_bin());
        command.arg("probe").args(&args);
        let finished = run_leaving_nothing(command, "usage error");
        assert_eq!(
            finished.code(),
            Some(2),
            "probe {args:?}\n{}",
            finished.describe()
        );
    }
}
