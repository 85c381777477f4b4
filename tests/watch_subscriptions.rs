//! 2026-07-28 list changes through `subscriptions/listen`, against the
//! simulator over real sockets and pipes: the wire client's subscription
//! (acknowledgement, ids, misbehaving streams) and watch mode's re-list.

use mcp_listing::HttpMode;
use mcp_testkit::simulator::http_scenario;
use mcp_testkit::{exporter_bin, listing_attempts, sample, Exporter, Proc};
use mcp_wire::session::{Endpoint, Session, SessionOptions};
use mcp_wire::transport::http::HttpSpec;
use mcp_wire::transport::stdio::StdioSpec;
use mcp_wire::transport::TransportLimits;
use std::time::Duration;

const GROW_EVERY_SECOND: [&str; 10] = [
    "simulate",
    "--scenario",
    "grow",
    "--protocol",
    "2026-07-28",
    "--notify",
    "--after-seconds",
    "1",
    "--kinds",
    "tools",
];

fn opts() -> SessionOptions {
    SessionOptions {
        protocol: None,
        era_hint: None,
        limits: TransportLimits::default(),
        request_timeout: Duration::from_secs(10),
        trace: None,
    }
}

fn http_endpoint(base: &str) -> Endpoint {
    Endpoint::Http {
        spec: HttpSpec {
            url: Some(format!("{base}/mcp").parse().unwrap()),
            ..HttpSpec::default()
        },
        mode: HttpMode::Auto,
    }
}

fn sim_http(extra: &[&str]) -> Proc {
    let mut args: Vec<&str> = GROW_EVERY_SECOND.to_vec();
    args.extend(["--transport", "http"]);
    args.extend(extra);
    Proc::start(&args)
}

async fn connect(endpoint: &Endpoint) -> Session {
    match Session::connect(endpoint, opts()).await {
        Ok(s) => s,
        Err(f) => panic!("connect: {}", f.error),
    }
}

#[tokio::test]
async fn http_subscription_is_acknowledged_and_delivers_list_changed() {
    let sim = sim_http(&[]);
    let mut s = connect(&http_endpoint(&sim.url)).await;
    assert!(s.modern, "the simulator speaks 2026-07-28");
    let mut heard = Vec::new();
    while heard.len() < 2 {
        let n = tokio::time::timeout(Duration::from_secs(20), s.next_notification())
            .await
            .expect("a notification within 20 s");
        heard.push(n.expect("the subscription stays open"));
    }
    assert!(
        heard
            .iter()
            .all(|m| m == "notifications/tools/list_changed"),
        "{heard:?}"
    );
    let c = s.subscription_counts().expect("an HTTP subscription");
    assert_eq!(c.opened, 1, "{c:?}");
    assert_eq!(c.acknowledged, 1, "{c:?}");
    assert_eq!(c.failed, 0, "{c:?}");
    assert_eq!(c.unattributed, 0, "{c:?}");
    s.close().await;
}

#[tokio::test]
async fn stdio_subscription_delivers_list_changed() {
    let endpoint = Endpoint::Stdio(StdioSpec {
        command: exporter_bin().display().to_string(),
        args: GROW_EVERY_SECOND.iter().map(|s| s.to_string()).collect(),
        env: Default::default(),
        cwd: None,
        inherit_env: true,
        scrubber: Default::default(),
    });
    let mut s = connect(&endpoint).await;
    assert!(s.modern);
    let n = tokio::time::timeout(Duration::from_secs(20), s.next_notification())
        .await
        .expect("a notification within 20 s");
    assert_eq!(n.as_deref(), Some("notifications/tools/list_changed"));
    s.close().await;
}

#[tokio::test]
async fn graceful_close_resubscribes() {
    let sim = sim_http(&["--listen-close-after", "1"]);
    let mut s = connect(&http_endpoint(&sim.url)).await;
    for _ in 0..2 {
        let n = tokio::time::timeout(Duration::from_secs(20), s.next_notification())
            .await
            .expect("a notification within 20 s");
        assert_eq!(n.as_deref(), Some("notifications/tools/list_changed"));
    }
    let c = s.subscription_counts().unwrap();
    assert!(c.completed >= 1, "{c:?}");
    assert!(c.opened >= 2, "{c:?}");
    assert_eq!(c.failed, 0, "{c:?}");
}

#[tokio::test]
async fn a_stream_without_acknowledgement_is_not_trusted() {
    let sim = sim_http(&["--listen-fault", "no-ack"]);
    let mut s = connect(&http_endpoint(&sim.url)).await;
    // Changes keep coming, but none may be taken from an unacknowledged
    // stream: each stream is dropped at its first message, and after a few
    // in a row the client stops trying (None) until the next poll.
    let heard = tokio::time::timeout(Duration::from_secs(30), s.next_notification()).await;
    assert!(matches!(heard, Ok(None)), "nothing delivered: {heard:?}");
    let c = s.subscription_counts().unwrap();
    assert_eq!(c.acknowledged, 0, "{c:?}");
    assert!(c.failed >= 1, "{c:?}");
}

#[tokio::test]
async fn a_dying_stream_is_reopened() {
    let sim = sim_http(&["--listen-fault", "die"]);
    let mut s = connect(&http_endpoint(&sim.url)).await;
    // Open it, then watch it die and come back.
    let _ = tokio::time::timeout(Duration::from_millis(200), s.next_notification()).await;
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    loop {
        let c = s.subscription_counts().unwrap();
        if c.opened >= 2 && c.acknowledged >= 2 && c.failed >= 2 {
            break;
        }
        assert!(tokio::time::Instant::now() < deadline, "{c:?}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Watch mode on target `watched`: `target` is its YAML after the name.
fn watching(target: &str) -> Exporter {
    Exporter::start(&format!(
        "global:\n  schedule: {{every: 1h}}\n  jitter: 0s\n  kinds: [tools]\n  watch_list_changed: true\ntargets:\n  - name: watched\n{target}"
    ))
}

/// The scheduled poll at start lists once; the next tick is an hour away,
/// so every later listing is a re-list after a subscription notification.
/// Counts only, whatever the timing: a re-list may lag its change, and
/// notifications close together are handled by one re-list.
fn assert_relists_follow_notifications(exp: &Exporter) {
    let t = [("target", "watched"), ("kind", "tools")];
    let text = exp.wait_metrics(Duration::from_secs(60), "three re-lists", |text| {
        listing_attempts(text, &t).is_some_and(|v| v >= 4.0)
    });
    let value = |name| sample(&text, name, &t).unwrap_or_else(|| panic!("no {name}: {text}"));
    let relists = listing_attempts(&text, &t).unwrap_or(0.0) - 1.0;
    let notifications = value("mcp_list_changed_notifications_total");
    let added = value("mcp_listing_items_added_total");
    let items = value("mcp_listing_items");
    assert!(
        relists <= notifications,
        "{relists} re-lists, only {notifications} notifications"
    );
    // Each re-list came after a change it announced, so saw one more.
    assert!(added >= relists, "{added} added in {relists} re-lists");
    // The first listing may already have one more: no addition counted twice.
    assert!(items >= 20.0 + added, "{items} listed, {added} added");
}

#[test]
fn watch_mode_relists_on_subscription_notifications_over_http() {
    let sim = http_scenario(
        "grow",
        &[
            "--protocol",
            "2026-07-28",
            "--notify",
            "--after-seconds",
            "2",
            "--kinds",
            "tools",
        ],
    );
    let exp = watching(&format!("    http:\n      url: {}/mcp\n", sim.url));
    assert_relists_follow_notifications(&exp);
}

#[test]
fn watch_mode_relists_on_subscription_notifications_over_stdio() {
    let exp = watching(&format!(
        "    stdio:\n      command: {}\n      args: [simulate, --scenario, grow, --protocol, \"2026-07-28\", --notify, --after-seconds, \"2\", --kinds, tools]\n",
        exporter_bin().display()
    ));
    assert_relists_follow_notifications(&exp);
}
