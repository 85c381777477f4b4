//! The exporter service end to end: real simulator processes, a real
//! exporter process, values asserted from scraped `/metrics`.

use mcp_testkit::{listing_attempts, sample, scenarios_simulator, Exporter};
use std::time::Duration;

const LIMIT: Duration = Duration::from_secs(60);

/// `target="T", kind="tools"`.
fn tools(target: &str) -> [(&str, &str); 2] {
    [("target", target), ("kind", "tools")]
}

/// `tools(target)` plus one more label.
fn tools_and<'a>(target: &'a str, label: &'a str, value: &'a str) -> [(&'a str, &'a str); 3] {
    [("target", target), ("kind", "tools"), (label, value)]
}

fn value(text: &str, name: &str, labels: &[(&str, &str)]) -> f64 {
    sample(text, name, labels).unwrap_or_else(|| panic!("no sample {name}{labels:?} in:\n{text}"))
}

/// Listing attempts of (target, kind), summed over outcomes.
fn attempts(text: &str, labels: &[(&str, &str)]) -> f64 {
    listing_attempts(text, labels).unwrap_or_else(|| panic!("no attempts {labels:?} in:\n{text}"))
}

/// Scrapes until the listing attempts of (target, kind) reach `min`.
fn wait_attempts(exp: &Exporter, labels: &[(&str, &str)], min: f64) -> String {
    exp.wait_metrics(LIMIT, &format!("attempts {labels:?} >= {min}"), |text| {
        listing_attempts(text, labels).is_some_and(|v| v >= min)
    })
}

/// YAML for a tools-only target on the scenarios simulator at `sim`.
fn sim_target(sim: &str, name: &str) -> String {
    format!("  - name: {name}\n    http:\n      url: {sim}/mcp/{name}\n    kinds: [tools]\n")
}

/// An exporter polling every target every second, reloadable over HTTP,
/// with a state directory of its own.
fn every_second(targets: &str) -> Exporter {
    Exporter::start_with_dir(
        |dir| {
            format!(
                "global:\n  schedule: {{every: 1s}}\n  jitter: 0s\n  state_dir: {}\ntargets:\n{targets}",
                dir.join("state").display()
            )
        },
        &["--web.enable-lifecycle"],
        &[],
    )
}

const SCENARIOS: &str = "  - {name: healthy, scenario: healthy}\n  - {name: overlap, scenario: overlap}\n  - {name: cycle, scenario: cycle}\n  - {name: stale, scenario: stale-cursor}\n  - {name: shrink, scenario: shrink}\n  - {name: rpc, scenario: rpc-error}\n  - {name: origin, scenario: healthy, items: 14, page_size: 8}\n  - {name: gateway, scenario: truncate, items: 14, page_size: 8}\n  - {name: restarter, scenario: silent-restart}\n";

#[test]
fn metrics_per_scenario() {
    let (sim, _f) = scenarios_simulator(SCENARIOS);
    let target = |name: &str| sim_target(&sim.url, name);
    let mut targets: String = [
        "healthy", "overlap", "cycle", "stale", "shrink", "rpc", "origin",
    ]
    .iter()
    .map(|name| target(name))
    .collect();
    targets.push_str(&target("gateway"));
    targets.push_str("    expect: {tools: 14}\n    reference: [{target: origin}]\n");
    targets.push_str(&target("restarter"));
    let exp = every_second(&targets);
    // Three polls of the shrinking server: 20, 19, 18 items.
    let text = wait_attempts(&exp, &tools("shrink"), 3.0);
    healthy_lists_four_pages_of_twenty(&text);
    overlap_counts_duplicates_before_dedupe(&text);
    cycle_is_aborted_by_its_guard(&text);
    stale_cursor_restarts_once(&text);
    rpc_error_is_counted_by_label(&text);
    every_later_shrink_is_silent(&text);
    garbage_cursor_answers_are_one_series_per_kind(&text);
    exporter_series_describe_the_service(&text);
    // A gateway that drops its origin's last page: 6 of 14 missing, below
    // the expected 14.
    let text = wait_attempts(&exp, &tools("gateway"), 2.0);
    gateway_gap_shows_against_its_origin(&text);
    api_and_pages_show_the_same_polls(&exp);
}

fn healthy_lists_four_pages_of_twenty(text: &str) {
    assert_eq!(value(text, "mcp_up", &[("target", "healthy")]), 1.0);
    assert_eq!(value(text, "mcp_listing_items", &tools("healthy")), 20.0);
    let listings = attempts(text, &tools("healthy"));
    assert!(listings >= 1.0);
    // Every listing complete; the last one took 4 pages, 4 requests each.
    let complete = tools_and("healthy", "outcome", "complete");
    assert_eq!(
        value(text, "mcp_listing_outcomes_total", &complete),
        listings
    );
    assert_eq!(value(text, "mcp_listing_pages", &tools("healthy")), 4.0);
    assert_eq!(
        value(text, "mcp_list_requests_total", &tools("healthy")),
        4.0 * listings
    );
    assert!(value(text, "mcp_listing_duration_seconds", &tools("healthy")) > 0.0);
    assert!(value(text, "mcp_time_to_ready_seconds", &[("target", "healthy")]) > 0.0);
    assert!(value(text, "mcp_polls_total", &[("target", "healthy")]) >= 1.0);
    assert!(
        value(
            text,
            "mcp_last_success_timestamp_seconds",
            &tools("healthy")
        ) > 1.7e9
    );
}

fn overlap_counts_duplicates_before_dedupe(text: &str) {
    assert_eq!(
        value(text, "mcp_listing_raw_items", &tools("overlap")),
        24.0
    );
    assert_eq!(value(text, "mcp_listing_items", &tools("overlap")), 20.0);
    assert_eq!(
        value(text, "mcp_listing_duplicate_items", &tools("overlap")),
        4.0
    );
}

fn cycle_is_aborted_by_its_guard(text: &str) {
    assert_eq!(value(text, "mcp_up", &[("target", "cycle")]), 0.0);
    let cycle_aborts = tools_and("cycle", "guard", "cursor_cycle");
    assert!(value(text, "mcp_listing_aborts_total", &cycle_aborts) >= 1.0);
    let aborted = tools_and("cycle", "outcome", "aborted");
    assert!(value(text, "mcp_listing_outcomes_total", &aborted) >= 1.0);
    // Guards that never aborted have no series (created at the first abort).
    let page_cap = tools_and("cycle", "guard", "page_cap");
    assert_eq!(sample(text, "mcp_listing_aborts_total", &page_cap), None);
}

/// One -32602 answer, one restart, then complete.
fn stale_cursor_restarts_once(text: &str) {
    assert_eq!(
        value(text, "mcp_list_invalid_cursor_total", &tools("stale")),
        1.0
    );
    let restarts = tools_and("stale", "reason", "invalid_cursor");
    assert_eq!(value(text, "mcp_listing_restarts_total", &restarts), 1.0);
    assert_eq!(value(text, "mcp_up", &[("target", "stale")]), 1.0);
}

/// An RPC error on page 2: counted as `rpc_error`, and no other label.
fn rpc_error_is_counted_by_label(text: &str) {
    let rpc_errors = tools_and("rpc", "error", "rpc_error");
    assert!(value(text, "mcp_listing_errors_total", &rpc_errors) >= 1.0);
    let timeouts = tools_and("rpc", "error", "timeout");
    assert_eq!(sample(text, "mcp_listing_errors_total", &timeouts), None);
}

/// Every listing after the first lost one item without notice.
fn every_later_shrink_is_silent(text: &str) {
    let shrinks = value(text, "mcp_listing_silent_shrinks_total", &tools("shrink"));
    let removed = value(text, "mcp_listing_items_removed_total", &tools("shrink"));
    let listings = attempts(text, &tools("shrink"));
    assert!(shrinks >= 2.0, "{shrinks}");
    assert_eq!(removed, shrinks, "one item removed per shrink");
    assert_eq!(
        value(text, "mcp_listing_items", &tools("shrink")),
        20.0 - (listings - 1.0)
    );
}

/// How servers answer a garbage cursor after a multi-page listing: one
/// series per kind, the answer seen.
fn garbage_cursor_answers_are_one_series_per_kind(text: &str) {
    let probe = |target, result| {
        sample(
            text,
            "mcp_invalid_cursor_probe_result",
            &tools_and(target, "result", result),
        )
    };
    assert_eq!(probe("healthy", "invalid_params"), Some(1.0));
    assert_eq!(probe("healthy", "silent_restart"), None);
    assert_eq!(probe("restarter", "silent_restart"), Some(1.0));
    // The deliberate garbage cursor is not counted as an invalid cursor
    // (whose series appears with the first one).
    assert_eq!(
        sample(text, "mcp_list_invalid_cursor_total", &tools("healthy")),
        None
    );
}

fn exporter_series_describe_the_service(text: &str) {
    assert_eq!(value(text, "mcp_exporter_targets", &[]), 9.0);
    assert_eq!(
        value(text, "mcp_exporter_config_last_reload_successful", &[]),
        1.0
    );
    assert!(text.contains("mcp_server_info{"));
    assert!(text.trim_end().ends_with("# EOF"));
}

fn gateway_gap_shows_against_its_origin(text: &str) {
    assert_eq!(value(text, "mcp_listing_items", &tools("gateway")), 8.0);
    let gap = tools_and("gateway", "reference", "origin");
    assert_eq!(value(text, "mcp_reference_missing_items", &gap), 6.0);
    assert_eq!(
        value(text, "mcp_listing_expected_min_items", &tools("gateway")),
        14.0
    );
}

/// The JSON API and the status pages show the same polls.
fn api_and_pages_show_the_same_polls(exp: &Exporter) {
    assert_eq!(exp.api_targets().len(), 9);
    let (status, page) = exp.get("/");
    assert_eq!(status, 200);
    assert!(
        page.contains("data-target=\"shrink\" data-level=\"degraded\"")
            && page.contains("without a list_changed notice"),
        "{page}"
    );
    let (status, detail) = exp.get("/targets/cycle");
    assert_eq!(status, 200);
    assert!(detail.contains("cursor_cycle"));
}

#[test]
fn shrink_is_detected_across_a_restart() {
    let (sim, _f) = scenarios_simulator("  - {name: shrink, scenario: shrink}\n");
    let dir = tempfile::tempdir().unwrap();
    // One poll at start, then not for an hour.
    let config = format!(
        "global:\n  schedule: {{every: 1h}}\n  jitter: 0s\n  state_dir: {}\ntargets:\n{}",
        dir.path().join("state").display(),
        sim_target(&sim.url, "shrink")
    );
    let t = tools("shrink");
    {
        let exp = Exporter::start(&config);
        let text = wait_attempts(&exp, &t, 1.0);
        assert_eq!(value(&text, "mcp_listing_items", &t), 20.0);
        assert_eq!(value(&text, "mcp_listing_silent_shrinks_total", &t), 0.0);
    }
    // A new process: its first poll (19 items) is compared with the
    // baseline the first process persisted.
    let exp = Exporter::start(&config);
    let text = wait_attempts(&exp, &t, 1.0);
    assert_eq!(value(&text, "mcp_listing_items", &t), 19.0);
    assert_eq!(value(&text, "mcp_listing_silent_shrinks_total", &t), 1.0);
    assert_eq!(value(&text, "mcp_listing_items_removed_total", &t), 1.0);
}

#[test]
fn a_broken_reload_keeps_the_running_config() {
    let (sim, _f) =
        scenarios_simulator("  - {name: a, scenario: healthy}\n  - {name: b, scenario: healthy}\n");
    let good_one = format!(
        "global:\n  schedule: {{every: 1s}}\n  jitter: 0s\ntargets:\n  - name: a\n    http:\n      url: {}/mcp/a\n",
        sim.url
    );
    let exp = Exporter::start_with(&good_one, &["--web.enable-lifecycle"], &[]);
    wait_attempts(&exp, &tools("a"), 1.0);

    let (status, body) = exp
        .reload("global:\n  schedule: {every: 1s}\ntargets:\n  - name: a\n    nonsense_key: 1\n");
    assert_eq!(status, 500);
    assert!(body.contains("config.yaml:5:"), "{body}");
    let text = exp.metrics();
    assert_eq!(
        value(&text, "mcp_exporter_config_last_reload_successful", &[]),
        0.0
    );
    // Still polling the old target.
    let before = attempts(&text, &tools("a"));
    wait_attempts(&exp, &tools("a"), before + 1.0);

    // A good config with a second target applies.
    let (status, _) = exp.reload(&format!(
        "{good_one}  - name: b\n    http:\n      url: {}/mcp/b\n",
        sim.url
    ));
    assert_eq!(status, 200);
    let text = wait_attempts(&exp, &tools("b"), 1.0);
    assert_eq!(
        value(&text, "mcp_exporter_config_last_reload_successful", &[]),
        1.0
    );
    assert_eq!(value(&text, "mcp_exporter_targets", &[]), 2.0);

    // Reloading the same bytes is a no-op.
    let (status, body) = exp.reload(&std::fs::read_to_string(exp.config_path()).unwrap());
    assert_eq!(status, 200);
    assert!(body.contains("unchanged"));
}

/// An ordering, not a timing: `stuck`'s first page waits for an hour, so
/// while its first poll has not ended, `ok` must have finished six.
#[test]
fn a_hanging_target_does_not_delay_a_healthy_one() {
    let (sim, _f) = scenarios_simulator(
        "  - {name: ok, scenario: healthy}\n  - {name: stuck, scenario: hang, page: 1}\n",
    );
    let exp = Exporter::start(&format!(
        "global:\n  schedule: {{every: 1s}}\n  jitter: 0s\n  limits:\n    timeout: 1h\n    page_timeout: 1h\n  concurrency: 4\ntargets:\n{}{}",
        sim_target(&sim.url, "ok"),
        sim_target(&sim.url, "stuck")
    ));
    let text = wait_attempts(&exp, &tools("ok"), 6.0);
    assert_eq!(
        attempts(&text, &tools("stuck")),
        0.0,
        "stuck's first poll ended"
    );
}

#[test]
fn probe_endpoint_answers_from_its_own_registry_and_never_starts_a_process() {
    let (sim, _f) = scenarios_simulator("  - {name: overlap, scenario: overlap}\n");
    let exp = Exporter::start(&format!(
        "global:\n  schedule: {{every: 1h}}\ntargets:\n  - name: gw\n    http:\n      url: {url}/mcp/overlap\n  - name: local\n    stdio:\n      command: /bin/true\nmodules:\n  sims:\n    allow: [\"{url}/mcp/\"]\n",
        url = sim.url
    ));
    let (status, text) = exp.get("/probe?target=gw&kind=tools");
    assert_eq!(status, 200, "{text}");
    assert_eq!(
        value(&text, "mcp_listing_duplicate_items", &tools("gw")),
        4.0
    );
    assert_eq!(value(&text, "mcp_up", &[("target", "gw")]), 1.0);
    assert!(
        sample(&text, "mcp_exporter_targets", &[]).is_none(),
        "probe output is per request"
    );

    let url = format!("{}/mcp/overlap", sim.url);
    let (status, text) = exp.get(&format!("/probe?module=sims&target={url}&kind=tools"));
    assert_eq!(status, 200, "{text}");
    assert_eq!(value(&text, "mcp_listing_items", &tools("sims")), 20.0);
    assert!(!text.contains(&url), "the URL never becomes a label");

    let (status, _) = exp.get("/probe?module=sims&target=http://127.0.0.2:1/mcp");
    assert_eq!(status, 403);
    let (status, _) = exp.get("/probe?target=local");
    assert_eq!(status, 400, "a probe request never starts a process");
    let (status, _) = exp.get("/probe?target=nope");
    assert_eq!(status, 404);
}
