//! Watch mode: the session stays open between scheduled polls, a
//! `list_changed` notification triggers a re-list of that kind, and the
//! announced shrink is not counted as silent. A re-list is not a poll: it
//! observes no poll duration, computes `mcp_up` from every kind, and keeps
//! the target's consecutive-failure count.

use mcp_testkit::{exporter_bin, listing_attempts, sample, Exporter};
use std::time::Duration;

/// Polled at start, then not for an hour, over stdio: a simulator whose
/// tools shrink by one every 2 s, each change announced.
fn watched_shrinking_tools(global: &str) -> Exporter {
    Exporter::start(&format!(
        "global:\n  schedule: {{every: 1h}}\n  jitter: 0s\n  watch_list_changed: true\n{global}targets:\n  - name: watched\n    stdio:\n      command: {}\n      args: [simulate, --scenario, shrink, --after-seconds, \"2\", --notify, --kinds, tools]\n",
        exporter_bin().display()
    ))
}

const TOOLS: [(&str, &str); 2] = [("target", "watched"), ("kind", "tools")];

/// Counts only, whatever the timing: a re-list may lag its change, and
/// notifications close together are handled by one re-list.
#[test]
fn list_changed_between_polls_triggers_a_relist() {
    let exp = watched_shrinking_tools("  kinds: [tools]\n");
    // The scheduled poll at start sees 20; only notifications can explain
    // any later listing, since the next tick is an hour away.
    let text = exp.wait_metrics(
        Duration::from_secs(60),
        "two re-lists after notifications",
        |text| listing_attempts(text, &TOOLS).is_some_and(|v| v >= 3.0),
    );
    let value = |name| sample(&text, name, &TOOLS).unwrap_or_else(|| panic!("no {name}: {text}"));
    let notifications = value("mcp_list_changed_notifications_total");
    let relists = listing_attempts(&text, &TOOLS).unwrap_or(0.0) - 1.0;
    let items = value("mcp_listing_items");
    let removed = value("mcp_listing_items_removed_total");
    assert!(
        relists <= notifications,
        "{relists} re-lists, only {notifications} notifications"
    );
    // Each re-list came after a change it announced, so saw one more.
    assert!(
        removed >= relists,
        "{removed} removed in {relists} re-lists"
    );
    // The first listing may already miss one: no removal counted twice.
    assert!(items + removed <= 20.0, "{items} left, {removed} removed");
    assert_eq!(
        sample(&text, "mcp_listing_silent_shrinks_total", &TOOLS),
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
    let exp = watched_shrinking_tools(
        "  kinds: [tools, prompts]\n  limits:\n    max_items: 19\n  invalid_cursor_probe: false\n",
    );
    let prompts = [("target", "watched"), ("kind", "prompts")];
    let text = exp.wait_metrics(
        Duration::from_secs(60),
        "a complete re-list of tools",
        |text| {
            let relisted = listing_attempts(text, &TOOLS).is_some_and(|v| v >= 2.0);
            let complete = sample(text, "mcp_listing_items", &TOOLS).is_some_and(|v| v > 0.0);
            relisted && complete
        },
    );
    // The poll at start: both kinds hit the item cap.
    let item_cap = [
        ("target", "watched"),
        ("kind", "prompts"),
        ("guard", "item_cap"),
    ];
    assert_eq!(
        sample(&text, "mcp_listing_aborts_total", &item_cap),
        Some(1.0)
    );
    assert_eq!(listing_attempts(&text, &prompts), Some(1.0));
    // A re-list completed tools …
    assert!(listing_attempts(&text, &TOOLS).unwrap() >= 2.0);
    assert!(sample(&text, "mcp_listing_items", &TOOLS).unwrap() <= 19.0);
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
    let target = exp.api_target("watched");
    assert_eq!(
        target["consecutive_failures"], 1,
        "a re-list reset the failure count: {target}"
    );
    assert!(target["polls"].as_u64().unwrap() >= 2, "{target}");
    assert_eq!(target["history"][0]["up"], false, "{target}");
}
