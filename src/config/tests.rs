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
        "targets:\n  - name: a\n    url: https://a.invalid/mcp\n",
        "t.yaml",
    )
    .unwrap();
    let c = &loaded.config;
    assert_eq!(c.defaults.timeout, default::TIMEOUT);
    assert_eq!(c.defaults.kinds, Kind::ALL.to_vec());
    let t = &c.targets[0];
    assert_eq!(t.limits, c.defaults.limits());
    assert_eq!(t.schedule, Schedule::Every(default::EVERY));
    assert!(!t.is_stdio());
    assert_eq!(c.web.history, 20);
    assert!(loaded.warnings.is_empty(), "{:?}", loaded.warnings);
    let w = t.walk_limits(true);
    assert!(w.modern);
    assert_eq!(w.max_pages, default::MAX_PAGES);
    assert_eq!(w.listing_timeout, default::TIMEOUT);
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
        "targets:\n  - name: a\n    url: https://a.invalid/\n    tiemout: 5s\n",
        4,
        5,
        "unknown field `tiemout`",
    );
    assert_err_at(
        "global:\n  timeout: 5s\n  colour: red\n",
        3,
        3,
        "unknown field `colour`",
    );
    assert_err_at("webb: {}\n", 1, 1, "unknown field `webb`");
}

#[test]
fn bad_duration_points_at_the_value() {
    assert_err_at("global:\n  timeout: 5 parsecs\n", 2, 12, "invalid duration");
    assert_err_at("global:\n  page_timeout: 30\n", 2, 17, "needs a unit");
    assert_err_at(
        "targets:\n  - name: a\n    url: https://a.invalid/\n    schedule: {every: 0s}\n",
        4,
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
        "targets:\n  - name: a\n    url: https://a.invalid/\n  - name: a\n    command: srv\n";
    assert_err_at(
        text,
        4,
        11,
        "duplicate target name `a` (first defined on line 2)",
    );
}

#[test]
fn bad_target_names() {
    assert_err_at(
        "targets:\n  - name: 9lives\n    url: https://a.invalid/\n",
        2,
        11,
        "must match [a-zA-Z_][a-zA-Z0-9_.:-]*",
    );
    assert_err_at(
        "targets:\n  - name: \"has space\"\n    url: https://a.invalid/\n",
        2,
        11,
        "not allowed",
    );
    let long = "x".repeat(129);
    assert_err_at(
        &format!("targets:\n  - name: {long}\n    url: https://a.invalid/\n"),
        2,
        11,
        "at most 128",
    );
    let ok = "x".repeat(128);
    load_str(
        &format!("targets:\n  - name: {ok}\n    url: https://a.invalid/\n"),
        "t",
    )
    .unwrap();
    load_str(
        "targets:\n  - name: _a.b:c-d9\n    url: https://a.invalid/\n",
        "t",
    )
    .unwrap();
}

#[test]
fn url_and_command_both_or_neither() {
    assert_err_at(
        "targets:\n  - name: a\n    url: https://a.invalid/\n    command: srv\n",
        4,
        5,
        "both `url` and `command`",
    );
    assert_err_at(
        "targets:\n  - name: a\n    kinds: [tools]\n",
        2,
        5,
        "needs `url`",
    );
    assert_err_at(
        "targets:\n  - name: a\n    command: srv\n    headers: {X-A: b}\n",
        4,
        5,
        "`headers` applies to HTTP targets",
    );
    assert_err_at(
        "targets:\n  - name: a\n    url: https://a.invalid/\n    args: [x]\n",
        4,
        5,
        "`args` applies to stdio targets",
    );
}

#[test]
fn references_must_name_another_known_target() {
    let base = "targets:\n  - name: origin\n    url: https://o.invalid/\n  - name: gw\n    url: https://g.invalid/\n    reference:\n";
    assert_err_at(
        &format!("{base}      - target: nobody\n"),
        7,
        17,
        "unknown target `nobody`",
    );
    assert_err_at(
        &format!("{base}      - {{target: gw}}\n"),
        7,
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
    let text = "targets:\n  - name: gw\n    url: https://g.invalid/\n    kinds: [tools, prompts]\n    reference: [{target: origin}]\n  - name: origin\n    command: srv\n    kinds: [tools]\n";
    let loaded = load_str(text, "t").unwrap();
    assert_eq!(
        loaded.config.targets[0].reference[0].kinds,
        vec![Kind::Tools]
    );
}

#[test]
fn kinds_rules() {
    assert_err_at(
        "targets:\n  - name: a\n    url: https://a.invalid/\n    kinds: []\n",
        4,
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
        "targets:\n  - name: a\n    url: https://a.invalid/\n    kinds: [tools]\n    expect: {prompts: 3}\n",
        5,
        14,
        "not in this target's `kinds`",
    );
    assert_err_at(
        "targets:\n  - name: a\n    url: https://a.invalid/\n    kinds: [tools]\n    forced_kinds: [tools, resources]\n",
        5,
        27,
        "forced kind `resources`",
    );
}

#[test]
fn literal_bearer_token_is_rejected_without_echoing_it() {
    let text = "targets:\n  - name: a\n    url: https://a.invalid/\n    bearer_token: sekrit-123\n";
    assert_err_at(text, 4, 5, "bearer_token_env");
    assert!(!err(text).to_string().contains("sekrit-123"));
    assert_err_at(
        "modules:\n  m:\n    allow: [\"https://x.invalid/\"]\n    bearer_token: sekrit\n",
        4,
        5,
        "bearer_token_file",
    );
}

#[test]
fn insecure_skip_verify_warns_loudly_with_position() {
    let text = "targets:\n  - name: a\n    url: https://a.invalid/\n    tls:\n      insecure_skip_verify: true\n";
    let loaded = load_str(text, "t.yaml").unwrap();
    assert_eq!(loaded.warnings.len(), 1, "{:?}", loaded.warnings);
    assert!(
        loaded.warnings[0]
            .starts_with("t.yaml:5:7: warning: target `a`: TLS CERTIFICATE VERIFICATION IS OFF"),
        "{}",
        loaded.warnings[0]
    );
}

#[test]
fn secrets_resolve_and_stay_redacted() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("key"), "file-secret-value\n").unwrap();
    let path = dir.path().join("c.yaml");
    std::fs::write(
        &path,
        "targets:\n  - name: a\n    url: https://a.invalid/\n    bearer_token_file: tok\n    headers:\n      X-Key: {file: key}\n      X-Team: search\n",
    )
    .unwrap();
    let loaded = load_file(&path).unwrap();
    let t = &loaded.config.targets[0];
    let EndpointConfig::Http {
        headers,
        bearer_token,
        ..
    } = &t.endpoint
    else {
        panic!("http expected")
    };
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
        "targets:\n  - name: a\n    url: https://a.invalid/\n    headers:\n      X-Key: {env: MCP_EXPORTER_SURELY_UNSET}\n",
        5,
        14,
        "MCP_EXPORTER_SURELY_UNSET` is not set",
    );
}

#[test]
fn url_rules() {
    assert_err_at(
        "targets:\n  - name: a\n    url: ftp://a.invalid/\n",
        3,
        10,
        "must be http:// or https://",
    );
    let text = "targets:\n  - name: a\n    url: https://me:pw-123@a.invalid/\n";
    assert_err_at(text, 3, 10, "credentials in the `url`");
    assert!(!err(text).to_string().contains("pw-123"));
}

#[test]
fn protocol_version_must_be_known() {
    assert_err_at(
        "targets:\n  - name: a\n    url: https://a.invalid/\n    protocol_version: \"2025-01-01\"\n",
        4,
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
    let text = "global:\n  max_pages: 50\nmodules:\n  gateways:\n    allow: [\"https://gw.example.invalid/\", \"https://*.mcp.example.invalid/\"]\n    kinds: [tools]\n    timeout: 20s\n";
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
    assert_eq!(t.kinds, vec![Kind::Tools]);
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
        "global:\n  max_pages: 0\n",
        2,
        14,
        "`max_pages` must be greater than zero",
    );
    assert_err_at(
        "targets:\n  - name: a\n    command: srv\n    timeout: 0s\n",
        4,
        14,
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
        "targets:\n  - name: a\n    command: s\n    timeout: 5s\n    timeout: 6s\n",
        5,
        5,
        "duplicate",
    );
    assert_err_at(
        "modules:\n  m:\n    allow: [\"https://a.invalid/\"]\n  m:\n    allow: [\"https://b.invalid/\"]\n",
        4,
        3,
        "duplicate",
    );
    assert_err_at(
        "targets:\n  - name: a\n    url: https://a.invalid/\n    headers:\n      X-A: b\n      x-a: c\n",
        6,
        7,
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
        "targets:\n  - name: a\n    url: https://a.invalid/\n    headers:\n      X-A: b\n      X-A: c\n",
        6,
        7,
        "given twice",
    );
    assert_err_at(
        "targets:\n  - name: a\n    command: s\n    env: {A: \"1\", B: \"2\", A: \"3\"}\n",
        4,
        27,
        "`A` is given twice",
    );
}

#[test]
fn unquoted_protocol_version_is_a_string() {
    let text =
        "targets:\n  - name: a\n    url: https://a.invalid/\n    protocol_version: 2025-06-18\n";
    let loaded = load_str(text, "t").unwrap();
    assert_eq!(
        loaded.config.targets[0].protocol_version,
        Some(ProtocolVersion::V2025_06_18)
    );
}

#[test]
fn protocols_are_checked_and_ordered_newest_first() {
    let t = |protocols: &str| {
        format!("targets:\n  - name: gw\n    url: https://g.invalid/\n    protocols: {protocols}\n")
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
    assert_err_at(&t("[\"2025-11-25\"]"), 4, 16, "at least two versions");
    assert_err_at(
        &t("[\"2025-11-25\", \"2025-11-25\"]"),
        4,
        31,
        "listed twice",
    );
    assert_err_at(
        &t("[\"2025-11-25\", \"1999-01-01\"]"),
        4,
        31,
        "unknown protocol_version",
    );
    assert_err_at(&t("everything"), 4, 16, "`all_supported`");
    assert_err_at(
        "targets:\n  - name: gw\n    url: https://g.invalid/\n    protocol_version: \"2025-11-25\"\n    protocols: all_supported\n",
        5,
        5,
        "not both",
    );
}

#[test]
fn reference_maps_compile_and_name_keys_not_values() {
    let base = "targets:\n  - name: origin\n    command: srv\n  - name: gw\n    url: https://g.invalid/\n    reference:\n      - target: origin\n        map:\n";
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
    assert_err_at(&bad, 9, 26, "`regex` is not a valid regular expression");
    assert!(!err(&bad).to_string().contains("secret-ish"));
    assert_err_at(
        &format!("{base}          tools: {{regex: a}}\n"),
        9,
        19,
        "`regex` needs `replace`",
    );
    assert_err_at(
        &format!("{base}          tools: {{separator: _}}\n"),
        9,
        19,
        "give `prefix` too",
    );
    assert_err_at(
        &format!("{base}          tools: {{colour: red}}\n"),
        9,
        19,
        "unknown field `colour`",
    );
    assert_err_at(
        "targets:\n  - name: origin\n    command: srv\n    kinds: [tools]\n  - name: gw\n    url: https://g.invalid/\n    reference:\n      - target: origin\n        map: {prompts: {prefix: p_}}\n",
        9,
        15,
        "does not compare",
    );
    assert_err_at(
        &format!("{base}          tools: {{prefix: b_}}\n").replace(
            "      - target: origin\n        map:",
            "      - target: origin\n        prefix: a_\n        map:",
        ),
        9,
        9,
        "not both",
    );
}

#[test]
fn every_parse_error_of_the_file_in_one_run() {
    let text = "global:\n  timout: 5s\n  page_timeout: 5 parsecs\ntargets:\n  - name: a\n    url: https://a.invalid/\n    transport: stremable-http\n    colour: red\n";
    let shown = err(text).to_string();
    let lines: Vec<&str> = shown.lines().collect();
    assert_eq!(lines.len(), 4, "{shown}");
    assert!(
        lines[0].starts_with("t.yaml:2:3: ") && lines[0].contains("did you mean `timeout`?"),
        "{shown}"
    );
    assert!(
        lines[1].starts_with("t.yaml:3:17: ") && lines[1].contains("invalid duration"),
        "{shown}"
    );
    assert!(
        lines[2].starts_with("t.yaml:7:16: ")
            && lines[2].contains("did you mean `streamable-http`?")
            && !lines[2].contains("stremable"),
        "{shown}"
    );
    assert!(
        lines[3].starts_with("t.yaml:8:5: ") && lines[3].contains("unknown field `colour`"),
        "{shown}"
    );
}

#[test]
fn every_parse_error_of_a_file_with_aliases_without_expanding_it() {
    let text = "targets:\n  - name: a\n    url: https://a.invalid/\n    headers: &h {X-Key: v}\n    colour: red\n  - {name: b, url: \"https://b.invalid/\", headers: *h, transport: stremable-http}\n";
    let shown = err(text).to_string();
    let lines: Vec<&str> = shown.lines().collect();
    assert_eq!(lines.len(), 2, "{shown}");
    assert!(
        lines[0].starts_with("t.yaml:5:5: ") && lines[0].contains("`colour`"),
        "{shown}"
    );
    assert!(
        lines[1].starts_with("t.yaml:6:") && lines[1].contains("streamable-http"),
        "{shown}"
    );
    // The anchor in a dropped key: its aliases are no second problem.
    let text = "x-headers: &h {X-Key: v}\ntargets:\n  - {name: a, url: \"https://a.invalid/\", headers: *h}\n";
    let shown = err(text).to_string();
    assert_eq!(shown.lines().count(), 1, "{shown}");
    assert!(!shown.contains("anchor"), "{shown}");
}

#[test]
fn a_dropped_required_key_is_not_reported_missing() {
    // `name` has the wrong type; its absence afterwards is no second problem.
    let shown = err("targets:\n  - name: [a]\n    url: https://a.invalid/\n").to_string();
    assert_eq!(shown.lines().count(), 1, "{shown}");
    assert!(shown.starts_with("t.yaml:2:11: "), "{shown}");
}
