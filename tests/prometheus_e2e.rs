//! End to end with a real Prometheus: the exporter polls simulated MCP
//! servers, Prometheus (1 s scrape and rule evaluation, rules loaded)
//! scrapes it, and then
//! - every PromQL expression of every dashboard panel, annotation and rule
//!   is evaluated through `/api/v1/query` and must parse and return data
//!   (alert conditions and annotations may be empty in a healthy run; then
//!   every metric selector inside them must return data; the conditions of
//!   [`ALERTS_WITH_DATA`] must hold for a faulty server);
//! - every dashboard variable's `label_values(...)` selector matches series;
//! - every rule evaluates without error (`/api/v1/rules` health);
//! - the simulator's shrink scenario makes McpListingSilentlyShrank fire for
//!   the shrinking target and not for the healthy one;
//! - a target with the default metric set stays within the per-target
//!   sample budget docs/metrics.md states, counted in Prometheus.
//!
//! Needs `/usr/bin/prometheus` (Debian package `prometheus`, or `$PROMETHEUS`).

use mcp_testkit::exporter::Exporter;
use mcp_testkit::ports::free_port;
use mcp_testkit::prometheus::{Prometheus, PrometheusSetup};
use mcp_testkit::{exporter_bin, repo_file, repo_path, Proc};
use serde_json::Value;
use std::collections::BTreeSet;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

/// Scrape job name; McpExporterAbsent matches `mcp-exporter.*`.
const JOB: &str = "mcp-exporter";
const DASHBOARDS: [&str; 2] = ["dashboards/mcp-fleet.json", "dashboards/mcp-target.json"];
const RULES: &str = "alerts/mcp-exporter.rules.yaml";
/// Generous bounds for a loaded 2-core machine; about correctness, not speed.
const SERIES_WAIT: Duration = Duration::from_secs(120);
const ALERT_WAIT: Duration = Duration::from_secs(90);

/// The simulated targets, in one place.
///
/// `healthy` is a stdio simulator the exporter starts for each poll.
/// `shrinking` must keep its state across polls (the simulator counts
/// completed listings per server process), so it is one long-lived HTTP
/// simulator started by the test (`shrink_server_args`): it drops an item
/// after every two complete listings, without list_changed. It is also
/// configured as a gateway whose origin is `healthy`, so the reference
/// comparison series exist; `expect` and the invalid-cursor probe make the
/// series they drive exist. `healthy` has `metrics: {detail: true}`, so the
/// per-target histograms exist. The faulty servers of [`FAULTS`] make the
/// series created at a first event exist (aborts, errors, restarts,
/// -32602 answers, blank cursors, list_changed, items without a key) and
/// carry the opt-in families: `looping` runs serve-mode conformance (its
/// cursor cycle fails MUST rules), `versioned` is listed under two protocol
/// versions one after the other while its catalogue grows after every
/// listing, so the first version listed lacks the item the second sees.
fn exporter_config(
    state_dir: &Path,
    shrink_server: &str,
    faults_server: &str,
    tap_port: u16,
) -> String {
    let exe = serde_json::to_string(&exporter_bin()).expect("path serialises");
    let state = serde_json::to_string(&state_dir.display().to_string()).expect("path serialises");
    format!(
        r#"global:
  schedule: {{ every: 1s }}
  jitter: 0s
  limits:
    timeout: 10s
    page_timeout: 2s
  state_dir: {state}
  invalid_cursor_probe: true
targets:
  - name: healthy
    stdio:
      command: {exe}
      args: [simulate, --scenario, healthy, --transport, stdio]
    expect: {{ tools: 1 }}
    metrics: {{ detail: true }}
  - name: shrinking
    http:
      url: "{shrink_server}/mcp"
    expect: {{ tools: 1 }}
    reference:
      - target: healthy
{faults}modules:
  nowhere:
    allow: ["{faults_server}/nowhere/"]
    kinds: [tools]
# The faults simulator's registry: every entry is left out (not_allowed),
# so the discovery panels have data without polling anything twice.
discovery:
  - name: sim-registry
    module: nowhere
    registry: {{ http: {{ url: "{faults_server}" }}, refresh_interval: 1s, limit: 3 }}
# The Clients row: clients behind a tap in front of `paged` (see CLIENTS).
taps:
  - name: e2e
    listen: 127.0.0.1:{tap_port}
    upstream: {{ url: "{faults_server}/mcp/paged" }}
    target: paged
    abandon_after: 2s
"#,
        faults = FAULTS
            .iter()
            .map(|(name, _, extra)| format!(
                "  - name: {name}\n    http:\n      url: \"{faults_server}/mcp/{name}\"\n    kinds: [tools]\n{extra}"
            ))
            .collect::<String>()
    )
}

/// Faulty servers (name, simulator knobs, extra target configuration)
/// served by one simulator process. list_changed notifications reach a
/// walk only in an SSE answer. `restarter` answers the invalid-cursor probe
/// with page 1 again.
const FAULTS: [(&str, &str, &str); 9] = [
    (
        "looping",
        "scenario: cycle",
        "    conformance: { enabled: true, every: 1s }\n",
    ),
    ("restarter", "scenario: silent-restart", ""),
    ("failing", "scenario: rpc-error", ""),
    ("forgetful", "scenario: stale-cursor", ""),
    ("blank", "scenario: blank-cursor", ""),
    ("stormy", "scenario: list-changed-storm, response: sse", ""),
    ("keyless", "scenario: missing-keys", ""),
    ("paged", "scenario: healthy, items: 14, page_size: 8", ""),
    (
        "versioned",
        "scenario: grow",
        "    protocols: [\"2025-06-18\", \"2025-11-25\"]\n",
    ),
];

/// Alerts whose condition must hold in this run (not only have data behind
/// its selectors): the faulty servers above make them true.
const ALERTS_WITH_DATA: [&str; 2] = ["McpProtocolCatalogueDiffers", "McpConformanceMustFailure"];

/// `mcp-exporter simulate --transport http ARGS` on a port of its choosing.
fn simulator(args: &[&str]) -> Proc {
    let mut all = vec!["simulate", "--transport", "http", "--listen", "127.0.0.1:0"];
    all.extend_from_slice(args);
    Proc::start(&all)
}

/// The simulator serving [`FAULTS`]; the scenario file lives as long as it.
fn start_faults_server() -> (Proc, tempfile::NamedTempFile) {
    let servers: String = FAULTS
        .iter()
        .map(|(name, knobs, _)| format!("  - {{name: {name}, {knobs}}}\n"))
        .collect();
    let file = tempfile::NamedTempFile::new().expect("temp file");
    // Its registry lists them three a page: the first walk completes, then
    // page 2 hands back page 1's cursor (the discovery panels' failures).
    let registry =
        "registry:\n  page_size: 3\n  fault: cursor-cycle\n  page: 2\n  after_walks: 1\n";
    std::fs::write(file.path(), format!("servers:\n{servers}{registry}")).expect("write scenarios");
    let sim = simulator(&["--scenarios", file.path().to_str().expect("utf-8")]);
    (sim, file)
}

/// The scripted clients behind the tap, one per behaviour the Clients row
/// shows: a walk, a page-1 reader (abandoned listings, items missed) and
/// one that sends a cursor nobody handed out (cursor misuse).
const CLIENTS: [(&str, &str); 3] = [
    ("walker", "--walk"),
    ("desk-app", "--first-page-only"),
    ("forger", "--garbage-cursor"),
];

fn start_clients(tap_port: u16) -> Vec<Proc> {
    CLIENTS
        .iter()
        .map(|(name, how)| {
            let mut command = Command::new(exporter_bin());
            command.args([
                "simulate-client",
                "--url",
                &format!("http://127.0.0.1:{tap_port}/mcp/paged"),
                "--name",
                name,
                how,
                "--every",
                "1s",
            ]);
            Proc::background(&format!("simulate-client {name}"), command)
        })
        .collect()
}

/// The long-lived shrinking simulator.
fn start_shrink_server() -> Proc {
    simulator(&["--scenario", "shrink", "--after-listings", "2"])
}

/// The exporter on `port` with `config` (given its state directory), once
/// it serves `/metrics`; Err with its log when it cannot listen there or
/// never serves.
fn try_start_exporter(port: u16, config: &dyn Fn(&Path) -> String) -> Result<Exporter, String> {
    let exporter = Exporter::try_start_at(
        |dir| {
            let state = dir.join("state");
            std::fs::create_dir_all(&state).expect("state dir");
            config(&state)
        },
        &format!("127.0.0.1:{port}"),
    )?;
    exporter.wait(Duration::from_secs(60), "/metrics with mcp_up", || {
        let (status, body) = exporter.get("/metrics");
        (status == 200 && body.contains("mcp_up")).then_some(())
    });
    Ok(exporter)
}

/// Prometheus scraping the exporter, started first so its first scrape
/// sees the pre-created zeros and every later increase. It must be told
/// the exporter's port before the exporter binds it, so the port is one
/// that was free a moment before: when another process took it meanwhile,
/// both start again on a new one (three times).
fn prometheus_then_exporter(
    setup: impl Fn(PrometheusSetup) -> PrometheusSetup,
    config: &dyn Fn(&Path) -> String,
) -> (Prometheus, Exporter) {
    let mut failures = Vec::new();
    for _attempt in 0..3 {
        let port = free_port();
        let prom = Prometheus::start(&setup(
            PrometheusSetup::new().scrape(JOB, &format!("127.0.0.1:{port}")),
        ));
        match try_start_exporter(port, config) {
            Ok(exporter) => return (prom, exporter),
            Err(e) if e.contains("in use") => failures.push(e),
            Err(e) => panic!("{e}"),
        }
    }
    panic!("{}", failures.join("\n\n"));
}

/// One PromQL expression shipped in a dashboard or the rule file.
#[derive(Debug, Clone)]
struct Shipped {
    origin: String,
    expr: String,
    /// Panels and recording rules must return data in this run; alert
    /// conditions and annotations (filters like `> 0`) may be empty.
    must_return_data: bool,
}

fn dashboard_json(path: &str) -> Value {
    serde_json::from_str(&repo_file(path)).unwrap_or_else(|e| panic!("parse {path}: {e}"))
}

fn dashboard_expressions() -> Vec<Shipped> {
    let mut out = Vec::new();
    for path in DASHBOARDS {
        let d = dashboard_json(path);
        let mut panels: Vec<&Value> = Vec::new();
        for p in d["panels"].as_array().into_iter().flatten() {
            panels.push(p);
            panels.extend(p["panels"].as_array().into_iter().flatten());
        }
        for p in panels {
            for t in p["targets"].as_array().into_iter().flatten() {
                if let Some(expr) = t["expr"].as_str() {
                    out.push(Shipped {
                        origin: format!("{path}: panel {:?} query {}", p["title"], t["refId"]),
                        expr: expr.to_string(),
                        must_return_data: true,
                    });
                }
            }
        }
        for a in d["annotations"]["list"].as_array().into_iter().flatten() {
            if let Some(expr) = a["expr"].as_str() {
                out.push(Shipped {
                    origin: format!("{path}: annotation {:?}", a["name"]),
                    expr: expr.to_string(),
                    must_return_data: false,
                });
            }
        }
    }
    out
}

/// `(origin, selector, label)` of every `label_values(selector, label)` variable.
fn variable_queries() -> Vec<(String, String, String)> {
    let mut out = Vec::new();
    for path in DASHBOARDS {
        let d = dashboard_json(path);
        for v in d["templating"]["list"].as_array().into_iter().flatten() {
            if v["type"] != "query" {
                continue;
            }
            let q = v["query"]["query"]
                .as_str()
                .or(v["query"].as_str())
                .unwrap_or_default();
            let inner = q
                .strip_prefix("label_values(")
                .and_then(|s| s.strip_suffix(')'))
                .unwrap_or_else(|| {
                    panic!(
                        "{path}: variable {} query {q:?} is not label_values(...)",
                        v["name"]
                    )
                });
            let (selector, label) = inner
                .rsplit_once(',')
                .unwrap_or_else(|| panic!("{path}: variable {} has no label in {q:?}", v["name"]));
            out.push((
                format!("{path}: variable {}", v["name"]),
                selector.trim().to_string(),
                label.trim().to_string(),
            ));
        }
    }
    out
}

fn rule_expressions() -> Vec<Shipped> {
    let v: yaml_serde::Value =
        yaml_serde::from_str(&repo_file(RULES)).unwrap_or_else(|e| panic!("parse {RULES}: {e}"));
    let mut out = Vec::new();
    for g in v["groups"].as_sequence().expect("groups").iter() {
        for r in g["rules"].as_sequence().expect("rules").iter() {
            let expr = r["expr"].as_str().expect("rule expr").to_string();
            let (origin, must_return_data) = match (r["record"].as_str(), r["alert"].as_str()) {
                (Some(rec), _) => (format!("{RULES}: record {rec}"), true),
                (_, Some(alert)) => (
                    format!("{RULES}: alert {alert}"),
                    ALERTS_WITH_DATA.contains(&alert),
                ),
                _ => panic!("{RULES}: rule without record or alert"),
            };
            out.push(Shipped {
                origin,
                expr,
                must_return_data,
            });
        }
    }
    for alert in ALERTS_WITH_DATA {
        let origin = format!("{RULES}: alert {alert}");
        assert!(
            out.iter().any(|s| s.origin == origin),
            "{RULES} has no alert {alert}"
        );
    }
    out
}

/// Grafana's variables, replaced the way Grafana would for one job and all
/// targets and kinds.
fn substitute(expr: &str) -> String {
    let pairs = [
        ("${__rate_interval}", "1m"),
        ("$__rate_interval", "1m"),
        ("${__interval}", "15s"),
        ("$__interval", "15s"),
        ("${__range}", "1h"),
        ("$__range", "1h"),
        ("${job}", JOB),
        ("$job", JOB),
        ("${target}", ".+"),
        ("$target", ".+"),
        ("${kind}", ".+"),
        ("$kind", ".+"),
        ("${source}", ".+"),
        ("$source", ".+"),
        ("${tap}", ".+"),
        ("$tap", ".+"),
    ];
    let mut out = expr.to_string();
    for (from, to) in pairs {
        out = out.replace(from, to);
    }
    assert!(
        !out.contains('$'),
        "unhandled Grafana variable left in {out:?} (from {expr:?})"
    );
    out
}

/// Metric selectors inside an expression: `mcp_*`, recorded series (names
/// with `:`) and `up{...}`, each with its `{...}` matchers.
fn selectors(expr: &str) -> Vec<String> {
    let chars: Vec<char> = expr.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    let skip_string = |i: usize| -> usize {
        let quote = chars[i];
        let mut j = i + 1;
        while j < chars.len() && chars[j] != quote {
            if chars[j] == '\\' {
                j += 1;
            }
            j += 1;
        }
        j + 1
    };
    let skip_braces = |i: usize| -> usize {
        let mut j = i + 1;
        while j < chars.len() && chars[j] != '}' {
            if chars[j] == '"' || chars[j] == '\'' || chars[j] == '`' {
                j = skip_string(j);
            } else {
                j += 1;
            }
        }
        j + 1
    };
    while i < chars.len() {
        let c = chars[i];
        if c == '"' || c == '\'' || c == '`' {
            i = skip_string(i);
        } else if c == '{' {
            i = skip_braces(i);
        } else if c == '[' {
            while i < chars.len() && chars[i] != ']' {
                i += 1;
            }
            i += 1;
        } else if c.is_ascii_digit() {
            while i < chars.len() && (chars[i].is_ascii_alphanumeric() || chars[i] == '.') {
                i += 1;
            }
        } else if c.is_ascii_alphabetic() || c == '_' || c == ':' {
            let start = i;
            while i < chars.len()
                && (chars[i].is_ascii_alphanumeric() || chars[i] == '_' || chars[i] == ':')
            {
                i += 1;
            }
            let name: String = chars[start..i].iter().collect();
            let mut selector = name.clone();
            let has_braces = i < chars.len() && chars[i] == '{';
            if has_braces {
                let end = skip_braces(i).min(chars.len());
                selector.extend(&chars[i..end]);
                i = end;
            }
            let is_metric =
                name.starts_with("mcp_") || name.contains(':') || (name == "up" && has_braces);
            if is_metric && !out.contains(&selector) {
                out.push(selector);
            }
        } else {
            i += 1;
        }
    }
    out
}

#[derive(Debug)]
enum Verdict {
    Data,
    Empty,
    Rejected(String),
}

fn evaluate(prom: &Prometheus, expr: &str) -> Verdict {
    match prom.query(expr) {
        Ok(result) if result.is_empty() => Verdict::Empty,
        Ok(_) => Verdict::Data,
        Err(e) => Verdict::Rejected(e),
    }
}

/// Problems with one shipped expression right now (empty = fine).
fn check(prom: &Prometheus, shipped: &Shipped) -> Vec<String> {
    let expr = substitute(&shipped.expr);
    match evaluate(prom, &expr) {
        Verdict::Data => Vec::new(),
        Verdict::Rejected(e) => vec![format!(
            "{}: Prometheus rejected {expr:?}: {e}",
            shipped.origin
        )],
        Verdict::Empty if shipped.must_return_data => {
            let empty: Vec<String> = selectors(&expr)
                .into_iter()
                .filter(|s| !matches!(evaluate(prom, s), Verdict::Data))
                .collect();
            vec![format!(
                "{}: no data for {expr:?} (selectors without data: {empty:?})",
                shipped.origin
            )]
        }
        Verdict::Empty => {
            let sels = selectors(&expr);
            if sels.is_empty() {
                return vec![format!(
                    "{}: empty, and no metric selector found in {expr:?}",
                    shipped.origin
                )];
            }
            sels.into_iter()
                .filter(|s| !matches!(evaluate(prom, s), Verdict::Data))
                .map(|s| {
                    format!(
                        "{}: empty, and its selector {s} has no data",
                        shipped.origin
                    )
                })
                .collect()
        }
    }
}

fn firing(prom: &Prometheus, alertname: &str, target: &str) -> bool {
    prom.alerts().unwrap_or_default().iter().any(|a| {
        a["labels"]["alertname"] == alertname
            && a["labels"]["target"] == target
            && a["state"] == "firing"
    })
}

fn diagnostics(prom: &Prometheus, exporter: &Exporter) -> String {
    let targets = prom.targets().unwrap_or_default();
    let health: Vec<String> = targets
        .iter()
        .map(|t| format!("{} {} {}", t["scrapeUrl"], t["health"], t["lastError"]))
        .collect();
    let log = exporter.stderr();
    let tail: String = log
        .chars()
        .rev()
        .take(4000)
        .collect::<Vec<_>>()
        .into_iter()
        .rev()
        .collect();
    format!(
        "scrape targets: {health:?}\n--- exporter log (tail) ---\n{tail}\n--- prometheus log ---\n{}",
        prom.log()
    )
}

#[test]
fn dashboards_and_rules_work_against_a_real_prometheus_scraping_the_exporter() {
    let shrink_server = start_shrink_server();
    let (faults_server, _scenarios) = start_faults_server();
    // Prometheus first: the shrink scenario starts within seconds.
    let tap_port = free_port();
    let (prom, exporter) =
        prometheus_then_exporter(|setup| setup.rules(repo_path(RULES)), &|state| {
            exporter_config(state, &shrink_server.url, &faults_server.url, tap_port)
        });
    let _clients = start_clients(tap_port);

    let mut shipped = dashboard_expressions();
    shipped.extend(rule_expressions());
    assert!(
        shipped.len() > 50,
        "only {} expressions found",
        shipped.len()
    );

    // Wait until every panel and recording rule has data: scrapes, rule
    // evaluations and a few complete polls must have happened.
    let ready = prom.wait_for(SERIES_WAIT, |p| {
        let pending: Vec<&Shipped> = shipped
            .iter()
            .filter(|s| {
                s.must_return_data && !matches!(evaluate(p, &substitute(&s.expr)), Verdict::Data)
            })
            .collect();
        pending.is_empty().then_some(())
    });

    let mut problems: Vec<String> = shipped.iter().flat_map(|s| check(&prom, s)).collect();
    for (origin, selector, label) in variable_queries() {
        let selector = substitute(&selector);
        match prom.series(&selector) {
            Ok(series) if series.iter().any(|s| s.get(&label).is_some()) => {}
            Ok(_) => problems.push(format!("{origin}: no series {selector} with label {label}")),
            Err(e) => problems.push(format!("{origin}: {selector}: {e}")),
        }
    }
    for group in prom.rules().unwrap_or_default() {
        for rule in group["rules"].as_array().into_iter().flatten() {
            if rule["health"] != "ok" {
                problems.push(format!(
                    "rule {} is {}: {}",
                    rule["name"], rule["health"], rule["lastError"]
                ));
            }
        }
    }
    assert!(
        ready.is_some() && problems.is_empty(),
        "{} of {} shipped expressions have problems:\n{}\n\n{}",
        problems.len(),
        shipped.len(),
        problems.join("\n"),
        diagnostics(&prom, &exporter)
    );

    // The shrink scenario drops items without list_changed: the page-worthy
    // alert must fire for it, and only for it.
    let fired = prom.wait_for(ALERT_WAIT, |p| {
        firing(p, "McpListingSilentlyShrank", "shrinking").then_some(())
    });
    assert!(
        fired.is_some(),
        "McpListingSilentlyShrank did not fire for target=shrinking within {ALERT_WAIT:?}; alerts: {:?}\n{}",
        prom.alerts().unwrap_or_default(),
        diagnostics(&prom, &exporter)
    );
    assert!(
        !firing(&prom, "McpListingSilentlyShrank", "healthy"),
        "McpListingSilentlyShrank fired for the healthy target: {:?}",
        prom.alerts().unwrap_or_default()
    );
}

/// The budget docs/metrics.md states: "**N samples per target**".
fn documented_budget() -> usize {
    let doc = repo_file("docs/metrics.md");
    let marker = " samples per target**";
    let end = doc
        .find(marker)
        .unwrap_or_else(|| panic!("docs/metrics.md states no `**N{marker}`"));
    let start = doc[..end].rfind("**").expect("opening **") + 2;
    doc[start..end].parse().unwrap_or_else(|e| {
        panic!(
            "docs/metrics.md: {:?} is not a count: {e}",
            &doc[start..end]
        )
    })
}

/// Optional series, outside the budget (docs/metrics.md, "Size").
const OPTIONAL: &str = "mcp_server_info|mcp_listing_expected_min_items|mcp_reference_missing_items|mcp_invalid_cursor_probe_result";

/// A target with the default metric set (four kinds, no detail), polled
/// several times and scraped by a real Prometheus, has exactly as many
/// series as docs/metrics.md states, and at most 80.
#[test]
fn a_target_stays_within_the_per_target_sample_budget() {
    let sim = simulator(&["--scenario", "healthy"]);
    let (prom, exporter) = prometheus_then_exporter(|setup| setup, &|state| {
        format!(
                "global:\n  schedule: {{ every: 1s }}\n  jitter: 0s\n  state_dir: {}\ntargets:\n  - name: plain\n    http:\n      url: \"{}/mcp\"\n",
                serde_json::to_string(&state.display().to_string()).expect("path serialises"),
                sim.url
            )
    });
    let per_target = format!(r#"{{job="{JOB}", target="plain", __name__!~"{OPTIONAL}"}}"#);
    let count = |p: &Prometheus| -> Option<usize> {
        let polls = p
            .query(&format!(
                r#"mcp_polls_total{{job="{JOB}", target="plain"}} >= 3"#
            ))
            .ok()?;
        if polls.is_empty() {
            return None;
        }
        let r = p.query(&format!("count({per_target})")).ok()?;
        r.first()?["value"][1].as_str()?.parse().ok()
    };
    let counted = prom.wait_for(SERIES_WAIT, count);
    let budget = documented_budget();
    let names = prom
        .series(&per_target)
        .unwrap_or_default()
        .iter()
        .map(|s| s["__name__"].as_str().unwrap_or("?").to_string())
        .collect::<Vec<_>>();
    assert_eq!(
        counted,
        Some(budget),
        "series of target plain in Prometheus vs docs/metrics.md's budget; series: {names:?}\n{}",
        diagnostics(&prom, &exporter)
    );
    assert!(
        budget <= 80,
        "the budget is at most 80 samples per target, docs say {budget}"
    );
}

#[test]
fn selector_extraction_finds_metrics_and_skips_labels_functions_and_strings() {
    let found = selectors(
        r#"sum by (job, target) (rate(mcp_list_requests_total{job=~"a|b", target="x{y}"}[1m])) / on (job) job:mcp_up:sum > 0.5 or absent(mcp_exporter_build_info) or up{job="mcp-exporter"} == 0 unless up"#,
    );
    assert_eq!(
        found,
        vec![
            r#"mcp_list_requests_total{job=~"a|b", target="x{y}"}"#.to_string(),
            "job:mcp_up:sum".to_string(),
            "mcp_exporter_build_info".to_string(),
            r#"up{job="mcp-exporter"}"#.to_string(),
        ]
    );
}

#[test]
fn substitution_replaces_every_grafana_variable_the_dashboards_use() {
    let mut vars = BTreeSet::new();
    for s in dashboard_expressions() {
        let sub = substitute(&s.expr);
        assert!(!sub.contains('$'), "{}: {sub}", s.origin);
        for part in s.expr.split('$').skip(1) {
            vars.insert(
                part.chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '_' || *c == '{')
                    .collect::<String>(),
            );
        }
    }
    assert!(
        vars.contains("__rate_interval"),
        "dashboards use no $__rate_interval: {vars:?}"
    );
}
