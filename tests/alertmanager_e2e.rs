//! Alerts reach a person: the exporter polls simulated servers, a real
//! Prometheus scrapes it and evaluates alerts/mcp-exporter.rules.yaml (every
//! `for:` shortened to 0s so the test takes seconds, not the rules' 15m), a
//! real Alertmanager routes what fires to a webhook this test runs, and the
//! notifications must carry target, kind, severity, summary, runbook URL and
//! the link to the target's status page built from `--web.external-url`.
//!
//! Needs `prometheus` and `prometheus-alertmanager` (Debian packages;
//! scripts/install-test-deps.sh).

use mcp_testkit::alertmanager::{amtool_binary, webhook_config, Alertmanager, Webhook};
use mcp_testkit::process::run;
use mcp_testkit::prometheus::{Prometheus, PrometheusSetup};
use mcp_testkit::{repo_file, repo_path, scenarios_simulator, Exporter};
use serde_json::Value;
use std::path::Path;
use std::time::Duration;

const EXTERNAL_URL: &str = "https://mcp-status.example.test/exporter";
const NOTIFY_WAIT: Duration = Duration::from_secs(90);

/// The shipped rules with every `for:` set to 0s.
fn fast_rules(dir: &Path) -> std::path::PathBuf {
    let rules = repo_file("alerts/mcp-exporter.rules.yaml");
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

const SCENARIOS: &str = r#"  - name: shrinking
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

fn exporter_config(sim: &str, dir: &Path) -> String {
    let state = serde_json::to_string(&dir.join("state").display().to_string()).expect("path");
    format!(
        r#"global:
  schedule: {{ every: 1s }}
  jitter: 0s
  limits:
    timeout: 10s
    page_timeout: 2s
  state_dir: {state}
  kinds: [tools]
targets:
  - name: shrinking
    http:
      url: {sim}/mcp/shrinking
  - name: origin
    http:
      url: {sim}/mcp/origin
  - name: gateway
    http:
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

/// Everything on the way from a poll to a person, and what each saw.
struct Stack {
    webhook: Webhook,
    am: Alertmanager,
    prom: Prometheus,
    exporter: Exporter,
    _rules: tempfile::TempDir,
}

impl Stack {
    /// The exporter polls `sim` (it says where people find it, without the
    /// trailing slash); Prometheus scrapes it with the fast rules and sends
    /// to Alertmanager, which sends to the webhook.
    fn start(sim: &str) -> Stack {
        let exporter = Exporter::start_with_dir(
            |dir| exporter_config(sim, dir),
            &["--web.external-url", &format!("{EXTERNAL_URL}/")],
            &[],
        );
        let metrics =
            exporter.wait_metrics(Duration::from_secs(30), "the external URL series", |m| {
                m.contains("mcp_exporter_external_url_info")
            });
        assert!(
            metrics.contains(&format!(
                "mcp_exporter_external_url_info{{external_url=\"{EXTERNAL_URL}\"}} 1"
            )),
            "{metrics}"
        );
        let rules = tempfile::tempdir().expect("temp dir");
        let webhook = Webhook::start();
        let am = Alertmanager::start(&webhook_config(&webhook.url()));
        let prom = Prometheus::start(
            &PrometheusSetup::new()
                .scrape("mcp-exporter", exporter.url().trim_start_matches("http://"))
                .rules(fast_rules(rules.path()))
                .alertmanager(&am.address()),
        );
        Stack {
            webhook,
            am,
            prom,
            exporter,
            _rules: rules,
        }
    }

    /// The firing notification of `alertname` with `labels`, or a failure
    /// showing what every part saw.
    fn firing(&self, alertname: &str, labels: &[(&str, &str)]) -> Value {
        self.webhook
            .wait_firing(NOTIFY_WAIT, alertname, labels)
            .unwrap_or_else(|| {
                panic!(
                    "no firing {alertname} notification with {labels:?}\nwebhook got: {:#}\nAlertmanager holds: {}\nPrometheus alerts: {:?}\nAlertmanager log:\n{}\nPrometheus log:\n{}\nexporter log:\n{}",
                    Value::Array(self.webhook.notifications()),
                    self.am.alerts(),
                    self.prom.alerts(),
                    self.am.log(),
                    self.prom.log(),
                    self.exporter.stderr()
                )
            })
    }
}

#[test]
fn a_silent_shrink_and_a_gateway_gap_reach_the_webhook_with_links() {
    let (sim, _scenarios) = scenarios_simulator(SCENARIOS);
    let stack = Stack::start(&sim.url);

    let shrink = stack.firing(
        "McpListingSilentlyShrank",
        &[("target", "shrinking"), ("kind", "tools")],
    );
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

    let gap = stack.firing(
        "McpGatewayMissingOriginItems",
        &[
            ("target", "gateway"),
            ("kind", "tools"),
            ("reference", "origin"),
        ],
    );
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
    let (status, page) = stack.exporter.get("/targets/shrinking");
    assert_eq!(status, 200);
    assert!(page.contains("degraded"), "{page}");
    // The origin itself is quiet: nothing fired for it.
    let alerts = stack.webhook.alerts();
    assert!(
        !alerts.iter().any(|a| label(a, "target") == "origin"
            && a["status"] == "firing"
            && label(a, "alertname") != "McpInvalidCursorSilentRestart"),
        "{:#}",
        Value::Array(alerts.clone())
    );
}

/// deploy/alertmanager.yml, with its paths pointed at this checkout, passes
/// `amtool check-config` (which also parses the template it loads).
#[test]
fn the_example_alertmanager_config_is_valid() {
    let amtool = amtool_binary().unwrap_or_else(|e| panic!("{e}"));
    let dir = tempfile::tempdir().expect("temp dir");
    for secret in ["slack-webhook-url", "smtp-password"] {
        std::fs::write(dir.path().join(secret), "example\n").expect("secret file");
    }
    let config = std::fs::read_to_string(repo_path("deploy/alertmanager.yml"))
        .expect("deploy/alertmanager.yml")
        .replace(
            "/etc/alertmanager/templates/alertmanager-mcp.tmpl",
            &repo_path("deploy/alertmanager-mcp.tmpl")
                .display()
                .to_string(),
        )
        .replace(
            "/etc/alertmanager/secrets/",
            &format!("{}/", dir.path().display()),
        );
    let path = dir.path().join("alertmanager.yml");
    std::fs::write(&path, config).expect("write config");
    let mut command = std::process::Command::new(&amtool);
    command.arg("check-config").arg(&path);
    let out = run(command, "amtool check-config");
    let text = out.output();
    assert!(out.success(), "{text}");
    assert!(text.contains("1 templates"), "{text}");
}
