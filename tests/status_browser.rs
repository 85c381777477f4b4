//! The status pages as a person's browser shows them: headless Chromium
//! loads the front page and target pages of the running demo
//! (config/demo.yaml) and the rendered text must say the verdict words and
//! the names that are missing or vanished.
//!
//! With `STATUS_SCREENSHOTS=DIR` set, the front page, the gateway page
//! and the shrinking page are also saved as `DIR/status-page-front.png`,
//! `DIR/status-page-target.png` and `DIR/status-page-shrinking.png` (how
//! docs/ gets its pictures).
//!
//! Needs Debian's `chromium` (scripts/install-test-deps.sh).

use mcp_testkit::chromium::{dump_dom, screenshot, visible_text};
use mcp_testkit::demo::{reason, Demo};

fn text_of(demo: &Demo, path: &str) -> (String, String) {
    let url = demo.url(path);
    let dom = dump_dom(&url).unwrap_or_else(|e| panic!("{e}"));
    (visible_text(&dom), dom)
}

/// The row of one target on the front page, as text.
fn row<'a>(front_dom: &'a str, name: &str) -> &'a str {
    let marker = format!("data-target=\"{name}\"");
    let start = front_dom
        .find(&marker)
        .unwrap_or_else(|| panic!("no row for {name} in {front_dom}"));
    let end = front_dom[start..]
        .find("</tr>")
        .map(|e| start + e)
        .unwrap_or(front_dom.len());
    &front_dom[start..end]
}

#[test]
fn a_person_reads_the_verdict_and_the_missing_names_in_a_browser() {
    let demo = Demo::start(&[]);
    // Let the pages have something to say: origin's baseline for the
    // gateway gap, a first silent shrink, the two failing targets.
    demo.wait_target("gateway", "the reference gap", |t| {
        reason(&t["verdict"], "reference_missing", Some("tools")).is_some()
    });
    demo.wait_target("shrinking", "a silent shrink", |t| {
        reason(&t["verdict"], "silent_shrink", Some("tools")).is_some()
    });
    for name in [
        "cycling",
        "stale-cursor",
        "healthy",
        "origin",
        "overlapping",
        "slow",
    ] {
        demo.wait_target(name, "a verdict", |t| t["verdict"]["level"].is_string());
    }
    // The demo's tap: desk-app judged against origin's catalogue.
    mcp_testkit::wait_for(
        std::time::Duration::from_secs(120),
        "desk-app judged",
        || {
            let (_, body) = mcp_testkit::http_get(&demo.url("/api/clients"));
            body.contains("\"items_missed\":6").then_some(())
        },
    );

    // Front page: the verdict first, worst first, with the first reason.
    let (front, front_dom) = text_of(&demo, "/");
    for word in ["down", "degraded", "healthy"] {
        assert!(
            front.contains(word),
            "{word} not on the front page:\n{front}"
        );
    }
    // The Clients section, as the browser shows it.
    assert!(front.contains("Clients"), "{front}");
    assert!(
        front.contains("sees 8 of 14 tools, missing tool-009 … tool-014"),
        "the demo's page-1 reader is told what it missed:\n{front}"
    );
    let gateway_row = visible_text(row(&front_dom, "gateway"));
    assert!(gateway_row.contains("degraded"), "{gateway_row}");
    assert!(
        gateway_row.contains("6 of origin's tools missing"),
        "{gateway_row}"
    );
    assert!(gateway_row.contains("tool-009"), "{gateway_row}");
    assert!(visible_text(row(&front_dom, "cycling")).contains("down"));
    let healthy_row = visible_text(row(&front_dom, "healthy"));
    assert!(healthy_row.contains("healthy"), "{healthy_row}");
    // The endpoint column tells targets on one simulator apart.
    assert!(healthy_row.contains("/mcp/healthy"), "{healthy_row}");
    assert!(gateway_row.contains("/mcp/gateway"), "{gateway_row}");
    // A catalogue that never changed trends as a flat line, not bars.
    assert!(healthy_row.contains("──"), "{healthy_row}");
    assert!(!healthy_row.contains('▄'), "{healthy_row}");
    // Slow pages are a reason, with the figure.
    let slow_row = visible_text(row(&front_dom, "slow"));
    assert!(
        slow_row.contains("degraded") && slow_row.contains("more than the expected 500 ms"),
        "{slow_row}"
    );
    // Worst first: every down row before every degraded row before healthy.
    let pos = |name: &str| front_dom.find(&format!("data-target=\"{name}\"")).unwrap();
    assert!(pos("cycling") < pos("gateway") && pos("stale-cursor") < pos("gateway"));
    assert!(pos("gateway") < pos("healthy") && pos("shrinking") < pos("origin"));

    // The filter (a plain GET form, no JavaScript).
    let (_, down_dom) = text_of(&demo, "/?level=down");
    assert!(down_dom.contains("data-target=\"cycling\""), "{down_dom}");
    assert!(!down_dom.contains("data-target=\"healthy\""), "{down_dom}");
    let (_, named_dom) = text_of(&demo, "/?q=gate");
    assert!(named_dom.contains("data-target=\"gateway\""));
    assert!(!named_dom.contains("data-target=\"cycling\""));

    // The gateway's page: verdict with every reason, the diff by name.
    let (gateway, gateway_dom) = text_of(&demo, "/targets/gateway");
    assert!(gateway.contains("degraded"), "{gateway}");
    assert!(gateway.contains("6 of origin's tools missing"), "{gateway}");
    assert!(gateway.contains("8 of ≥ 14 tools expected"), "{gateway}");
    for n in 9..=14 {
        assert!(
            gateway.contains(&format!("tool-{n:03}")),
            "tool-{n:03}:\n{gateway}"
        );
    }
    assert!(gateway_dom.contains("<svg"), "no chart on the target page");
    // Kinds with equal counts (the gateway lists 8 of each) stay apart:
    // each its own stroke, named in the legend.
    let strokes: std::collections::BTreeSet<&str> = gateway_dom
        .split("<polyline")
        .skip(1)
        .filter_map(|l| l.split("stroke-dasharray=\"").nth(1)?.split('"').next())
        .collect();
    assert!(strokes.len() >= 2, "{gateway_dom}");
    for kind in ["tools", "prompts"] {
        assert!(
            gateway.contains(kind),
            "{kind} not in the legend:\n{gateway}"
        );
    }

    // The shrinking target's page: the change log names what vanished, when.
    let (shrinking, shrinking_dom) = text_of(&demo, "/targets/shrinking");
    assert!(shrinking.contains("degraded"), "{shrinking}");
    assert!(shrinking.contains("Changes"), "{shrinking}");
    assert!(shrinking.contains("tool-020"), "{shrinking}");
    assert!(shrinking.contains("without notice"), "{shrinking}");
    assert!(shrinking_dom.contains("class=\"mark silent-shrink\""));

    // The cycling target's page keeps its failures apart from its polls.
    let (cycling, _) = text_of(&demo, "/targets/cycling");
    assert!(cycling.contains("down"), "{cycling}");
    assert!(cycling.contains("Recent failures"), "{cycling}");
    assert!(cycling.contains("cursor_cycle"), "{cycling}");

    // Pictures of both pages.
    let dir = std::env::var_os("STATUS_SCREENSHOTS")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| demo.dir.path().to_path_buf());
    for (path, file) in [
        ("/", "status-page-front.png"),
        ("/targets/gateway", "status-page-target.png"),
        ("/targets/shrinking", "status-page-shrinking.png"),
    ] {
        let out = dir.join(file);
        screenshot(&demo.url(path), &out, 1280, 1000).unwrap_or_else(|e| panic!("{e}"));
        let png = std::fs::read(&out).expect("read screenshot");
        assert!(png.starts_with(b"\x89PNG\r\n\x1a\n"), "{file} is not a PNG");
    }
}
