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
        "  - name: fleet\n    module: internal\n    file_sd: {files: [\"targets/*.json\"]}\n  - name: platform\n    module: internal\n    http_sd: {url: \"https://inv.example.invalid/mcp\"}\n  - name: public\n    module: internal\n    registry: {url: \"https://registry.example.invalid\"}\n    schedule: {every: 10m}\n    labels: {team: platform}\n",
    );
    let c = &loaded.config;
    assert_eq!(c.defaults.baseline_retention, default::BASELINE_RETENTION);
    let [fleet, platform, public] = &c.discovery[..] else {
        panic!("three sources: {:?}", c.discovery)
    };
    assert_eq!(fleet.refresh_interval, source_default::FILE_SD_REFRESH);
    assert_eq!(fleet.max_targets, source_default::MAX_TARGETS);
    assert_eq!(fleet.schedule, c.defaults.schedule);
    assert!(
        matches!(&fleet.kind, SourceKind::FileSd { files, .. } if files[0].ends_with("targets/*.json"))
    );
    assert_eq!(platform.refresh_interval, source_default::HTTP_SD_REFRESH);
    let SourceKind::HttpSd(endpoint) = &platform.kind else {
        panic!("http_sd")
    };
    assert!(endpoint.bearer_token.is_none() && endpoint.headers.is_empty());
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
    assert_eq!(r.max_pages, source_default::REGISTRY_MAX_PAGES);
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
        "  - name: a\n    module: internal\n    file_sd: {files: [\"a.json\"]}\n    registry: {url: \"https://r.invalid\"}\n",
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
        "  - name: a\n    module: internal\n    http_sd: {url: \"https://u:p@inv.invalid/\"}\n",
        4,
        20,
        "credentials in the `url` are not allowed",
    );
    assert_err(
        "  - name: a\n    module: internal\n    http_sd: {url: \"ftp://inv.invalid/\"}\n",
        4,
        20,
        "must be http:// or https://",
    );
    assert_err(
        "  - name: a\n    module: internal\n    registry: {url: \"https://r.invalid\", limit: 500}\n",
        4,
        49,
        "`limit` must be between 1 and 100",
    );
    assert_err(
        "  - name: a\n    module: internal\n    registry: {url: \"https://r.invalid\", refresh_interval: 0s}\n",
        4,
        60,
        "`refresh_interval` must be at least 1s",
    );
    assert_err(
        "  - name: a\n    module: internal\n    http_sd: {url: \"https://inv.invalid/\", bearer_token: x}\n",
        4,
        44,
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
        "  - name: a\n    module: internal\n    http_sd: {url: \"https://inv.invalid/\", limit: 5}\n",
        4,
        44,
        "`limit` is a key of `registry`, not of `http_sd`",
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
        "  - name: a\n    module: internal\n    http_sd: {url: \"https://inv.example.invalid/\", headers: {X-Key: {env: MCP_EXPORTER_TEST_SD_TOKEN}}}\n",
    );
    let scrubbed = loaded
        .config
        .known_secrets
        .scrub("token sd-secret-value-1234 here");
    assert!(!scrubbed.contains("sd-secret-value-1234"), "{scrubbed}");
    assert_eq!(loaded.config.discovery[0].expect.get(&Kind::Tools), None);
}
