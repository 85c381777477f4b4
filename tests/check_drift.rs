//! Item-content drift in serve mode: the simulator changes one tool after
//! its first completed listing; the exporter counts exactly one changed
//! item, names it in `/api/targets/NAME` and classifies the change.

mod common;

use common::{http_get, sample, wait_for, Proc};
use std::time::Duration;

#[test]
fn one_changed_tool_is_counted_named_and_classified() {
    let dir = tempfile::tempdir().unwrap();
    let scenarios = dir.path().join("s.yaml");
    std::fs::write(
        &scenarios,
        "servers:\n  - name: add\n    scenario: add-required-param\n    kinds: tools\n  - name: edit\n    scenario: edit-description\n    kinds: tools\n",
    )
    .unwrap();
    let sim = Proc::start(&[
        "simulate",
        "--transport",
        "http",
        "--scenarios",
        scenarios.to_str().unwrap(),
    ]);
    let cfg = dir.path().join("c.yaml");
    std::fs::write(
        &cfg,
        format!(
            "global:\n  schedule: {{every: 1s}}\n  jitter: 0s\n  kinds: [tools]\n  state_dir: {}\ntargets:\n  - name: add\n    url: {url}/mcp/add\n  - name: edit\n    url: {url}/mcp/edit\n",
            dir.path().join("state").display(),
            url = sim.url
        ),
    )
    .unwrap();
    let exp = Proc::start(&[
        "--config.file",
        cfg.to_str().unwrap(),
        "--web.listen-address",
        "127.0.0.1:0",
    ]);
    let listings = |text: &str, t: &str| {
        sample(
            text,
            "mcp_listings_total",
            &[("target", t), ("kind", "tools")],
        )
        .unwrap_or(0.0)
    };
    let text = wait_for(Duration::from_secs(60), "three listings each", || {
        let (_, text) = http_get(&format!("{}/metrics", exp.url));
        (listings(&text, "add") >= 3.0 && listings(&text, "edit") >= 3.0).then_some(text)
    });
    for t in ["add", "edit"] {
        let changed = sample(
            &text,
            "mcp_listing_items_changed_total",
            &[("target", t), ("kind", "tools")],
        );
        assert_eq!(changed, Some(1.0), "{t}: exactly one item changed, once");
        let added = sample(
            &text,
            "mcp_listing_items_added_total",
            &[("target", t), ("kind", "tools")],
        );
        assert_eq!(added, Some(0.0), "{t}: a changed item is not churn");
    }

    // The poll that saw the change names and classifies it.
    for (t, class, rule) in [
        ("add", "breaking", "required_added"),
        ("edit", "compatible", "description_changed"),
    ] {
        let (status, body) = http_get(&format!("{}/api/targets/{t}", exp.url));
        assert_eq!(status, 200, "{body}");
        let v: serde_json::Value = serde_json::from_str(&body).unwrap();
        let changes: Vec<&serde_json::Value> = v["history"]
            .as_array()
            .unwrap()
            .iter()
            .flat_map(|p| p["kinds"].as_array().unwrap())
            .filter(|k| k["kind"] == "tools")
            .flat_map(|k| k["changed"].as_array().unwrap())
            .collect();
        assert_eq!(changes.len(), 1, "{t}: {changes:?}");
        assert_eq!(changes[0]["name"], "tool-001");
        assert_eq!(changes[0]["class"], class, "{t}");
        assert_eq!(changes[0]["rule"], rule, "{t}");
    }
}
