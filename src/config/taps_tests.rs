//! The `taps:` section: defaults, what it refuses and where it says so.

use super::load_str;
use super::taps::{
    DEFAULT_ABANDON_AFTER, DEFAULT_MAX_CLIENTS, DEFAULT_MERGE_PAGES_PER_SECOND,
    DEFAULT_MERGE_PAGE_BURST,
};
use std::time::Duration;

/// One tap with only its required keys; a test adds the keys it is about.
const ONE_TAP: &str = "taps:
  - name: edge
    listen: 127.0.0.1:0
    upstream: {url: http://a/mcp}
";

fn assert_err_at(text: &str, line: usize, col: usize, needle: &str) {
    let shown = match load_str(text, "t.yaml") {
        Ok(_) => panic!("expected an error for:\n{text}"),
        Err(e) => e.to_string(),
    };
    assert!(
        shown.starts_with(&format!("t.yaml:{line}:{col}: ")) && shown.contains(needle),
        "want t.yaml:{line}:{col} with {needle:?}, got: {shown}"
    );
}

const TARGET: &str = "targets:\n  - name: origin\n    http: {url: http://127.0.0.1:8080/mcp}\n";

#[test]
fn a_tap_gets_defaults_and_its_keys() {
    let text = format!(
        "{TARGET}taps:\n  - name: edge\n    listen: 127.0.0.1:9101\n    upstream: {{url: http://127.0.0.1:8080/mcp}}\n    target: origin\n    merge_pages: [mcp]\n    limits: {{max_pages: 20}}\n"
    );
    let loaded = load_str(&text, "t.yaml").expect("loads");
    let tap = &loaded.config.taps[0];
    assert_eq!(tap.name, "edge");
    assert_eq!(tap.listener.address, "127.0.0.1:9101");
    assert_eq!(tap.upstream.url.as_str(), "http://127.0.0.1:8080/mcp");
    assert_eq!(tap.target.as_deref(), Some("origin"));
    assert_eq!(tap.merge.clients, ["mcp"]);
    assert!(tap.merge.credential_headers.is_empty());
    assert_eq!(tap.merge.page_burst, DEFAULT_MERGE_PAGE_BURST);
    assert_eq!(tap.merge.pages_per_second, DEFAULT_MERGE_PAGES_PER_SECOND);
    assert_eq!(tap.abandon_after, DEFAULT_ABANDON_AFTER);
    assert_eq!(tap.max_clients, DEFAULT_MAX_CLIENTS);
    assert_eq!(tap.max_sessions, 10_000);
    assert_eq!(tap.client_idle, Duration::from_secs(24 * 60 * 60));
    assert_eq!(tap.max_connections, None, "the open-file limit's share");
    assert_eq!(tap.limits.max_pages, 20);
    assert_eq!(tap.limits.timeout, Duration::from_secs(60));
}

#[test]
fn a_tap_alone_is_something_to_run() {
    let text = "taps:\n  - name: edge\n    listen: 127.0.0.1:0\n    upstream: {url: http://127.0.0.1:8080/mcp}\n";
    let loaded = load_str(text, "t.yaml").expect("loads");
    assert!(
        loaded
            .warnings
            .iter()
            .all(|w| !w.contains("nothing will be polled")),
        "{:?}",
        loaded.warnings
    );
}

#[test]
fn a_misspelt_key_points_at_it() {
    let text = "taps:\n  - name: edge\n    listen: 127.0.0.1:0\n    upstream: {url: http://127.0.0.1:8080/mcp}\n    abandon_afer: 10s\n";
    assert_err_at(text, 5, 5, "abandon_afer");
}

#[test]
fn the_upstream_takes_no_credentials_of_its_own() {
    let text = "taps:\n  - name: edge\n    listen: 127.0.0.1:0\n    upstream:\n      url: http://127.0.0.1:8080/mcp\n      bearer_token_env: TOKEN\n";
    assert_err_at(text, 6, 7, "`upstream` takes `url` and `tls` only");
}

#[test]
fn credentials_in_the_upstream_url_are_refused_without_echoing_them() {
    let text = "taps:\n  - name: edge\n    listen: 127.0.0.1:0\n    upstream: {url: \"http://user:s3cret@127.0.0.1:8080/mcp\"}\n";
    let shown = match load_str(text, "t.yaml") {
        Ok(_) => panic!("credentials in the URL must be refused"),
        Err(e) => e.to_string(),
    };
    assert!(shown.starts_with("t.yaml:4:"), "{shown}");
    assert!(
        !shown.contains("s3cret"),
        "the secret is not shown: {shown}"
    );
}

#[test]
fn the_reference_target_must_exist() {
    let text = format!(
        "{TARGET}taps:\n  - name: edge\n    listen: 127.0.0.1:0\n    upstream: {{url: http://127.0.0.1:8080/mcp}}\n    target: orgin\n"
    );
    assert_err_at(&text, 8, 13, "did you mean `origin`");
}

#[test]
fn names_and_listen_addresses_are_one_per_tap() {
    let two = |second_name: &str, second_listen: &str| {
        format!(
            "taps:\n  - name: edge\n    listen: 127.0.0.1:9101\n    upstream: {{url: http://a/mcp}}\n  - name: {second_name}\n    listen: {second_listen}\n    upstream: {{url: http://b/mcp}}\n"
        )
    };
    assert_err_at(&two("edge", "127.0.0.1:9102"), 5, 11, "duplicate tap name");
    assert_err_at(&two("other", "127.0.0.1:9101"), 6, 13, "same address");
}

#[test]
fn a_bad_client_header_and_zero_bounds_are_refused() {
    let base = ONE_TAP;
    assert_err_at(
        &format!("{base}    client_header: \"X Client\"\n"),
        5,
        20,
        "client_header",
    );
    assert_err_at(
        &format!("{base}    max_clients: 0\n"),
        5,
        18,
        "greater than zero",
    );
    assert_err_at(
        &format!("{base}    max_connections: 0\n"),
        5,
        22,
        "greater than zero",
    );
    assert_err_at(
        &format!("{base}    max_sessions: 0\n"),
        5,
        19,
        "greater than zero",
    );
    let loaded = load_str(&format!("{base}    max_connections: 100\n"), "t.yaml").expect("loads");
    assert_eq!(loaded.config.taps[0].max_connections, Some(100));
    let keys = format!("{base}    max_sessions: 50000\n    client_idle: 1h\n");
    let tap = &load_str(&keys, "t.yaml").expect("loads").config.taps[0];
    assert_eq!(
        (tap.max_sessions, tap.client_idle),
        (50_000, Duration::from_secs(3600))
    );
}

#[test]
fn what_merging_may_spend_is_configured_and_checked() {
    let base = ONE_TAP;
    let keys = "    merge_credential_headers: [X-Tenant, x-org]
    merge_page_burst: 50
    merge_pages_per_second: 5
";
    let loaded = load_str(&format!("{base}{keys}"), "t.yaml").expect("loads");
    let merge = &loaded.config.taps[0].merge;
    assert_eq!(merge.credential_headers, ["x-tenant", "x-org"]);
    assert_eq!((merge.page_burst, merge.pages_per_second), (50, 5));
    assert_err_at(
        &format!("{base}    merge_credential_headers: [\"X Tenant\"]\n"),
        5,
        31,
        "merge_credential_headers",
    );
    assert_err_at(
        &format!("{base}    merge_page_burst: 0\n"),
        5,
        23,
        "greater than zero",
    );
    assert_err_at(
        &format!("{base}    merge_pages_per_second: 0\n"),
        5,
        29,
        "greater than zero",
    );
}

#[test]
fn routes_name_paths_and_patterns_with_their_targets() {
    let text = format!(
        "{TARGET}taps:\n  - name: gw\n    listen: 127.0.0.1:0\n    upstream: {{url: http://127.0.0.1:4444/}}\n    routes:\n      - {{name: alpha, path: /mcp/alpha/, target: origin}}\n      - {{name: \"s-{{id}}\", pattern: \"/servers/{{id}}/mcp\"}}\n    max_routes: 10\n    learn_paths: false\n    learn_catalogue: true\n"
    );
    let loaded = load_str(&text, "t.yaml").expect("loads");
    let routes = &loaded.config.taps[0].routes;
    assert_eq!(routes.named.len(), 2);
    assert_eq!(routes.named[0].route_name().as_deref(), Some("alpha"));
    assert_eq!(
        routes.named[0].rule.literal_path().as_deref(),
        Some("/mcp/alpha")
    );
    assert_eq!(routes.named[0].target.as_deref(), Some("origin"));
    assert_eq!(routes.named[1].route_name(), None, "a pattern names many");
    assert_eq!((routes.max_routes, routes.max_client_routes), (10, 256));
    assert!(!routes.learn_paths);
    assert_eq!(routes.learn_every, Some(Duration::from_secs(900)));
}

#[test]
fn a_tap_without_routes_learns_paths_and_walks_nothing_itself() {
    let text =
        "taps:\n  - name: edge\n    listen: 127.0.0.1:0\n    upstream: {url: http://a/mcp}\n";
    let loaded = load_str(text, "t.yaml").expect("loads");
    let routes = &loaded.config.taps[0].routes;
    assert!(routes.named.is_empty() && routes.learn_paths);
    assert_eq!(routes.learn_every, None);
    assert_eq!(routes.max_routes, 64);
}

#[test]
fn bad_routes_point_at_the_key_at_fault() {
    let base = format!(
        "{TARGET}taps:\n  - name: gw\n    listen: 127.0.0.1:0\n    upstream: {{url: http://a/}}\n    routes:\n"
    );
    assert_err_at(
        &format!("{base}      - {{path: mcp/alpha}}\n"),
        9,
        16,
        "must start with `/`",
    );
    assert_err_at(
        &format!("{base}      - {{name: \"s-{{x}}\", path: \"/s/{{id}}\"}}\n"),
        9,
        16,
        "`{x}`",
    );
    assert_err_at(
        &format!("{base}      - {{path: \"/s/{{id}}\", target: origin}}\n"),
        9,
        35,
        "needs a route whose path has no",
    );
    assert_err_at(
        &format!("{base}      - {{path: /a, target: orgin}}\n"),
        9,
        28,
        "did you mean `origin`",
    );
    assert_err_at(
        &format!("{base}      - {{path: /a}}\n    max_routes: 0\n"),
        10,
        17,
        "greater than zero",
    );
}

#[test]
fn apps_are_named_by_address_and_user_agent_and_checked() {
    let base = ONE_TAP;
    let apps = "    apps:
      - {name: desk, from: [127.0.0.2, 10.1.0.0/16]}
      - {name: nightly, user_agent: report-bot}
    merge_pages: [desk]
";
    let loaded = load_str(&format!("{base}{apps}"), "t.yaml").expect("loads");
    let tap = &loaded.config.taps[0];
    let names: Vec<&str> = tap.apps.iter().map(|a| a.name()).collect();
    assert_eq!(names, ["desk", "nightly"]);
    let apps = mcp_tap::apps::Apps::new(tap.apps.clone()).unwrap();
    let app = |peer: &str| {
        apps.app_of(Some(peer.parse().unwrap()), None)
            .map(|c| c.name)
    };
    assert_eq!(app("10.1.9.9").as_deref(), Some("desk"));
    assert_eq!(app("10.2.0.1"), None);
    assert_err_at(
        &format!("{base}    apps:\n      - {{name: desk, from: [10.0.0.0/40]}}\n"),
        6,
        29,
        "not an address",
    );
    assert_err_at(
        &format!("{base}    apps:\n      - {{name: other, from: [10.0.0.1]}}\n"),
        6,
        16,
        "name",
    );
    assert_err_at(
        &format!("{base}    apps:\n      - {{name: desk}}\n"),
        6,
        9,
        "needs `from:`",
    );
    assert_err_at(
        &format!("{base}    apps:\n      - {{name: a, from: [10.0.0.1]}}\n      - {{name: a, from: [10.0.0.2]}}\n"),
        7,
        16,
        "same name",
    );
}
