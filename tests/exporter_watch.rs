//! Watch mode: the session stays open between scheduled polls, a
//! `list_changed` notification triggers a re-list of that kind, and the
//! announced shrink is not counted as silent.

mod common;

use common::{http_get, sample, wait_for, Proc};
use std::time::Duration;

#[test]
fn list_changed_between_polls_triggers_a_relist() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = dir.path().join("c.yaml");
    std::fs::write(
        &cfg,
        format!(
            "global:\n  schedule: {{every: 1h}}\n  jitter: 0s\n  kinds: [tools]\n  watch_list_changed: true\ntargets:\n  - name: watched\n    command: {}\n    args: [simulate, --scenario, shrink, --after-seconds, \"2\", --notify, --kinds, tools]\n",
            common::bin().display()
        ),
    )
    .unwrap();
    let exp = Proc::start(&[
        "--config.file",
        cfg.to_str().unwrap(),
        "--web.listen-address",
        "127.0.0.1:0",
    ]);
    let t = [("target", "watched"), ("kind", "tools")];
    // The scheduled poll at start sees 20; only notifications can explain
    // any later listing, since the next tick is an hour away.
    let text = wait_for(
        Duration::from_secs(60),
        "two re-lists after notifications",
        || {
            let (_, text) = http_get(&format!("{}/metrics", exp.url));
            sample(&text, "mcp_listings_total", &t)
                .filter(|v| *v >= 3.0)
                .map(|_| text)
        },
    );
    let notifications = sample(&text, "mcp_list_changed_notifications_total", &t).unwrap();
    let listings = sample(&text, "mcp_listings_total", &t).unwrap();
    let items = sample(&text, "mcp_listing_items", &t).unwrap();
    let removed = sample(&text, "mcp_listing_items_removed_total", &t).unwrap();
    assert!(notifications >= 2.0, "{notifications}");
    assert_eq!(
        listings,
        notifications + 1.0,
        "one re-list per notification"
    );
    assert_eq!(items, 21.0 - listings, "each change removed one tool");
    assert_eq!(removed, listings - 1.0);
    assert_eq!(
        sample(&text, "mcp_listing_silent_shrinks_total", &t),
        Some(0.0),
        "announced shrinks are not silent"
    );
}
