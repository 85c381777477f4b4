//! What a person reads from the command line when something is off: config
//! errors with the key meant, all at once and once only, warnings about
//! what would fail at the first poll, a short usage without arguments, a
//! refused connection said once with a hint, log flags as Prometheus
//! exporters take them.

use mcp_testkit::process::run_exporter;
use mcp_testkit::ClosedPort;

fn write_config(text: &str) -> (tempfile::TempDir, String) {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("typos.yaml");
    std::fs::write(&path, text).expect("write config");
    let path = path.to_str().expect("utf-8 path").to_string();
    (dir, path)
}

const TYPOS: &str = "global:\n  limits:\n    timout: 5s\ntargets:\n  - name: a\n    http:\n      url: http://127.0.0.1:1/mcp\n      transport: stremable-http\n    colour: red\n";

#[test]
fn config_typos_are_named_with_the_word_meant_all_at_once() {
    let (_dir, path) = write_config(TYPOS);
    // `-c`, as config/example.yaml documents it.
    let out = run_exporter(&["check-config", "-c", &path]);
    assert_eq!(out.code(), Some(1), "{}", out.describe());
    let lines: Vec<&str> = out.stderr.lines().collect();
    assert_eq!(lines.len(), 3, "{}", out.describe());
    assert_eq!(
        lines[0],
        format!("{path}:3:5: global.limits: unknown field `timout` (did you mean `timeout`?)")
    );
    assert!(
        lines[1].starts_with(&format!("{path}:8:18: "))
            && lines[1].contains("(did you mean `streamable-http`?)"),
        "{}",
        out.describe()
    );
    assert!(
        lines[2].starts_with(&format!("{path}:9:5: ")) && lines[2].contains("`colour`"),
        "{}",
        out.describe()
    );
}

#[test]
fn serve_prints_a_config_error_once() {
    let (_dir, path) = write_config(TYPOS);
    let out = run_exporter(&[
        "--config.file",
        &path,
        "--web.listen-address",
        "127.0.0.1:0",
    ]);
    assert_eq!(out.code(), Some(2), "{}", out.describe());
    assert_eq!(
        out.output().matches("unknown field `timout`").count(),
        1,
        "{}",
        out.describe()
    );
}

#[test]
fn check_config_warns_about_what_would_fail_at_the_first_poll() {
    let (_dir, path) = write_config(
        "targets:\n  - name: gone\n    stdio:\n      command: no-such-mcp-server-anywhere\n  - name: far\n    http:\n      url: https://mcp.example.invalid/mcp\n  - name: here\n    stdio:\n      command: sh\n",
    );
    let out = run_exporter(&["check-config", "--config.file", &path]);
    // Warnings, not errors: the file may be checked elsewhere than it runs.
    assert_eq!(out.code(), Some(0), "{}", out.describe());
    assert!(
        out.stderr.contains(&format!(
            "{path}: warning: target `gone`: command `no-such-mcp-server-anywhere`: not found on PATH"
        )),
        "{}",
        out.describe()
    );
    assert!(
        out.stderr.contains(&format!(
            "{path}: warning: target `far`: host `mcp.example.invalid` does not resolve"
        )),
        "{}",
        out.describe()
    );
    assert!(!out.stderr.contains("`here`"), "{}", out.describe());
}

#[test]
fn a_refused_connection_is_reported_once_with_a_hint() {
    let closed = ClosedPort::new();
    let url = closed.url("/mcp");
    let out = run_exporter(&["probe", "--url", &url]);
    assert_eq!(out.code(), Some(1), "{}", out.describe());
    let text = out.output();
    assert_eq!(
        text.to_lowercase().matches("connection refused").count(),
        1,
        "{}",
        out.describe()
    );
    assert!(
        text.contains("is the server running") && text.contains("check the URL"),
        "{}",
        out.describe()
    );
    // No handshake happened: no time for it.
    assert!(
        !text
            .lines()
            .any(|l| l.starts_with("handshake") && l.ends_with(" ms")),
        "{}",
        out.describe()
    );
    assert!(
        text.contains("handshake  initialize not completed"),
        "{}",
        out.describe()
    );
}

#[test]
fn kind_is_honoured_for_a_configured_target() {
    let bin = mcp_testkit::exporter_bin();
    let (_dir, path) = write_config(&format!(
        "targets:\n  - name: local\n    stdio:\n      command: {}\n      args: [simulate, --scenario, healthy, --items, \"6\", --page-size, \"4\"]\n    expect: {{prompts: 40}}\n",
        serde_json::to_string(&bin.display().to_string()).expect("path as YAML")
    ));
    let only_tools = [
        "--config.file",
        &path,
        "--target",
        "local",
        "--kind",
        "tools",
    ];
    let (code, report) = mcp_testkit::probe_json(&only_tools);
    let kinds: Vec<&str> = report["listings"]
        .as_array()
        .expect("listings")
        .iter()
        .filter_map(|l| l["kind"].as_str())
        .collect();
    assert_eq!(kinds, ["tools"], "{report:#}");
    // The expectation of a kind not listed is not judged.
    assert_eq!(code, 0, "{report:#}");
    assert_eq!(report["verdict"]["level"], "healthy", "{report:#}");

    // `check` takes the same flags: its rules judge tools only.
    let out = run_exporter(&[&["check"], &only_tools[..], &["--json"]].concat());
    let checked: serde_json::Value = serde_json::from_str(&out.stdout)
        .unwrap_or_else(|e| panic!("check --json: {e}\n{}", out.describe()));
    let rule_kinds: std::collections::BTreeSet<&str> = checked["rules"]
        .as_array()
        .expect("rules")
        .iter()
        .filter_map(|r| r["kind"].as_str())
        .collect();
    assert_eq!(
        rule_kinds,
        std::collections::BTreeSet::from(["tools"]),
        "{}",
        out.describe()
    );
}

#[test]
fn no_arguments_and_no_config_get_a_short_usage() {
    let dir = tempfile::tempdir().expect("temp dir");
    let mut command = std::process::Command::new(mcp_testkit::exporter_bin());
    command.current_dir(dir.path());
    let out = mcp_testkit::run(command, "mcp-exporter");
    assert_eq!(out.code(), Some(2), "{}", out.describe());
    for needed in ["--config.file", "--help", "scripts/demo"] {
        assert!(out.stderr.contains(needed), "{}", out.describe());
    }
    assert!(out.stderr.lines().count() < 15, "{}", out.describe());
}

#[test]
fn build_info_carries_the_revision_built_from() {
    let git = std::process::Command::new("git")
        .args(["rev-parse", "HEAD"])
        .current_dir(mcp_testkit::repo_path(""))
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string());
    let expected = std::env::var("MCP_EXPORTER_REVISION")
        .ok()
        .or(git)
        .unwrap_or_else(|| "unknown".to_string());
    let exporter = mcp_testkit::Exporter::start("targets: []\n");
    let (status, metrics) = mcp_testkit::http_get(&exporter.at("/metrics"));
    assert_eq!(status, 200, "{metrics}");
    assert_eq!(
        mcp_testkit::sample(
            &metrics,
            "mcp_exporter_build_info",
            &[
                ("version", env!("CARGO_PKG_VERSION")),
                ("revision", &expected)
            ]
        ),
        Some(1.0),
        "{metrics}"
    );
}

#[test]
fn log_flags_take_prometheus_values_and_suggest_for_a_typo() {
    for (flag, typo, meant) in [
        ("--log.format", "lgofmt", "logfmt"),
        ("--log.level", "warning", "warn"),
    ] {
        let out = run_exporter(&[flag, typo, "check-config", "--config.file", "x.yaml"]);
        assert_eq!(out.code(), Some(2), "{}", out.describe());
        assert!(
            out.stderr
                .contains(&format!("a similar value exists: '{meant}'")),
            "{}",
            out.describe()
        );
    }
    let (_dir, path) =
        write_config("targets:\n  - name: a\n    http:\n      url: http://127.0.0.1:1/mcp\n");
    for format in ["logfmt", "json", "text"] {
        for level in ["debug", "info", "warn", "error"] {
            let out = run_exporter(&[
                "check-config",
                "--config.file",
                &path,
                "--log.format",
                format,
                "--log.level",
                level,
            ]);
            assert_eq!(out.code(), Some(0), "{format} {level}: {}", out.describe());
        }
    }
}
