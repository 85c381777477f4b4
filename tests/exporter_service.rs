//! The exporter service end to end: real simulator processes, a real
//! exporter process, values asserted from scraped `/metrics`.

mod common;

use common::{http_get, http_post, sample, wait_for, Proc};
use std::path::Path;
use std::time::Duration;

const LIMIT: Duration = Duration::from_secs(60);

fn write_config(path: &Path, text: &str) {
    std::fs::write(path, text).unwrap();
}

fn exporter(config: &Path) -> Proc {
    Proc::start(&[
        "--config.file",
        config.to_str().unwrap(),
        "--web.listen-address",
        "127.0.0.1:0",
        // These tests reload over HTTP.
        "--web.enable-lifecycle",
    ])
}

fn scrape(exporter: &Proc) -> String {
    let (status, body) = http_get(&format!("{}/metrics", exporter.url));
    assert_eq!(status, 200);
    body
}

fn value(text: &str, name: &str, labels: &[(&str, &str)]) -> f64 {
    sample(text, name, labels).unwrap_or_else(|| panic!("no sample {name}{labels:?} in:\n{text}"))
}

/// Wait until a sample reaches at least `min`.
fn wait_at_least(exp: &Proc, name: &str, labels: &[(&str, &str)], min: f64) -> String {
    wait_for(LIMIT, &format!("{name}{labels:?} >= {min}"), || {
        let text = scrape(exp);
        sample(&text, name, labels)
            .filter(|v| *v >= min)
            .map(|_| text)
    })
}

#[test]
fn metrics_per_scenario() {
    let (sim, _f) = common::scenarios_simulator(
        "  - {name: healthy, scenario: healthy}\n  - {name: overlap, scenario: overlap}\n  - {name: cycle, scenario: cycle}\n  - {name: stale, scenario: stale-cursor}\n  - {name: shrink, scenario: shrink}\n  - {name: rpc, scenario: rpc-error}\n  - {name: origin, scenario: healthy, items: 14, page_size: 8}\n  - {name: gateway, scenario: truncate, items: 14, page_size: 8}\n  - {name: restarter, scenario: silent-restart}\n",
    );
    let dir = tempfile::tempdir().unwrap();
    let cfg = dir.path().join("c.yaml");
    let target = |name: &str| {
        format!(
            "  - name: {name}\n    url: {}/mcp/{name}\n    kinds: [tools]\n",
            sim.url
        )
    };
    write_config(
        &cfg,
        &format!(
            "global:\n  schedule: {{every: 1s}}\n  jitter: 0s\n  state_dir: {}\ntargets:\n{}{}{}{}{}{}{}{}    expect: {{tools: 14}}\n    reference: [{{target: origin}}]\n{}",
            dir.path().join("state").display(),
            target("healthy"),
            target("overlap"),
            target("cycle"),
            target("stale"),
            target("shrink"),
            target("rpc"),
            target("origin"),
            target("gateway"),
            target("restarter"),
        ),
    );
    let exp = exporter(&cfg);
    // Three polls of the shrinking server: 20, 19, 18 items.
    let text = wait_at_least(
        &exp,
        "mcp_listings_total",
        &[("target", "shrink"), ("kind", "tools")],
        3.0,
    );
    let t = |name: &'static str| [("target", name), ("kind", "tools")];

    // healthy: 4 pages per listing, 20 items, up.
    assert_eq!(value(&text, "mcp_up", &[("target", "healthy")]), 1.0);
    assert_eq!(value(&text, "mcp_listing_items", &t("healthy")), 20.0);
    let listings = value(&text, "mcp_listings_total", &t("healthy"));
    assert!(listings >= 1.0);
    // Every listing complete; the last one took 4 pages.
    assert_eq!(
        value(
            &text,
            "mcp_listing_outcomes_total",
            &[
                ("target", "healthy"),
                ("kind", "tools"),
                ("outcome", "complete")
            ]
        ),
        listings
    );
    assert_eq!(value(&text, "mcp_listing_pages", &t("healthy")), 4.0);
    assert!(value(&text, "mcp_listing_duration_seconds", &t("healthy")) > 0.0);
    assert!(value(&text, "mcp_time_to_ready_seconds", &[("target", "healthy")]) > 0.0);
    assert!(value(&text, "mcp_polls_total", &[("target", "healthy")]) >= 1.0);
    assert!(value(&text, "mcp_last_success_timestamp_seconds", &t("healthy")) > 1.7e9);

    // overlap: duplicates counted before dedupe.
    assert_eq!(value(&text, "mcp_listing_raw_items", &t("overlap")), 24.0);
    assert_eq!(value(&text, "mcp_listing_items", &t("overlap")), 20.0);
    assert_eq!(
        value(&text, "mcp_listing_duplicate_items", &t("overlap")),
        4.0
    );

    // cycle: aborted by the guard, target down.
    assert_eq!(value(&text, "mcp_up", &[("target", "cycle")]), 0.0);
    assert!(
        value(
            &text,
            "mcp_listing_aborts_total",
            &[
                ("target", "cycle"),
                ("kind", "tools"),
                ("guard", "cursor_cycle")
            ]
        ) >= 1.0
    );
    assert!(
        value(
            &text,
            "mcp_listing_outcomes_total",
            &[
                ("target", "cycle"),
                ("kind", "tools"),
                ("outcome", "aborted")
            ]
        ) >= 1.0
    );
    // Guards that never aborted have no series (created at the first abort).
    assert_eq!(
        sample(
            &text,
            "mcp_listing_aborts_total",
            &[
                ("target", "cycle"),
                ("kind", "tools"),
                ("guard", "page_cap")
            ]
        ),
        None
    );

    // stale cursor: one -32602 answer, one restart, then complete.
    assert_eq!(
        value(&text, "mcp_list_invalid_cursor_total", &t("stale")),
        1.0
    );
    assert_eq!(
        value(
            &text,
            "mcp_listing_restarts_total",
            &[
                ("target", "stale"),
                ("kind", "tools"),
                ("reason", "invalid_cursor")
            ]
        ),
        1.0
    );
    assert_eq!(value(&text, "mcp_up", &[("target", "stale")]), 1.0);

    // rpc error on page 2.
    assert!(
        value(
            &text,
            "mcp_listing_errors_total",
            &[("target", "rpc"), ("kind", "tools"), ("error", "rpc_error")]
        ) >= 1.0
    );
    assert_eq!(
        sample(
            &text,
            "mcp_listing_errors_total",
            &[("target", "rpc"), ("kind", "tools"), ("error", "timeout")]
        ),
        None
    );

    // shrink: every later listing lost one item without notice.
    let shrinks = value(&text, "mcp_listing_silent_shrinks_total", &t("shrink"));
    let removed = value(&text, "mcp_listing_items_removed_total", &t("shrink"));
    let polls = value(&text, "mcp_listings_total", &t("shrink"));
    assert!(shrinks >= 2.0, "{shrinks}");
    assert_eq!(removed, shrinks, "one item removed per shrink");
    assert_eq!(
        value(&text, "mcp_listing_items", &t("shrink")),
        20.0 - (polls - 1.0)
    );

    // requests: 4 per healthy listing.
    assert_eq!(
        value(&text, "mcp_list_requests_total", &t("healthy")),
        4.0 * listings
    );

    // A gateway that drops its origin's last page: 6 of 14 missing, below
    // the expected 14.
    let text = wait_at_least(&exp, "mcp_listings_total", &t("gateway"), 2.0);
    assert_eq!(value(&text, "mcp_listing_items", &t("gateway")), 8.0);
    assert_eq!(
        value(
            &text,
            "mcp_reference_missing_items",
            &[
                ("target", "gateway"),
                ("kind", "tools"),
                ("reference", "origin")
            ]
        ),
        6.0
    );
    assert_eq!(
        value(&text, "mcp_listing_expected_min_items", &t("gateway")),
        14.0
    );

    // How servers answer a garbage cursor after a multi-page listing.
    // One series per kind: the answer seen.
    let probe = |target: &'static str, result: &'static str| {
        sample(
            &text,
            "mcp_invalid_cursor_probe_result",
            &[("target", target), ("kind", "tools"), ("result", result)],
        )
    };
    assert_eq!(probe("healthy", "invalid_params"), Some(1.0));
    assert_eq!(probe("healthy", "silent_restart"), None);
    assert_eq!(probe("restarter", "silent_restart"), Some(1.0));
    // The deliberate garbage cursor is not counted as an invalid cursor
    // (whose series appears with the first one).
    assert_eq!(
        sample(&text, "mcp_list_invalid_cursor_total", &t("healthy")),
        None
    );

    // exporter's own series.
    assert_eq!(value(&text, "mcp_exporter_targets", &[]), 9.0);
    assert_eq!(
        value(&text, "mcp_exporter_config_last_reload_successful", &[]),
        1.0
    );
    assert!(text.contains("mcp_server_info{"));
    assert!(text.trim_end().ends_with("# EOF"));

    // The JSON API and the status page show the same polls.
    let (status, api) = http_get(&format!("{}/api/targets", exp.url));
    assert_eq!(status, 200);
    let api: serde_json::Value = serde_json::from_str(&api).unwrap();
    assert_eq!(api.as_array().unwrap().len(), 9);
    let (status, page) = http_get(&format!("{}/", exp.url));
    assert_eq!(status, 200);
    assert!(
        page.contains("data-target=\"shrink\" data-level=\"degraded\"")
            && page.contains("without a list_changed notice"),
        "{page}"
    );
    let (status, detail) = http_get(&format!("{}/targets/cycle", exp.url));
    assert_eq!(status, 200);
    assert!(detail.contains("cursor_cycle"));
    drop(sim);
}

#[test]
fn shrink_is_detected_across_a_restart() {
    let (sim, _f) = common::scenarios_simulator("  - {name: shrink, scenario: shrink}\n");
    let dir = tempfile::tempdir().unwrap();
    let cfg = dir.path().join("c.yaml");
    // One poll at start, then not for an hour.
    write_config(
        &cfg,
        &format!(
            "global:\n  schedule: {{every: 1h}}\n  jitter: 0s\n  state_dir: {}\ntargets:\n  - name: shrink\n    url: {}/mcp/shrink\n    kinds: [tools]\n",
            dir.path().join("state").display(),
            sim.url
        ),
    );
    let t = [("target", "shrink"), ("kind", "tools")];
    {
        let exp = exporter(&cfg);
        let text = wait_at_least(&exp, "mcp_listings_total", &t, 1.0);
        assert_eq!(value(&text, "mcp_listing_items", &t), 20.0);
        assert_eq!(value(&text, "mcp_listing_silent_shrinks_total", &t), 0.0);
    }
    // A new process: its first poll (19 items) is compared with the
    // baseline the first process persisted.
    let exp = exporter(&cfg);
    let text = wait_at_least(&exp, "mcp_listings_total", &t, 1.0);
    assert_eq!(value(&text, "mcp_listing_items", &t), 19.0);
    assert_eq!(value(&text, "mcp_listing_silent_shrinks_total", &t), 1.0);
    assert_eq!(value(&text, "mcp_listing_items_removed_total", &t), 1.0);
    drop(sim);
}

#[test]
fn a_broken_reload_keeps_the_running_config() {
    let (sim, _f) = common::scenarios_simulator(
        "  - {name: a, scenario: healthy}\n  - {name: b, scenario: healthy}\n",
    );
    let dir = tempfile::tempdir().unwrap();
    let cfg = dir.path().join("c.yaml");
    let good_one = format!("global:\n  schedule: {{every: 1s}}\n  jitter: 0s\ntargets:\n  - name: a\n    url: {}/mcp/a\n", sim.url);
    write_config(&cfg, &good_one);
    let exp = exporter(&cfg);
    wait_at_least(
        &exp,
        "mcp_listings_total",
        &[("target", "a"), ("kind", "tools")],
        1.0,
    );

    write_config(
        &cfg,
        "global:\n  schedule: {every: 1s}\ntargets:\n  - name: a\n    nonsense_key: 1\n",
    );
    let (status, body) = http_post(&format!("{}/-/reload", exp.url));
    assert_eq!(status, 500);
    assert!(body.contains("c.yaml:5:"), "{body}");
    let text = scrape(&exp);
    assert_eq!(
        value(&text, "mcp_exporter_config_last_reload_successful", &[]),
        0.0
    );
    // Still polling the old target.
    let before = value(
        &text,
        "mcp_listings_total",
        &[("target", "a"), ("kind", "tools")],
    );
    wait_at_least(
        &exp,
        "mcp_listings_total",
        &[("target", "a"), ("kind", "tools")],
        before + 1.0,
    );

    // A good config with a second target applies.
    write_config(
        &cfg,
        &format!("{good_one}  - name: b\n    url: {}/mcp/b\n", sim.url),
    );
    let (status, _) = http_post(&format!("{}/-/reload", exp.url));
    assert_eq!(status, 200);
    let text = wait_at_least(
        &exp,
        "mcp_listings_total",
        &[("target", "b"), ("kind", "tools")],
        1.0,
    );
    assert_eq!(
        value(&text, "mcp_exporter_config_last_reload_successful", &[]),
        1.0
    );
    assert_eq!(value(&text, "mcp_exporter_targets", &[]), 2.0);

    // Reloading the same bytes is a no-op.
    let (status, body) = http_post(&format!("{}/-/reload", exp.url));
    assert_eq!(status, 200);
    assert!(body.contains("unchanged"));
    drop(sim);
}

#[test]
fn a_hanging_target_does_not_delay_a_healthy_one() {
    let (sim, _f) = common::scenarios_simulator(
        "  - {name: ok, scenario: healthy}\n  - {name: stuck, scenario: hang, page: 1}\n",
    );
    let dir = tempfile::tempdir().unwrap();
    let cfg = dir.path().join("c.yaml");
    write_config(
        &cfg,
        &format!(
            "global:\n  schedule: {{every: 1s}}\n  jitter: 0s\n  timeout: 20s\n  page_timeout: 20s\n  concurrency: 4\ntargets:\n  - name: ok\n    url: {url}/mcp/ok\n    kinds: [tools]\n  - name: stuck\n    url: {url}/mcp/stuck\n    kinds: [tools]\n",
            url = sim.url
        ),
    );
    let exp = exporter(&cfg);
    // While `stuck` waits out its 20 s page timeout, `ok` keeps its 1 s
    // schedule: at least 5 polls, consecutive ones well under 5 s apart.
    wait_at_least(
        &exp,
        "mcp_listings_total",
        &[("target", "ok"), ("kind", "tools")],
        6.0,
    );
    let text = scrape(&exp);
    assert_eq!(
        value(
            &text,
            "mcp_listings_total",
            &[("target", "stuck"), ("kind", "tools")]
        ),
        0.0
    );
    let (_, api) = http_get(&format!("{}/api/targets/ok", exp.url));
    let api: serde_json::Value = serde_json::from_str(&api).unwrap();
    let starts: Vec<f64> = api["history"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["started_unix_seconds"].as_f64().unwrap())
        .collect();
    assert!(starts.len() >= 5, "{starts:?}");
    for w in starts.windows(2) {
        assert!(
            (w[0] - w[1]).abs() < 5.0,
            "polls of `ok` were delayed: {starts:?}"
        );
    }
    drop(sim);
}

#[test]
fn probe_endpoint_answers_from_its_own_registry_and_never_starts_a_process() {
    let (sim, _f) = common::scenarios_simulator("  - {name: overlap, scenario: overlap}\n");
    let dir = tempfile::tempdir().unwrap();
    let cfg = dir.path().join("c.yaml");
    write_config(
        &cfg,
        &format!(
            "global:\n  schedule: {{every: 1h}}\ntargets:\n  - name: gw\n    url: {url}/mcp/overlap\n  - name: local\n    command: /bin/true\nmodules:\n  sims:\n    allow: [\"{url}/mcp/\"]\n",
            url = sim.url
        ),
    );
    let exp = exporter(&cfg);
    let (status, text) = http_get(&format!("{}/probe?target=gw&kind=tools", exp.url));
    assert_eq!(status, 200, "{text}");
    assert_eq!(
        value(
            &text,
            "mcp_listing_duplicate_items",
            &[("target", "gw"), ("kind", "tools")]
        ),
        4.0
    );
    assert_eq!(value(&text, "mcp_up", &[("target", "gw")]), 1.0);
    assert!(
        sample(&text, "mcp_exporter_targets", &[]).is_none(),
        "probe output is per request"
    );

    let url = format!("{}/mcp/overlap", sim.url);
    let (status, text) = http_get(&format!(
        "{}/probe?module=sims&target={url}&kind=tools",
        exp.url
    ));
    assert_eq!(status, 200, "{text}");
    assert_eq!(
        value(
            &text,
            "mcp_listing_items",
            &[("target", "sims"), ("kind", "tools")]
        ),
        20.0
    );
    assert!(!text.contains(&url), "the URL never becomes a label");

    let (status, _) = http_get(&format!(
        "{}/probe?module=sims&target=http://127.0.0.2:1/mcp",
        exp.url
    ));
    assert_eq!(status, 403);
    let (status, _) = http_get(&format!("{}/probe?target=local", exp.url));
    assert_eq!(status, 400, "a probe request never starts a process");
    let (status, _) = http_get(&format!("{}/probe?target=nope", exp.url));
    assert_eq!(status, 404);
    drop(sim);
}
