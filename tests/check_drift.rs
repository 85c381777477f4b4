//! Item-content drift in serve mode: the simulator changes one tool after
//! its first completed listing; the exporter counts exactly one changed
//! item, names it in `/api/targets/NAME` and classifies the change.

use mcp_testkit::{listing_attempts, sample, scenarios_simulator, Exporter};
use std::time::Duration;

#[test]
fn one_changed_tool_is_counted_named_and_classified() {
    let (sim, _scenarios) = scenarios_simulator(
        "  - name: add\n    scenario: add-required-param\n    kinds: tools\n  - name: edit\n    scenario: edit-description\n    kinds: tools\n",
    );
    let exp = Exporter::start_with_dir(
        |dir| {
            format!(
                "global:\n  schedule: {{every: 1s}}\n  jitter: 0s\n  kinds: [tools]\n  state_dir: {}\ntargets:\n  - name: add\n    http:\n      url: {url}/mcp/add\n  - name: edit\n    http:\n      url: {url}/mcp/edit\n",
                dir.join("state").display(),
                url = sim.url
            )
        },
        &[],
        &[],
    );
    let tools = |t: &'static str| [("target", t), ("kind", "tools")];
    let listings = |text: &str, t| listing_attempts(text, &tools(t)).unwrap_or(0.0);
    let text = exp.wait_metrics(Duration::from_secs(60), "three listings each", |text| {
        listings(text, "add") >= 3.0 && listings(text, "edit") >= 3.0
    });
    for t in ["add", "edit"] {
        let changed = sample(&text, "mcp_listing_items_changed_total", &tools(t));
        assert_eq!(changed, Some(1.0), "{t}: exactly one item changed, once");
        let added = sample(&text, "mcp_listing_items_added_total", &tools(t));
        assert_eq!(added, Some(0.0), "{t}: a changed item is not churn");
    }

    // The poll that saw the change names and classifies it.
    for (t, class, rule) in [
        ("add", "breaking", "required_added"),
        ("edit", "compatible", "description_changed"),
    ] {
        let target = exp.api_target(t);
        let changes: Vec<&serde_json::Value> = target["history"]
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
