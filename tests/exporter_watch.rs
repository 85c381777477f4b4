//! Watch mode: the session stays open between scheduled polls, a
//! `list_changed` notification triggers a re-list of that kind, and the
//! announced shrink is not counted as silent. A re-list is not a poll: it
//! observes no poll duration, computes `mcp_up` from every kind, and keeps
//! the target's consecutive-failure count.

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
    // Only the scheduled poll at start is a poll; re-lists add none.
    assert_eq!(
        sample(&text, "mcp_polls_total", &[("target", "watched")]),
        Some(1.0),
        "a re-list counted as a poll"
    );
}

/// Two kinds; `max_items: 19` makes the scheduled poll at start abort both
/// (20 items each). Only tools shrink (and announce it), so their re-lists
/// complete with 19, 18, … while prompts stay aborted: the target is still
/// down, and still one failed poll in a row.
#[test]
fn relists_keep_up_from_every_kind_and_the_failure_count() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = dir.path().join("c.yaml");
    std::fs::write(
        &cfg,
        format!(
            "global:\n  schedule: {{every: 1h}}\n  jitter: 0s\n  kinds: [tools, prompts]\n  max_items: 19\n  invalid_cursor_probe: false\n  watch_list_changed: true\ntargets:\n  - name: watched\n    command: {}\n    args: [simulate, --scenario, shrink, --after-seconds, \"2\", --notify, --kinds, tools]\n",
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
    let tools = [("target", "watched"), ("kind", "tools")];
    let prompts = [("target", "watched"), ("kind", "prompts")];
    let text = wait_for(
        Duration::from_secs(60),
        "a complete re-list of tools",
        || {
            let (_, text) = http_get(&format!("{}/metrics", exp.url));
            let relisted = sample(&text, "mcp_listings_total", &tools).is_some_and(|v| v >= 2.0);
            let complete = sample(&text, "mcp_listing_items", &tools).is_some_and(|v| v > 0.0);
            (relisted && complete).then_some(text)
        },
    );
    // The poll at start: both kinds hit the item cap.
    assert_eq!(
        sample(
            &text,
            "mcp_listing_aborts_total",
            &[
                ("target", "watched"),
                ("kind", "prompts"),
                ("guard", "item_cap")
            ]
        ),
        Some(1.0)
    );
    assert_eq!(sample(&text, "mcp_listings_total", &prompts), Some(1.0));
    // A re-list completed tools …
    assert!(sample(&text, "mcp_listings_total", &tools).unwrap() >= 2.0);
    assert!(sample(&text, "mcp_listing_items", &tools).unwrap() <= 19.0);
    // … but prompts are still incomplete, so the target is down.
    assert_eq!(
        sample(&text, "mcp_up", &[("target", "watched")]),
        Some(0.0),
        "mcp_up from the re-listed kinds only"
    );
    assert_eq!(
        sample(&text, "mcp_polls_total", &[("target", "watched")]),
        Some(1.0)
    );
    let (status, body) = http_get(&format!("{}/api/targets/watched", exp.url));
    assert_eq!(status, 200, "{body}");
    let target: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert_eq!(
        target["consecutive_failures"], 1,
        "a re-list reset the failure count: {body}"
    );
    assert!(target["polls"].as_u64().unwrap() >= 2, "{body}");
    assert_eq!(target["history"][0]["up"], false, "{body}");
}
