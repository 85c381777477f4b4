//! The attack list of docs/security.md, each against a real exporter
//! process and real sockets or children. Counts, never timings.

mod common;

use common::{http_get, wait_for, Proc};
use std::path::Path;
use std::time::Duration;

const LIMIT: Duration = Duration::from_secs(60);

fn exporter_with_env(config: &Path, env: &[(&str, &str)]) -> Proc {
    Proc::start_with_env(
        &[
            "--config.file",
            config.to_str().unwrap(),
            "--web.listen-address",
            "127.0.0.1:0",
        ],
        env,
    )
}

/// `/api/targets/NAME` once the target has a failed poll with a stderr tail.
fn target_with_tail(exp: &Proc, name: &str) -> String {
    wait_for(LIMIT, &format!("{name} with a stderr tail"), || {
        let (status, body) = http_get(&format!("{}/api/targets/{name}", exp.url));
        (status == 200 && body.contains("stderr_tail\":\"")).then_some(body)
    })
}

/// Item 1: a stdio child that prints its environment sees no other target's
/// token (minimal environment), and what it prints is scrubbed of every
/// secret the configuration knows.
#[test]
fn stdio_child_gets_minimal_env_and_tails_are_scrubbed() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = dir.path().join("c.yaml");
    std::fs::write(
        &cfg,
        r#"global:
  schedule: {every: 1s}
  jitter: 0s
  stderr_tail_bytes: 64KiB
targets:
  - name: http_target
    url: http://127.0.0.1:9/mcp
    bearer_token_env: HARDEN_TOK
    schedule: {every: 1h}
  - name: printer
    command: sh
    args: ['-c', 'env >&2; echo "echo: $HARDEN_TOK" >&2; exit 1']
    env: {OWN_KEY: own-secret-value-77}
  - name: inheriting
    command: sh
    args: ['-c', 'echo "seen: $HARDEN_TOK" >&2; exit 1']
    inherit_env: true
"#,
    )
    .unwrap();
    let exp = exporter_with_env(
        &cfg,
        &[
            ("HARDEN_TOK", "tok-of-the-http-target-5150"),
            ("HARDEN_OTHER", "unrelated-exporter-variable"),
        ],
    );
    let body = target_with_tail(&exp, "printer");
    assert!(body.contains("PATH="), "the child's env is shown: {body}");
    assert!(
        !body.contains("HARDEN_TOK=") && !body.contains("HARDEN_OTHER"),
        "the child inherited the exporter's environment: {body}"
    );
    assert!(!body.contains("tok-of-the-http-target-5150"), "{body}");
    assert!(!body.contains("own-secret-value-77"), "{body}");
    assert!(body.contains("OWN_KEY=<redacted>"), "{body}");

    // Opted in: the child has the token, the tail still does not.
    let body = target_with_tail(&exp, "inheriting");
    assert!(body.contains("seen: <redacted>"), "{body}");
    assert!(!body.contains("tok-of-the-http-target-5150"), "{body}");
    assert!(!exp.stderr().contains("tok-of-the-http-target-5150"));
}

/// Item 12: a secret straddling the start of the kept stderr tail leaves no
/// part of itself behind.
#[test]
fn secret_straddling_the_tail_start_is_scrubbed() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = dir.path().join("c.yaml");
    // The tail keeps 70 bytes: the last 10 of the 30-byte secret and 60 zeros.
    std::fs::write(
        &cfg,
        r#"global:
  schedule: {every: 1s}
  jitter: 0s
  stderr_tail_bytes: 70
targets:
  - name: straddle
    command: sh
    args: ['-c', 'printf "%s%060d" "$API_KEY" 0 >&2; exit 1']
    env: {API_KEY: straddling-secret-Q0123456789}
"#,
    )
    .unwrap();
    let exp = exporter_with_env(&cfg, &[]);
    let body = target_with_tail(&exp, "straddle");
    assert!(body.contains("000000"), "{body}");
    assert!(
        !body.contains("6789"),
        "part of the secret survived: {body}"
    );
}

/// Item 4: hostile scrape-timeout headers answer a probe, never panic.
#[test]
fn hostile_scrape_timeout_headers_do_not_panic() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = dir.path().join("c.yaml");
    std::fs::write(
        &cfg,
        "targets:\n- name: down\n  url: http://127.0.0.1:9/mcp\n  schedule: {every: 1h}\n  connect_timeout: 1s\n",
    )
    .unwrap();
    let exp = exporter_with_env(&cfg, &[]);
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let client = reqwest::Client::new();
    for value in ["inf", "1e30", "NaN", "-3", "garbage", "1e308"] {
        let status = rt.block_on(async {
            client
                .get(format!("{}/probe?target=down", exp.url))
                .header("X-Prometheus-Scrape-Timeout-Seconds", value)
                .timeout(LIMIT)
                .send()
                .await
                .map(|r| r.status().as_u16())
        });
        assert_eq!(status.ok(), Some(200), "header {value:?}");
    }
    assert!(!exp.stderr().contains("panicked"), "{}", exp.stderr());
}

fn check_config(text: &str) -> (Option<i32>, String, String) {
    let dir = tempfile::tempdir().unwrap();
    let cfg = dir.path().join("c.yaml");
    std::fs::write(&cfg, text).unwrap();
    let out = std::process::Command::new(common::bin())
        .args(["check-config", "--config.file", cfg.to_str().unwrap()])
        .output()
        .unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Item 5: a config error names the key and the expected type, never the
/// value, and a huge garbage file gives a short message.
#[test]
fn config_errors_never_quote_values_and_are_short() {
    let (code, _, err) = check_config(
        "targets:\n  - name: a\n    url: http://127.0.0.1:9/mcp\n    headers: \"X-Api-Key: key-leak-31337\"\n",
    );
    assert_eq!(code, Some(1));
    assert!(err.contains("headers"), "{err}");
    assert!(err.contains("invalid type: a string, expected"), "{err}");
    assert!(!err.contains("key-leak-31337"), "{err}");

    let garbage = "garbage-without-structure ".repeat(4 << 20 >> 5);
    assert!(garbage.len() > 3 << 20);
    let (code, _, err) = check_config(&garbage);
    assert_eq!(code, Some(1));
    assert!(err.len() < 8192, "{} bytes of error", err.len());
    assert!(!err.contains("garbage-without-structure garbage"), "{err}");
}

/// Item 14: `check-config | head -2` ends quietly when the reader goes away.
#[test]
fn closed_stdout_is_not_a_panic() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = dir.path().join("c.yaml");
    // Far more output than a pipe holds, so writing must meet the closed end.
    let mut text = String::from("targets:\n");
    for i in 0..3000 {
        text.push_str(&format!(
            "  - {{name: target_{i:05}, url: \"http://127.0.0.1:9/mcp/{i}\"}}\n"
        ));
    }
    std::fs::write(&cfg, text).unwrap();
    let mut child = std::process::Command::new(common::bin())
        .args(["check-config", "--config.file", cfg.to_str().unwrap()])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!err.contains("panicked"), "{err}");
    assert_ne!(out.status.code(), Some(101), "{err}");
}
