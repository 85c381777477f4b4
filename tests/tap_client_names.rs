//! Client names that look like other names (issue 39, break 11) through
//! `mcp-exporter tap` in front of the simulator: `mcp`, `m<U+200B>cp` (a
//! zero-width space), `<U+202E>pcm` (a right-to-left override: shown, it
//! reads `mcp`), `a\nb` (a backslash and an `n`) and `a<newline>b`. Each is
//! a client of its own, its label shown escaped and unlike the others on
//! `/metrics`, `/api/clients`, the status page and the log.

use mcp_testkit::clients::TapCommand;
use mcp_testkit::http::raw_get;
use mcp_testkit::logfmt::{get, parse_line};
use mcp_testkit::process::run_exporter;
use mcp_testkit::sample;
use mcp_testkit::simulator::http_scenario;
use mcp_testkit::wait_for;
use std::collections::BTreeSet;
use std::time::Duration;

const PAGING: [&str; 6] = ["--items", "14", "--page-size", "8", "--kinds", "tools"];

/// Each name a client gives, and its label.
const NAMES: [(&str, &str); 5] = [
    ("mcp", "mcp"),
    ("m\u{200b}cp", "m\\u{200b}cp"),
    ("\u{202e}pcm", "\\u{202e}pcm"),
    ("a\\nb", "a\\\\nb"),
    ("a\nb", "a\\nb"),
];

/// Characters that show as nothing or reorder what follows.
fn hidden(text: &str) -> Vec<char> {
    text.chars()
        .filter(|&c| mcp_listing::text::is_invisible(c))
        .collect()
}

fn labels() -> BTreeSet<String> {
    NAMES.iter().map(|(_, label)| label.to_string()).collect()
}

#[test]
fn names_that_look_alike_stay_apart_and_show_escaped() {
    let sim = http_scenario("healthy", &PAGING);
    let tap = TapCommand::start(&sim.at("/mcp"), &["--name", "edge", "--log.listings"]);
    let url = format!("{}/mcp", tap.tap_url);
    for (name, _) in NAMES {
        let run = run_exporter(&["simulate-client", "--url", &url, "--name", name, "--walk"]);
        assert!(run.success(), "{name:?}: {}", run.describe());
    }
    let listed = |metrics: &str, label: &str| {
        let series = [
            ("tap", "edge"),
            ("client", label),
            ("kind", "tools"),
            ("outcome", "complete"),
        ];
        sample(metrics, "mcp_client_listings_total", &series)
    };
    let metrics = wait_for(Duration::from_secs(60), "five clients listed", || {
        let text = tap.metrics();
        NAMES
            .iter()
            .all(|(_, label)| listed(&text, label) == Some(1.0))
            .then_some(text)
    });
    assert_eq!(hidden(&metrics), Vec::<char>::new(), "/metrics");
    assert_eq!(
        sample(&metrics, "mcp_tap_clients", &[("tap", "edge")]),
        Some(5.0)
    );

    // The views are published once a second, after the series.
    let clients = wait_for(Duration::from_secs(60), "five clients shown", || {
        let answer = tap.api_clients();
        let clients: BTreeSet<String> = answer["taps"][0]["clients"]
            .as_array()?
            .iter()
            .filter_map(|c| c["client"].as_str().map(str::to_string))
            .collect();
        (clients.len() == NAMES.len()).then_some(clients)
    });
    assert_eq!(clients, labels(), "/api/clients");
    let address = tap.web.at("").trim_start_matches("http://").to_string();
    let raw = raw_get(&address, "/api/clients", &[]).expect("/api/clients");
    assert_eq!(
        hidden(&raw.text()),
        Vec::<char>::new(),
        "/api/clients as sent"
    );

    let page = raw_get(&address, "/", &[]).expect("the status page").text();
    assert_eq!(hidden(&page), Vec::<char>::new(), "the page");
    for (_, label) in NAMES {
        assert!(page.contains(label), "{label} on the page");
    }

    let logged = |stderr: &str| -> BTreeSet<String> {
        stderr
            .lines()
            .filter(|l| l.contains("msg=\"client listing\""))
            .map(|l| parse_line(l).unwrap_or_else(|e| panic!("{e}: {l}")))
            .filter_map(|pairs| get(&pairs, "client").map(str::to_string))
            .collect()
    };
    let stderr = wait_for(Duration::from_secs(60), "five listings logged", || {
        let stderr = tap.web.stderr();
        (logged(&stderr).len() == NAMES.len()).then_some(stderr)
    });
    assert_eq!(logged(&stderr), labels(), "the log:\n{stderr}");
    assert_eq!(hidden(&stderr), Vec::<char>::new(), "the log");
}
