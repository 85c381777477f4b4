//! What an operator watching the exporter's log (a terminal, the journal)
//! sees when a server goes down and comes back: one line each way at the
//! default level, naming the target, the old and new level and the first
//! reason — never one per poll. In the default `--log.format logfmt`,
//! every line a log pipeline reads with `| logfmt`.

use mcp_testkit::logfmt::{get, parse_line};
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

/// The exporter's log lines, each parsed as logfmt (a line that is not
/// fails the test).
fn log_lines(exporter: &Exporter) -> Vec<Vec<(String, String)>> {
    let stderr = exporter.stderr();
    stderr
        .lines()
        .map(|l| parse_line(l).unwrap_or_else(|e| panic!("not logfmt ({e}): {l:?}\n{stderr}")))
        .collect()
}

fn changes(exporter: &Exporter) -> Vec<Vec<(String, String)>> {
    log_lines(exporter)
        .into_iter()
        .filter(|pairs| get(pairs, "msg").is_some_and(|m| m.starts_with("verdict changed")))
        .collect()
}

#[test]
fn a_server_going_down_and_back_is_logged_once_each_way() {
    let server = http_scenario("healthy", &[]);
    let address = server.url.trim_start_matches("http://").to_string();
    let exporter = Exporter::start(&format!(
        "global:\n  schedule: {{every: 1s}}\n  jitter: 0s\n  limits:\n    timeout: 5s\n    page_timeout: 2s\ntargets:\n  - name: flaky\n    http:\n      url: {}/mcp\n",
        server.url
    ));
    wait_polls(&exporter, 3);
    let announced = log_lines(&exporter)
        .into_iter()
        .find(|pairs| get(pairs, "msg") == Some("listening on"))
        .expect("the listening line");
    assert_eq!(get(&announced, "url"), Some(exporter.url()));
    // A first verdict that is healthy is no news.
    assert!(changes(&exporter).is_empty(), "{}", exporter.stderr());

    drop(server);
    exporter.wait(LIMIT, "the down line", || {
        (!changes(&exporter).is_empty()).then_some(())
    });
    wait_polls(&exporter, 3);
    let down = changes(&exporter);
    assert_eq!(down.len(), 1, "{}", exporter.stderr());
    let line = &down[0];
    assert_eq!(get(line, "level"), Some("warn"), "{line:?}");
    assert_eq!(get(line, "msg"), Some("verdict changed: healthy → down"));
    assert_eq!(get(line, "target_name"), Some("flaky"));
    assert_eq!(get(line, "code"), Some("session_failed"));
    assert!(
        get(line, "reason").is_some_and(|r| !r.is_empty()),
        "{line:?}"
    );
    assert!(
        get(line, "time").is_some_and(|t| t.ends_with('Z'))
            && get(line, "source").is_some_and(|s| s.starts_with("src/")),
        "{line:?}"
    );

    let _back = http_scenario("healthy", &["--listen", &address]);
    exporter.wait(LIMIT, "the recovery line", || {
        (changes(&exporter).len() > 1).then_some(())
    });
    wait_polls(&exporter, 3);
    let all = changes(&exporter);
    assert_eq!(all.len(), 2, "{}", exporter.stderr());
    let line = &all[1];
    assert_eq!(get(line, "level"), Some("info"), "{line:?}");
    assert_eq!(get(line, "msg"), Some("verdict changed: down → healthy"));
    assert_eq!(get(line, "target_name"), Some("flaky"));
}

#[test]
fn text_and_json_are_still_accepted() {
    let server = http_scenario("healthy", &[]);
    let config = format!(
        "global:\n  schedule: {{every: 1s}}\n  jitter: 0s\ntargets:\n  - name: flaky\n    http:\n      url: {}/mcp\n",
        server.url
    );
    for format in ["text", "json"] {
        let exporter = Exporter::start_with(&config, &["--log.format", format], &[]);
        wait_polls(&exporter, 1);
        let stderr = exporter.stderr();
        let started = stderr
            .lines()
            .find(|l| l.contains("mcp-exporter listening"))
            .unwrap_or_else(|| panic!("{format}: no start line\n{stderr}"));
        match format {
            "json" => {
                let record: serde_json::Value = serde_json::from_str(started).unwrap();
                assert_eq!(record["level"], "INFO", "{started}");
            }
            _ => assert!(
                started.contains(" INFO ") && parse_line(started).is_err(),
                "{started}"
            ),
        }
    }
}
