//! Alerts reach a person: the exporter polls simulated servers, a real
//! Prometheus scrapes it and evaluates alerts/mcp-exporter.rules.yaml (every
//! `for:` shortened to 0s so the test takes seconds, not the rules' 15m), a
//! real Alertmanager routes what fires to a webhook this test runs, and the
//! notifications must carry target, kind, severity, summary, runbook URL and
//! the link to the target's status page built from `--web.external-url`.
//!
//! Needs `prometheus` and `prometheus-alertmanager` (Debian packages;
//! scripts/install-test-deps.sh).

#[path = "common/alertmanager.rs"]
mod alertmanager;
mod common;
#[path = "common/prometheus.rs"]
mod prometheus;

use alertmanager::{webhook_config, Alertmanager, Webhook};
use common::{http_get, wait_for, Proc};
use prometheus::{Prometheus, PrometheusSetup};
use serde_json::Value;
use std::path::Path;
use std::time::Duration;

const EXTERNAL_URL: &str = "https://mcp-status.example.test/exporter";
const NOTIFY_WAIT: Duration = Duration::from_secs(90);

fn repo(path: &str) -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(path)
}

/// The shipped rules with every `for:` set to 0s.
fn fast_rules(dir: &Path) -> std::path::PathBuf {
    let rules = std::fs::read_to_string(repo("alerts/mcp-exporter.rules.yaml")).expect("rules");
    let fast: String = rules
        .lines()
        .map(|l| {
            if l.trim_start().starts_with("for: ") {
                let indent = &l[..l.len() - l.trim_start().len()];
                format!("{indent}for: 0s\n")
            } else {
                format!("{l}\n")
            }
        })
        .collect();
    assert!(fast.contains("for: 0s"), "no for: in the rules any more?");
    let path = dir.join("rules.yaml");
    std::fs::write(&path, fast).expect("write rules");
    path
}

const SCENARIOS: &str = r#"servers:
  - name: shrinking
    scenario: shrink
    after_listings: 2
  - name: origin
    scenario: healthy
    items: 14
    page_size: 8
  - name: gateway
    scenario: truncate
    items: 14
    page_size: 8
"#;

fn exporter_config(sim: &str, state: &Path) -> String {
    let state = serde_json::to_string(&state.display().to_string()).expect("path");
    format!(
        r#"global:
  schedule: {{ every: 1s }}
  jitter: 0s
  timeout: 10s
  page_timeout: 2s
  state_dir: {state}
  kinds: [tools]
targets:
  - name: shrinking
    url: {sim}/mcp/shrinking
  - name: origin
    url: {sim}/mcp/origin
  - name: gateway
    url: {sim}/mcp/gateway
    reference:
      - target: origin
"#
    )
}

fn label<'a>(a: &'a Value, k: &str) -> &'a str {
    a["labels"][k].as_str().unwrap_or("")
}

fn annotation<'a>(a: &'a Value, k: &str) -> &'a str {
    a["annotations"][k].as_str().unwrap_or("")
}

#[test]
fn a_silent_shrink_and_a_gateway_gap_reach_the_webhook_with_links() {
    let dir = tempfile::tempdir().expect("temp dir");
    std::fs::write(dir.path().join("scenarios.yaml"), SCENARIOS).expect("scenarios");
    let sim = Proc::start(&[
        "simulate",
        "--transport",
        "http",
        "--listen",
        "127.0.0.1:0",
        "--scenarios",
        dir.path().join("scenarios.yaml").to_str().expect("utf-8"),
    ]);
    let state = dir.path().join("state");
    std::fs::write(
        dir.path().join("exporter.yaml"),
        exporter_config(sim.url.trim_end_matches('/'), &state),
    )
    .expect("exporter config");
    let exporter = Proc::start(&[
        "--config.file",
        dir.path().join("exporter.yaml").to_str().expect("utf-8"),
        "--web.listen-address",
        "127.0.0.1:0",
        "--web.external-url",
        &format!("{EXTERNAL_URL}/"),
    ]);
    let exporter_address = exporter
        .url
        .trim_start_matches("http://")
        .trim_end_matches('/')
        .to_string();
    // The exporter says where people find it, without the trailing slash.
    let metrics = wait_for(Duration::from_secs(30), "the external URL series", || {
        let (_, m) = http_get(&format!("{}/metrics", exporter.url.trim_end_matches('/')));
        m.contains("mcp_exporter_external_url_info").then_some(m)
    });
    assert!(
        metrics.contains(&format!(
            "mcp_exporter_external_url_info{{external_url=\"{EXTERNAL_URL}\"}} 1"
        )),
        "{metrics}"
    );

    let webhook = Webhook::start();
    let am = Alertmanager::start(&webhook_config(&webhook.url()));
    let prom = Prometheus::start(
        &PrometheusSetup::new()
            .scrape("mcp-exporter", &exporter_address)
            .rules(fast_rules(dir.path()))
            .alertmanager(&am.address()),
    );

    let fail = |what: &str| -> ! {
        panic!(
            "{what}\nwebhook got: {:#}\nAlertmanager holds: {}\nPrometheus alerts: {:?}\nAlertmanager log:\n{}\nPrometheus log:\n{}\nexporter log:\n{}",
            Value::Array(webhook.notifications()),
            am.alerts(),
            prom.alerts(),
            am.log(),
            prom.log(),
            exporter.stderr()
        )
    };

    let shrink = webhook
        .wait_firing(
            NOTIFY_WAIT,
            "McpListingSilentlyShrank",
            &[("target", "shrinking"), ("kind", "tools")],
        )
        .unwrap_or_else(|| fail("no firing McpListingSilentlyShrank notification for shrinking"));
    assert_eq!(label(&shrink, "severity"), "critical", "{shrink:#}");
    assert_eq!(label(&shrink, "job"), "mcp-exporter", "{shrink:#}");
    assert!(
        annotation(&shrink, "summary").contains("shrank without a list_changed notice"),
        "{shrink:#}"
    );
    assert!(
        annotation(&shrink, "description").contains("shrinking returned fewer tools"),
        "{shrink:#}"
    );
    assert_eq!(
        annotation(&shrink, "runbook_url"),
        "https://github.com/mcp-exporter/mcp-exporter/blob/main/docs/runbooks.md#mcplistingsilentlyshrank",
        "{shrink:#}"
    );
    assert_eq!(
        annotation(&shrink, "status_url"),
        format!("{EXTERNAL_URL}/targets/shrinking"),
        "{shrink:#}"
    );

    let gap = webhook
        .wait_firing(
            NOTIFY_WAIT,
            "McpGatewayMissingOriginItems",
            &[
                ("target", "gateway"),
                ("kind", "tools"),
                ("reference", "origin"),
            ],
        )
        .unwrap_or_else(|| fail("no firing McpGatewayMissingOriginItems notification for gateway"));
    assert_eq!(label(&gap, "severity"), "critical", "{gap:#}");
    assert!(
        annotation(&gap, "description")
            .contains("gateway lacks 6 tools that its origin origin lists"),
        "{gap:#}"
    );
    assert_eq!(
        annotation(&gap, "status_url"),
        format!("{EXTERNAL_URL}/targets/gateway"),
        "{gap:#}"
    );
    assert!(
        annotation(&gap, "runbook_url").ends_with("#mcpgatewaymissingoriginitems"),
        "{gap:#}"
    );

    // The status page the link names exists on the exporter (under its own
    // address; the external URL is where a proxy publishes it).
    let (status, page) = http_get(&format!(
        "{}/targets/shrinking",
        exporter.url.trim_end_matches('/')
    ));
    assert_eq!(status, 200);
    assert!(page.contains("degraded"), "{page}");
    // The origin itself is quiet: nothing fired for it.
    assert!(
        !webhook
            .alerts()
            .iter()
            .any(|a| label(a, "target") == "origin"
                && a["status"] == "firing"
                && label(a, "alertname") != "McpInvalidCursorSilentRestart"),
        "{:#}",
        Value::Array(webhook.alerts())
    );
}

/// deploy/alertmanager.yml, with its paths pointed at this checkout, passes
/// `amtool check-config` (which also parses the template it loads).
#[test]
fn the_example_alertmanager_config_is_valid() {
    let amtool = ["/usr/bin/amtool"]
        .into_iter()
        .map(std::path::PathBuf::from)
        .find(|p| p.is_file())
        .unwrap_or_else(|| std::path::PathBuf::from("amtool"));
    let dir = tempfile::tempdir().expect("temp dir");
    for secret in ["slack-webhook-url", "smtp-password"] {
        std::fs::write(dir.path().join(secret), "example\n").expect("secret file");
    }
    let config = std::fs::read_to_string(repo("deploy/alertmanager.yml"))
        .expect("deploy/alertmanager.yml")
        .replace(
            "/etc/alertmanager/templates/alertmanager-mcp.tmpl",
            &repo("deploy/alertmanager-mcp.tmpl").display().to_string(),
        )
        .replace(
            "/etc/alertmanager/secrets/",
            &format!("{}/", dir.path().display()),
        );
    let path = dir.path().join("alertmanager.yml");
    std::fs::write(&path, config).expect("write config");
    let out = std::process::Command::new(&amtool)
        .arg("check-config")
        .arg(&path)
        .output()
        .unwrap_or_else(|e| {
            panic!(
                "cannot run {} (Debian package prometheus-alertmanager): {e}",
                amtool.display()
            )
        });
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "{text}");
    assert!(text.contains("1 templates"), "{text}");
}
