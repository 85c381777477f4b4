//! `mcp-exporter probe` against every simulator scenario, over stdio,
//! Streamable HTTP (JSON and SSE responses) and legacy HTTP+SSE: exact
//! pages, items, names and outcome, as docs/simulator.md says a correct
//! client reports them.

use mcp_testkit::process::run_exporter;
use mcp_testkit::simulator::http_scenario;
use mcp_testkit::{alive, exporter_bin, listing, names, page_items, probe_json, Proc};
use serde_json::{json, Value};
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

const fn aborted(guard: &'static str, pages: &'static [u64], unique: u64, raw: u64) -> Expect {
    Expect {
        outcome: "aborted",
        reason: Some(guard),
        pages,
        unique,
        raw,
    }
}

const fn error(label: &'static str, pages: &'static [u64], unique: u64, raw: u64) -> Expect {
    Expect {
        outcome: "error",
        reason: Some(label),
        pages,
        unique,
        raw,
    }
}

fn tool_names(range: std::ops::RangeInclusive<u32>) -> Vec<String> {
    range.map(|n| format!("tool-{n:03}")).collect()
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

/// A case for every transport.
const fn case(
    scenario: &'static str,
    knobs: &'static str,
    probe: &'static [&'static str],
    expect: Expect,
) -> Case {
    Case {
        scenario,
        knobs,
        probe,
        expect,
        only: &[],
    }
}

impl Case {
    /// This case only over `modes`.
    const fn only(self, modes: &'static [&'static str]) -> Case {
        Case {
            only: modes,
            ..self
        }
    }

    fn applies(&self, mode: &str) -> bool {
        self.only.is_empty() || self.only.contains(&mode)
    }

    /// A knob's value (`delay_ms: 300` gives 300 for `delay_ms`).
    fn knob(&self, name: &str) -> Option<f64> {
        self.knobs.lines().find_map(|line| {
            let (k, v) = line.split_once(':')?;
            (k.trim() == name).then(|| v.trim().parse().ok())?
        })
    }
}

const FOUR_PAGES_OF_FIVE: &[u64] = &[5, 5, 5, 5];

/// The table: one row per case (laid out by hand, hence no rustfmt).
#[rustfmt::skip]
fn cases() -> Vec<Case> {
    let none: &[&str] = &[];
    let timeout_1s: &[&str] = &["--timeout", "1s"];
    let blank_end = Expect { reason: Some("blank_cursor"), ..complete(&[5], 5, 5) };
    vec![
        case("healthy", "", none, complete(FOUR_PAGES_OF_FIVE, 20, 20)),
        case("single-page", "", none, complete(&[20], 20, 20)),
        case("truncate", "", none, complete(&[5, 5, 5], 15, 15)),
        case("shrink", "", none, complete(FOUR_PAGES_OF_FIVE, 20, 20)),
        case("grow", "", none, complete(FOUR_PAGES_OF_FIVE, 20, 20)),
        case("overlap", "", none, complete(&[5, 5, 5, 5, 4], 20, 24)),
        case("repeat-cursor", "", none, aborted("cursor_cycle", &[5, 5], 10, 10)),
        case("cycle", "", none, aborted("cursor_cycle", &[5, 5, 5], 15, 15)),
        case("endless", "", &["--max-pages", "10"], aborted("page_cap", &[5; 10], 20, 50)),
        case("endless", "", &["--max-items", "12"], aborted("item_cap", &[5, 5, 5], 15, 15)),
        case("blank-cursor", "", none, blank_end),
        case("null-cursor", "", none, complete(FOUR_PAGES_OF_FIVE, 20, 20)),
        case("number-cursor", "", none, error("malformed_result", &[5], 5, 5)),
        case("stale-cursor", "", none, complete(&[5, 0, 5, 5, 5, 5], 20, 20)),
        case("stale-cursor", "times: 2", none, error("invalid_cursor", &[5, 0, 5, 0], 5, 5)),
        case("silent-restart", "", none, complete(&[5, 5, 5, 5, 5], 20, 25)),
        case("slow-page", "delay_ms: 300", none, complete(FOUR_PAGES_OF_FIVE, 20, 20)),
        case("hang", "", timeout_1s, error("timeout", &[5, 0], 5, 5)),
        case("drip", "delay_ms: 2\nchunk_bytes: 64", none, complete(FOUR_PAGES_OF_FIVE, 20, 20)),
        case("drip", "delay_ms: 200", timeout_1s, error("timeout", &[5, 0], 5, 5)),
        case("oversize", "size_mib: 2", &["--max-response-bytes", "1000000"],
             error("response_too_large", &[5, 0], 5, 5)),
        case("oversize", "size_mib: 2", none, complete(FOUR_PAGES_OF_FIVE, 20, 20)),
        case("malformed", "", timeout_1s, error("malformed_result", &[5, 0], 5, 5)),
        case("wrong-shape", "", none, error("malformed_result", &[5, 0], 5, 5)),
        case("missing-keys", "", none, complete(FOUR_PAGES_OF_FIVE, 16, 16)),
        case("crash", "", none, error("transport_error", &[5, 0], 5, 5)),
        case("rpc-error", "", none, error("rpc_error", &[5, 0], 5, 5)),
        case("list-changed-storm", "", none, complete(&[5, 5, 5, 5, 5], 20, 20))
            .only(&["stdio", "http-sse", "sse"]),
        case("list-changed-storm", "", none, complete(FOUR_PAGES_OF_FIVE, 20, 20))
            .only(&["http-json"]),
        case("reorder", "", none, complete(FOUR_PAGES_OF_FIVE, 20, 20)),
        case("protocol-2026", "", none, complete(FOUR_PAGES_OF_FIVE, 20, 20))
            .only(&["stdio", "http-json", "http-sse"]),
        case("session-expiry", "expire_after: 5", none, complete(FOUR_PAGES_OF_FIVE, 20, 20)),
    ]
}

/// Pages, counts and names every case has.
fn check_counts(ctx: &str, l: &Value, e: Expect) {
    assert_eq!(l["outcome"], e.outcome, "{ctx}");
    assert_eq!(l["reason"].as_str(), e.reason, "{ctx}");
    assert_eq!(page_items(l), e.pages, "{ctx}");
    assert_eq!(l["unique_items"], e.unique, "{ctx}");
    assert_eq!(l["raw_items"], e.raw, "{ctx}");
    assert_eq!(l["duplicate_items"], e.raw - e.unique, "{ctx}");
    assert_eq!(names(l).len() as u64, e.unique, "{ctx}");
}

/// Per-case details beyond pages and counts.
fn check_details(mode: &str, case: &Case, report: &Value, ctx: &str) {
    let l = listing(report, "tools");
    match (case.scenario, case.knobs) {
        ("healthy", _) | ("shrink", _) | ("reorder", _) => {
            assert_eq!(names(l), tool_names(1..=20), "{ctx}")
        }
        ("truncate", _) => assert_eq!(names(l), tool_names(1..=15), "{ctx}"),
        ("overlap", _) => assert_eq!(
            l["duplicate_names"],
            json!(["tool-005", "tool-009", "tool-013", "tool-017"]),
            "{ctx}"
        ),
        ("silent-restart", _) => assert_eq!(
            l["duplicate_names"],
            json!(["tool-001", "tool-002", "tool-003", "tool-004", "tool-005"]),
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
                json!([{"reason": "invalid_cursor", "at_page": 1}]),
                "{ctx}"
            );
        }
        ("stale-cursor", _) => assert_eq!(l["invalid_cursor_errors"], 2, "{ctx}"),
        ("missing-keys", _) => {
            assert_eq!(l["invalid_items"], 4, "{ctx}");
            assert!(!names(l).contains(&"tool-005".to_string()), "{ctx}");
        }
        ("rpc-error", _) => assert_eq!(l["rpc_error_code"], -32603, "{ctx}"),
        ("slow-page", _) => {
            // An ordering, not a timing: the answer cannot come before the
            // server's delay has passed, so the page's own reported time
            // holds it, however slow the machine.
            let delay = case.knob("delay_ms").expect("slow-page has a delay") / 1000.0;
            let seconds = l["pages"][1]["seconds"].as_f64().unwrap_or(0.0);
            assert!(seconds >= delay, "{ctx}");
        }
        ("list-changed-storm", _) if mode != "http-json" => {
            assert_eq!(l["final_pages"], 4, "{ctx}");
            assert_eq!(
                l["restarts"],
                json!([{"reason": "list_changed", "at_page": 0}]),
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

/// Probes one case with `target` (the flags that name the server) and
/// checks everything it must report; Err names the case.
fn probe_case(mode: &str, case: &Case, target: &[&str]) -> Result<(), String> {
    let mut args = vec!["--kind", "tools"];
    args.extend_from_slice(case.probe);
    args.extend_from_slice(target);
    let (code, report) = probe_json(&args);
    let checked = std::panic::catch_unwind(|| {
        let ctx = format!(
            "{} over {mode}: {}",
            case.scenario,
            listing(&report, "tools")
        );
        check_counts(&ctx, listing(&report, "tools"), case.expect);
        check_details(mode, case, &report, &ctx);
        let exit = if case.expect.outcome == "complete" {
            0
        } else {
            1
        };
        assert_eq!(code, exit, "exit code; {ctx}");
    });
    checked.map_err(|_| format!("{} {}", case.scenario, case.knobs))
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
    let failures: Vec<String> = cases()
        .iter()
        .enumerate()
        .filter(|(_, case)| case.applies(mode))
        .filter_map(|(i, case)| {
            let url = sim.at(&format!("/{path}/case{i}"));
            probe_case(mode, case, &["--url", &url]).err()
        })
        .collect();
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
    let bin = exporter_bin();
    let bin = bin.to_str().unwrap();
    let failures: Vec<String> = cases()
        .iter()
        .filter(|case| case.applies("stdio"))
        .filter_map(|case| {
            let mut server: Vec<String> = ["--stdio", "--", bin, "simulate", "--scenario"]
                .iter()
                .map(|s| s.to_string())
                .collect();
            server.push(case.scenario.into());
            for line in case.knobs.lines() {
                let (k, v) = line.split_once(':').unwrap();
                server.push(format!("--{}", k.trim().replace('_', "-")));
                server.push(v.trim().to_string());
            }
            let server: Vec<&str> = server.iter().map(String::as_str).collect();
            probe_case("stdio", case, &server).err()
        })
        .collect();
    assert!(failures.is_empty(), "failed over stdio: {failures:?}");
}

#[test]
fn all_four_kinds_are_listed_with_their_identity_keys() {
    let sim = http_scenario("healthy", &["--items", "7", "--page-size", "3"]);
    let (code, report) = probe_json(&["--url", &sim.at("/mcp")]);
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
    let sim = http_scenario("session-expiry", &["--expire-after", "6"]);
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
        json!([{"reason": "session_expired", "at_page": 2}])
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
    let url = sim.at("/mcp");
    let (code, report) = probe_json(&["--url", &url, "--kind", "tools"]);
    assert_eq!(code, 1);
    assert_eq!(report["session_error"]["error"], "unauthorized");
    assert_eq!(listing(&report, "tools")["reason"], "unauthorized");

    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("token");
    std::fs::write(&file, format!("{token}\n")).unwrap();
    let out = run_exporter(&[
        "probe",
        "--url",
        &url,
        "--kind",
        "tools",
        "--bearer-token-file",
        file.to_str().unwrap(),
    ]);
    assert!(out.success(), "{}", out.describe());
    let text = out.output();
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
        exporter_bin().display()
    );
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
    let pid: u32 = std::fs::read_to_string(&pidfile)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    assert!(!alive(pid), "server process {pid} outlived probe");

    // HTTP: the same deadline holds.
    let sim = http_scenario("hang", &["--page", "1", "--response", "sse"]);
    let (code, report) = probe_json(&[
        "--url",
        &sim.at("/mcp"),
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
    let sim = http_scenario("overlap", &[]);
    let out = run_exporter(&["probe", "--url", &sim.at("/mcp"), "--kind", "tools"]);
    let text = &out.stdout;
    assert!(out.success(), "{}", out.describe());
    assert!(
        text.contains("tools: complete · 5 pages · 24 raw / 20 unique / 4 duplicate(s)"),
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
    // Refused before any connection: the URL is never tried.
    let out = run_exporter(&[
        "probe",
        "--url",
        "http://127.0.0.1:1/mcp",
        "--protocol",
        "1999-01-01",
    ]);
    assert_eq!(out.code(), Some(2), "{}", out.describe());
    let out = run_exporter(&["probe"]);
    assert_eq!(out.code(), Some(2), "{}", out.describe());
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
            .map(|(m, _)| group.iter().copied().find(|c| c.applies(m)))
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
/// `UPDATE_DOCS=1 cargo test --test probe_simulator fault_matrix` rewrites
/// a stale one, and still fails: a green run always means the committed
/// docs match.
#[test]
fn fault_matrix_in_docs_matches_the_cases() {
    let path = mcp_testkit::repo_path("docs/reliability.md");
    let doc = std::fs::read_to_string(&path).unwrap();
    let start = doc.find(MATRIX_BEGIN).expect("fault-matrix begin marker") + MATRIX_BEGIN.len();
    let end = start
        + doc[start..]
            .find(MATRIX_END)
            .expect("fault-matrix end marker");
    let table = fault_matrix();
    let stale = doc[start..end]
        .lines()
        .zip(table.lines())
        .find(|(doc_line, line)| doc_line != line);
    if stale.is_none() && doc[start..end].lines().count() == table.lines().count() {
        return;
    }
    if std::env::var_os("UPDATE_DOCS").is_some() {
        std::fs::write(&path, format!("{}{table}{}", &doc[..start], &doc[end..])).unwrap();
        panic!("docs/reliability.md's fault matrix was stale and is rewritten: review and commit it, then run again without UPDATE_DOCS; first difference was {stale:?}");
    }
    panic!(
        "docs/reliability.md's fault matrix is stale (UPDATE_DOCS=1 cargo test --test probe_simulator fault_matrix rewrites it); first difference: {stale:?}"
    );
}
