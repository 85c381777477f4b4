//! Taps from the configuration (`taps:`) in `serve`: each on its own
//! listener, compared with its `target:`'s last complete poll (so a client
//! that reads page 1 is told what it missed even when no client walked), and
//! added, changed and removed by a reload like everything else.

use mcp_testkit::clients::tap_url_in;
use mcp_testkit::process::run_exporter;
use mcp_testkit::simulator::http_scenario;
use mcp_testkit::{http_get, Exporter};
use serde_json::Value;
use std::time::Duration;

const LIMIT: Duration = Duration::from_secs(60);

fn config(upstream: &str, taps: &[&str]) -> String {
    let mut text = format!(
        "global:\n  schedule: {{every: 1s}}\ntargets:\n  - name: origin\n    http: {{url: \"{upstream}\"}}\n    kinds: [tools]\n"
    );
    if !taps.is_empty() {
        text.push_str("taps:\n");
    }
    for tap in taps {
        text.push_str(&format!(
            "  - name: {tap}\n    listen: 127.0.0.1:0\n    upstream: {{url: \"{upstream}\"}}\n    target: origin\n"
        ));
    }
    text
}

fn tap(exporter: &Exporter, name: &str) -> Option<Value> {
    let (_, body) = exporter.get("/api/clients");
    let answer: Value = serde_json::from_str(&body).ok()?;
    answer["taps"]
        .as_array()?
        .iter()
        .find(|t| t["name"] == name)
        .cloned()
}

#[test]
fn a_page_one_reader_is_told_what_it_missed_of_the_target() {
    let sim = http_scenario("healthy", &["--items", "14", "--page-size", "8"]);
    let exporter = Exporter::start(&config(&sim.at("/mcp"), &["edge"]));
    // The reference arrives once the target was polled completely.
    exporter.wait(LIMIT, "the reference catalogue", || {
        let edge = tap(&exporter, "edge")?;
        (edge["catalogue"]["tools"]["source"] == "reference").then_some(())
    });
    let url = format!(
        "{}/mcp",
        tap_url_in(&exporter.stderr(), Some("edge")).expect("tap line")
    );
    let run = run_exporter(&[
        "simulate-client",
        "--url",
        &url,
        "--name",
        "desk-app",
        "--first-page-only",
    ]);
    assert!(run.success(), "{}", run.describe());
    let reason = exporter.wait(LIMIT, "desk-app judged", || {
        let edge = tap(&exporter, "edge")?;
        let client = edge["clients"]
            .as_array()?
            .iter()
            .find(|c| c["client"] == "desk-app")?
            .clone();
        client["verdict"]["reasons"].get(0).cloned()
    });
    assert_eq!(reason["code"], "client_reads_prefix");
    assert_eq!(
        reason["message"],
        "desk-app 1.0.0 read page 1 in 1 of 1 tools listings: sees 8 of 14 tools, missing tool-009 … tool-014"
    );
    let metrics = exporter.metrics();
    assert!(
        metrics
            .contains("mcp_client_items_missed{tap=\"edge\",client=\"desk-app\",kind=\"tools\"} 6"),
        "{metrics}"
    );
}

#[test]
fn a_reload_adds_and_removes_taps() {
    let sim = http_scenario("healthy", &["--items", "3", "--page-size", "8"]);
    let upstream = sim.at("/mcp");
    let exporter = Exporter::start_with(
        &config(&upstream, &["one"]),
        &["--web.enable-lifecycle"],
        &[],
    );
    let one = tap_url_in(&exporter.stderr(), Some("one")).expect("tap one serves");
    let (status, body) = exporter.reload(&config(&upstream, &["one", "two"]));
    assert_eq!(status, 200, "{body}");
    exporter.wait(LIMIT, "tap two serving", || tap(&exporter, "two"));
    let two = tap_url_in(&exporter.stderr(), Some("two")).expect("tap two serves");
    assert_eq!(
        tap_url_in(&exporter.stderr(), Some("one")),
        Some(one.clone()),
        "one kept"
    );
    let (status, body) = exporter.reload(&config(&upstream, &["two"]));
    assert_eq!(status, 200, "{body}");
    exporter.wait(LIMIT, "tap one gone", || {
        tap(&exporter, "one").is_none().then_some(())
    });
    let metrics = exporter.metrics();
    assert!(
        !metrics.contains("tap=\"one\""),
        "one's series went with it:\n{metrics}"
    );
    assert!(
        metrics.contains("mcp_tap_requests_total{tap=\"two\""),
        "{metrics}"
    );
    let address = one.trim_start_matches("http://");
    assert!(
        std::net::TcpStream::connect(address).is_err(),
        "nothing listens where tap one was"
    );
    let (status, _) = http_get(&format!("{two}/mcp"));
    assert_eq!(
        status, 400,
        "tap two forwards, and the simulator refuses a GET without a session"
    );
}

#[test]
fn a_tap_that_cannot_start_after_a_reload_is_logged_and_counted() {
    let sim = http_scenario("healthy", &["--items", "3", "--page-size", "8"]);
    let upstream = sim.at("/mcp");
    let exporter = Exporter::start_with(&config(&upstream, &[]), &["--web.enable-lifecycle"], &[]);
    // The address the new tap asks for is taken.
    let taken = std::net::TcpListener::bind("127.0.0.1:0").expect("a port");
    let address = taken.local_addr().expect("its address");
    let text = format!(
        "{}taps:\n  - name: blocked\n    listen: {address}\n    upstream: {{url: \"{upstream}\"}}\n",
        config(&upstream, &[])
    );
    let (status, body) = exporter.reload(&text);
    assert_eq!(status, 200, "{body}");
    exporter.wait(LIMIT, "the failure logged", || {
        exporter
            .stderr()
            .contains("tap not started after the reload")
            .then_some(())
    });
    let metrics = exporter.metrics();
    assert!(
        metrics.contains("mcp_tap_start_failures_total{tap=\"blocked\"} 1"),
        "{metrics}"
    );
    assert!(tap(&exporter, "blocked").is_none(), "not running");
    exporter.wait(LIMIT, "the polls going on", || {
        exporter
            .metrics()
            .contains("mcp_up{target=\"origin\"} 1")
            .then_some(())
    });
}
