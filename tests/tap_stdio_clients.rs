//! `mcp-exporter tap --stdio -- CMD ARGS…` as a client's config runs it:
//! real SDK stdio clients (the Python SDK, the TypeScript SDK 1.x) start
//! the tap, which starts the server — the simulator over stdio paging 14
//! tools by 8, or the Python SDK's paginating server (23 tools by 5). The
//! client sees through the tap exactly what it sees directly; with
//! `--merge-pages` it sees the whole catalogue; the report file holds one
//! JSON object per client listing and stderr a line per listing and a
//! summary at exit.

use mcp_testkit::clients::SdkClient;
use mcp_testkit::exporter_bin;
use mcp_testkit::peers::Peer;
use serde_json::Value;

fn simulator() -> Vec<String> {
    let mut argv = vec![exporter_bin().to_string_lossy().into_owned()];
    for a in [
        "simulate",
        "--scenario",
        "healthy",
        "--items",
        "14",
        "--page-size",
        "8",
    ] {
        argv.push(a.to_string());
    }
    argv.extend(["--kinds".to_string(), "tools".to_string()]);
    argv
}

/// `mcp-exporter tap --stdio FLAGS -- SERVER…`.
fn tapped(flags: &[&str], server: &[String]) -> Vec<String> {
    let mut argv = vec![
        exporter_bin().to_string_lossy().into_owned(),
        "tap".into(),
        "--stdio".into(),
    ];
    argv.extend(flags.iter().map(|f| f.to_string()));
    argv.push("--".into());
    argv.extend(server.iter().cloned());
    argv
}

fn report_lines(path: &std::path::Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("report line {l:?}: {e}")))
        .collect()
}

/// Through the tap a page-1 client sees what it sees directly; the tap
/// reports the abandoned listing in its report file and on stderr.
fn passes_through_and_reports(client: SdkClient, server: &[String], page_one: usize) {
    let dir = tempfile::tempdir().expect("tempdir");
    let report = dir.path().join("listings.jsonl");
    let report_flag = report.to_string_lossy().into_owned();
    let (direct, _) = client.list_tools_stdio(server, Some("desk-app"));
    let (through, stderr) = client.list_tools_stdio(
        &tapped(&["--report", &report_flag], server),
        Some("desk-app"),
    );
    assert_eq!(
        through.names, direct.names,
        "{client:?}: the tap changed what the client saw"
    );
    assert_eq!(through.count, page_one);
    let lines = report_lines(&report);
    assert_eq!(lines.len(), 1, "one listing: {lines:?}");
    let line = &lines[0];
    assert_eq!(line["client"], "desk-app");
    assert_eq!(line["kind"], "tools");
    assert_eq!(line["outcome"], "abandoned", "{line}");
    assert_eq!(line["abandon_cause"], "session_ended", "{line}");
    assert_eq!(line["pages"], 1);
    assert_eq!(line["items"], page_one as u64);
    assert!(line["merged"].is_null());
    assert!(
        stderr.contains("msg=\"client listing\" tap=tap client=desk-app")
            && stderr.contains("outcome=abandoned"),
        "a log line per listing:\n{stderr}"
    );
    assert!(
        stderr.contains("msg=\"tap summary\" tap=tap client=desk-app verdict=down"),
        "a summary at exit:\n{stderr}"
    );
}

/// With merging on for that client it sees every item, and the report
/// says the tap merged it.
fn merged_whole(client: SdkClient, server: &[String], all: usize) {
    let dir = tempfile::tempdir().expect("tempdir");
    let report = dir.path().join("listings.jsonl");
    let report_flag = report.to_string_lossy().into_owned();
    let flags = ["--merge-pages", "desk-app", "--report", &report_flag];
    let (through, stderr) = client.list_tools_stdio(&tapped(&flags, server), Some("desk-app"));
    assert_eq!(through.count, all, "{client:?} with merging on:\n{stderr}");
    let lines = report_lines(&report);
    assert_eq!(lines.len(), 1, "{lines:?}");
    assert_eq!(lines[0]["outcome"], "complete", "{}", lines[0]);
    assert_eq!(lines[0]["merged"], "merged", "{}", lines[0]);
    assert!(stderr.contains("verdict=healthy"), "{stderr}");
}

#[test]
fn python_sdk_client_in_front_of_the_simulator() {
    if !SdkClient::Python.installed("tap_stdio_clients") {
        return;
    }
    passes_through_and_reports(SdkClient::Python, &simulator(), 8);
    merged_whole(SdkClient::Python, &simulator(), 14);
}

#[test]
fn typescript_sdk_client_in_front_of_the_simulator() {
    if !SdkClient::TypeScript1.installed("tap_stdio_clients") {
        return;
    }
    passes_through_and_reports(SdkClient::TypeScript1, &simulator(), 8);
    merged_whole(SdkClient::TypeScript1, &simulator(), 14);
}

/// A real SDK server behind the stdio tap: the Python SDK's paginating
/// server (23 tools, 5 a page), driven by the Python SDK's client.
#[test]
fn python_sdk_client_in_front_of_a_python_sdk_server() {
    if !SdkClient::Python.installed("tap_stdio_clients")
        || !Peer::Python.installed("tap_stdio_clients")
    {
        return;
    }
    let server = Peer::Python.command();
    passes_through_and_reports(SdkClient::Python, &server, 5);
    merged_whole(SdkClient::Python, &server, 23);
}
