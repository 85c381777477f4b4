//! 2026-07-28 list changes through `subscriptions/listen`, against the
//! simulator over real sockets and pipes: the wire client's subscription
//! (acknowledgement, ids, misbehaving streams) and watch mode's re-list.

mod common;

use common::{bin, http_get, sample, wait_for, Proc};
use mcp_listing::HttpMode;
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
        command: bin().display().to_string(),
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

fn watch_config(dir: &std::path::Path, target: &str) -> std::path::PathBuf {
    let cfg = dir.join("c.yaml");
    std::fs::write(
        &cfg,
        format!(
            "global:\n  schedule: {{every: 1h}}\n  jitter: 0s\n  kinds: [tools]\n  watch_list_changed: true\ntargets:\n  - name: watched\n{target}"
        ),
    )
    .unwrap();
    cfg
}

/// The scheduled poll at start lists once; the next tick is an hour away,
/// so every later listing is a re-list after a subscription notification.
fn assert_relists_follow_notifications(exp: &Proc) {
    let t = [("target", "watched"), ("kind", "tools")];
    let text = wait_for(Duration::from_secs(60), "three re-lists", || {
        let (_, text) = http_get(&format!("{}/metrics", exp.url));
        sample(&text, "mcp_listings_total", &t)
            .filter(|v| *v >= 4.0)
            .map(|_| text)
    });
    let listings = sample(&text, "mcp_listings_total", &t).unwrap();
    let notifications = sample(&text, "mcp_list_changed_notifications_total", &t).unwrap();
    let added = sample(&text, "mcp_listing_items_added_total", &t).unwrap();
    assert_eq!(
        listings,
        notifications + 1.0,
        "one re-list per notification"
    );
    // The catalogue grows by one every 2 s; a re-list that lagged its
    // change by more than that would see two new tools and break the count.
    assert_eq!(
        added,
        listings - 1.0,
        "each re-list saw exactly one new tool"
    );
}

#[test]
fn watch_mode_relists_on_subscription_notifications_over_http() {
    let sim = Proc::start(&[
        "simulate",
        "--transport",
        "http",
        "--scenario",
        "grow",
        "--protocol",
        "2026-07-28",
        "--notify",
        "--after-seconds",
        "2",
        "--kinds",
        "tools",
    ]);
    let dir = tempfile::tempdir().unwrap();
    let cfg = watch_config(dir.path(), &format!("    url: {}/mcp\n", sim.url));
    let exp = Proc::start(&[
        "--config.file",
        cfg.to_str().unwrap(),
        "--web.listen-address",
        "127.0.0.1:0",
    ]);
    assert_relists_follow_notifications(&exp);
}

#[test]
fn watch_mode_relists_on_subscription_notifications_over_stdio() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = watch_config(
        dir.path(),
        &format!(
            "    command: {}\n    args: [simulate, --scenario, grow, --protocol, \"2026-07-28\", --notify, --after-seconds, \"2\", --kinds, tools]\n",
            bin().display()
        ),
    );
    let exp = Proc::start(&[
        "--config.file",
        cfg.to_str().unwrap(),
        "--web.listen-address",
        "127.0.0.1:0",
    ]);
    assert_relists_follow_notifications(&exp);
}
