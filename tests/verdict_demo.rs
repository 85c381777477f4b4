//! The verdict on the demo (config/demo.yaml against the simulated servers):
//! what `/api/targets`, `/metrics`, `probe --json`, `probe` text and
//! `/probe?debug=true` say about each demo target.
//!
//! - `gateway` is degraded: 8 of ≥ 14 tools, 6 of origin's tools missing,
//!   with their names;
//! - `shrinking` is degraded after its first unannounced shrink, with the
//!   removed name and the time;
//! - `overlapping` is degraded with its duplicates;
//! - `cycling` and `stale-cursor` are down with guard or error and page;
//! - `slow` is degraded: its pages take longer than its `page_latency`;
//! - every target's endpoint is told apart from the others';
//! - `healthy` and `origin` are healthy;
//! - the registry source discovers `io.github.sim/public-0001` … `0003`;
//! - behind the demo's tap, `desk-app` (page 1 only) is down with the six
//!   tools it never saw named, `agent-sdk` (walks) is healthy.

use mcp_testkit::demo::{reason, Demo};
use mcp_testkit::process::run_exporter;
use mcp_testkit::simulator::http_scenario;
use mcp_testkit::{http_get, probe_json, repo_file, sample};
use serde_json::Value;

fn message(r: Option<&Value>) -> String {
    r.and_then(|r| r["message"].as_str())
        .unwrap_or_default()
        .to_string()
}

/// The Clients section's two demo clients, as `/api/clients` and the
/// front page show them.
fn the_demo_clients_are_judged(demo: &Demo) {
    let client = |answer: &Value, name: &str| -> Option<Value> {
        let clients = answer["taps"][0]["clients"].as_array()?;
        clients.iter().find(|c| c["client"] == name).cloned()
    };
    let (desk, agent) = mcp_testkit::wait_for(
        std::time::Duration::from_secs(120),
        "both demo clients judged against origin",
        || {
            let (_, body) = http_get(&demo.url("/api/clients"));
            let answer: Value = serde_json::from_str(&body).ok()?;
            let desk = client(&answer, "desk-app")?;
            let agent = client(&answer, "agent-sdk")?;
            let judged = desk["kinds"]["tools"]["items_missed"] == 6
                && agent["kinds"]["tools"]["since_start"]["complete"].as_u64() > Some(0);
            judged.then_some((desk, agent))
        },
    );
    assert_eq!(desk["verdict"]["level"], "down", "{desk:#}");
    let sentence = message(desk["verdict"]["reasons"].get(0));
    assert!(
        sentence.starts_with("desk-app 1.0.0 read page 1")
            && sentence.ends_with("sees 8 of 14 tools, missing tool-009 … tool-014"),
        "{sentence}"
    );
    assert_eq!(agent["verdict"]["level"], "healthy", "{agent:#}");
    let (_, front) = http_get(&demo.url("/"));
    assert!(
        front.contains("id=\"tap-demo-tap\""),
        "the front page has the Clients section"
    );
}

fn level(t: &Value) -> &str {
    t["verdict"]["level"].as_str().unwrap_or("")
}

#[test]
fn every_demo_target_gets_the_verdict_a_person_needs() {
    let demo = Demo::start(&[]);
    the_demo_clients_are_judged(&demo);

    let gateway = demo.wait_target("gateway", "the reference gap", |t| {
        reason(&t["verdict"], "reference_missing", Some("tools")).is_some()
    });
    assert_eq!(level(&gateway), "degraded", "{gateway:#}");
    let gap = message(reason(
        &gateway["verdict"],
        "reference_missing",
        Some("tools"),
    ));
    assert!(gap.contains("6 of origin's tools missing"), "{gap}");
    for n in 9..=14 {
        assert!(
            gap.contains(&format!("tool-{n:03}")),
            "tool-{n:03} not in {gap}"
        );
    }
    assert!(!gap.contains("tool-008"), "{gap}");
    let below = message(reason(&gateway["verdict"], "below_expected", Some("tools")));
    assert!(below.starts_with("8 of ≥ 14 tools"), "{below}");
    // The same object per kind.
    let tools = &gateway["kinds"]["tools"]["verdict"];
    assert_eq!(tools["level"], "degraded", "{gateway:#}");
    assert!(reason(tools, "reference_missing", Some("tools")).is_some());

    let shrinking = demo.wait_target("shrinking", "a silent shrink", |t| {
        reason(&t["verdict"], "silent_shrink", Some("tools")).is_some()
    });
    assert_eq!(level(&shrinking), "degraded", "{shrinking:#}");
    let shrink = message(reason(
        &shrinking["verdict"],
        "silent_shrink",
        Some("tools"),
    ));
    assert!(shrink.contains("without a list_changed notice"), "{shrink}");
    assert!(shrink.contains("removed: tool-020"), "{shrink}");
    assert!(shrink.contains(" UTC"), "{shrink}");
    // The change log keeps the names and the time.
    let change = shrinking["changes"]
        .as_array()
        .and_then(|c| {
            c.iter()
                .find(|c| c["kind"] == "tools" && c["silent_shrink"] == true)
        })
        .cloned()
        .unwrap_or_else(|| panic!("no silent shrink in the change log: {shrinking:#}"));
    assert!(change["removed"].as_array().is_some_and(|r| !r.is_empty()));
    assert!(change["at_unix_seconds"].as_f64().is_some_and(|t| t > 1e9));

    let overlapping = demo.wait_target("overlapping", "duplicates", |t| !level(t).is_empty());
    assert_eq!(level(&overlapping), "degraded", "{overlapping:#}");
    let dupes = message(reason(
        &overlapping["verdict"],
        "duplicate_items",
        Some("tools"),
    ));
    assert!(
        dupes.starts_with("4 duplicate tools across pages") && dupes.contains("tool-005"),
        "{dupes}"
    );

    let cycling = demo.wait_target("cycling", "a verdict", |t| !level(t).is_empty());
    assert_eq!(level(&cycling), "down", "{cycling:#}");
    let cycle = message(reason(
        &cycling["verdict"],
        "listing_aborted",
        Some("tools"),
    ));
    assert!(
        cycle.contains("cursor_cycle") && cycle.contains("at page 3 "),
        "{cycle}"
    );

    let stale = demo.wait_target("stale-cursor", "a verdict", |t| !level(t).is_empty());
    assert_eq!(level(&stale), "down", "{stale:#}");
    let failed = message(reason(&stale["verdict"], "listing_failed", Some("tools")));
    assert!(
        failed.contains("invalid_cursor") && failed.contains("at page 4 (attempt 2)"),
        "{failed}"
    );

    // 800 ms pages against `expect: {page_latency: 500ms}`.
    let slow = demo.wait_target("slow", "a verdict", |t| !level(t).is_empty());
    assert_eq!(level(&slow), "degraded", "{slow:#}");
    let slow_pages = message(reason(&slow["verdict"], "slow_pages", Some("tools")));
    assert!(
        slow_pages.starts_with("tools page 2 took ")
            && slow_pages.contains(" ms, more than the expected 500 ms"),
        "{slow_pages}"
    );

    // The endpoint column tells every target apart (one simulator, one
    // host and port for all but the stdio target).
    let endpoints: std::collections::BTreeSet<String> = demo
        .api_targets()
        .iter()
        .map(|t| t["endpoint"].as_str().unwrap_or_default().to_string())
        .collect();
    assert_eq!(endpoints.len(), demo.api_targets().len(), "{endpoints:?}");
    assert!(
        endpoints.iter().any(|e| e.ends_with("/mcp/gateway (auto)")),
        "{endpoints:?}"
    );

    for name in ["healthy", "origin"] {
        let t = demo.wait_target(name, "a verdict", |t| !level(t).is_empty());
        assert_eq!(level(&t), "healthy", "{t:#}");
        assert_eq!(t["verdict"]["reasons"], Value::Array(vec![]), "{t:#}");
    }

    // docs/api.md names every field the API sends, at every level.
    let api_doc = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/api.md"))
        .expect("docs/api.md");
    let mut undocumented = std::collections::BTreeSet::new();
    for t in demo.api_targets() {
        undocumented_fields(&t, &api_doc, &mut undocumented);
    }
    assert!(
        undocumented.is_empty(),
        "fields of /api/targets missing from docs/api.md: {undocumented:?}"
    );

    // The gauge: one series per target and kind, valued by level.
    let (_, metrics) = http_get(&demo.url("/metrics"));
    for (target, value) in [("healthy", 0.0), ("gateway", 1.0), ("cycling", 2.0)] {
        assert_eq!(
            sample(
                &metrics,
                "mcp_verdict",
                &[("target", target), ("kind", "tools")]
            ),
            Some(value),
            "mcp_verdict for {target}"
        );
    }

    // Discovery offline: the registry source yields the public-* servers of
    // the demo simulator, polled like the others, and says what it left
    // out and why (the servers outside its module's `allow`, the decoys).
    for n in 1..=3 {
        let name = format!("io.github.sim/public-{n:04}");
        let t = demo.wait_target(&name, "a discovered target's verdict", |t| {
            t["verdict"]["level"] == "healthy"
        });
        assert_eq!(t["source"], "demo-registry", "{t:#}");
    }
    let (_, sources) = http_get(&demo.url("/api/sources"));
    let sources: Value = serde_json::from_str(&sources).expect("/api/sources is JSON");
    let source = &sources[0];
    assert_eq!(source["name"], "demo-registry", "{sources:#}");
    assert_eq!(source["targets"], 3, "{source:#}");
    assert_eq!(source["last_refresh"]["outcome"], "complete", "{source:#}");
    assert_eq!(source["last_refresh"]["walk"]["pages"], 3, "{source:#}");
    let skipped = &source["skipped"]["counts"];
    for (reason, count) in [
        ("not_allowed", 8),
        ("not_latest", 1),
        ("not_active", 1),
        ("no_remote", 1),
    ] {
        assert_eq!(skipped[reason], count, "{reason}: {source:#}");
    }
    let (_, page) = http_get(&demo.url("/"));
    assert!(page.contains("demo-registry"), "no sources table: {page}");
    assert!(page.contains("io.github.sim/public-0001"), "{page}");

    // /probe?debug=true: the human report instead of metrics.
    let (status, debug) = http_get(&demo.url("/probe?target=cycling&debug=true"));
    assert_eq!(status, 200, "{debug}");
    assert!(!debug.contains("# TYPE"), "{debug}");
    assert!(debug.contains("verdict: down"), "{debug}");
    assert!(debug.contains("cursor_cycle"), "{debug}");
    assert!(debug.contains("page"), "{debug}");

    // probe on the command line: the same verdict in JSON and text.
    let url = format!(
        "{}/mcp/overlapping",
        demo.simulator.url.trim_end_matches('/')
    );
    let (code, report) = probe_json(&["--url", &url, "--kind", "tools"]);
    assert_eq!(code, 0, "{report:#}");
    assert_eq!(report["verdict"]["level"], "degraded", "{report:#}");
    assert!(reason(&report["verdict"], "duplicate_items", Some("tools")).is_some());
    // The same object per kind, as in /api/targets.
    let tools = &report["kinds"]["tools"]["verdict"];
    assert_eq!(tools["level"], "degraded", "{report:#}");
    assert!(reason(tools, "duplicate_items", Some("tools")).is_some());
    let text = run_exporter(&["probe", "--url", &url, "--kind", "tools"]).stdout;
    assert!(text.contains("verdict: degraded"), "{text}");
    assert!(text.contains("duplicate_items"), "{text}");
}

/// The README's `probe` example is what `probe` prints against
/// `simulate --transport http --scenario cycle`, milliseconds aside.
#[test]
fn the_readme_probe_example_is_what_probe_prints() {
    let readme = repo_file("README.md");
    let command =
        "$ mcp-exporter probe --url http://127.0.0.1:9741/mcp --kind tools --kind prompts\n";
    let start = readme.find(command).expect("the probe example") + command.len();
    let end = start + readme[start..].find("$ echo $?").expect("its exit status");
    let documented = &readme[start..end];
    // The example starts its server on the port the probe names.
    assert!(
        readme.contains(
            "$ mcp-exporter simulate --transport http --listen 127.0.0.1:9741 --scenario cycle &\n"
        ),
        "the README's probe example does not start the server it probes"
    );

    let sim = http_scenario("cycle", &[]);
    let out = run_exporter(&[
        "probe",
        "--url",
        &sim.at("/mcp"),
        "--kind",
        "tools",
        "--kind",
        "prompts",
    ]);
    assert_eq!(out.code(), Some(1), "{}", out.describe());
    let printed = &out.stdout;
    assert_eq!(
        without_milliseconds(printed),
        without_milliseconds(documented),
        "README.md's probe example is out of date; it printed:\n{printed}"
    );
}

/// Every number with a decimal point (the ms column, handshake time) as `#`.
fn without_milliseconds(text: &str) -> Vec<String> {
    text.lines()
        .map(|l| {
            l.split_whitespace()
                .map(|w| {
                    if w.contains('.') && w.chars().all(|c| c.is_ascii_digit() || c == '.') {
                        "#"
                    } else {
                        w
                    }
                })
                .collect::<Vec<_>>()
                .join(" ")
        })
        .collect()
}

/// Object keys anywhere in `v` that docs/api.md does not name (as `key`,
/// `key[]` or `parent[].key`); kind names are values, not fields.
fn undocumented_fields(v: &Value, doc: &str, out: &mut std::collections::BTreeSet<String>) {
    const VALUES: [&str; 4] = ["tools", "prompts", "resources", "resource_templates"];
    match v {
        Value::Object(map) => {
            for (k, child) in map {
                let named = [format!("`{k}`"), format!("`{k}[]"), format!(".{k}`")]
                    .iter()
                    .any(|form| doc.contains(form.as_str()));
                if !VALUES.contains(&k.as_str()) && !named {
                    out.insert(k.clone());
                }
                undocumented_fields(child, doc, out);
            }
        }
        Value::Array(items) => {
            for item in items {
                undocumented_fields(item, doc, out);
            }
        }
        _ => {}
    }
}
