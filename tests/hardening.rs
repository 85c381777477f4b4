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
