//! `check-client` serving clients that cannot be scripted, as an app uses
//! it: over stdio, a real SDK client launches the harness from an
//! `mcpServers`-style entry several times, each launch one scenario, each
//! graded in the state file and the report; over HTTP, a real SDK client
//! connects to the listener again and again while the scenarios move on.

use mcp_testkit::check_client::Graded;
use mcp_testkit::peers::{installed, peer_path};
use mcp_testkit::process::{run, Proc};
use mcp_testkit::{exporter_bin, wait_for};
use serde_json::{json, Value};
use std::process::Command;
use std::time::Duration;

/// A client of tests/peers/clients run once with `env`; whether it
/// succeeded is its own business (the harness grades the wire).
fn run_client(argv: &[String], env: &[(&str, String)]) -> bool {
    let mut command = Command::new(&argv[0]);
    command.args(&argv[1..]);
    for (k, v) in env {
        command.env(k, v);
    }
    run(command, "an SDK client").success()
}

/// `mcp-exporter check-client ARGS --json` (no client): the report.
fn report_of(args: &[&str]) -> Graded {
    let mut command = Command::new(exporter_bin());
    command.arg("check-client").arg("--json").args(args);
    let finished = run(command, "check-client --state");
    let report: Value = serde_json::from_str(&finished.stdout).unwrap_or_else(|e| {
        panic!("not JSON ({e}): {}", finished.describe());
    });
    Graded {
        code: finished.code(),
        report,
        finished,
    }
}

#[test]
fn an_app_launches_the_harness_as_its_stdio_server() {
    if !installed("check_client_serving", &["python/.venv/bin/python"]) {
        return;
    }
    let dir = tempfile::tempdir().expect("temp dir");
    let state = dir.path().join("check-client").join("state.json");
    let report = dir.path().join("grades.txt");
    // What a Claude-Desktop-style configuration holds.
    let entry = json!({"mcpServers": {"check-client": {
        "command": exporter_bin().to_string_lossy(),
        "args": ["check-client", "--serve", "stdio",
                 "--state", state.to_string_lossy(), "--report", report.to_string_lossy(),
                 "--scenario", "walk,cycle,endless"],
    }}});
    let server = &entry["mcpServers"]["check-client"];
    let mut argv = vec![server["command"].clone()];
    argv.extend(server["args"].as_array().cloned().unwrap_or_default());
    let command = serde_json::to_string(&argv).expect("argv");
    let client = vec![
        peer_path("python/.venv/bin/python"),
        peer_path("clients/check_python_sdk.py"),
    ];
    for _ in 0..3 {
        assert!(run_client(
            &client,
            &[("MCP_SERVER_COMMAND", command.clone())]
        ));
    }
    let graded = report_of(&["--state", &state.to_string_lossy()]);
    graded.expect(
        "walk",
        "fail",
        "read page 1 of 3: saw 10 of 23 tools, missing tool-011 … tool-023",
    );
    graded.expect(
        "cycle",
        "fail",
        "read page 1 only: saw 10 of 40 tools, missing tool-011 … tool-040",
    );
    graded.expect("endless", "fail", "read page 1 only: saw 5 of 10 tools");
    assert_eq!(graded.code, Some(1), "{}", graded.describe());
    let lines = std::fs::read_to_string(&report).expect("report written");
    assert_eq!(lines.lines().count(), 3, "{lines}");
    assert!(
        lines.contains("launch 2 · round 1 · cycle · fail: read page 1 only"),
        "{lines}"
    );
}

/// The URL in `scenario 1 of N: … at URL`.
fn serving_url(line: &str) -> Option<String> {
    let rest = &line[line.find(" at http://")? + 4..];
    Some(rest.split_whitespace().next()?.to_string())
}

#[test]
fn a_client_connects_to_the_listener_again_and_again() {
    if !installed(
        "check_client_serving",
        &["node_modules/@modelcontextprotocol/client/package.json"],
    ) {
        return;
    }
    let dir = tempfile::tempdir().expect("temp dir");
    let junit = dir.path().join("serving.xml");
    let report = dir.path().join("grades.txt");
    let port = mcp_testkit::ports::free_port().to_string();
    let listen = format!("127.0.0.1:{port}");
    let mut command = Command::new(exporter_bin());
    command.args(["check-client", "--serve", "http", "--listen", &listen]);
    command.args([
        "--scenario",
        "walk,repeat-cursor,endless",
        "--deadline",
        "60s",
    ]);
    command
        .arg("--junit")
        .arg(&junit)
        .arg("--report")
        .arg(&report);
    let harness = Proc::try_spawn("check-client --serve http", command, serving_url)
        .unwrap_or_else(|e| panic!("{e}"));
    let client = vec!["node".to_string(), peer_path("clients/check-ts2.mjs")];
    for n in 1..=3 {
        let ready = format!("scenario {n} of 3:");
        wait_for(Duration::from_secs(60), &ready, || {
            harness.stderr().contains(&ready).then_some(())
        });
        run_client(&client, &[("MCP_SERVER_URL", harness.url.clone())]);
    }
    wait_for(Duration::from_secs(60), "the report", || {
        let lines = std::fs::read_to_string(&report).unwrap_or_default();
        (lines.lines().count() == 3 && junit.exists()).then_some(lines)
    });
    let lines = std::fs::read_to_string(&report).expect("report");
    assert!(
        lines.contains("walk · pass: read all 3 pages: 23 of 23 tools"),
        "{lines}"
    );
    assert!(
        lines.contains("repeat-cursor · warn: stopped after 3 pages at a repeated cursor"),
        "{lines}"
    );
    assert!(
        lines.contains("endless · warn: stopped after 64 pages"),
        "{lines}"
    );
    let xml = std::fs::read_to_string(&junit).expect("junit");
    assert!(xml.contains("tests=\"3\" failures=\"0\""), "{xml}");
}
