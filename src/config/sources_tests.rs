//! Unit tests of loading `discovery:`: defaults, every rule, its position.

use super::*;
use mcp_listing::Kind;
use std::time::Duration;

const MODULES: &str =
    "modules:\n  internal:\n    allow: [\"https://mcp.example.invalid/\"]\n    kinds: [tools]\n";

fn load_ok(discovery: &str) -> LoadedConfig {
    let text = format!("{MODULES}discovery:\n{discovery}");
    load_str(&text, "t.yaml").unwrap_or_else(|e| panic!("{e}\n{text}"))
}

/// The error of `discovery` (after the modules), its line counted from
/// the `discovery:` line (1) and its message.
fn err(discovery: &str) -> (usize, usize, String) {
    let text = format!("{MODULES}discovery:\n{discovery}");
    let e = match load_str(&text, "t.yaml") {
        Ok(_) => panic!("expected an error for:\n{text}"),
        Err(e) => e,
    };
    let (line, col) = e.position().unwrap_or_else(|| panic!("no position: {e}"));
    let shown = e.to_string();
    assert!(!shown.contains('\n'), "not one line: {shown:?}");
    (line - MODULES.lines().count(), col, e.message())
}

fn assert_err(discovery: &str, line: usize, col: usize, needle: &str) {
    let (l, c, message) = err(discovery);
    assert_eq!((l, c), (line, col), "{message}");
    assert!(message.contains(needle), "{message:?} lacks {needle:?}");
}

#[test]
fn each_kind_gets_its_defaults() {
    let loaded = load_ok(
        "  - name: fleet\n    module: internal\n    file_sd: {files: [\"targets/*.json\"]}\n  - name: platform\n    module: internal\n    http_sd: {http: {url: \"https://inv.example.invalid/mcp\"}}\n  - name: public\n    module: internal\n    registry: {http: {url: \"https://registry.example.invalid\"}}\n    schedule: {every: 10m}\n    labels: {team: platform}\n",
    );
    let c = &loaded.config;
    assert_eq!(c.defaults.baseline_retention, default::BASELINE_RETENTION);
    let [fleet, platform, public] = &c.discovery[..] else {
        panic!("three sources: {:?}", c.discovery)
    };
    assert_eq!(fleet.refresh_interval, source_default::FILE_SD_REFRESH);
    assert_eq!(fleet.max_targets, source_default::MAX_TARGETS);
    assert_eq!(fleet.schedule, c.defaults.settings.schedule);
    assert!(
        matches!(&fleet.kind, SourceKind::FileSd { files, .. } if files[0].ends_with("targets/*.json"))
    );
    assert_eq!(platform.refresh_interval, source_default::HTTP_SD_REFRESH);
    let SourceKind::HttpSd(endpoint) = &platform.kind else {
        panic!("http_sd")
    };
    let settings = &endpoint.http.settings;
    assert!(settings.bearer_token.is_none() && settings.headers.is_empty());
    assert_eq!(endpoint.limits, source_default::HTTP_SD_LIMITS);
    assert_eq!(settings.max_redirects, 0);
    assert_eq!(public.refresh_interval, source_default::REGISTRY_REFRESH);
    assert_eq!(public.schedule, Schedule::Every(Duration::from_secs(600)));
    assert_eq!(
        public.labels.get("team").map(String::as_str),
        Some("platform")
    );
    let SourceKind::Registry(r) = &public.kind else {
        panic!("registry")
    };
    assert_eq!((r.limit, r.search.as_deref()), (100, None));
    assert_eq!(r.endpoint.limits, source_default::REGISTRY_LIMITS);
    assert_eq!(
        r.endpoint.limits.max_pages,
        source_default::REGISTRY_MAX_PAGES
    );
}

#[test]
fn a_source_needs_a_known_module_and_exactly_one_kind() {
    assert_err(
        "  - name: a\n    module: nope\n    file_sd: {files: [\"a.json\"]}\n",
        3,
        13,
        "no module named `nope` (modules are: internal)",
    );
    assert_err(
        "  - name: a\n    module: internal\n",
        2,
        5,
        "needs one of `file_sd`, `http_sd` or `registry`",
    );
    assert_err(
        "  - name: a\n    module: internal\n    file_sd: {files: [\"a.json\"]}\n    registry: {http: {url: \"https://r.invalid\"}}\n",
        5,
        5,
        "has both `file_sd` and `registry`",
    );
    assert_err(
        "  - name: a\n    module: internal\n    file_sd: {files: [\"a.json\"]}\n  - name: a\n    module: internal\n    file_sd: {files: [\"b.json\"]}\n",
        5,
        11,
        "duplicate discovery source name `a` (first defined on line",
    );
    assert_err(
        "  - name: \"a b\"\n    module: internal\n    file_sd: {files: [\"a.json\"]}\n",
        2,
        11,
        "discovery source name \"a b\" is not allowed",
    );
}

#[test]
fn bad_values_point_at_themselves() {
    assert_err(
        "  - name: a\n    module: internal\n    file_sd: {files: [\"/etc/*/a.json\"]}\n",
        4,
        23,
        "has a `*` outside its last path segment",
    );
    assert_err(
        "  - name: a\n    module: internal\n    file_sd: {files: []}\n",
        4,
        22,
        "`file_sd.files` is empty",
    );
    assert_err(
        "  - name: a\n    module: internal\n    http_sd: {http: {url: \"https://u:p@inv.invalid/\"}}\n",
        4,
        27,
        "credentials in the `url` are not allowed",
    );
    assert_err(
        "  - name: a\n    module: internal\n    http_sd: {http: {url: \"ftp://inv.invalid/\"}}\n",
        4,
        27,
        "must be http:// or https://",
    );
    assert_err(
        "  - name: a\n    module: internal\n    registry: {http: {url: \"https://r.invalid\"}, limit: 500}\n",
        4,
        57,
        "`limit` must be between 1 and 100",
    );
    assert_err(
        "  - name: a\n    module: internal\n    registry: {http: {url: \"https://r.invalid\"}, refresh_interval: 0s}\n",
        4,
        68,
        "`refresh_interval` must be at least 1s",
    );
    assert_err(
        "  - name: a\n    module: internal\n    http_sd: {http: {url: \"https://inv.invalid/\", bearer_token: x}}\n",
        4,
        51,
        "a literal `bearer_token` is not allowed",
    );
    assert_err(
        "  - name: a\n    module: internal\n    file_sd: {files: [\"a.json\"]}\n    labels: {\"bad-name\": x}\n",
        5,
        14,
        "not a valid Prometheus label name",
    );
    assert_err(
        "  - name: a\n    module: internal\n    file_sd: {files: [\"a.json\"]}\n    labels: {__meta_x: x}\n",
        5,
        14,
        "reserves for meta labels",
    );
    assert_err(
        "  - name: a\n    module: internal\n    file_sd: {files: [\"a.json\"]}\n    expect: {prompts: 3}\n",
        5,
        14,
        "`expect` names `prompts`, which is not in module `internal`'s `kinds`",
    );
    assert_err(
        "  - name: a\n    module: internal\n    file_sd: {files: [\"a.json\"]}\n    max_targets: 0\n",
        5,
        18,
        "`max_targets` must be at least 1",
    );
    assert_err(
        "  - name: a\n    module: internal\n    http_sd: {http: {url: \"https://inv.invalid/\"}, limit: 5}\n",
        4,
        52,
        "unknown field `limit`",
    );
    assert_err(
        "  - name: a\n    module: internal\n    file_sd: {files: [\"a.json\"], refresh: 5m}\n",
        4,
        34,
        "unknown field `refresh`",
    );
}

#[test]
fn source_secrets_are_known_secrets() {
    std::env::set_var("MCP_EXPORTER_TEST_SD_TOKEN", "sd-secret-value-1234");
    let loaded = load_ok(
        "  - name: a\n    module: internal\n    http_sd: {http: {url: \"https://inv.example.invalid/\", headers: {X-Key: {env: MCP_EXPORTER_TEST_SD_TOKEN}}}}\n",
    );
    let scrubbed = loaded
        .config
        .known_secrets
        .scrub("token sd-secret-value-1234 here");
    assert!(!scrubbed.contains("sd-secret-value-1234"), "{scrubbed}");
    assert_eq!(
        loaded.config.discovery[0].expect.items.get(&Kind::Tools),
        None
    );
}

#[test]
fn source_limits_and_endpoints_take_their_own_keys() {
    let loaded = load_ok(
        "  - name: a\n    module: internal\n    http_sd:\n      http:\n        url: https://inv.invalid/\n      limits: {timeout: 3s, max_response_bytes: 1KiB}\n  - name: b\n    module: internal\n    registry:\n      http: {url: \"https://r.invalid\"}\n      limits: {timeout: 1m, page_timeout: 2s, max_pages: 7}\n",
    );
    let SourceKind::HttpSd(sd) = &loaded.config.discovery[0].kind else {
        panic!("http_sd")
    };
    assert_eq!(sd.limits.timeout, Duration::from_secs(3));
    assert_eq!(sd.limits.max_response_bytes, 1024);
    assert_eq!(sd.limits.connect_timeout, source_default::CONNECT_TIMEOUT);
    let SourceKind::Registry(r) = &loaded.config.discovery[1].kind else {
        panic!("registry")
    };
    let walk = r.endpoint.limits.walk_limits();
    assert_eq!(walk.listing_timeout, Duration::from_secs(60));
    assert_eq!(walk.page_timeout, Duration::from_secs(2));
    assert_eq!(walk.max_pages, 7);
    assert_err(
        "  - name: a\n    module: internal\n    http_sd:\n      http: {url: \"https://inv.invalid/\"}\n      limits: {max_pages: 5}\n",
        6,
        16,
        "`limits.max_pages` does not apply to `http_sd` (its limits are timeout, connect_timeout, max_response_bytes)",
    );
    assert_err(
        "  - name: a\n    module: internal\n    registry:\n      http: {url: \"https://r.invalid\"}\n      limits: {max_items: 5}\n",
        6,
        16,
        "`limits.max_items` does not apply to `registry`",
    );
    assert_err(
        "  - name: a\n    module: internal\n    registry:\n      http: {url: \"https://r.invalid\"}\n      limits: {page_timout: 5s}\n",
        6,
        16,
        "unknown field `page_timout` (did you mean `page_timeout`?)",
    );
    assert_err(
        "  - name: a\n    module: internal\n    http_sd:\n      http: {url: \"https://inv.invalid/\", transport: sse}\n",
        5,
        43,
        "`transport` applies to MCP servers, not to a discovery source",
    );
    assert_err(
        "  - name: a\n    module: internal\n    http_sd:\n      http: {url: \"https://inv.invalid/\", max_redirects: 1}\n",
        5,
        43,
        "a discovery source follows no redirects",
    );
    assert_err(
        "  - name: a\n    module: internal\n    http_sd:\n      http: {bearer_token_env: T}\n",
        5,
        13,
        "`http` needs `url`",
    );
}

#[test]
fn flat_keys_of_an_older_file_say_where_they_moved() {
    let text = format!(
        "{MODULES}discovery:\n  - name: a\n    module: internal\n    http_sd: {{url: \"https://inv.invalid/\", timeout: 5s}}\n"
    );
    let shown = load_str(&text, "t.yaml").unwrap_err().to_string();
    let lines: Vec<&str> = shown.lines().collect();
    assert!(
        lines[0].starts_with("t.yaml:8:15: ")
            && lines[0].contains("unknown field `url` (it moved under `http:`"),
        "{shown}"
    );
    assert!(
        lines[1].starts_with("t.yaml:8:44: ")
            && lines[1].contains("unknown field `timeout` (it moved under `limits:`"),
        "{shown}"
    );
}
