//! Static checks of the shipped monitoring content: the alert and recording
//! rules pass `promtool check rules` and `promtool test rules`, every alert
//! carries the labels, annotations, runbook section and unit tests operators
//! rely on, and every dashboard panel is wired to `${datasource}` with a unit
//! and a description. Needs promtool (Debian package `prometheus`).

use mcp_testkit::process::run;
use mcp_testkit::prometheus::promtool_binary;
use mcp_testkit::{repo_file, repo_path};
use serde::Deserialize;
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;

const RULES: &str = "alerts/mcp-exporter.rules.yaml";
const RULE_TESTS_DIR: &str = "alerts/tests";
const RUNBOOKS: &str = "docs/runbooks.md";
const DASHBOARDS_DIR: &str = "dashboards";
/// Where runbook links point (docs/runbooks.md on the main branch).
const RUNBOOK_BASE: &str =
    "https://github.com/mcp-exporter/mcp-exporter/blob/main/docs/runbooks.md#";
const SEVERITIES: [&str; 3] = ["critical", "warning", "info"];
/// Alerts the project promises (docs/runbooks.md explains each).
const REQUIRED_ALERTS: [&str; 18] = [
    "McpListingSilentlyShrank",
    "McpListingShrank",
    "McpListingBelowExpected",
    "McpListingTruncationSuspected",
    "McpPaginationLoopAborts",
    "McpInvalidCursorRateHigh",
    "McpDuplicateItems",
    "McpTargetDown",
    "McpListingStale",
    "McpTimeToReadySlow",
    "McpGatewayMissingOriginItems",
    "McpProtocolCatalogueDiffers",
    "McpConformanceMustFailure",
    "McpDiscoverySourceFailing",
    "McpExporterConfigReloadFailed",
    "McpExporterMetricsRenderSlow",
    "McpExporterMemoryPerTargetGrowing",
    "McpExporterAbsent",
];
/// Dashboard uids are links in alerts and docs; they must not change.
const DASHBOARD_UIDS: [(&str, &str); 2] = [
    ("mcp-fleet.json", "mcp-fleet"),
    ("mcp-target.json", "mcp-target"),
];

#[derive(Deserialize)]
struct RuleFile {
    groups: Vec<Group>,
}

#[derive(Deserialize)]
struct Group {
    name: String,
    rules: Vec<Rule>,
}

#[derive(Deserialize)]
struct Rule {
    alert: Option<String>,
    record: Option<String>,
    expr: String,
    #[serde(default)]
    labels: BTreeMap<String, String>,
    #[serde(default)]
    annotations: BTreeMap<String, String>,
}

fn rules() -> Vec<Rule> {
    let file: RuleFile =
        yaml_serde::from_str(&repo_file(RULES)).unwrap_or_else(|e| panic!("parse {RULES}: {e}"));
    assert!(!file.groups.is_empty(), "{RULES} has no groups");
    file.groups
        .into_iter()
        .inspect(|g| assert!(!g.rules.is_empty(), "group {} is empty", g.name))
        .flat_map(|g| g.rules)
        .collect()
}

fn rule_test_files() -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(repo_path(RULE_TESTS_DIR))
        .unwrap_or_else(|e| panic!("list {RULE_TESTS_DIR}: {e}"))
        .map(|e| e.expect("dir entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "yaml" || x == "yml"))
        .collect();
    files.sort();
    assert!(
        !files.is_empty(),
        "no promtool test files in {RULE_TESTS_DIR}"
    );
    files
}

fn run_promtool(args: &[&std::ffi::OsStr]) {
    let promtool = promtool_binary().unwrap_or_else(|e| panic!("{e}"));
    let mut command = Command::new(&promtool);
    command.args(args).current_dir(repo_path(""));
    let out = run(command, &format!("promtool {args:?}"));
    assert!(
        out.success(),
        "promtool {args:?} failed: {}",
        out.describe()
    );
}

#[test]
fn promtool_check_rules_accepts_the_rule_file() {
    run_promtool(&[
        "check".as_ref(),
        "rules".as_ref(),
        repo_path(RULES).as_os_str(),
    ]);
}

#[test]
fn promtool_unit_tests_pass() {
    let files = rule_test_files();
    let mut args: Vec<&std::ffi::OsStr> = vec!["test".as_ref(), "rules".as_ref()];
    args.extend(files.iter().map(|f| f.as_os_str()));
    run_promtool(&args);
}

/// GitHub's heading anchor: lower-case, spaces to `-`, punctuation dropped.
fn github_anchor(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter_map(|c| match c {
            ' ' => Some('-'),
            c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
            _ => None,
        })
        .collect()
}

fn runbook_anchors() -> BTreeSet<String> {
    repo_file(RUNBOOKS)
        .lines()
        .filter_map(|l| l.strip_prefix("## "))
        .map(github_anchor)
        .collect()
}

#[test]
fn every_alert_has_labels_annotations_and_a_runbook_section() {
    let anchors = runbook_anchors();
    let rules = rules();
    let alerts: Vec<&Rule> = rules.iter().filter(|r| r.alert.is_some()).collect();
    let names: BTreeSet<&str> = alerts.iter().filter_map(|r| r.alert.as_deref()).collect();
    for required in REQUIRED_ALERTS {
        assert!(
            names.contains(required),
            "alert {required} is missing from {RULES}"
        );
    }
    assert_eq!(names.len(), alerts.len(), "alert names repeat in {RULES}");

    let mut problems = Vec::new();
    for rule in &alerts {
        let name = rule.alert.as_deref().unwrap_or_default();
        match rule.labels.get("severity") {
            Some(s) if SEVERITIES.contains(&s.as_str()) => {}
            other => problems.push(format!(
                "{name}: severity {other:?} is not one of {SEVERITIES:?}"
            )),
        }
        for key in ["summary", "description", "runbook_url", "dashboard_url"] {
            if rule
                .annotations
                .get(key)
                .is_none_or(|v| v.trim().is_empty())
            {
                problems.push(format!("{name}: annotation {key} missing or empty"));
            }
        }
        if let Some(d) = rule.annotations.get("description") {
            if !d.contains("{{") {
                problems.push(format!(
                    "{name}: description is not templated (no {{{{ ... }}}})"
                ));
            }
        }
        let expected_runbook = format!("{RUNBOOK_BASE}{}", name.to_lowercase());
        if rule.annotations.get("runbook_url") != Some(&expected_runbook) {
            problems.push(format!(
                "{name}: runbook_url should be {expected_runbook}, is {:?}",
                rule.annotations.get("runbook_url")
            ));
        }
        // Alerts about one target link to its status page.
        let per_target = rule
            .annotations
            .get("description")
            .is_some_and(|d| d.contains("$labels.target"));
        let status_url = rule.annotations.get("status_url");
        if per_target
            && !status_url.is_some_and(|u| {
                u.contains("mcp_exporter_external_url_info")
                    && u.ends_with("/targets/{{ $labels.target }}")
            })
        {
            problems.push(format!(
                "{name}: status_url should link to <external URL>/targets/{{{{ $labels.target }}}}, is {status_url:?}"
            ));
        }
        if !anchors.contains(&name.to_lowercase()) {
            problems.push(format!("{name}: {RUNBOOKS} has no `## {name}` section"));
        }
        if let Some(url) = rule.annotations.get("dashboard_url") {
            if !DASHBOARD_UIDS
                .iter()
                .any(|(_, uid)| url.contains(&format!("/d/{uid}/")))
            {
                problems.push(format!(
                    "{name}: dashboard_url {url} names no shipped dashboard uid"
                ));
            }
        }
    }
    assert!(
        problems.is_empty(),
        "alert rule problems:\n{}",
        problems.join("\n")
    );
}

#[test]
fn recording_rules_follow_level_metric_operations() {
    for rule in rules().iter().filter(|r| r.record.is_some()) {
        let name = rule.record.as_deref().unwrap_or_default();
        let parts: Vec<&str> = name.split(':').collect();
        assert!(
            parts.len() == 3 && parts.iter().all(|p| !p.is_empty()),
            "recording rule {name} is not level:metric:operations"
        );
        assert!(
            !parts[1].ends_with("_total"),
            "recording rule {name}: drop `_total` from the metric part once rate/increase is applied"
        );
        assert!(
            !rule.expr.trim().is_empty(),
            "recording rule {name} has no expression"
        );
    }
}

#[derive(Deserialize)]
struct RuleTestFile {
    tests: Vec<RuleTestCase>,
}

#[derive(Deserialize)]
struct RuleTestCase {
    #[serde(default)]
    alert_rule_test: Vec<AlertTest>,
}

#[derive(Deserialize)]
struct AlertTest {
    alertname: String,
    #[serde(default)]
    exp_alerts: Vec<yaml_serde::Value>,
}

#[test]
fn every_alert_has_a_firing_and_a_quiet_promtool_case() {
    let mut firing = BTreeSet::new();
    let mut quiet = BTreeSet::new();
    for file in rule_test_files() {
        let text = std::fs::read_to_string(&file).expect("read rule test file");
        let parsed: RuleTestFile =
            yaml_serde::from_str(&text).unwrap_or_else(|e| panic!("parse {}: {e}", file.display()));
        for case in parsed.tests {
            for t in case.alert_rule_test {
                if t.exp_alerts.is_empty() {
                    quiet.insert(t.alertname);
                } else {
                    firing.insert(t.alertname);
                }
            }
        }
    }
    let mut missing = Vec::new();
    for rule in rules() {
        if let Some(name) = rule.alert {
            if !firing.contains(&name) {
                missing.push(format!("{name}: no firing case"));
            }
            if !quiet.contains(&name) {
                missing.push(format!("{name}: no quiet case (exp_alerts: [])"));
            }
        }
    }
    assert!(
        missing.is_empty(),
        "promtool test coverage in {RULE_TESTS_DIR}:\n{}",
        missing.join("\n")
    );
}

fn dashboards() -> Vec<(String, Value)> {
    DASHBOARD_UIDS
        .iter()
        .map(|(file, _)| {
            let path = format!("{DASHBOARDS_DIR}/{file}");
            let v: Value = serde_json::from_str(&repo_file(&path))
                .unwrap_or_else(|e| panic!("parse {path}: {e}"));
            (file.to_string(), v)
        })
        .collect()
}

/// Every panel, rows' nested panels included.
fn panels(dashboard: &Value) -> Vec<&Value> {
    let mut out = Vec::new();
    for p in dashboard["panels"].as_array().into_iter().flatten() {
        out.push(p);
        for nested in p["panels"].as_array().into_iter().flatten() {
            out.push(nested);
        }
    }
    out
}

fn is_datasource_variable(v: &Value) -> bool {
    v["uid"] == "${datasource}" && v["type"] == "prometheus"
}

/// Contents of every `[...]` range selector in an expression.
fn ranges(expr: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut rest = expr;
    while let Some(start) = rest.find('[') {
        let after = &rest[start + 1..];
        let Some(end) = after.find(']') else { break };
        out.push(&after[..end]);
        rest = &after[end + 1..];
    }
    out
}

#[test]
fn dashboards_have_stable_uids_and_the_required_variables() {
    for ((file, d), (_, uid)) in dashboards().iter().zip(DASHBOARD_UIDS) {
        assert_eq!(d["uid"], uid, "{file}: uid changed");
        assert!(
            d["id"].is_null(),
            "{file}: id must be null so imports do not clash"
        );
        let schema = d["schemaVersion"].as_u64().unwrap_or(0);
        assert!(schema >= 39, "{file}: schemaVersion {schema} is old");
        assert!(
            d["title"].as_str().is_some_and(|t| !t.is_empty()),
            "{file}: no title"
        );
        let vars = d["templating"]["list"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        let var = |name: &str| vars.iter().find(|v| v["name"] == name).cloned();
        let ds = var("datasource").unwrap_or_else(|| panic!("{file}: no `datasource` variable"));
        assert_eq!(
            ds["type"], "datasource",
            "{file}: `datasource` variable type"
        );
        assert_eq!(
            ds["query"], "prometheus",
            "{file}: `datasource` variable plugin"
        );
        for name in ["job", "target"] {
            let v = var(name).unwrap_or_else(|| panic!("{file}: no `{name}` variable"));
            assert_eq!(
                v["type"], "query",
                "{file}: `{name}` is not a query variable"
            );
            assert!(
                is_datasource_variable(&v["datasource"]),
                "{file}: `{name}` does not use ${{datasource}}"
            );
            let q = v["query"]["query"]
                .as_str()
                .or(v["query"].as_str())
                .unwrap_or_default();
            assert!(
                q.starts_with("label_values("),
                "{file}: `{name}` query {q:?} is not label_values(...)"
            );
        }
        for a in d["annotations"]["list"].as_array().into_iter().flatten() {
            if a.get("expr").is_some() {
                assert!(
                    is_datasource_variable(&a["datasource"]),
                    "{file}: annotation {} not on ${{datasource}}",
                    a["name"]
                );
            }
        }
    }
}

#[test]
fn every_dashboard_panel_has_unit_description_and_uses_the_datasource_variable() {
    let recorded: BTreeSet<String> = rules().into_iter().filter_map(|r| r.record).collect();
    let mut problems = Vec::new();
    for (file, d) in dashboards() {
        let mut ids = BTreeSet::new();
        let mut count = 0;
        for p in panels(&d) {
            let title = p["title"].as_str().unwrap_or("<untitled>");
            let at = format!("{file}: panel {title:?}");
            if !ids.insert(p["id"].as_u64().unwrap_or(0)) {
                problems.push(format!("{at}: duplicate or missing id"));
            }
            if p["type"] == "row" {
                continue;
            }
            count += 1;
            if p["description"]
                .as_str()
                .is_none_or(|s| s.trim().is_empty())
            {
                problems.push(format!("{at}: no description"));
            }
            if p["fieldConfig"]["defaults"]["unit"]
                .as_str()
                .is_none_or(|s| s.is_empty())
            {
                problems.push(format!("{at}: no unit (fieldConfig.defaults.unit)"));
            }
            if !is_datasource_variable(&p["datasource"]) {
                problems.push(format!("{at}: panel datasource is not ${{datasource}}"));
            }
            let targets = p["targets"].as_array().cloned().unwrap_or_default();
            if targets.is_empty() {
                problems.push(format!("{at}: no queries"));
            }
            for t in &targets {
                if !is_datasource_variable(&t["datasource"]) {
                    problems.push(format!(
                        "{at}: query {} is not on ${{datasource}}",
                        t["refId"]
                    ));
                }
                let expr = t["expr"].as_str().unwrap_or_default();
                if expr.trim().is_empty() {
                    problems.push(format!("{at}: query {} has no expr", t["refId"]));
                }
                for r in ranges(expr) {
                    if r != "$__rate_interval" && r != "$__range" {
                        problems.push(format!("{at}: range [{r}] should be [$__rate_interval] (or [$__range] for totals)"));
                    }
                }
                if expr.contains("_bucket") && t["exemplar"] != true && !expr.contains(':') {
                    problems.push(format!("{at}: histogram query without exemplars"));
                }
                for word in expr.split(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':')) {
                    if word.matches(':').count() == 2 && !recorded.contains(word) {
                        problems.push(format!("{at}: uses {word}, which {RULES} does not record"));
                    }
                }
            }
        }
        assert!(count >= 10, "{file}: only {count} panels");
    }
    assert!(
        problems.is_empty(),
        "dashboard problems:\n{}",
        problems.join("\n")
    );
}

#[test]
fn grafana_provisioning_example_points_at_the_dashboards() {
    let provider = repo_file("deploy/grafana/provisioning/dashboards/mcp-exporter.yaml");
    let v: yaml_serde::Value = yaml_serde::from_str(&provider).expect("provider YAML parses");
    let providers = v["providers"].as_sequence().expect("providers list");
    assert!(
        providers
            .iter()
            .any(|p| p["type"].as_str() == Some("file") && p["options"]["path"].as_str().is_some()),
        "no file provider with options.path"
    );
    let ds = repo_file("deploy/grafana/provisioning/datasources/mcp-exporter.yaml");
    let v: yaml_serde::Value = yaml_serde::from_str(&ds).expect("datasource YAML parses");
    let list = v["datasources"].as_sequence().expect("datasources list");
    assert!(
        list.iter()
            .any(|d| d["type"].as_str() == Some("prometheus")),
        "no prometheus datasource in the example"
    );
}

/// Series names the code registers: every `"mcp_..."` string literal under
/// src/ (registration names carry no `_total`, unit or histogram suffix).
fn registered_names() -> BTreeSet<String> {
    fn walk(dir: &Path, out: &mut BTreeSet<String>) {
        for entry in
            std::fs::read_dir(dir).unwrap_or_else(|e| panic!("list {}: {e}", dir.display()))
        {
            let path = entry.expect("dir entry").path();
            if path.is_dir() {
                walk(&path, out);
            } else if path.extension().is_some_and(|x| x == "rs") {
                let text = std::fs::read_to_string(&path).expect("read source");
                for literal in text.split('"').skip(1).step_by(2) {
                    if literal.starts_with("mcp_")
                        && literal
                            .chars()
                            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
                    {
                        out.insert(literal.to_string());
                    }
                }
            }
        }
    }
    let mut out = BTreeSet::new();
    walk(&repo_path("src"), &mut out);
    out
}

/// `mcp_*` words of a text, recorded-rule names (`level:metric:ops`) aside.
fn mentioned_names(text: &str) -> BTreeSet<String> {
    text.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == ':'))
        .filter(|w| w.starts_with("mcp_") && !w.contains(':') && !w.ends_with('_'))
        .map(str::to_string)
        .collect()
}

#[test]
fn every_series_named_in_docs_rules_and_dashboards_exists_in_the_code() {
    let registered = registered_names();
    assert!(
        registered.contains("mcp_up") && registered.contains("mcp_listing_outcomes"),
        "no registration names found under src/: {registered:?}"
    );
    // What an exposition shows for a registered name.
    let suffixes = ["", "_total", "_seconds", "_seconds_total", "_bytes"];
    let histogram = ["", "_bucket", "_sum", "_count"];
    let exposed = |name: &str| {
        suffixes.iter().any(|s| {
            histogram.iter().any(|h| {
                name.strip_suffix(h)
                    .and_then(|n| n.strip_suffix(s))
                    .is_some_and(|base| registered.contains(base))
            })
        })
    };
    let mut files: Vec<String> = vec![
        "docs/metrics.md".into(),
        RUNBOOKS.into(),
        "alerts/README.md".into(),
        RULES.into(),
    ];
    files.extend(rule_test_files().iter().map(|p| {
        p.strip_prefix(repo_path(""))
            .unwrap_or(p)
            .display()
            .to_string()
    }));
    files.extend(
        DASHBOARD_UIDS
            .iter()
            .map(|(file, _)| format!("{DASHBOARDS_DIR}/{file}")),
    );
    let mut unknown = Vec::new();
    for file in &files {
        for name in mentioned_names(&repo_file(file)) {
            if !exposed(&name) {
                unknown.push(format!("{file}: {name}"));
            }
        }
    }
    assert!(
        unknown.is_empty(),
        "series named but not registered by the code:\n{}",
        unknown.join("\n")
    );
}
