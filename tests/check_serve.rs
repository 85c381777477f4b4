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

mod common;
#[path = "common/demo.rs"]
mod demo;

use common::{bin, http_get, sample, wait_for, Proc};
use demo::reason;
use serde_json::Value;
use std::time::Duration;

fn config(no_cache_hints_checked: bool) -> String {
    let b = serde_json::to_string(&bin().display().to_string()).expect("path");
    let target = |name: &str, sim: &str, conformance: bool| {
        let args: Vec<String> = std::iter::once("simulate")
            .chain(sim.split_whitespace())
            .map(|a| format!("{a:?}"))
            .collect();
        format!(
            "  - name: {name}\n    command: {b}\n    args: [{}]\n{}",
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

fn api(exporter: &Proc) -> Vec<Value> {
    let (status, body) = http_get(&format!(
        "{}/api/targets",
        exporter.url.trim_end_matches('/')
    ));
    assert_eq!(status, 200, "{body}");
    serde_json::from_str::<Value>(&body)
        .expect("JSON")
        .as_array()
        .cloned()
        .unwrap_or_default()
}

fn by_name<'a>(all: &'a [Value], name: &str) -> &'a Value {
    all.iter()
        .find(|t| t["name"] == name)
        .unwrap_or_else(|| panic!("no target {name}"))
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

#[test]
fn opted_in_targets_get_failing_rules_as_series_verdict_and_api() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("conformance.yaml");
    std::fs::write(&path, config(true)).expect("write config");
    let exporter = Proc::start(&[
        "--config.file",
        path.to_str().expect("utf-8"),
        "--web.listen-address",
        "127.0.0.1:0",
        "--web.enable-lifecycle",
    ]);
    let polled_at_least = |n: u64| {
        let all = api(&exporter);
        let polled = ["no-cache-hints", "unstable-cursor", "clean", "off"]
            .iter()
            .all(|name| by_name(&all, name)["polls"].as_u64() >= Some(n));
        let checked = ["no-cache-hints", "unstable-cursor", "clean"]
            .iter()
            .all(|name| !by_name(&all, name)["conformance"].is_null());
        (polled && checked).then_some(all)
    };
    let first = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        wait_for(
            Duration::from_secs(120),
            "a first poll of every target and a first conformance run",
            || polled_at_least(1),
        )
    }))
    .unwrap_or_else(|_| panic!("exporter log:\n{}", exporter.stderr()));

    // The run comes after the first poll and is judged at once: the verdict
    // says it without waiting for the next poll.
    let faulty = by_name(&first, "no-cache-hints");
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

    let should = by_name(&first, "unstable-cursor");
    assert_eq!(should["verdict"]["level"], "healthy", "{should:#}");
    assert_eq!(failing_rules(should), ["cursor-stable"]);
    assert_eq!(should["conformance"]["failures"][0]["level"], "SHOULD");

    let clean = by_name(&first, "clean");
    assert_eq!(clean["verdict"]["level"], "healthy", "{clean:#}");
    assert_eq!(failing_rules(clean), Vec::<String>::new());
    assert!(
        clean["conformance"]["passed"].as_u64() > Some(0),
        "{clean:#}"
    );

    let off = by_name(&first, "off");
    assert_eq!(off["conformance"], Value::Null, "{off:#}");
    assert_eq!(off["verdict"]["level"], "healthy", "{off:#}");

    // Failing rules only, as series.
    let (_, metrics) = http_get(&format!("{}/metrics", exporter.url.trim_end_matches('/')));
    let failure = |target: &str, rule: &str, level: &str| {
        sample(
            &metrics,
            "mcp_conformance_failures",
            &[
                ("target", target),
                ("kind", "tools"),
                ("rule", rule),
                ("level", level),
            ],
        )
    };
    let failing = |target: &str| {
        sample(
            &metrics,
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
    assert_eq!(
        sample(
            &metrics,
            "mcp_verdict",
            &[("target", "no-cache-hints"), ("kind", "tools")]
        ),
        Some(1.0),
        "{metrics}"
    );

    // The target page shows the failing rules.
    let (_, page) = http_get(&format!(
        "{}/targets/no-cache-hints",
        exporter.url.trim_end_matches('/')
    ));
    assert!(page.contains("Pagination conformance"), "{page}");
    assert!(page.contains("cache-scope"), "{page}");

    // Bounded in cost: three more polls, still the first run.
    let later = wait_for(Duration::from_secs(120), "three more polls", || {
        let all = api(&exporter);
        ["no-cache-hints", "unstable-cursor", "clean"]
            .iter()
            .all(|name| {
                by_name(&all, name)["polls"].as_u64()
                    >= by_name(&first, name)["polls"].as_u64().map(|p| p + 3)
            })
            .then_some(all)
    });
    for name in ["no-cache-hints", "unstable-cursor", "clean"] {
        assert_eq!(
            by_name(&later, name)["conformance"]["at_unix_seconds"],
            by_name(&first, name)["conformance"]["at_unix_seconds"],
            "{name} ran its conformance rules again within `every`"
        );
    }
    // The result holds between runs.
    assert_eq!(
        by_name(&later, "no-cache-hints")["verdict"]["level"],
        "degraded"
    );

    // Turned off by a reload: its series, its result and its reason go.
    std::fs::write(&path, config(false)).expect("rewrite config");
    let (status, body) =
        common::http_post(&format!("{}/-/reload", exporter.url.trim_end_matches('/')));
    assert_eq!(status, 200, "{body}");
    let polls = by_name(&later, "no-cache-hints")["polls"]
        .as_u64()
        .unwrap_or(0);
    let off = wait_for(Duration::from_secs(120), "a poll after the reload", || {
        let all = api(&exporter);
        let t = by_name(&all, "no-cache-hints").clone();
        (t["polls"].as_u64() > Some(polls) && t["conformance"].is_null()).then_some(t)
    });
    let off = wait_for(Duration::from_secs(120), "the verdict without it", || {
        let all = api(&exporter);
        let t = by_name(&all, "no-cache-hints").clone();
        (t["polls"].as_u64() > off["polls"].as_u64()).then_some(t)
    });
    assert_eq!(off["verdict"]["level"], "healthy", "{off:#}");
    let (_, metrics) = http_get(&format!("{}/metrics", exporter.url.trim_end_matches('/')));
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

    // Removed by a reload: not one series of it is left (forgetting its
    // conformance re-judges its verdict; that must not recreate
    // `mcp_verdict` after the target's series were dropped).
    std::fs::write(
        &path,
        config(false).replace(
            "  - name: unstable-cursor\n",
            "  - name: unstable-cursor-renamed\n",
        ),
    )
    .expect("rewrite config");
    let (status, body) =
        common::http_post(&format!("{}/-/reload", exporter.url.trim_end_matches('/')));
    assert_eq!(status, 200, "{body}");
    wait_for(
        Duration::from_secs(120),
        "the renamed target's first poll",
        || {
            let all = api(&exporter);
            all.iter()
                .any(|t| t["name"] == "unstable-cursor-renamed" && t["polls"].as_u64() >= Some(1))
                .then_some(())
        },
    );
    let (_, metrics) = http_get(&format!("{}/metrics", exporter.url.trim_end_matches('/')));
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
        "targets:\n  - name: a\n    url: http://127.0.0.1:9/mcp\n    conformance: {enabled: true, every: 0s}\n",
    )
    .expect("write");
    let out = std::process::Command::new(bin())
        .args([
            "check-config",
            "--config.file",
            path.to_str().expect("utf-8"),
        ])
        .output()
        .expect("run check-config");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains(":4:"), "{err}");
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
            let url = format!("{}/mcp", sim.url.trim_end_matches('/'));
            let mut cmd = std::process::Command::new(bin());
            cmd.args(["check", "--kind", "tools", "--url", &url])
                .arg("--bearer-token-file")
                .arg(&token)
                .arg("--junit")
                .arg(&junit);
            if json {
                cmd.arg("--json");
            }
            let out = cmd.output().expect("run check");
            let stdout = String::from_utf8_lossy(&out.stdout).to_string();
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
            seen.push(String::from_utf8_lossy(&out.stderr).to_string());
            seen.push(std::fs::read_to_string(&junit).expect("junit"));
        }
    }

    let sim = echoing("silent-restart");
    let url = format!("{}/mcp", sim.url.trim_end_matches('/'));
    let config = dir.path().join("c.yaml");
    std::fs::write(
        &config,
        format!(
            "global:\n  schedule: {{every: 1h}}\n  kinds: [tools]\ntargets:\n  - name: echo\n    url: {url}\n    bearer_token_file: {}\n    conformance: {{enabled: true}}\n",
            token.display()
        ),
    )
    .expect("write config");
    let exporter = Proc::start(&[
        "--config.file",
        config.to_str().expect("utf-8"),
        "--web.listen-address",
        "127.0.0.1:0",
    ]);
    let base = exporter.url.trim_end_matches('/').to_string();
    let api = wait_for(Duration::from_secs(120), "a conformance result", || {
        let (_, body) = http_get(&format!("{base}/api/targets/echo"));
        body.contains("cursor-invalid").then_some(body)
    });
    assert!(api.contains("<redacted>"), "{api}");
    seen.push(api);
    for path in ["/targets/echo", "/metrics"] {
        seen.push(http_get(&format!("{base}{path}")).1);
    }
    for text in &seen {
        assert!(!text.contains(CANARY), "the token leaked: {text}");
    }
}

/// A run is judged at once: with the next poll an hour away, the verdict
/// and `mcp_verdict` change as soon as the run after the first poll ends.
#[test]
fn a_run_changes_the_verdict_without_waiting_for_a_poll() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("hourly.yaml");
    let b = serde_json::to_string(&bin().display().to_string()).expect("path");
    std::fs::write(
        &path,
        format!(
            "global:\n  schedule: {{every: 1h}}\n  jitter: 0s\n  kinds: [tools]\n  invalid_cursor_probe: false\ntargets:\n  - name: hourly\n    command: {b}\n    args: [simulate, --scenario, no-cache-hints, --protocol, \"2026-07-28\"]\n    conformance: {{enabled: true}}\n"
        ),
    )
    .expect("write config");
    let exporter = Proc::start(&[
        "--config.file",
        path.to_str().expect("utf-8"),
        "--web.listen-address",
        "127.0.0.1:0",
    ]);
    let t = wait_for(Duration::from_secs(120), "the conformance run", || {
        let all = api(&exporter);
        let t = by_name(&all, "hourly").clone();
        (!t["conformance"].is_null()).then_some(t)
    });
    assert_eq!(t["polls"], 1, "{t:#}");
    assert_eq!(t["verdict"]["level"], "degraded", "{t:#}");
    assert!(
        reason(&t["verdict"], "conformance_failed", Some("tools")).is_some(),
        "{t:#}"
    );
    let (_, metrics) = http_get(&format!("{}/metrics", exporter.url.trim_end_matches('/')));
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
