//! The gateway zoo of tests/gateway_*.rs: real gateways (npm `supergateway`
//! and `mcp-proxy`, PyPI `mcp-proxy` and `fastmcp`) and servers (Python
//! `mcp` 1.x and 2.x) on loopback in front of `mcp-exporter simulate`
//! origins, the exporter driven through its binary (`probe --json`,
//! `serve` + `/metrics` + `/api/targets`). Peers are gated like the
//! interop tests ([`installed`](crate::peers::installed)).

use crate::exporter::Exporter;
use crate::metrics::sample;
use crate::peers::peer_path;
use crate::probe::{listing, probe_json_of};
use crate::process::Proc;
use serde_json::Value;
use std::thread;
use std::time::Duration;

pub const SUPERGATEWAY: &str = "node_modules/supergateway/dist/index.js";
pub const NPM_MCP_PROXY: &str = "node_modules/mcp-proxy/dist/bin/mcp-proxy.mjs";
/// A preload that keeps node gateways on loopback and announces the port.
const LOOPBACK: &str = "node/loopback.cjs";
pub const PYTHON_MCP1: &str = "python-mcp1/.venv/bin/python";
pub const PYPI_MCP_PROXY: &str = "python-mcp1/.venv/bin/mcp-proxy";
pub const FASTMCP_PYTHON: &str = "fastmcp/.venv/bin/python";
pub const PYTHON_V2: &str = "python/.venv/bin/python";

/// Simulator origins (`simulate` flags).
pub const HEALTHY: &str = "--scenario healthy";
pub const CYCLE: &str = "--scenario cycle";
pub const STALE: &str = "--scenario stale-cursor";

/// How long a `serve` run may take to show what a case waits for.
pub const SERVE_LIMIT: Duration = Duration::from_secs(120);

pub fn s(v: &str) -> String {
    v.to_string()
}

// ---------------------------------------------------------------------------
// What the exporter reports
// ---------------------------------------------------------------------------

/// What the exporter said about one listing, in the words of its report.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Seen {
    pub protocol: String,
    /// `complete`, `aborted` or `error`.
    pub outcome: String,
    /// The guard or error label (`cursor_cycle`, `rpc_error`, …), if any.
    pub reason: Option<String>,
    pub unique: u64,
    /// Page requests in the final attempt.
    pub pages: u64,
    pub rpc_code: Option<i64>,
}

/// What a listing must look like (see [`Seen`]).
pub fn expect(
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

/// Summarises `kind` of a probe report as [`Seen`].
pub fn seen(report: &Value, kind: &str) -> Seen {
    let l = listing(report, kind);
    Seen {
        protocol: report["protocol_version"]
            .as_str()
            .unwrap_or_default()
            .to_string(),
        outcome: l["outcome"].as_str().unwrap_or_default().to_string(),
        reason: l["reason"].as_str().map(str::to_string),
        unique: l["unique_items"].as_u64().unwrap_or(u64::MAX),
        pages: l["final_pages"].as_u64().unwrap_or(u64::MAX),
        rpc_code: l["rpc_error_code"].as_i64(),
    }
}

/// `mcp-exporter probe --json ARGS…`: exit code and the report.
pub fn probe(args: &[&str]) -> (Option<i32>, Value) {
    let (code, report, _) = probe_json_of(&crate::exporter_bin(), args);
    (code, report)
}

/// One probe of one gateway endpoint, and what it must report for tools.
pub struct Case {
    pub name: String,
    pub url: String,
    pub flags: Vec<&'static str>,
    pub expect: Seen,
}

/// Probes every case (tools only) and fails once with the whole table of
/// mismatches, so one run shows every difference.
pub fn run_cases(cases: &[Case]) {
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

/// One origin scenario behind a gateway: a name for the case, the
/// origin's `simulate` flags, the gateway's endpoint to probe (`/mcp`,
/// `/sse`), and what the exporter must report through it.
pub struct Behind {
    pub name: &'static str,
    pub origin: &'static str,
    pub endpoint: &'static str,
    pub expect: Seen,
}

pub fn behind(
    name: &'static str,
    origin: &'static str,
    endpoint: &'static str,
    expect: Seen,
) -> Behind {
    Behind {
        name,
        origin,
        endpoint,
        expect,
    }
}

/// Starts one gateway per scenario with `start` (in parallel) and makes
/// each a case, named `title endpoint × name`; the gateways live as long
/// as the returned handles.
pub fn gateway_cases(
    title: &str,
    scenarios: Vec<Behind>,
    start: impl Fn(&str) -> Proc + Sync,
) -> (Vec<Case>, Vec<Proc>) {
    let origins: Vec<&str> = scenarios.iter().map(|b| b.origin).collect();
    let gateways = start_each(&origins, start);
    let cases = scenarios
        .into_iter()
        .zip(&gateways)
        .map(|(b, gateway)| Case {
            name: format!("{title} {} × {}", b.endpoint, b.name),
            url: gateway.at(b.endpoint),
            flags: vec![],
            expect: b.expect,
        })
        .collect();
    (cases, gateways)
}

// ---------------------------------------------------------------------------
// Launchers
// ---------------------------------------------------------------------------

/// A gateway to start (see [`in_parallel`]).
pub type Job<'a> = Box<dyn FnOnce() -> Proc + Send + 'a>;

/// Runs the jobs on their own threads (gateways start slowly, mostly waiting
/// on imports) and returns their results in order; a panicking job fails the
/// caller after the others finished (their servers are then dropped, killed).
pub fn in_parallel<T: Send>(jobs: Vec<Box<dyn FnOnce() -> T + Send + '_>>) -> Vec<T> {
    thread::scope(|scope| {
        let handles: Vec<_> = jobs.into_iter().map(|job| scope.spawn(job)).collect();
        let results: Vec<thread::Result<T>> = handles.into_iter().map(|h| h.join()).collect();
        results
            .into_iter()
            .map(|r| r.unwrap_or_else(|e| std::panic::resume_unwind(e)))
            .collect()
    })
}

/// Starts one gateway per origin, in parallel.
pub fn start_each(origins: &[&str], start: impl Fn(&str) -> Proc + Sync) -> Vec<Proc> {
    let start = &start;
    in_parallel(
        origins
            .iter()
            .map(|&origin| Box::new(move || start(origin)) as Job)
            .collect(),
    )
}

/// `mcp-exporter simulate ARGS` (space-separated) over stdio, as a
/// gateway's origin command.
pub fn simulate_stdio(args: &str) -> Vec<String> {
    let mut argv = vec![
        crate::exporter_bin().to_string_lossy().into_owned(),
        s("simulate"),
    ];
    argv.extend(args.split_whitespace().map(str::to_string));
    argv
}

fn node_gateway(what: &str, script: &str, args: Vec<String>) -> Proc {
    let mut argv = vec![
        s("node"),
        s("--require"),
        peer_path(LOOPBACK),
        peer_path(script),
    ];
    argv.extend(args);
    Proc::start_argv(what, &argv, &[])
}

/// supergateway's front.
#[derive(Clone, Copy, Debug)]
pub enum SgMode {
    Sse,
    Stateless,
    Stateful,
}

/// supergateway in front of a stdio simulator; forced onto loopback by the
/// preload, which also announces the port (`--port 0`).
pub fn supergateway(mode: SgMode, origin: &str) -> Proc {
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

/// npm `mcp-proxy` in front of a stdio simulator.
pub fn npm_mcp_proxy(origin: &str) -> Proc {
    let mut args = vec![s("--port"), s("0"), s("--host"), s("127.0.0.1"), s("--")];
    args.extend(simulate_stdio(origin));
    node_gateway(&format!("npm mcp-proxy {origin}"), NPM_MCP_PROXY, args)
}

/// PyPI `mcp-proxy` in front of a stdio simulator.
pub fn pypi_mcp_proxy(origin: &str) -> Proc {
    let mut argv = vec![
        peer_path(PYPI_MCP_PROXY),
        s("--port"),
        s("0"),
        s("--host"),
        s("127.0.0.1"),
    ];
    let mut origin_argv = simulate_stdio(origin).into_iter();
    argv.extend(origin_argv.next());
    argv.push(s("--"));
    argv.extend(origin_argv);
    Proc::start_argv(&format!("PyPI mcp-proxy {origin}"), &argv, &[])
}

/// `tests/peers/fastmcp/gateway.py ARGS` (`proxy URL` or `mount NS=URL…`).
pub fn fastmcp_gateway(args: &[String]) -> Proc {
    let mut argv = vec![peer_path(FASTMCP_PYTHON), peer_path("fastmcp/gateway.py")];
    argv.extend(args.iter().cloned());
    Proc::start_argv(&format!("fastmcp gateway {args:?}"), &argv, &[])
}

/// The Python `mcp` 2.x paginating peer over HTTP (speaks 2026-07-28 and
/// 2025-era).
pub fn dual_era_origin() -> Proc {
    let argv = vec![
        peer_path(PYTHON_V2),
        peer_path("python/paginating_server.py"),
        s("http"),
        s("0"),
    ];
    Proc::start_argv("python mcp 2.x peer", &argv, &[])
}

// ---------------------------------------------------------------------------
// Serve mode: the gateway as a target, each origin a reference
// ---------------------------------------------------------------------------

/// YAML for a stdio origin target running the simulator.
pub fn stdio_target(name: &str, origin: &str) -> String {
    let mut argv = simulate_stdio(origin).into_iter();
    let command = argv.next().unwrap_or_default();
    let args: Vec<String> = argv.map(|a| format!("\"{a}\"")).collect();
    format!(
        "  - name: {name}\n    stdio:\n      command: \"{command}\"\n      args: [{}]\n",
        args.join(", ")
    )
}

/// YAML for a URL target with `extra` keys (indented four spaces).
pub fn url_target(name: &str, url: &str, extra: &str) -> String {
    format!("  - name: {name}\n    http:\n      url: {url}\n{extra}")
}

/// `extra` for a target with one reference.
pub fn reference(target: &str) -> String {
    format!("    reference: [{{target: {target}}}]\n")
}

/// A scheduled exporter: tools only, every 3 s, no jitter, no
/// garbage-cursor probe.
pub fn serve(targets: &str) -> Exporter {
    Exporter::start(&format!(
        "global:\n  schedule: {{every: 3s}}\n  jitter: 0s\n  kinds: [tools]\n  limits:\n    page_timeout: 30s\n  invalid_cursor_probe: false\ntargets:\n{targets}"
    ))
}

/// `target="T", kind="tools"`.
pub fn tools(target: &str) -> [(&str, &str); 2] {
    [("target", target), ("kind", "tools")]
}

/// `mcp_reference_missing_items` of target's tools against `reference`.
pub fn missing(text: &str, target: &str, reference: &str) -> Option<f64> {
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

/// Tools listings of `target` so far.
pub fn listings(text: &str, target: &str) -> f64 {
    crate::metrics::listing_attempts(text, &tools(target)).unwrap_or(0.0)
}

/// `mcp_up` of `target`.
pub fn up(text: &str, target: &str) -> Option<f64> {
    sample(text, "mcp_up", &[("target", target)])
}

/// The verdict reason codes of a target in `/api/targets`.
pub fn reason_codes(target: &Value) -> Vec<String> {
    target["verdict"]["reasons"]
        .as_array()
        .map(|rs| {
            rs.iter()
                .map(|r| r["code"].as_str().unwrap_or_default().to_string())
                .collect()
        })
        .unwrap_or_default()
}
