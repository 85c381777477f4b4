//! Unit tests of loading: every rule, with its exact position.

use super::*;
use mcp_listing::{Kind, ProtocolVersion};
use std::time::Duration;

fn err(text: &str) -> ConfigError {
    match load_str(text, "t.yaml") {
        Ok(_) => panic!("expected an error for:\n{text}"),
        Err(e) => e,
    }
}

/// `shown` (an error or the warnings, one line a problem) is `want`'s
/// lines: each starting `FILE:LINE:COL: ` as given and holding its fragment
/// of the message.
fn assert_lines(shown: &str, want: &[(&str, &str)]) {
    let lines: Vec<&str> = shown.lines().collect();
    assert_eq!(lines.len(), want.len(), "{shown}");
    for (line, (start, part)) in lines.iter().zip(want) {
        assert!(line.starts_with(start) && line.contains(part), "{shown}");
    }
}

/// `text`'s error, checked with [`assert_lines`].
fn assert_error_lines(text: &str, want: &[(&str, &str)]) -> String {
    let shown = err(text).to_string();
    assert_lines(&shown, want);
    shown
}

/// Assert the error is at `line:col` and mentions `needle`.
fn assert_err_at(text: &str, line: usize, col: usize, needle: &str) {
    let e = err(text);
    let shown = e.to_string();
    assert!(
        shown.starts_with(&format!("t.yaml:{line}:{col}: ")),
        "wrong position: {shown}"
    );
    assert!(shown.contains(needle), "{shown:?} lacks {needle:?}");
    assert!(!shown.contains('\n'), "not one line: {shown:?}");
}

#[test]
fn minimal_target_gets_defaults() {
    let loaded = load_str(
        "targets:\n  - name: a\n    http:\n      url: https://a.invalid/mcp\n",
        "t.yaml",
    )
    .unwrap();
    let c = &loaded.config;
    assert_eq!(c.defaults.settings.limits, Limits::DEFAULT);
    assert_eq!(c.defaults.settings.limits.timeout, Duration::from_secs(60));
    assert_eq!(c.defaults.settings.kinds, Kind::ALL.to_vec());
    let t = &c.targets[0];
    assert_eq!(t.settings.limits, c.defaults.settings.limits);
    assert_eq!(t.settings.schedule, Schedule::Every(default::EVERY));
    assert!(!t.is_stdio());
    assert_eq!(c.web.history, 20);
    assert!(loaded.warnings.is_empty(), "{:?}", loaded.warnings);
    let w = t.settings.limits.walk_limits();
    assert_eq!(w.max_pages, 1000);
    assert_eq!(w.listing_timeout, Duration::from_secs(60));
    assert_eq!(w.session_restarts, 1);
}

#[test]
fn empty_file_is_an_empty_config_with_a_warning() {
    let loaded = load_str("# nothing yet\n", "t.yaml").unwrap();
    assert!(loaded.config.targets.is_empty());
    assert_eq!(loaded.warnings.len(), 1);
}

#[test]
fn unknown_key_points_at_the_key() {
    assert_err_at(
        "targets:\n  - name: a\n    http:\n      url: https://a.invalid/\n    tiemout: 5s\n",
        5,
        5,
        "unknown field `tiemout`",
    );
    assert_err_at(
        "global:\n  limits:\n    timeout: 5s\n  colour: red\n",
        4,
        3,
        "unknown field `colour`",
    );
    assert_err_at("webb: {}\n", 1, 1, "unknown field `webb`");
}

#[test]
fn bad_duration_points_at_the_value() {
    assert_err_at(
        "global:\n  limits:\n    timeout: 5 parsecs\n",
        3,
        14,
        "invalid duration",
    );
    assert_err_at(
        "global:\n  limits:\n    page_timeout: 30\n",
        3,
        19,
        "needs a unit",
    );
    assert_err_at(
        "targets:\n  - name: a\n    http:\n      url: https://a.invalid/\n    schedule: {every: 0s}\n",
        5,
        23,
        "too short",
    );
}

#[test]
fn bad_cron_points_at_the_value() {
    assert_err_at(
        "global:\n  schedule: \"61 * * * *\"\n",
        2,
        13,
        "invalid cron",
    );
    assert_err_at("global:\n  schedule: \"* * *\"\n", 2, 13, "3 fields");
}

#[test]
fn duplicate_target_name() {
    let text =
        "targets:\n  - name: a\n    http:\n      url: https://a.invalid/\n  - name: a\n    stdio:\n      command: srv\n";
    assert_err_at(
        text,
        5,
        11,
        "duplicate target name `a` (first defined on line 2)",
    );
}

#[test]
fn bad_target_names() {
    assert_err_at(
        "targets:\n  - name: 9lives\n    http:\n      url: https://a.invalid/\n",
        2,
        11,
        "must match [a-zA-Z_][a-zA-Z0-9_.:-]*",
    );
    assert_err_at(
        "targets:\n  - name: \"has space\"\n    http:\n      url: https://a.invalid/\n",
        2,
        11,
        "not allowed",
    );
    let long = "x".repeat(129);
    assert_err_at(
        &format!("targets:\n  - name: {long}\n    http:\n      url: https://a.invalid/\n"),
        2,
        11,
        "at most 128",
    );
    let ok = "x".repeat(128);
    load_str(
        &format!("targets:\n  - name: {ok}\n    http:\n      url: https://a.invalid/\n"),
        "t",
    )
    .unwrap();
    load_str(
        "targets:\n  - name: _a.b:c-d9\n    http:\n      url: https://a.invalid/\n",
        "t",
    )
    .unwrap();
}

#[test]
fn http_and_stdio_both_or_neither() {
    assert_err_at(
        "targets:\n  - name: a\n    http: {url: https://a.invalid/}\n    stdio: {command: srv}\n",
        4,
        5,
        "both `http` and `stdio`",
    );
    assert_err_at(
        "targets:\n  - name: a\n    kinds: [tools]\n",
        2,
        5,
        "needs `http: {url: ...}` (an HTTP server) or `stdio: {command: ...}`",
    );
    assert_err_at(
        "targets:\n  - name: a\n    http: {headers: {X-A: b}}\n",
        3,
        11,
        "`http` needs `url`",
    );
    assert_err_at(
        "targets:\n  - name: a\n    stdio: {command: srv, headers: {X-A: b}}\n",
        3,
        27,
        "unknown field `headers`",
    );
    assert_err_at(
        "targets:\n  - name: a\n    stdio: {command: \" \"}\n",
        3,
        22,
        "`command` is empty",
    );
}

#[test]
fn misspelt_nested_keys_are_named_with_the_key_meant() {
    assert_err_at(
        "targets:\n  - name: a\n    http:\n      url: https://a.invalid/\n      bearer_tokn_env: T\n",
        5,
        7,
        "unknown field `bearer_tokn_env` (did you mean `bearer_token_env`?)",
    );
    assert_err_at(
        "targets:\n  - name: a\n    stdio: {command: srv}\n    limits:\n      max_page: 3\n",
        5,
        7,
        "unknown field `max_page` (did you mean `max_pages`?)",
    );
    assert_err_at(
        "global:\n  limits: {timout: 5s}\n",
        2,
        12,
        "unknown field `timout` (did you mean `timeout`?)",
    );
    assert_err_at(
        "modules:\n  m:\n    allow: [\"https://x.invalid/\"]\n    htp: {transport: sse}\n",
        4,
        5,
        "unknown field `htp` (did you mean `http`?)",
    );
}

#[test]
fn flat_keys_of_an_older_file_say_where_they_moved() {
    assert_err_at(
        "targets:\n  - name: a\n    url: https://a.invalid/\n",
        3,
        5,
        "unknown field `url` (it moved under `http:`; see docs/configuration.md, \"Changelog\")",
    );
    assert_err_at(
        "targets:\n  - name: a\n    command: srv\n",
        3,
        5,
        "unknown field `command` (it moved under `stdio:`",
    );
    assert_err_at(
        "global:\n  page_timeout: 5s\n",
        2,
        3,
        "unknown field `page_timeout` (it moved under `limits:`",
    );
    assert_err_at(
        "modules:\n  m:\n    allow: [\"https://x.invalid/\"]\n    bearer_token_file: t\n",
        4,
        5,
        "unknown field `bearer_token_file` (it moved under `http:`",
    );
}

#[test]
fn module_http_has_no_url_and_follows_no_redirects() {
    assert_err_at(
        "modules:\n  m:\n    allow: [\"https://x.invalid/\"]\n    http: {url: https://x.invalid/a}\n",
        4,
        12,
        "a module has no `url`",
    );
    let loaded = load_str(
        "modules:\n  m:\n    allow: [\"https://x.invalid/\"]\n    http: {transport: sse, max_redirects: 3}\n",
        "t.yaml",
    )
    .unwrap();
    let m = &loaded.config.modules["m"];
    assert_eq!(m.http.max_redirects, 0);
    assert_eq!(m.http.transport, mcp_listing::HttpMode::Sse);
    assert_lines(
        &loaded.warnings.join("\n"),
        &[(
            "t.yaml:4:43: warning: module `m`: `max_redirects` is ignored",
            "",
        )],
    );
}

#[test]
fn limits_warn_where_a_page_outlasts_its_listing() {
    let loaded = load_str(
        "global:\n  limits: {timeout: 5s, page_timeout: 10s}\ntargets:\n  - name: a\n    stdio: {command: srv}\n  - name: b\n    stdio: {command: srv}\n    limits: {timeout: 2s}\n",
        "t.yaml",
    )
    .unwrap();
    assert_lines(
        &loaded.warnings.join("\n"),
        &[
            ("t.yaml:2:25: warning: `global`: page_timeout (10s)", ""),
            ("t.yaml:8:14: warning: target `b`: page_timeout (10s)", ""),
        ],
    );
}

#[test]
fn references_must_name_another_known_target() {
    let base = "targets:\n  - name: origin\n    http:\n      url: https://o.invalid/\n  - name: gw\n    http:\n      url: https://g.invalid/\n    reference:\n";
    assert_err_at(
        &format!("{base}      - target: nobody\n"),
        9,
        17,
        "unknown target `nobody`",
    );
    assert_err_at(
        &format!("{base}      - {{target: gw}}\n"),
        9,
        18,
        "references itself",
    );
    let ok = load_str(
        &format!("{base}      - {{target: origin, prefix: o_}}\n"),
        "t",
    )
    .unwrap();
    let r = &ok.config.targets[1].reference[0];
    assert_eq!(r.target, "origin");
    assert_eq!(r.prefix.as_deref(), Some("o_"));
    assert_eq!(r.kinds, Kind::ALL.to_vec());
}

#[test]
fn forward_references_are_fine() {
    let text = "targets:\n  - name: gw\n    http:\n      url: https://g.invalid/\n    kinds: [tools, prompts]\n    reference: [{target: origin}]\n  - name: origin\n    stdio:\n      command: srv\n    kinds: [tools]\n";
    let loaded = load_str(text, "t").unwrap();
    assert_eq!(
        loaded.config.targets[0].reference[0].kinds,
        vec![Kind::Tools]
    );
}

#[test]
fn kinds_rules() {
    assert_err_at(
        "targets:\n  - name: a\n    http:\n      url: https://a.invalid/\n    kinds: []\n",
        5,
        12,
        "`kinds` is empty",
    );
    assert_err_at("global:\n  kinds: [tools, tools]\n", 2, 18, "listed twice");
    assert_err_at(
        "global:\n  kinds: [tool]\n",
        2,
        11,
        "unknown value (did you mean `tools`?), expected one of `tools`",
    );
    assert_err_at(
        "targets:\n  - name: a\n    http:\n      url: https://a.invalid/\n    kinds: [tools]\n    expect: {prompts: 3}\n",
        6,
        14,
        "not in this target's `kinds`",
    );
    assert_err_at(
        "targets:\n  - name: a\n    http:\n      url: https://a.invalid/\n    kinds: [tools]\n    forced_kinds: [tools, resources]\n",
        6,
        27,
        "forced kind `resources`",
    );
}

#[test]
fn literal_bearer_token_is_rejected_without_echoing_it() {
    let text = "targets:\n  - name: a\n    http:\n      url: https://a.invalid/\n      bearer_token: sekrit-123\n";
    assert_err_at(text, 5, 7, "bearer_token_env");
    assert!(!err(text).to_string().contains("sekrit-123"));
    assert_err_at(
        "modules:\n  m:\n    allow: [\"https://x.invalid/\"]\n    http:\n      bearer_token: sekrit\n",
        5,
        7,
        "bearer_token_file",
    );
}

#[test]
fn insecure_skip_verify_warns_loudly_with_position() {
    let text = "targets:\n  - name: a\n    http:\n      url: https://a.invalid/\n      tls:\n        insecure_skip_verify: true\n";
    let loaded = load_str(text, "t.yaml").unwrap();
    assert_lines(
        &loaded.warnings.join("\n"),
        &[(
            "t.yaml:6:9: warning: target `a`: TLS CERTIFICATE VERIFICATION IS OFF",
            "",
        )],
    );
}

#[test]
fn secrets_resolve_and_stay_redacted() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("key"), "file-secret-value\n").unwrap();
    let path = dir.path().join("c.yaml");
    std::fs::write(
        &path,
        "targets:\n  - name: a\n    http:\n      url: https://a.invalid/\n      bearer_token_file: tok\n      headers:\n        X-Key: {file: key}\n        X-Team: search\n",
    )
    .unwrap();
    let loaded = load_file(&path).unwrap();
    let t = &loaded.config.targets[0];
    let EndpointConfig::Http(http) = &t.endpoint else {
        panic!("http expected")
    };
    let HttpSettings {
        headers,
        bearer_token,
        ..
    } = &http.settings;
    assert_eq!(headers[0].0, "X-Key");
    assert_eq!(headers[0].1.expose(), "file-secret-value");
    assert_eq!(headers[1].1.expose(), "search");
    // Relative to the config file's folder.
    assert_eq!(
        bearer_token,
        &Some(SecretSource::File(dir.path().join("tok")))
    );
    let shown = format!("{loaded:?}");
    assert!(!shown.contains("file-secret-value"), "{shown}");
}

#[test]
fn missing_header_env_points_at_the_value() {
    assert_err_at(
        "targets:\n  - name: a\n    http:\n      url: https://a.invalid/\n      headers:\n        X-Key: {env: MCP_EXPORTER_SURELY_UNSET}\n",
        6,
        16,
        "MCP_EXPORTER_SURELY_UNSET` is not set",
    );
}

#[test]
fn url_rules() {
    assert_err_at(
        "targets:\n  - name: a\n    http:\n      url: ftp://a.invalid/\n",
        4,
        12,
        "must be http:// or https://",
    );
    let text = "targets:\n  - name: a\n    http:\n      url: https://me:pw-123@a.invalid/\n";
    assert_err_at(text, 4, 12, "credentials in the `url`");
    assert!(!err(text).to_string().contains("pw-123"));
}

#[test]
fn protocol_version_must_be_known() {
    assert_err_at(
        "targets:\n  - name: a\n    http:\n      url: https://a.invalid/\n    protocol_version: \"2025-01-01\"\n",
        5,
        23,
        "unknown protocol_version",
    );
}

#[test]
fn syntax_errors_carry_position() {
    let e = err("targets:\n  - name: a\n   url: [\n");
    assert!(e.position().is_some(), "{e}");
    assert!(e.to_string().starts_with("t.yaml:"), "{e}");
}

#[test]
fn modules_resolve_and_allow() {
    let text = "global:\n  limits:\n    max_pages: 50\nmodules:\n  gateways:\n    allow: [\"https://gw.example.invalid/\", \"https://*.mcp.example.invalid/\"]\n    kinds: [tools]\n    limits:\n      timeout: 20s\n";
    let loaded = load_str(text, "t").unwrap();
    let m = &loaded.config.modules["gateways"];
    assert_eq!(m.limits.max_pages, 50);
    assert_eq!(m.limits.timeout, Duration::from_secs(20));
    let ok = url::Url::parse("https://gw.example.invalid/mcp").unwrap();
    assert!(m.allows(&ok));
    assert!(m.allows(&url::Url::parse("https://a.mcp.example.invalid/x").unwrap()));
    assert!(!m.allows(&url::Url::parse("https://gw.example.invalid.evil.test/").unwrap()));
    assert!(!m.allows(&url::Url::parse("https://u@gw.example.invalid/").unwrap()));
    let t = m.target_for("probe".into(), ok, &loaded.config.defaults);
    assert_eq!(t.settings.kinds, vec![Kind::Tools]);
    assert!(!t.is_stdio());
    assert_err_at(
        "modules:\n  m:\n    allow: [\"https://gw.example.invalid\"]\n",
        3,
        13,
        "include a path",
    );
    assert_err_at("modules:\n  m:\n    allow: []\n", 3, 12, "`allow` is empty");
}

#[test]
fn zero_limits_are_rejected() {
    assert_err_at(
        "global:\n  limits:\n    max_pages: 0\n",
        3,
        16,
        "`max_pages` must be greater than zero",
    );
    assert_err_at(
        "targets:\n  - name: a\n    stdio:\n      command: srv\n    limits:\n      timeout: 0s\n",
        6,
        16,
        "`timeout` must be greater than zero",
    );
    assert_err_at("web:\n  history: 0\n", 2, 12, "history");
}

#[test]
fn checksum_changes_with_content() {
    let a = load_str("web: {history: 5}\n", "t").unwrap();
    let b = load_str("web: {history: 6}\n", "t").unwrap();
    let a2 = load_str("web: {history: 5}\n", "t").unwrap();
    assert_ne!(a.checksum, b.checksum);
    assert_eq!(a.checksum, a2.checksum);
    assert_eq!(a.checksum.len(), 64);
}

#[test]
fn duplicate_keys_are_rejected() {
    assert_err_at(
        "targets:\n  - name: a\n    stdio:\n      command: s\n    limits:\n      timeout: 5s\n      timeout: 6s\n",
        7,
        7,
        "duplicate",
    );
    assert_err_at(
        "modules:\n  m:\n    allow: [\"https://a.invalid/\"]\n  m:\n    allow: [\"https://b.invalid/\"]\n",
        4,
        3,
        "duplicate",
    );
    assert_err_at(
        "targets:\n  - name: a\n    http:\n      url: https://a.invalid/\n      headers:\n        X-A: b\n        x-a: c\n",
        7,
        9,
        "given twice",
    );
}

#[test]
fn duplicate_keys_point_at_the_second() {
    assert_err_at(
        "web: {}\nglobal: {}\nweb: {}\n",
        3,
        1,
        "duplicate field `web`",
    );
    assert_err_at(
        "targets:\n  - name: a\n    http:\n      url: https://a.invalid/\n      headers:\n        X-A: b\n        X-A: c\n",
        7,
        9,
        "given twice",
    );
    assert_err_at(
        "targets:\n  - name: a\n    stdio:\n      command: s\n      env: {A: \"1\", B: \"2\", A: \"3\"}\n",
        5,
        29,
        "`A` is given twice",
    );
}

#[test]
fn unquoted_protocol_version_is_a_string() {
    let text =
        "targets:\n  - name: a\n    http:\n      url: https://a.invalid/\n    protocol_version: 2025-06-18\n";
    let loaded = load_str(text, "t").unwrap();
    assert_eq!(
        loaded.config.targets[0].protocol_version,
        Some(ProtocolVersion::V2025_06_18)
    );
}

#[test]
fn protocols_are_checked_and_ordered_newest_first() {
    let t = |protocols: &str| {
        format!("targets:\n  - name: gw\n    http:\n      url: https://g.invalid/\n    protocols: {protocols}\n")
    };
    let ok = load_str(&t("[\"2025-11-25\", \"2026-07-28\"]"), "t").unwrap();
    assert_eq!(
        ok.config.targets[0].protocols,
        vec![ProtocolVersion::V2026_07_28, ProtocolVersion::V2025_11_25]
    );
    let all = load_str(&t("all_supported"), "t").unwrap();
    assert_eq!(
        all.config.targets[0].protocols.len(),
        ProtocolVersion::ALL.len()
    );
    assert_eq!(
        all.config.targets[0].protocols[0],
        ProtocolVersion::V2026_07_28
    );
    assert_err_at(&t("[\"2025-11-25\"]"), 5, 16, "at least two versions");
    assert_err_at(
        &t("[\"2025-11-25\", \"2025-11-25\"]"),
        5,
        31,
        "listed twice",
    );
    assert_err_at(
        &t("[\"2025-11-25\", \"1999-01-01\"]"),
        5,
        31,
        "unknown protocol_version",
    );
    assert_err_at(&t("everything"), 5, 16, "`all_supported`");
    assert_err_at(
        "targets:\n  - name: gw\n    http:\n      url: https://g.invalid/\n    protocol_version: \"2025-11-25\"\n    protocols: all_supported\n",
        6,
        5,
        "not both",
    );
}

#[test]
fn reference_maps_compile_and_name_keys_not_values() {
    let base = "targets:\n  - name: origin\n    stdio:\n      command: srv\n  - name: gw\n    http:\n      url: https://g.invalid/\n    reference:\n      - target: origin\n        map:\n";
    let ok = load_str(
        &format!("{base}          tools: {{prefix: legacy, separator: _}}\n          resources: {{regex: '^sim://(.*)$', replace: 'sim://legacy/$1'}}\n"),
        "t",
    )
    .unwrap();
    let r = &ok.config.targets[1].reference[0];
    assert_eq!(r.name_map(Kind::Tools).apply("tool-001"), "legacy_tool-001");
    assert_eq!(
        r.name_map(Kind::Resources).apply("sim://resources/001"),
        "sim://legacy/resources/001"
    );
    // A kind without a map entry compares plain names.
    assert_eq!(r.name_map(Kind::Prompts).apply("p"), "p");

    let bad = format!("{base}          tools: {{regex: '(secret-ish', replace: x}}\n");
    assert_err_at(&bad, 11, 26, "`regex` is not a valid regular expression");
    assert!(!err(&bad).to_string().contains("secret-ish"));
    assert_err_at(
        &format!("{base}          tools: {{regex: a}}\n"),
        11,
        19,
        "`regex` needs `replace`",
    );
    assert_err_at(
        &format!("{base}          tools: {{separator: _}}\n"),
        11,
        19,
        "give `prefix` too",
    );
    assert_err_at(
        &format!("{base}          tools: {{colour: red}}\n"),
        11,
        19,
        "unknown field `colour`",
    );
    assert_err_at(
        "targets:\n  - name: origin\n    stdio:\n      command: srv\n    kinds: [tools]\n  - name: gw\n    http:\n      url: https://g.invalid/\n    reference:\n      - target: origin\n        map: {prompts: {prefix: p_}}\n",
        11,
        15,
        "does not compare",
    );
    assert_err_at(
        &format!("{base}          tools: {{prefix: b_}}\n").replace(
            "      - target: origin\n        map:",
            "      - target: origin\n        prefix: a_\n        map:",
        ),
        11,
        9,
        "not both",
    );
}

#[test]
fn every_parse_error_of_the_file_in_one_run() {
    let text = "global:\n  limits:\n    timout: 5s\n    page_timeout: 5 parsecs\ntargets:\n  - name: a\n    http:\n      url: https://a.invalid/\n      transport: stremable-http\n    colour: red\n";
    let shown = assert_error_lines(
        text,
        &[
            ("t.yaml:3:5: ", "did you mean `timeout`?"),
            ("t.yaml:4:19: ", "invalid duration"),
            ("t.yaml:9:18: ", "did you mean `streamable-http`?"),
            ("t.yaml:10:5: ", "unknown field `colour`"),
        ],
    );
    // The value written is never quoted back.
    assert!(!shown.contains("stremable"), "{shown}");
}

#[test]
fn every_parse_error_of_a_file_with_aliases_without_expanding_it() {
    let text = "targets:\n  - name: a\n    http:\n      url: https://a.invalid/\n      headers: &h {X-Key: v}\n    colour: red\n  - {name: b, http: {url: \"https://b.invalid/\", headers: *h, transport: stremable-http}}\n";
    assert_error_lines(
        text,
        &[
            ("t.yaml:6:5: ", "`colour`"),
            ("t.yaml:7:", "streamable-http"),
        ],
    );
    // The anchor in a dropped key: its aliases are no second problem.
    let text = "x-headers: &h {X-Key: v}\ntargets:\n  - {name: a, http: {url: \"https://a.invalid/\", headers: *h}}\n";
    let shown = err(text).to_string();
    assert_eq!(shown.lines().count(), 1, "{shown}");
    assert!(!shown.contains("anchor"), "{shown}");
}

#[test]
fn a_dropped_required_key_is_not_reported_missing() {
    // `name` has the wrong type; its absence afterwards is no second problem.
    assert_error_lines(
        "targets:\n  - name: [a]\n    http:\n      url: https://a.invalid/\n",
        &[("t.yaml:2:11: ", "")],
    );
}
