//! `mcp-exporter check` against the simulator: every row of the verdict
//! table in docs/conformance.md, the JUnit file, the exit statuses.

use mcp_testkit::process::run_exporter;
use mcp_testkit::simulator::http_scenario;
use mcp_testkit::{exporter_bin, repo_file, ClosedPort};
use std::collections::BTreeSet;

struct Row {
    args: Vec<String>,
    failing: BTreeSet<String>,
    exit: i32,
}

/// The rows between the `verdicts` markers of docs/conformance.md.
fn table() -> Vec<Row> {
    let doc = repo_file("docs/conformance.md");
    let start = doc.find("<!-- verdicts:begin -->").expect("begin marker");
    let end = doc.find("<!-- verdicts:end -->").expect("end marker");
    doc[start..end]
        .lines()
        .filter(|l| l.starts_with("| `"))
        .map(|l| {
            let cells: Vec<&str> = l.trim_matches('|').split('|').map(str::trim).collect();
            assert_eq!(cells.len(), 3, "row {l:?}");
            let args = cells[0]
                .trim_matches('`')
                .split_whitespace()
                .map(str::to_string)
                .collect();
            let failing = cells[1]
                .split('`')
                .skip(1)
                .step_by(2)
                .map(str::to_string)
                .collect();
            Row {
                args,
                failing,
                exit: cells[2].parse().expect("exit status"),
            }
        })
        .collect()
}

/// `check CHECK_ARGS -- mcp-exporter simulate SIM_ARGS`: exit code, the
/// JSON it printed (Null when it printed none) and its stdout.
fn check(check_args: &[&str], sim_args: &[String]) -> (i32, serde_json::Value, String) {
    let bin = exporter_bin();
    let mut args = vec!["check"];
    args.extend_from_slice(check_args);
    args.extend(["--", bin.to_str().unwrap(), "simulate"]);
    args.extend(sim_args.iter().map(String::as_str));
    let out = run_exporter(&args);
    let json = serde_json::from_str(&out.stdout).unwrap_or(serde_json::Value::Null);
    (out.code().unwrap_or(-1), json, out.stdout)
}

const FLAGS: [&str; 9] = [
    "--kind",
    "tools",
    "--timeout",
    "3s",
    "--max-pages",
    "50",
    "--json",
    "--stdio",
    "--junit",
];

#[test]
fn every_documented_verdict_holds() {
    let rows = table();
    assert!(rows.len() >= 30, "the table has {} rows", rows.len());
    let dir = tempfile::tempdir().unwrap();
    let mut wrong = Vec::new();
    for (i, row) in rows.iter().enumerate() {
        let junit = dir.path().join(format!("{i}.xml"));
        let mut flags: Vec<&str> = FLAGS.to_vec();
        flags.push(junit.to_str().unwrap());
        let (code, json, text) = check(&flags, &row.args);
        let failing: BTreeSet<String> = json["rules"]
            .as_array()
            .unwrap_or_else(|| panic!("{:?}: no JSON: {text}", row.args))
            .iter()
            .filter(|r| r["verdict"] == "fail")
            .map(|r| r["id"].as_str().unwrap().to_string())
            .collect();
        if failing != row.failing || code != row.exit {
            wrong.push(format!(
                "{:?}: failing {failing:?} exit {code}, documented {:?} exit {}",
                row.args, row.failing, row.exit
            ));
        }
        // Every JUnit file parses and counts what the JSON says.
        let xml = std::fs::read_to_string(&junit).unwrap();
        let doc = roxmltree::Document::parse(&xml)
            .unwrap_or_else(|e| panic!("{:?}: JUnit does not parse: {e}\n{xml}", row.args));
        let failures = doc
            .descendants()
            .filter(|n| n.has_tag_name("failure"))
            .count();
        assert_eq!(failures, failing.len(), "{:?}", row.args);
    }
    assert!(
        wrong.is_empty(),
        "verdicts differ from docs/conformance.md:\n{}",
        wrong.join("\n")
    );
}

#[test]
fn junit_is_well_formed_with_one_case_per_rule() {
    let dir = tempfile::tempdir().unwrap();
    let junit = dir.path().join("check.xml");
    let (code, json, _) = check(
        &["--json", "--junit", junit.to_str().unwrap(), "--stdio"],
        &["--scenario".into(), "overlap".into()],
    );
    assert_eq!(code, 0);
    let xml = std::fs::read_to_string(&junit).unwrap();
    let doc = roxmltree::Document::parse(&xml).expect("well-formed JUnit");
    let root = doc.root_element();
    assert_eq!(root.tag_name().name(), "testsuites");
    let suite = root
        .children()
        .find(|n| n.has_tag_name("testsuite"))
        .expect("a testsuite");
    let cases: Vec<_> = suite
        .children()
        .filter(|n| n.has_tag_name("testcase"))
        .collect();
    let rules = json["rules"].as_array().unwrap();
    assert_eq!(cases.len(), rules.len());
    assert_eq!(
        suite.attribute("tests"),
        Some(rules.len().to_string().as_str())
    );
    let failed: Vec<_> = cases
        .iter()
        .filter(|c| c.children().any(|n| n.has_tag_name("failure")))
        .map(|c| c.attribute("name").unwrap().to_string())
        .collect();
    // Four kinds overlap: one duplicate failure each (a SHOULD for tools,
    // advice for the other kinds).
    assert_eq!(failed.len(), 4, "{failed:?}");
    assert_eq!(failed[0], "items-unique [SHOULD]", "{failed:?}");
    assert!(
        failed[1..].iter().all(|n| n == "items-unique [advice]"),
        "{failed:?}"
    );
    let skipped = cases
        .iter()
        .filter(|c| c.children().any(|n| n.has_tag_name("skipped")))
        .count();
    assert_eq!(
        suite.attribute("skipped"),
        Some(skipped.to_string().as_str())
    );
}

#[test]
fn the_table_view_names_failures_with_evidence() {
    let (code, _, text) = check(
        &["--kind", "tools", "--stdio"],
        &["--scenario".into(), "cycle".into()],
    );
    assert_eq!(code, 1);
    assert!(text.contains("cursor-cycle"), "{text}");
    assert!(text.contains("↳ listing 1 · page 3 · cursor #"), "{text}");
    assert!(text.contains("→ exit 1"), "{text}");
}

#[test]
fn usage_errors_exit_2() {
    let out = run_exporter(&["check", "--stdio"]);
    assert_eq!(out.code(), Some(2), "{}", out.describe());
    let out = run_exporter(&["check"]);
    assert_eq!(out.code(), Some(2), "{}", out.describe());
}

#[test]
fn no_session_is_exit_1_and_a_junit_error() {
    let dir = tempfile::tempdir().unwrap();
    let junit = dir.path().join("x.xml");
    let closed = ClosedPort::new();
    let out = run_exporter(&[
        "check",
        "--json",
        "--timeout",
        "2s",
        "--junit",
        junit.to_str().unwrap(),
        "--url",
        &closed.url("/mcp"),
    ]);
    assert_eq!(out.code(), Some(1), "{}", out.describe());
    let xml = std::fs::read_to_string(&junit).unwrap();
    let doc = roxmltree::Document::parse(&xml).unwrap();
    assert!(doc.descendants().any(|n| n.has_tag_name("error")));
}

#[test]
fn modern_http_server_with_subscriptions_runs_clean() {
    let sim = http_scenario("protocol-2026", &["--response", "sse"]);
    let out = run_exporter(&["check", "--json", "--url", &sim.at("/mcp")]);
    let json: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(json["protocol_version"], "2026-07-28");
    let fails: Vec<_> = json["rules"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["verdict"] == "fail")
        .collect();
    assert!(fails.is_empty(), "{fails:#?}");
    let acks = json["rules"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["id"] == "subscription-ack" && r["verdict"] == "pass")
        .count();
    assert_eq!(acks, 4, "each kind's filter acknowledged");
    assert_eq!(out.code(), Some(0));
}

/// The README's `check` example is what `check` prints.
#[test]
fn the_readme_check_example_is_what_check_prints() {
    let readme = repo_file("README.md");
    let command = "$ mcp-exporter check --kind tools --stdio -- mcp-exporter simulate --scenario no-cache-hints --protocol 2026-07-28\n";
    let start = readme.find(command).expect("the check example") + command.len();
    let end = start + readme[start..].find("$ echo $?").expect("its exit status");
    let documented: Vec<&str> = readme[start..end].lines().map(str::trim_end).collect();
    let (code, _, printed) = check(
        &["--kind", "tools", "--stdio"],
        &[
            "--scenario".into(),
            "no-cache-hints".into(),
            "--protocol".into(),
            "2026-07-28".into(),
        ],
    );
    assert_eq!(code, 1);
    let printed_lines: Vec<&str> = printed.lines().map(str::trim_end).collect();
    assert_eq!(
        printed_lines, documented,
        "README.md's check example is out of date; it printed:\n{printed}"
    );
}
