//! What an operator watching the exporter's log (a terminal, the journal)
//! sees when a server goes down and comes back: one line each way at the
//! default level, naming the target, the old and new level and the first
//! reason — never one per poll.

use mcp_testkit::simulator::http_scenario;
use mcp_testkit::Exporter;
use std::time::Duration;

const LIMIT: Duration = Duration::from_secs(60);

/// Waits until `n` more polls than now have been recorded.
fn wait_polls(exporter: &Exporter, n: u64) {
    let from = exporter.polls("flaky");
    exporter.wait(LIMIT, "more polls", || {
        (exporter.polls("flaky") >= from + n).then_some(())
    });
}

fn changes(exporter: &Exporter) -> Vec<String> {
    exporter
        .stderr()
        .lines()
        .filter(|l| l.contains("verdict changed"))
        .map(str::to_string)
        .collect()
}

#[test]
fn a_server_going_down_and_back_is_logged_once_each_way() {
    let server = http_scenario("healthy", &[]);
    let address = server.url.trim_start_matches("http://").to_string();
    let exporter = Exporter::start(&format!(
        "global:\n  schedule: {{every: 1s}}\n  jitter: 0s\n  timeout: 5s\n  page_timeout: 2s\ntargets:\n  - name: flaky\n    url: {}/mcp\n",
        server.url
    ));
    wait_polls(&exporter, 3);
    // A first verdict that is healthy is no news.
    assert!(changes(&exporter).is_empty(), "{}", exporter.stderr());

    drop(server);
    exporter.wait(LIMIT, "the down line", || {
        (!changes(&exporter).is_empty()).then_some(())
    });
    wait_polls(&exporter, 3);
    let down = changes(&exporter);
    assert_eq!(down.len(), 1, "{}", exporter.stderr());
    assert!(
        down[0].contains("WARN")
            && down[0].contains("healthy → down")
            && down[0].contains("flaky")
            && down[0].contains("session_failed"),
        "{}",
        down[0]
    );

    let _back = http_scenario("healthy", &["--listen", &address]);
    exporter.wait(LIMIT, "the recovery line", || {
        (changes(&exporter).len() > 1).then_some(())
    });
    wait_polls(&exporter, 3);
    let all = changes(&exporter);
    assert_eq!(all.len(), 2, "{}", exporter.stderr());
    assert!(
        all[1].contains("INFO") && all[1].contains("down → healthy") && all[1].contains("flaky"),
        "{}",
        all[1]
    );
}
