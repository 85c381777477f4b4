//! Conformance in serve mode: a real exporter polls simulated servers every
//! second, with `conformance:` on for some targets and `every: 1h`.
//!
//! - `no-cache-hints` (2026-07-28 pages without `ttlMs`/`cacheScope`): the
//!   MUST rules `cache-ttl` and `cache-scope` fail, so its tools are
//!   `degraded` with `conformance_failed`, and only those two rules have a
//!   `mcp_conformance_failures` series;
//! - `unstable-cursor` (a SHOULD failure): the series, but still `healthy`;
//! - `clean`: no failure series, `mcp_conformance_rules_failing` 0;
//! - `off` (the same faulty server, conformance not enabled): no run, no
//!   series, `healthy` — the degradation above comes from the run alone.
//!
//! The cost bound is checked by counting: several polls later each run's
//! start time is still the first run's (one run per `every`, not per poll).
//! A reload that turns conformance off drops the target's series, result
//! and reason; unchanged targets keep theirs.

use mcp_testkit::demo::reason;
use mcp_testkit::exporter::api_target;
use mcp_testkit::process::run_exporter;
use mcp_testkit::{exporter_bin, sample, Exporter, Proc};
use serde_json::Value;
use std::time::Duration;

const LIMIT: Duration = Duration::from_secs(120);
/// The targets whose conformance is checked.
const CHECKED: [&str; 3] = ["no-cache-hints", "unstable-cursor", "clean"];

fn config(no_cache_hints_checked: bool) -> String {
    let b = serde_json::to_string(&exporter_bin().display().to_string()).expect("path");
    let target = |name: &str, sim: &str, conformance: bool| {
        let args: Vec<String> = std::iter::once("simulate")
            .chain(sim.split_whitespace())
            .map(|a| format!("{a:?}"))
            .collect();
        format!(
            "  - name: {name}\n    stdio:\n      command: {b}\n      args: [{}]\n{}",
            args.join(", "),
            if conformance {
                "    conformance: {enabled: true}\n"
            } else {
                ""
            }
        )
    };
    format!(
        "global:\n  schedule: {{every: 1s}}\n  jitter: 0s\n  kinds: [tools]\n  invalid_cursor_probe: false\n  conformance: {{every: 1h}}\ntargets:\n{}{}{}{}",
        target(
            "no-cache-hints",
            "--scenario no-cache-hints --protocol 2026-07-28",
            no_cache_hints_checked
        ),
        target("unstable-cursor", "--scenario unstable-cursor", true),
        target("clean", "--scenario healthy", true),
        target(
            "off",
            "--scenario no-cache-hints --protocol 2026-07-28",
            false
        ),
    )
}

fn failing_rules(t: &Value) -> Vec<String> {
    t["conformance"]["failures"]
        .as_array()
        .map(|f| {
            f.iter()
                .map(|f| f["rule"].as_str().unwrap_or("").to_string())
                .collect()
        })
        .unwrap_or_default()
}

/// `polls` of target `name` in `/api/targets`.
fn polls(all: &[Value], name: &str) -> u64 {
    api_target(all, name)["polls"].as_u64().unwrap_or(0)
}

#[test]
fn opted_in_targets_get_failing_rules_as_series_verdict_and_api() {
    let exporter = Exporter::start_with(&config(true), &["--web.enable-lifecycle"], &[]);
    let first = exporter.wait_api(
        LIMIT,
        "a first poll of every target and a first conformance run",
        |all| {
            let polled = CHECKED
                .iter()
                .chain(&["off"])
                .all(|name| polls(all, name) >= 1);
            let checked = CHECKED
                .iter()
                .all(|name| !api_target(all, name)["conformance"].is_null());
            polled && checked
        },
    );
    verdicts_come_from_the_first_run(&first);
    failing_rules_only_are_series(&exporter.metrics());
    let (_, page) = exporter.get("/targets/no-cache-hints");
    assert!(page.contains("Pagination conformance"), "{page}");
    assert!(page.contains("cache-scope"), "{page}");
    let later = one_run_per_every(&exporter, &first);
    turned_off_by_a_reload_its_results_go(&exporter, &later);
    removed_by_a_reload_no_series_is_left(&exporter);
}

/// The run comes after the first poll and is judged at once: the verdict
/// says it without waiting for the next poll.
fn verdicts_come_from_the_first_run(first: &[Value]) {
    let faulty = api_target(first, "no-cache-hints");
    assert_eq!(faulty["verdict"]["level"], "degraded", "{faulty:#}");
    let r = reason(&faulty["verdict"], "conformance_failed", Some("tools"))
        .unwrap_or_else(|| panic!("no conformance_failed: {faulty:#}"));
    let m = r["message"].as_str().unwrap_or("");
    assert!(
        m.starts_with("2 MUST conformance rules fail for tools"),
        "{m}"
    );
    assert!(m.contains("cache-ttl, cache-scope"), "{m}");
    assert_eq!(
        faulty["kinds"]["tools"]["verdict"]["reasons"][0]["code"], "conformance_failed",
        "{faulty:#}"
    );
    assert_eq!(failing_rules(faulty), ["cache-ttl", "cache-scope"]);
    assert_eq!(faulty["conformance"]["protocol_version"], "2026-07-28");

    let should = api_target(first, "unstable-cursor");
    assert_eq!(should["verdict"]["level"], "healthy", "{should:#}");
    assert_eq!(failing_rules(should), ["cursor-stable"]);
    assert_eq!(should["conformance"]["failures"][0]["level"], "SHOULD");

    let clean = api_target(first, "clean");
    assert_eq!(clean["verdict"]["level"], "healthy", "{clean:#}");
    assert_eq!(failing_rules(clean), Vec::<String>::new());
    assert!(
        clean["conformance"]["passed"].as_u64() > Some(0),
        "{clean:#}"
    );

    let off = api_target(first, "off");
    assert_eq!(off["conformance"], Value::Null, "{off:#}");
    assert_eq!(off["verdict"]["level"], "healthy", "{off:#}");
}

/// Failing rules only, as series.
fn failing_rules_only_are_series(metrics: &str) {
    let failure = |target: &str, rule: &str, level: &str| {
        let labels = [
            ("target", target),
            ("kind", "tools"),
            ("rule", rule),
            ("level", level),
        ];
        sample(metrics, "mcp_conformance_failures", &labels)
    };
    let failing = |target: &str| {
        sample(
            metrics,
            "mcp_conformance_rules_failing",
            &[("target", target)],
        )
    };
    assert_eq!(
        failure("no-cache-hints", "cache-ttl", "MUST"),
        Some(1.0),
        "{metrics}"
    );
    assert_eq!(
        failure("no-cache-hints", "cache-scope", "MUST"),
        Some(1.0),
        "{metrics}"
    );
    assert_eq!(failing("no-cache-hints"), Some(2.0), "{metrics}");
    assert_eq!(
        failure("unstable-cursor", "cursor-stable", "SHOULD"),
        Some(1.0),
        "{metrics}"
    );
    assert_eq!(failing("unstable-cursor"), Some(1.0), "{metrics}");
    assert_eq!(failing("clean"), Some(0.0), "{metrics}");
    assert_eq!(failing("off"), None, "{metrics}");
    let series: Vec<&str> = metrics
        .lines()
        .filter(|l| l.starts_with("mcp_conformance_failures{"))
        .collect();
    assert_eq!(series.len(), 3, "{series:#?}");
    let verdict = [("target", "no-cache-hints"), ("kind", "tools")];
    assert_eq!(
        sample(metrics, "mcp_verdict", &verdict),
        Some(1.0),
        "{metrics}"
    );
}

/// Bounded in cost, by counting: three more polls, and each target's
/// conformance result is still the first run's (one run per `every`, not
/// per poll). The result holds between runs.
fn one_run_per_every(exporter: &Exporter, first: &[Value]) -> Vec<Value> {
    let later = exporter.wait_api(LIMIT, "three more polls", |all| {
        CHECKED
            .iter()
            .all(|name| polls(all, name) >= polls(first, name) + 3)
    });
    for name in CHECKED {
        assert_eq!(
            api_target(&later, name)["conformance"]["at_unix_seconds"],
            api_target(first, name)["conformance"]["at_unix_seconds"],
            "{name} ran its conformance rules again within `every`"
        );
    }
    assert_eq!(
        api_target(&later, "no-cache-hints")["verdict"]["level"],
        "degraded"
    );
    later
}

/// Turned off by a reload: its series, its result and its reason go;
/// unchanged targets keep theirs.
fn turned_off_by_a_reload_its_results_go(exporter: &Exporter, later: &[Value]) {
    let (status, body) = exporter.reload(&config(false));
    assert_eq!(status, 200, "{body}");
    let before = polls(later, "no-cache-hints");
    let reloaded = exporter.wait_api(LIMIT, "a poll after the reload", |all| {
        let t = api_target(all, "no-cache-hints");
        polls(all, "no-cache-hints") > before && t["conformance"].is_null()
    });
    let after_reload = polls(&reloaded, "no-cache-hints");
    let off = exporter.wait_api(LIMIT, "the verdict without it", |all| {
        polls(all, "no-cache-hints") > after_reload
    });
    let off = api_target(&off, "no-cache-hints");
    assert_eq!(off["verdict"]["level"], "healthy", "{off:#}");
    let metrics = exporter.metrics();
    assert!(
        !metrics.contains(r#"mcp_conformance_failures{target="no-cache-hints""#)
            && !metrics.contains(r#"mcp_conformance_rules_failing{target="no-cache-hints""#),
        "{metrics}"
    );
    assert_eq!(
        sample(
            &metrics,
            "mcp_conformance_rules_failing",
            &[("target", "unstable-cursor")]
        ),
        Some(1.0),
        "an unchanged target keeps its results"
    );
}

/// Removed by a reload: not one series of it is left (forgetting its
/// conformance re-judges its verdict; that must not recreate
/// `mcp_verdict` after the target's series were dropped).
fn removed_by_a_reload_no_series_is_left(exporter: &Exporter) {
    let renamed = config(false).replace(
        "  - name: unstable-cursor\n",
        "  - name: unstable-cursor-renamed\n",
    );
    let (status, body) = exporter.reload(&renamed);
    assert_eq!(status, 200, "{body}");
    exporter.wait_api(LIMIT, "the renamed target's first poll", |all| {
        all.iter()
            .any(|t| t["name"] == "unstable-cursor-renamed" && t["polls"].as_u64() >= Some(1))
    });
    let metrics = exporter.metrics();
    let left: Vec<&str> = metrics
        .lines()
        .filter(|l| l.contains(r#"target="unstable-cursor""#))
        .collect();
    assert!(left.is_empty(), "{left:#?}");
}

#[test]
fn conformance_every_below_a_second_is_refused_with_its_place() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("bad.yaml");
    std::fs::write(
        &path,
        "targets:\n  - name: a\n    http:\n      url: http://127.0.0.1:9/mcp\n    conformance: {enabled: true, every: 0s}\n",
    )
    .expect("write");
    let out = run_exporter(&[
        "check-config",
        "--config.file",
        path.to_str().expect("utf-8"),
    ]);
    let err = &out.stderr;
    assert_eq!(out.code(), Some(1), "{err}");
    assert!(err.contains(":5:"), "{err}");
    assert!(err.contains("conformance.every"), "{err}");
}

/// A server that echoes our `Authorization` header into item names: the
/// names reach `check`'s evidence (table, `--json`, `--junit`) and the
/// serve-mode conformance result (`/api/targets`, the target page) only
/// with the token scrubbed. Before, the evidence of `cursor-stable`,
/// `cursor-invalid` and `tools-order` (names from single pages, not from a
/// listing) carried `Bearer <token>`.
#[test]
fn echoed_credentials_never_reach_conformance_evidence() {
    const CANARY: &str = "canary-conformance-51d2";
    let dir = tempfile::tempdir().expect("temp dir");
    let token = dir.path().join("token");
    std::fs::write(&token, format!("{CANARY}\n")).expect("write token");
    let junit = dir.path().join("check.xml");
    let echoing = |scenario: &str| {
        Proc::start(&[
            "simulate",
            "--transport",
            "http",
            "--listen",
            "127.0.0.1:0",
            "--scenario",
            scenario,
            "--echo-header",
            "Authorization",
        ])
    };
    let mut seen = Vec::new();
    for (scenario, rule) in [
        ("overlap", "items-unique"),
        ("unstable-cursor", "cursor-stable"),
        ("silent-restart", "cursor-invalid"),
        ("reorder", "tools-order"),
    ] {
        // A fresh server per run: some scenarios misbehave once per process.
        for json in [true, false] {
            let sim = echoing(scenario);
            let url = sim.at("/mcp");
            let mut args = vec!["check", "--kind", "tools", "--url", &url];
            args.extend(["--bearer-token-file", token.to_str().unwrap()]);
            args.extend(["--junit", junit.to_str().unwrap()]);
            if json {
                args.push("--json");
            }
            let out = run_exporter(&args);
            let stdout = out.stdout.clone();
            // The server did echo, into the evidence of the failing rule.
            let failing = stdout
                .lines()
                .skip_while(|l| !l.contains(rule))
                .take(12)
                .collect::<Vec<_>>()
                .join("\n");
            assert!(
                failing.contains("[echo: Bearer <redacted>]"),
                "{scenario}: {stdout}"
            );
            seen.push(stdout);
            seen.push(out.stderr);
            seen.push(std::fs::read_to_string(&junit).expect("junit"));
        }
    }

    let sim = echoing("silent-restart");
    let exporter = Exporter::start(&format!(
        "global:\n  schedule: {{every: 1h}}\n  kinds: [tools]\ntargets:\n  - name: echo\n    http:\n      url: {}\n      bearer_token_file: {}\n    conformance: {{enabled: true}}\n",
        sim.at("/mcp"),
        token.display()
    ));
    let api = exporter.wait(LIMIT, "a conformance result", || {
        let (_, body) = exporter.get("/api/targets/echo");
        body.contains("cursor-invalid").then_some(body)
    });
    assert!(api.contains("<redacted>"), "{api}");
    seen.push(api);
    for path in ["/targets/echo", "/metrics"] {
        seen.push(exporter.get(path).1);
    }
    for text in &seen {
        assert!(!text.contains(CANARY), "the token leaked: {text}");
    }
}

/// A run is judged at once: with the next poll an hour away, the verdict
/// and `mcp_verdict` change as soon as the run after the first poll ends.
#[test]
fn a_run_changes_the_verdict_without_waiting_for_a_poll() {
    let b = serde_json::to_string(&exporter_bin().display().to_string()).expect("path");
    let exporter = Exporter::start(&format!(
        "global:\n  schedule: {{every: 1h}}\n  jitter: 0s\n  kinds: [tools]\n  invalid_cursor_probe: false\ntargets:\n  - name: hourly\n    stdio:\n      command: {b}\n      args: [simulate, --scenario, no-cache-hints, --protocol, \"2026-07-28\"]\n    conformance: {{enabled: true}}\n"
    ));
    let all = exporter.wait_api(LIMIT, "the conformance run", |all| {
        !api_target(all, "hourly")["conformance"].is_null()
    });
    let t = api_target(&all, "hourly");
    assert_eq!(t["polls"], 1, "{t:#}");
    assert_eq!(t["verdict"]["level"], "degraded", "{t:#}");
    assert!(
        reason(&t["verdict"], "conformance_failed", Some("tools")).is_some(),
        "{t:#}"
    );
    let metrics = exporter.metrics();
    assert_eq!(
        sample(
            &metrics,
            "mcp_verdict",
            &[("target", "hourly"), ("kind", "tools")]
        ),
        Some(1.0),
        "{metrics}"
    );
}
