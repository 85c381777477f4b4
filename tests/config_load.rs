//! Loading real configuration files from disk: the shipped example, a file
//! using every key, and the rules' exact error positions.

use chrono::{TimeZone, Utc};
use mcp_exporter::config::{
    default, load_file, load_str, ConfigError, EndpointConfig, HttpEndpoint, HttpSettings,
    LoadedConfig, OtlpProtocol, Schedule, SecretSource, StdioCommand,
};
use mcp_listing::{HttpMode, Kind, ProtocolVersion};
use std::path::{Path, PathBuf};
use std::time::Duration;

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

fn load_err(dir: &Path, text: &str) -> (PathBuf, ConfigError) {
    let path = write(dir, "bad.yaml", text);
    match load_file(&path) {
        Ok(_) => panic!("expected an error for:\n{text}"),
        Err(e) => (path, e),
    }
}

/// The error reads `PATH:line:col: ...` and mentions `needle`.
fn assert_at(text: &str, line: usize, col: usize, needle: &str) {
    let dir = tempfile::tempdir().unwrap();
    let (path, e) = load_err(dir.path(), text);
    let shown = e.to_string();
    let prefix = format!("{}:{line}:{col}: ", path.display());
    assert!(shown.starts_with(&prefix), "expected {prefix:?}: {shown}");
    assert!(shown.contains(needle), "{shown:?} lacks {needle:?}");
    assert_eq!(e.position(), Some((line, col)));
}

#[test]
fn shipped_example_loads_without_warnings() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("config/example.yaml");
    let loaded = load_file(&path).unwrap();
    assert!(loaded.warnings.is_empty(), "{:?}", loaded.warnings);
    let c = &loaded.config;
    assert_eq!(c.targets.len(), 5);
    let github = c.target("github").unwrap();
    assert_eq!(
        github.settings.schedule,
        Schedule::Every(Duration::from_secs(30))
    );
    assert_eq!(github.expect.items.get(&Kind::Tools), Some(&40));
    let gateway = c.target("gateway").unwrap();
    assert_eq!(gateway.reference.len(), 2);
    assert_eq!(gateway.reference[0].prefix.as_deref(), Some("github_"));
    // Defaults to the kinds both sides list.
    assert_eq!(gateway.reference[0].kinds, vec![Kind::Tools, Kind::Prompts]);
    assert_eq!(gateway.settings.limits.max_pages, 200);
    assert_eq!(gateway.settings.limits.timeout, Duration::from_secs(60));
    assert!(c.target("filesystem").unwrap().is_stdio());
    assert!(c.modules.contains_key("gateways"));
    assert_eq!(c.tracing.protocol, Some(OtlpProtocol::Grpc));
}

const FULL: &str = r#"
global:
  schedule: "*/2 * * * *"
  limits:
    timeout: 45s
    page_timeout: 5s
    connect_timeout: 3s
    max_pages: 300
    max_items: 5000
    max_response_bytes: 1MiB
    invalid_cursor_restarts: 2
  jitter: 2s
  kinds: [tools, resources]
  state_dir: state
  concurrency: 3
  backoff_max: 10m
  invalid_cursor_probe: true
  watch_list_changed: false
  propagate_trace_context: false
  stderr_tail_bytes: 4096
targets:
  - name: inherits
    http:
      url: https://a.invalid/mcp
  - name: overrides
    http:
      url: https://127.0.0.1:9/mcp
      transport: sse
      headers:
        X-Team: search
        X-Api-Key: {file: api-key}
      bearer_token_env: OVERRIDES_TOKEN
      tls: {ca_file: ca.pem, insecure_skip_verify: false}
      max_redirects: 0
    protocol_version: "2026-07-28"
    schedule: "0 */10 * * * *"
    kinds: [tools, prompts]
    forced_kinds: [prompts]
    limits:
      timeout: 1m30s
      page_timeout: 500ms
      connect_timeout: 1s
      max_pages: 7
      max_items: 70
      max_response_bytes: 65536
      invalid_cursor_restarts: 0
    jitter: 0s
    invalid_cursor_probe: false
    watch_list_changed: true
    propagate_trace_context: true
    expect: {tools: 3, prompts: 1}
    reference:
      - {target: inherits, kinds: [tools], prefix: "a_"}
  - name: local
    stdio:
      command: ./server
      args: ["--stdio", "--verbose"]
      env:
        PLAIN: "1"
        FROM_FILE: {file: api-key}
      cwd: work
    schedule: {every: 15s}
modules:
  gw:
    allow: ["https://gw.invalid/"]
    http:
      transport: streamable-http
      headers: {X-Probe: "yes"}
      bearer_token_file: /run/secrets/gw
      tls: {ca_file: /etc/ca.pem}
      max_redirects: 0
    protocol_version: "2025-11-25"
    kinds: [tools]
    limits:
      timeout: 15s
      page_timeout: 2s
      connect_timeout: 2s
      max_pages: 10
      max_items: 100
      max_response_bytes: 2MB
      invalid_cursor_restarts: 3
tracing:
  endpoint: http://127.0.0.1:4318
  protocol: http/protobuf
  headers: {X-Tenant: {file: api-key}}
  service_name: mcp-exporter-test
  sample_ratio: 0.25
web:
  history: 50
"#;

fn load_full() -> (tempfile::TempDir, LoadedConfig) {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "api-key", "key-9f8e7d-secret\n");
    let path = write(dir.path(), "full.yaml", FULL);
    let loaded = load_file(&path).unwrap();
    (dir, loaded)
}

#[test]
fn every_key_loads_and_resolves() {
    let (dir, loaded) = load_full();
    let base = dir.path();
    let c = &loaded.config;
    assert!(loaded.warnings.is_empty(), "{:?}", loaded.warnings);

    let d = &c.defaults;
    assert_eq!(d.settings.schedule.describe(), "cron \"*/2 * * * *\" (UTC)");
    let dl = &d.settings.limits;
    assert_eq!(dl.timeout, Duration::from_secs(45));
    assert_eq!(dl.page_timeout, Duration::from_secs(5));
    assert_eq!(dl.connect_timeout, Duration::from_secs(3));
    assert_eq!((dl.max_pages, dl.max_items), (300, 5000));
    assert_eq!(dl.max_response_bytes, 1 << 20);
    assert_eq!(d.settings.jitter, Duration::from_secs(2));
    assert_eq!(d.settings.kinds, vec![Kind::Tools, Kind::Resources]);
    assert_eq!(d.state_dir, Some(base.join("state")));
    assert_eq!(dl.invalid_cursor_restarts, 2);
    assert_eq!(d.concurrency, 3);
    assert_eq!(d.backoff_max, Duration::from_secs(600));
    assert!(
        d.settings.invalid_cursor_probe
            && !d.settings.watch_list_changed
            && !d.settings.propagate_trace_context
    );
    assert_eq!(d.stderr_tail_bytes, 4096);

    // Inherits every default.
    let a = &c.targets[0];
    assert_eq!(a.settings.limits, d.settings.limits);
    assert_eq!(a.settings.schedule, d.settings.schedule);
    assert_eq!(a.settings.kinds, d.settings.kinds);
    assert_eq!(a.settings.jitter, d.settings.jitter);
    assert!(
        a.settings.invalid_cursor_probe
            && !a.settings.watch_list_changed
            && !a.settings.propagate_trace_context
    );
    let EndpointConfig::Http(http) = &a.endpoint else {
        panic!("http expected")
    };
    let HttpSettings {
        transport,
        max_redirects,
        bearer_token,
        headers,
        tls,
    } = &http.settings;
    assert_eq!(*transport, HttpMode::Auto);
    assert_eq!(*max_redirects, default::MAX_REDIRECTS);
    assert!(bearer_token.is_none() && headers.is_empty() && tls.ca_file.is_none());

    // Overrides every per-target key.
    let o = &c.targets[1];
    let EndpointConfig::Http(HttpEndpoint { url, settings }) = &o.endpoint else {
        panic!("http expected")
    };
    let HttpSettings {
        transport,
        headers,
        bearer_token,
        tls,
        max_redirects,
    } = settings;
    assert_eq!(url.as_str(), "https://127.0.0.1:9/mcp");
    assert_eq!(*transport, HttpMode::Sse);
    assert_eq!(headers.len(), 2);
    assert_eq!(
        (headers[0].0.as_str(), headers[0].1.expose()),
        ("X-Team", "search")
    );
    assert_eq!(headers[1].1.expose(), "key-9f8e7d-secret");
    assert_eq!(
        bearer_token,
        &Some(SecretSource::Env("OVERRIDES_TOKEN".into()))
    );
    assert_eq!(tls.ca_file, Some(base.join("ca.pem")));
    assert!(!tls.insecure_skip_verify);
    assert_eq!(*max_redirects, 0);
    assert_eq!(o.protocol_version, Some(ProtocolVersion::V2026_07_28));
    assert_eq!(o.settings.kinds, vec![Kind::Tools, Kind::Prompts]);
    assert_eq!(o.forced_kinds, vec![Kind::Prompts]);
    assert_eq!(o.settings.limits.timeout, Duration::from_secs(90));
    assert_eq!(o.settings.limits.page_timeout, Duration::from_millis(500));
    assert_eq!(o.settings.limits.connect_timeout, Duration::from_secs(1));
    assert_eq!(
        (o.settings.limits.max_pages, o.settings.limits.max_items),
        (7, 70)
    );
    assert_eq!(o.settings.limits.max_response_bytes, 65536);
    assert_eq!(o.settings.limits.invalid_cursor_restarts, 0);
    assert_eq!(o.settings.jitter, Duration::ZERO);
    assert!(
        !o.settings.invalid_cursor_probe
            && o.settings.watch_list_changed
            && o.settings.propagate_trace_context
    );
    assert_eq!(o.expect.items.get(&Kind::Tools), Some(&3));
    assert_eq!(o.reference[0].kinds, vec![Kind::Tools]);
    let w = o.settings.limits.walk_limits();
    assert_eq!((w.max_pages, w.max_items), (7, 70));
    assert_eq!(w.invalid_cursor_restarts, 0);
    assert_eq!(w.list_changed_restarts, 0);
    assert_eq!(w.session_restarts, 1);
    assert_eq!(w.listing_timeout, Duration::from_secs(90));

    let l = &c.targets[2];
    let EndpointConfig::Stdio(StdioCommand {
        command,
        args,
        env,
        cwd,
        ..
    }) = &l.endpoint
    else {
        panic!("stdio expected")
    };
    assert_eq!(command, "./server");
    assert_eq!(args, &["--stdio", "--verbose"]);
    assert_eq!(env["PLAIN"], "1");
    assert_eq!(env["FROM_FILE"], "key-9f8e7d-secret");
    assert_eq!(cwd, &Some(base.join("work")));
    assert_eq!(
        l.settings.schedule,
        Schedule::Every(Duration::from_secs(15))
    );

    let m = &c.modules["gw"];
    assert_eq!(m.http.transport, HttpMode::StreamableHttp);
    assert_eq!(m.http.headers[0].1.expose(), "yes");
    assert_eq!(
        m.http.bearer_token,
        Some(SecretSource::File("/run/secrets/gw".into()))
    );
    assert_eq!(m.http.max_redirects, 0);
    assert_eq!(m.protocol_version, Some(ProtocolVersion::V2025_11_25));
    assert_eq!(m.kinds, vec![Kind::Tools]);
    assert_eq!(m.limits.max_response_bytes, 2_000_000);
    assert_eq!(m.limits.invalid_cursor_restarts, 3);

    let t = &c.tracing;
    assert_eq!(t.endpoint.as_deref(), Some("http://127.0.0.1:4318"));
    assert_eq!(t.protocol, Some(OtlpProtocol::HttpProtobuf));
    assert_eq!(t.headers[0].1.expose(), "key-9f8e7d-secret");
    assert_eq!(t.service_name.as_deref(), Some("mcp-exporter-test"));
    assert_eq!(t.sample_ratio, Some(0.25));
    assert_eq!(c.web.history, 50);
}

#[test]
fn secrets_never_show_in_debug_output() {
    let (_dir, loaded) = load_full();
    let shown = format!("{loaded:?} {:#?}", loaded.config);
    assert!(!shown.contains("key-9f8e7d"), "secret leaked into Debug");
    assert!(shown.contains("<redacted>"));
    // Names are kept: they help and are not secret.
    assert!(shown.contains("X-Api-Key") && shown.contains("FROM_FILE"));
}

#[test]
fn bearer_token_is_read_at_poll_time() {
    let dir = tempfile::tempdir().unwrap();
    let path = write(
        dir.path(),
        "c.yaml",
        "targets:\n  - name: a\n    http:\n      url: https://a.invalid/\n      bearer_token_file: token\n",
    );
    // The token file does not exist yet: loading does not read it.
    let loaded = load_file(&path).unwrap();
    let EndpointConfig::Http(http) = &loaded.config.targets[0].endpoint else {
        panic!("http expected")
    };
    let Some(source) = &http.settings.bearer_token else {
        panic!("bearer token expected")
    };
    assert!(source.read().is_err());
    write(dir.path(), "token", "first\n");
    assert_eq!(source.read().unwrap().expose(), "first");
    write(dir.path(), "token", "rotated");
    assert_eq!(source.read().unwrap().expose(), "rotated");
}

#[test]
fn schedules_from_the_file_compute_next_ticks() {
    let text = "targets:\n  - {name: five, stdio: {command: s}, schedule: \"15 3 * * 0\"}\n  - {name: six, stdio: {command: s}, schedule: \"*/20 * * * * *\"}\n  - {name: every, stdio: {command: s}, schedule: {every: 1m30s}}\n";
    let c = load_str(text, "s.yaml").unwrap().config;
    // Wednesday 2 December 2026, 10:00:05 UTC.
    let now = Utc.with_ymd_and_hms(2026, 12, 2, 10, 0, 5).unwrap();
    let next = |i: usize| c.targets[i].settings.schedule.next_after(now).unwrap();
    assert_eq!(
        next(0),
        Utc.with_ymd_and_hms(2026, 12, 6, 3, 15, 0).unwrap()
    );
    assert_eq!(
        next(1),
        Utc.with_ymd_and_hms(2026, 12, 2, 10, 0, 20).unwrap()
    );
    assert_eq!(
        next(2),
        Utc.with_ymd_and_hms(2026, 12, 2, 10, 1, 35).unwrap()
    );
}

#[test]
fn checksum_follows_the_file_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let path = write(
        dir.path(),
        "c.yaml",
        "targets:\n  - {name: a, stdio: {command: s}}\n",
    );
    let first = load_file(&path).unwrap().checksum;
    assert_eq!(first, load_file(&path).unwrap().checksum);
    // A comment is a change of bytes, hence of checksum.
    write(
        dir.path(),
        "c.yaml",
        "# hi\ntargets:\n  - {name: a, stdio: {command: s}}\n",
    );
    let second = load_file(&path).unwrap().checksum;
    assert_ne!(first, second);
    assert_eq!(second.len(), 64);
    assert!(second.chars().all(|c| c.is_ascii_hexdigit()));
}

#[test]
fn rules_reject_with_exact_positions() {
    // Unknown key.
    assert_at(
        "global:\n  limits:\n    timeout: 5s\ntargets:\n  - name: a\n    http:\n      url: https://a.invalid/\n    labels: {team: x}\n",
        8,
        5,
        "unknown field `labels`",
    );
    // Duplicate name: the second occurrence.
    assert_at(
        "targets:\n  - {name: a, stdio: {command: s}}\n  - {name: b, stdio: {command: s}}\n  - {name: a, stdio: {command: s}}\n",
        4,
        12,
        "duplicate target name `a`",
    );
    // Bad name.
    assert_at(
        "targets:\n  - {name: \"a/b\", stdio: {command: s}}\n",
        2,
        12,
        "a/b",
    );
    // http and stdio both, and neither.
    assert_at(
        "targets:\n  - name: a\n    stdio:\n      command: s\n    http:\n      url: https://a.invalid/\n",
        3,
        5,
        "both `http` and `stdio`",
    );
    assert_at(
        "targets:\n  - name: a\n  - name: b\n",
        2,
        5,
        "needs `http: {url: ...}`",
    );
    // References.
    assert_at(
        "targets:\n  - name: a\n    stdio:\n      command: s\n    reference:\n      - target: ghost\n",
        6,
        17,
        "unknown target `ghost`",
    );
    assert_at(
        "targets:\n  - name: a\n    stdio:\n      command: s\n    reference: [{target: a}]\n",
        5,
        26,
        "references itself",
    );
    // Cron and durations.
    assert_at(
        "targets:\n  - name: a\n    stdio:\n      command: s\n    schedule: \"0 0 * * MON-FOO\"\n",
        5,
        15,
        "invalid cron",
    );
    assert_at(
        "global:\n  jitter: 10 seconds please\n",
        2,
        11,
        "invalid duration",
    );
    // Empty kinds.
    assert_at("global:\n  kinds: []\n", 2, 10, "`kinds` is empty");
    // Literal token.
    assert_at(
        "targets:\n  - name: a\n    http:\n      url: https://a.invalid/\n      bearer_token: abc\n",
        5,
        7,
        "bearer_token_env",
    );
    // Both token sources.
    assert_at(
        "targets:\n  - name: a\n    http:\n      url: https://a.invalid/\n      bearer_token_env: T\n      bearer_token_file: f\n",
        6,
        7,
        "not both",
    );
    // Bad header name.
    assert_at(
        "targets:\n  - name: a\n    http:\n      url: https://a.invalid/\n      headers:\n        \"Bad Header\": x\n",
        6,
        9,
        "not a valid HTTP header name",
    );
    // Reserved header.
    assert_at(
        "targets:\n  - name: a\n    http:\n      url: https://a.invalid/\n      headers: {Mcp-Session-Id: x}\n",
        5,
        17,
        "set by the exporter itself",
    );
    // Tracing.
    assert_at(
        "tracing:\n  sample_ratio: 1.5\n",
        2,
        17,
        "between 0.0 and 1.0",
    );
    assert_at("tracing:\n  protocol: http/json\n", 2, 13, "unknown value");
}

#[test]
fn warnings_carry_positions_and_no_secrets() {
    let dir = tempfile::tempdir().unwrap();
    let path = write(
        dir.path(),
        "w.yaml",
        "targets:\n  - name: a\n    http:\n      url: http://mcp.example.invalid/\n      bearer_token_env: TOK\n      tls: {insecure_skip_verify: true}\n      headers: {Authorization: \"Bearer literal-abc\"}\n",
    );
    let err = load_file(&path).unwrap_err().to_string();
    // Authorization header plus bearer token: ambiguous, rejected.
    assert!(err.contains("keep one"), "{err}");
    assert!(!err.contains("literal-abc"));

    write(
        dir.path(),
        "w.yaml",
        "targets:\n  - name: a\n    http:\n      url: http://mcp.example.invalid/\n      bearer_token_env: TOK\n      tls: {insecure_skip_verify: true}\n  - name: b\n    http:\n      url: https://b.invalid/\n      headers: {Authorization: \"Bearer literal-abc\"}\n",
    );
    let loaded = load_file(&path).unwrap();
    let p = path.display();
    let w = &loaded.warnings;
    assert_eq!(w.len(), 4, "{w:#?}");
    assert!(
        w.iter().any(|l| l.starts_with(&format!(
            "{p}:6:13: warning: target `a`: TLS CERTIFICATE VERIFICATION IS OFF"
        ))),
        "{w:#?}"
    );
    assert!(
        w.iter().any(|l| l.starts_with(&format!(
            "{p}:4:12: warning: target `a`: the bearer token is sent over plain http://"
        ))),
        "{w:#?}"
    );
    assert!(
        w.iter().any(|l| l.starts_with(&format!(
            "{p}:6:7: warning: target `a`: `tls` has no effect"
        ))),
        "{w:#?}"
    );
    assert!(
        w.iter().any(|l| l.starts_with(&format!(
            "{p}:10:17: warning: target `b`: header `Authorization` has a literal value"
        ))),
        "{w:#?}"
    );
    assert!(w.iter().all(|l| !l.contains("literal-abc")));
}

#[test]
fn empty_sections_are_allowed() {
    let loaded = load_str("global:\ntargets:\nmodules:\ntracing:\nweb:\n", "e.yaml").unwrap();
    assert!(loaded.config.targets.is_empty());
    assert_eq!(loaded.config.web.history, default::WEB_HISTORY);
}

#[test]
fn anchors_and_aliases_work() {
    let text = "targets:\n  - name: a\n    http:\n      url: https://a.invalid/\n    kinds: &few [tools]\n  - name: b\n    stdio:\n      command: s\n    kinds: *few\n";
    let c = load_str(text, "a.yaml").unwrap().config;
    assert_eq!(c.targets[1].settings.kinds, vec![Kind::Tools]);
}

#[test]
fn unreadable_file_names_the_path() {
    let e = load_file(Path::new("/nonexistent/mcp-exporter.yaml")).unwrap_err();
    assert!(
        e.to_string()
            .starts_with("/nonexistent/mcp-exporter.yaml: cannot read"),
        "{e}"
    );
}

/// The keys the parser accepts at one place, read from its own
/// "unknown field `zz`, expected one of `a`, `b`" message.
fn accepted_keys(text: &str) -> Vec<String> {
    let all = load_str(text, "k.yaml").unwrap_err().to_string();
    // The first problem is `zz`; more may follow (every one is reported).
    let e = all.lines().next().unwrap_or_default();
    let list = e
        .split_once("expected one of ")
        .or_else(|| e.split_once("expected "))
        .unwrap_or_else(|| panic!("no key list in {e}"))
        .1;
    list.split(", ")
        .flat_map(|k| k.split(" or "))
        .map(|k| k.trim_matches(|c| c == '`' || c == ' ').to_string())
        .collect()
}

#[test]
fn docs_mention_every_key() {
    let docs = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/configuration.md"),
    )
    .unwrap();
    let places = [
        "zz: 1\n",
        "global: {zz: 1}\n",
        "targets: [{name: a, zz: 1}]\n",
        "targets: [{name: a, http: {zz: 1}}]\n",
        "targets: [{name: a, stdio: {zz: 1}}]\n",
        "targets: [{name: a, limits: {zz: 1}}]\n",
        "targets: [{name: a, http: {url: \"https://a.invalid/\", tls: {zz: 1}}}]\n",
        "targets: [{name: a, stdio: {command: s}, reference: [{target: b, zz: 1}]}]\n",
        "targets: [{name: a, stdio: {command: s}, schedule: {zz: 1}}]\n",
        "targets: [{name: a, http: {url: \"https://a.invalid/\", headers: {X: {zz: 1}}}}]\n",
        "modules: {m: {zz: 1}}\n",
        "discovery: [{name: a, zz: 1}]\n",
        "discovery: [{name: a, module: m, file_sd: {zz: 1}}]\n",
        "discovery: [{name: a, module: m, http_sd: {zz: 1}}]\n",
        "discovery: [{name: a, module: m, registry: {zz: 1}}]\n",
        "discovery: [{name: a, module: m, registry: {http: {zz: 1}}}]\n",
        "discovery: [{name: a, module: m, registry: {limits: {zz: 1}}}]\n",
        "tracing: {zz: 1}\n",
        "web: {zz: 1}\n",
    ];
    let mut checked = 0;
    for place in places {
        let keys = accepted_keys(place);
        assert!(!keys.is_empty(), "{place}");
        for key in keys {
            assert!(
                docs.contains(&format!("`{key}`")) || docs.contains(&format!("{key}:")),
                "docs/configuration.md does not mention `{key}` (accepted in {place:?})"
            );
            checked += 1;
        }
    }
    assert!(checked > 60, "only {checked} keys checked");
}
