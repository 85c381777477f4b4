//! `mcp-exporter probe` against every simulator scenario, over stdio,
//! Streamable HTTP (JSON and SSE responses) and legacy HTTP+SSE: exact
//! pages, items, names and outcome, as docs/simulator.md says a correct
//! client reports them.

mod common;

use common::{listing, names, page_items, probe_json, Proc};
use serde_json::Value;
use std::io::Write;

/// What one tools listing must look like.
#[derive(Clone, Copy)]
struct Expect {
    outcome: &'static str,
    reason: Option<&'static str>,
    /// Items per page in request order (restarts included).
    pages: &'static [u64],
    unique: u64,
    raw: u64,
}

const fn complete(pages: &'static [u64], unique: u64, raw: u64) -> Expect {
    Expect {
        outcome: "complete",
        reason: None,
        pages,
        unique,
        raw,
    }
}

const fn failed(
    outcome: &'static str,
    reason: &'static str,
    pages: &'static [u64],
    unique: u64,
    raw: u64,
) -> Expect {
    Expect {
        outcome,
        reason: Some(reason),
        pages,
        unique,
        raw,
    }
}

fn tool_names(range: std::ops::RangeInclusive<u32>) -> Vec<String> {
    range.map(|n| format!("tool-{n:03}")).collect()
}

fn check(mode: &str, scenario: &str, report: &Value, e: Expect) {
    let l = listing(report, "tools");
    let ctx = format!("{scenario} over {mode}: {l}");
    assert_eq!(l["outcome"], e.outcome, "{ctx}");
    assert_eq!(l["reason"].as_str(), e.reason, "{ctx}");
    assert_eq!(page_items(l), e.pages, "{ctx}");
    assert_eq!(l["unique_items"], e.unique, "{ctx}");
    assert_eq!(l["raw_items"], e.raw, "{ctx}");
    assert_eq!(l["duplicate_items"], e.raw - e.unique, "{ctx}");
    assert_eq!(names(l).len() as u64, e.unique, "{ctx}");
}

/// Scenario name, extra YAML keys for the virtual server, extra probe
/// flags, and the expected tools listing. One table for every transport;
/// `only` limits a row to the modes where the behaviour is defined.
struct Case {
    scenario: &'static str,
    knobs: &'static str,
    probe: &'static [&'static str],
    expect: Expect,
    only: &'static [&'static str],
}

const ALL: &[&str] = &[];

fn cases() -> Vec<Case> {
    vec![
        Case {
            scenario: "healthy",
            knobs: "",
            probe: &[],
            expect: complete(&[5, 5, 5, 5], 20, 20),
            only: ALL,
        },
        Case {
            scenario: "single-page",
            knobs: "",
            probe: &[],
            expect: complete(&[20], 20, 20),
            only: ALL,
        },
        Case {
            scenario: "truncate",
            knobs: "",
            probe: &[],
            expect: complete(&[5, 5, 5], 15, 15),
            only: ALL,
        },
        Case {
            scenario: "shrink",
            knobs: "",
            probe: &[],
            expect: complete(&[5, 5, 5, 5], 20, 20),
            only: ALL,
        },
        Case {
            scenario: "grow",
            knobs: "",
            probe: &[],
            expect: complete(&[5, 5, 5, 5], 20, 20),
            only: ALL,
        },
        Case {
            scenario: "overlap",
            knobs: "",
            probe: &[],
            expect: complete(&[5, 5, 5, 5, 4], 20, 24),
            only: ALL,
        },
        Case {
            scenario: "repeat-cursor",
            knobs: "",
            probe: &[],
            expect: failed("aborted", "cursor_cycle", &[5, 5], 10, 10),
            only: ALL,
        },
        Case {
            scenario: "cycle",
            knobs: "",
            probe: &[],
            expect: failed("aborted", "cursor_cycle", &[5, 5, 5], 15, 15),
            only: ALL,
        },
        Case {
            scenario: "endless",
            knobs: "",
            probe: &["--max-pages", "10"],
            expect: failed("aborted", "page_cap", &[5; 10], 20, 50),
            only: ALL,
        },
        Case {
            scenario: "endless",
            knobs: "",
            probe: &["--max-items", "12"],
            expect: failed("aborted", "item_cap", &[5, 5, 5], 15, 15),
            only: ALL,
        },
        Case {
            scenario: "blank-cursor",
            knobs: "",
            probe: &[],
            expect: Expect {
                outcome: "complete",
                reason: Some("blank_cursor"),
                pages: &[5],
                unique: 5,
                raw: 5,
            },
            only: ALL,
        },
        Case {
            scenario: "null-cursor",
            knobs: "",
            probe: &[],
            expect: complete(&[5, 5, 5, 5], 20, 20),
            only: ALL,
        },
        Case {
            scenario: "number-cursor",
            knobs: "",
            probe: &[],
            expect: failed("error", "malformed_result", &[5], 5, 5),
            only: ALL,
        },
        Case {
            scenario: "stale-cursor",
            knobs: "",
            probe: &[],
            expect: complete(&[5, 0, 5, 5, 5, 5], 20, 20),
            only: ALL,
        },
        Case {
            scenario: "stale-cursor",
            knobs: "times: 2",
            probe: &[],
            expect: failed("error", "invalid_cursor", &[5, 0, 5, 0], 5, 5),
            only: ALL,
        },
        Case {
            scenario: "silent-restart",
            knobs: "",
            probe: &[],
            expect: complete(&[5, 5, 5, 5, 5], 20, 25),
            only: ALL,
        },
        Case {
            scenario: "slow-page",
            knobs: "delay_ms: 300",
            probe: &[],
            expect: complete(&[5, 5, 5, 5], 20, 20),
            only: ALL,
        },
        Case {
            scenario: "hang",
            knobs: "",
            probe: &["--timeout", "1s"],
            expect: failed("error", "timeout", &[5, 0], 5, 5),
            only: ALL,
        },
        Case {
            scenario: "drip",
            knobs: "delay_ms: 2\nchunk_bytes: 64",
            probe: &[],
            expect: complete(&[5, 5, 5, 5], 20, 20),
            only: ALL,
        },
        Case {
            scenario: "drip",
            knobs: "delay_ms: 200",
            probe: &["--timeout", "1s"],
            expect: failed("error", "timeout", &[5, 0], 5, 5),
            only: ALL,
        },
        Case {
            scenario: "oversize",
            knobs: "size_mib: 2",
            probe: &["--max-response-bytes", "1000000"],
            expect: failed("error", "response_too_large", &[5, 0], 5, 5),
            only: ALL,
        },
        Case {
            scenario: "oversize",
            knobs: "size_mib: 2",
            probe: &[],
            expect: complete(&[5, 5, 5, 5], 20, 20),
            only: ALL,
        },
        Case {
            scenario: "malformed",
            knobs: "",
            probe: &["--timeout", "1s"],
            expect: failed("error", "malformed_result", &[5, 0], 5, 5),
            only: ALL,
        },
        Case {
            scenario: "wrong-shape",
            knobs: "",
            probe: &[],
            expect: failed("error", "malformed_result", &[5, 0], 5, 5),
            only: ALL,
        },
        Case {
            scenario: "missing-keys",
            knobs: "",
            probe: &[],
            expect: complete(&[5, 5, 5, 5], 16, 16),
            only: ALL,
        },
        Case {
            scenario: "crash",
            knobs: "",
            probe: &[],
            expect: failed("error", "transport_error", &[5, 0], 5, 5),
            only: ALL,
        },
        Case {
            scenario: "rpc-error",
            knobs: "",
            probe: &[],
            expect: failed("error", "rpc_error", &[5, 0], 5, 5),
            only: ALL,
        },
        Case {
            scenario: "list-changed-storm",
            knobs: "",
            probe: &[],
            expect: complete(&[5, 5, 5, 5, 5], 20, 20),
            only: &["stdio", "http-sse", "sse"],
        },
        Case {
            scenario: "list-changed-storm",
            knobs: "",
            probe: &[],
            expect: complete(&[5, 5, 5, 5], 20, 20),
            only: &["http-json"],
        },
        Case {
            scenario: "reorder",
            knobs: "",
            probe: &[],
            expect: complete(&[5, 5, 5, 5], 20, 20),
            only: ALL,
        },
        Case {
            scenario: "protocol-2026",
            knobs: "",
            probe: &[],
            expect: complete(&[5, 5, 5, 5], 20, 20),
            only: &["stdio", "http-json", "http-sse"],
        },
        Case {
            scenario: "session-expiry",
            knobs: "expire_after: 5",
            probe: &[],
            expect: complete(&[5, 5, 5, 5], 20, 20),
            only: ALL,
        },
    ]
}

fn applies(case: &Case, mode: &str) -> bool {
    case.only.is_empty() || case.only.contains(&mode)
}

/// Per-case details beyond pages and counts.
fn check_details(mode: &str, case: &Case, report: &Value) {
    let l = listing(report, "tools");
    let ctx = format!("{} over {mode}: {l}", case.scenario);
    match (case.scenario, case.knobs) {
        ("healthy", _) | ("shrink", _) | ("reorder", _) => {
            assert_eq!(names(l), tool_names(1..=20), "{ctx}")
        }
        ("truncate", _) => assert_eq!(names(l), tool_names(1..=15), "{ctx}"),
        ("overlap", _) => assert_eq!(
            l["duplicate_names"],
            serde_json::json!(["tool-005", "tool-009", "tool-013", "tool-017"]),
            "{ctx}"
        ),
        ("silent-restart", _) => assert_eq!(
            l["duplicate_names"],
            serde_json::json!(["tool-001", "tool-002", "tool-003", "tool-004", "tool-005"]),
            "{ctx}"
        ),
        ("null-cursor", _) => assert_eq!(l["pages"][3]["next_cursor"]["state"], "null", "{ctx}"),
        ("blank-cursor", _) => assert_eq!(l["blank_cursor_end"], true, "{ctx}"),
        ("number-cursor", _) => {
            assert_eq!(l["pages"][0]["next_cursor"]["state"], "invalid", "{ctx}")
        }
        ("stale-cursor", "") => {
            assert_eq!(l["invalid_cursor_errors"], 1, "{ctx}");
            assert_eq!(l["final_pages"], 4, "{ctx}");
            assert_eq!(
                l["restarts"],
                serde_json::json!([{"reason": "invalid_cursor", "at_page": 1}]),
                "{ctx}"
            );
        }
        ("stale-cursor", _) => assert_eq!(l["invalid_cursor_errors"], 2, "{ctx}"),
        ("missing-keys", _) => {
            assert_eq!(l["invalid_items"], 4, "{ctx}");
            assert!(!names(l).contains(&"tool-005".to_string()), "{ctx}");
        }
        ("rpc-error", _) => assert_eq!(l["rpc_error_code"], -32603, "{ctx}"),
        ("slow-page", _) => assert!(l["pages"][1]["seconds"].as_f64().unwrap() >= 0.3, "{ctx}"),
        ("list-changed-storm", _) if mode != "http-json" => {
            assert_eq!(l["final_pages"], 4, "{ctx}");
            assert_eq!(
                l["restarts"],
                serde_json::json!([{"reason": "list_changed", "at_page": 0}]),
                "{ctx}"
            );
            assert_eq!(l["list_changed_notifications"], 5, "{ctx}");
        }
        ("protocol-2026", _) => {
            assert_eq!(report["protocol_version"], "2026-07-28", "{ctx}");
            assert_eq!(l["ttl_ms"], 30000, "{ctx}");
            assert_eq!(l["cache_scope"], "public", "{ctx}");
            assert_eq!(l["pages"][0]["next_cursor"]["state"], "blank", "{ctx}");
        }
        _ => {}
    }
}

fn expected_exit(e: &Expect) -> i32 {
    if e.outcome == "complete" {
        0
    } else {
        1
    }
}

/// One simulator process serving every case as a virtual server.
fn scenarios_file(response: &str) -> tempfile::NamedTempFile {
    let mut f = tempfile::NamedTempFile::new().unwrap();
    writeln!(f, "defaults:\n  response: {response}\nservers:").unwrap();
    for (i, c) in cases().iter().enumerate() {
        writeln!(f, "  - name: case{i}\n    scenario: {}", c.scenario).unwrap();
        for line in c.knobs.lines() {
            writeln!(f, "    {line}").unwrap();
        }
    }
    f
}

fn run_http_mode(mode: &str, transport: &str, response: &str, path: &str) {
    let file = scenarios_file(response);
    let sim = Proc::start(&[
        "simulate",
        "--transport",
        transport,
        "--scenarios",
        file.path().to_str().unwrap(),
    ]);
    let mut failures = Vec::new();
    for (i, case) in cases().iter().enumerate() {
        if !applies(case, mode) {
            continue;
        }
        let url = format!("{}/{path}/case{i}", sim.url);
        let mut args = vec!["--url", url.as_str(), "--kind", "tools"];
        args.extend_from_slice(case.probe);
        let (code, report) = probe_json(&args);
        let result = std::panic::catch_unwind(|| {
            check(mode, case.scenario, &report, case.expect);
            check_details(mode, case, &report);
            assert_eq!(
                code,
                expected_exit(&case.expect),
                "exit code of {} over {mode}",
                case.scenario
            );
        });
        if result.is_err() {
            failures.push(format!("{} {}", case.scenario, case.knobs));
        }
    }
    assert!(failures.is_empty(), "failed over {mode}: {failures:?}");
}

#[test]
fn every_scenario_over_streamable_http_json() {
    run_http_mode("http-json", "http", "json", "mcp");
}

#[test]
fn every_scenario_over_streamable_http_sse() {
    run_http_mode("http-sse", "http", "sse", "mcp");
}

#[test]
fn every_scenario_over_legacy_sse() {
    run_http_mode("sse", "sse", "json", "sse");
}

#[test]
fn every_scenario_over_stdio() {
    let bin = common::bin();
    let bin = bin.to_str().unwrap();
    let mut failures = Vec::new();
    for case in cases() {
        if !applies(&case, "stdio") {
            continue;
        }
        let mut args: Vec<String> = vec!["--kind".into(), "tools".into()];
        args.extend(case.probe.iter().map(|s| s.to_string()));
        args.extend([
            "--stdio".into(),
            "--".into(),
            bin.into(),
            "simulate".into(),
            "--scenario".into(),
            case.scenario.into(),
        ]);
        for line in case.knobs.lines() {
            let (k, v) = line.split_once(':').unwrap();
            args.push(format!("--{}", k.trim().replace('_', "-")));
            args.push(v.trim().to_string());
        }
        let refs: Vec<&str> = args.iter().map(String::as_str).collect();
        let (code, report) = probe_json(&refs);
        let result = std::panic::catch_unwind(|| {
            check("stdio", case.scenario, &report, case.expect);
            check_details("stdio", &case, &report);
            assert_eq!(
                code,
                expected_exit(&case.expect),
                "exit code of {}",
                case.scenario
            );
        });
        if result.is_err() {
            failures.push(format!("{} {}", case.scenario, case.knobs));
        }
    }
    assert!(failures.is_empty(), "failed over stdio: {failures:?}");
}

#[test]
fn all_four_kinds_are_listed_with_their_identity_keys() {
    let sim = Proc::start(&[
        "simulate",
        "--transport",
        "http",
        "--scenario",
        "healthy",
        "--items",
        "7",
        "--page-size",
        "3",
    ]);
    let (code, report) = probe_json(&["--url", &format!("{}/mcp", sim.url)]);
    assert_eq!(code, 0);
    for (kind, first) in [
        ("tools", "tool-001"),
        ("prompts", "prompt-001"),
        ("resources", "sim://resources/001"),
        ("resource_templates", "sim://templates/001/{id}"),
    ] {
        let l = listing(&report, kind);
        assert_eq!(l["outcome"], "complete", "{kind}");
        assert_eq!(page_items(l), vec![3, 3, 1], "{kind}");
        assert_eq!(names(l)[0], first, "{kind}");
    }
    assert_eq!(report["server"]["name"], "mcp-exporter-simulator");
    assert_eq!(report["transport"], "streamable_http");
    assert!(report["time_to_ready_seconds"].as_f64().unwrap() > 0.0);
}

#[test]
fn session_expiry_reinitialises_and_restarts_from_page_one() {
    let sim = Proc::start(&[
        "simulate",
        "--transport",
        "http",
        "--scenario",
        "session-expiry",
        "--expire-after",
        "6",
    ]);
    let (code, report) = probe_json(&[
        "--url",
        &format!("{}/mcp", sim.url),
        "--kind",
        "tools",
        "--kind",
        "prompts",
    ]);
    assert_eq!(code, 0, "{report}");
    let prompts = listing(&report, "prompts");
    assert_eq!(page_items(prompts), vec![5, 5, 0, 5, 5, 5, 5]);
    assert_eq!(
        prompts["restarts"],
        serde_json::json!([{"reason": "session_expired", "at_page": 2}])
    );
    assert_eq!(prompts["final_pages"], 4);
    assert_eq!(report["handshakes"].as_array().unwrap().len(), 2);
}

#[test]
fn auth_needs_the_bearer_token_and_never_prints_it() {
    let token = "sim-secret-token-4711";
    let sim = Proc::start_with_env(
        &[
            "simulate",
            "--transport",
            "http",
            "--scenario",
            "auth",
            "--token-env",
            "SIM_TOKEN",
        ],
        &[("SIM_TOKEN", token)],
    );
    let url = format!("{}/mcp", sim.url);
    let (code, report) = probe_json(&["--url", &url, "--kind", "tools"]);
    assert_eq!(code, 1);
    assert_eq!(report["session_error"]["error"], "unauthorized");
    assert_eq!(listing(&report, "tools")["reason"], "unauthorized");

    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("token");
    std::fs::write(&file, format!("{token}\n")).unwrap();
    let out = std::process::Command::new(common::bin())
        .args([
            "probe",
            "--url",
            &url,
            "--kind",
            "tools",
            "--bearer-token-file",
            file.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(text.contains("tools: complete"), "{text}");
    assert!(!text.contains(token));
}

#[test]
fn a_server_that_never_answers_times_out_and_leaves_no_process() {
    // stdio: the child (and its process group) must be gone when probe exits.
    let dir = tempfile::tempdir().unwrap();
    let pidfile = dir.path().join("pid");
    let script = format!(
        "echo $$ > {}; exec {} simulate --scenario hang --page 1",
        pidfile.display(),
        common::bin().display()
    );
    let start = std::time::Instant::now();
    let (code, report) = probe_json(&[
        "--kind",
        "tools",
        "--timeout",
        "1s",
        "--stdio",
        "--",
        "sh",
        "-c",
        &script,
    ]);
    assert_eq!(code, 1);
    assert_eq!(listing(&report, "tools")["reason"], "timeout");
    assert!(start.elapsed() < std::time::Duration::from_secs(30));
    let pid: u32 = std::fs::read_to_string(&pidfile)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    assert!(!common::alive(pid), "server process {pid} outlived probe");

    // HTTP: the same deadline holds.
    let sim = Proc::start(&[
        "simulate",
        "--transport",
        "http",
        "--scenario",
        "hang",
        "--page",
        "1",
        "--response",
        "sse",
    ]);
    let (code, report) = probe_json(&[
        "--url",
        &format!("{}/mcp", sim.url),
        "--kind",
        "tools",
        "--timeout",
        "1s",
    ]);
    assert_eq!(code, 1);
    assert_eq!(listing(&report, "tools")["reason"], "timeout");
}

#[test]
fn human_output_shows_every_page() {
    let sim = Proc::start(&["simulate", "--transport", "http", "--scenario", "overlap"]);
    let out = std::process::Command::new(common::bin())
        .args([
            "probe",
            "--url",
            &format!("{}/mcp", sim.url),
            "--kind",
            "tools",
        ])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success());
    assert!(
        text.contains("tools: complete · 5 page(s) · 24 raw / 20 unique / 4 duplicate(s)"),
        "{text}"
    );
    assert!(
        text.contains("duplicates: tool-005, tool-009, tool-013, tool-017"),
        "{text}"
    );
    assert_eq!(
        text.lines()
            .filter(|l| l.trim_start().starts_with(|c: char| c.is_ascii_digit()))
            .count(),
        5,
        "{text}"
    );
}

#[test]
fn usage_errors_exit_2() {
    let out = std::process::Command::new(common::bin())
        .args([
            "probe",
            "--url",
            "http://127.0.0.1:1/mcp",
            "--protocol",
            "1999-01-01",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let out = std::process::Command::new(common::bin())
        .args(["probe"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
}

// ------------------------------------------------- docs/reliability.md

const MODES: [(&str, &str); 4] = [
    ("stdio", "stdio"),
    ("http-json", "HTTP json"),
    ("http-sse", "HTTP sse"),
    ("sse", "legacy SSE"),
];
const MATRIX_BEGIN: &str = "<!-- fault-matrix: generated by tests/probe_simulator.rs -->\n";
const MATRIX_END: &str = "<!-- fault-matrix end -->\n";

fn cell(e: &Expect) -> String {
    match e.reason {
        Some(r) => format!("{}: {r}", e.outcome),
        None => e.outcome.to_string(),
    }
}

fn pages_text(pages: &[u64]) -> String {
    pages
        .iter()
        .map(u64::to_string)
        .collect::<Vec<_>>()
        .join(",")
}

/// The fault matrix as Markdown, from the cases the tests above run: one
/// row per scenario and knobs, one column per transport.
fn fault_matrix() -> String {
    let cases = cases();
    let mut rows: Vec<(String, Vec<&Case>)> = Vec::new();
    for c in &cases {
        let mut settings: Vec<String> =
            c.knobs.lines().map(|l| format!("`{}`", l.trim())).collect();
        if !c.probe.is_empty() {
            settings.push(format!("`{}`", c.probe.join(" ")));
        }
        let title = if settings.is_empty() {
            c.scenario.to_string()
        } else {
            format!("{} ({})", c.scenario, settings.join(", "))
        };
        match rows.iter_mut().find(|(t, _)| *t == title) {
            Some((_, group)) => group.push(c),
            None => rows.push((title, vec![c])),
        }
    }
    let mut out = String::from(
        "| scenario (simulator knobs, probe flags) | stdio | HTTP json | HTTP sse | legacy SSE | items per page | unique / raw |\n|---|---|---|---|---|---|---|\n",
    );
    for (title, group) in rows {
        let per_mode: Vec<Option<&Case>> = MODES
            .iter()
            .map(|(m, _)| group.iter().copied().find(|c| applies(c, m)))
            .collect();
        let cells: Vec<String> = per_mode
            .iter()
            .map(|c| c.map_or("—".to_string(), |c| cell(&c.expect)))
            .collect();
        let detail = |f: &dyn Fn(&Expect) -> String| -> String {
            let mut shown: Vec<(String, Vec<&str>)> = Vec::new();
            for ((_, label), c) in MODES.iter().zip(&per_mode) {
                let Some(c) = c else { continue };
                let v = f(&c.expect);
                match shown.iter_mut().find(|(s, _)| *s == v) {
                    Some((_, labels)) => labels.push(label),
                    None => shown.push((v, vec![label])),
                }
            }
            if shown.len() == 1 {
                return shown.remove(0).0;
            }
            shown
                .iter()
                .map(|(v, labels)| format!("{}: {v}", labels.join(", ")))
                .collect::<Vec<_>>()
                .join("; ")
        };
        let pages = detail(&|e| pages_text(e.pages));
        let counts = detail(&|e| format!("{} / {}", e.unique, e.raw));
        out.push_str(&format!(
            "| {title} | {} | {pages} | {counts} |\n",
            cells.join(" | ")
        ));
    }
    out
}

/// docs/reliability.md's fault matrix is exactly what these tests check.
/// `UPDATE_DOCS=1 cargo test --test probe_simulator fault_matrix` rewrites it.
#[test]
fn fault_matrix_in_docs_matches_the_cases() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/reliability.md");
    let doc = std::fs::read_to_string(&path).unwrap();
    let start = doc.find(MATRIX_BEGIN).expect("fault-matrix begin marker") + MATRIX_BEGIN.len();
    let end = start
        + doc[start..]
            .find(MATRIX_END)
            .expect("fault-matrix end marker");
    let table = fault_matrix();
    if std::env::var_os("UPDATE_DOCS").is_some() {
        std::fs::write(&path, format!("{}{table}{}", &doc[..start], &doc[end..])).unwrap();
        return;
    }
    let stale = doc[start..end]
        .lines()
        .zip(table.lines())
        .find(|(doc_line, line)| doc_line != line);
    assert!(
        stale.is_none() && doc[start..end].lines().count() == table.lines().count(),
        "docs/reliability.md's fault matrix is stale (run UPDATE_DOCS=1 cargo test --test probe_simulator fault_matrix); first difference: {stale:?}"
    );
}
