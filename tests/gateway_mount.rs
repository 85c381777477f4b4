//! FastMCP `mount` in front of the exporter (docs/gateways.md explains
//! every case): one catalogue per protocol version (a dual-era origin and
//! a legacy-only one behind one gateway), names and URIs rewritten per
//! namespace, and what references, `map:` and `protocols:` reveal about
//! it in `serve` and `probe --config.file`.
//!
//! Everything is driven through the binary. Peers are installed, pinned, by
//! `scripts/install-peers.sh`; a missing peer skips loudly, or fails with
//! `INTEROP_REQUIRE_PEERS=1`.

use mcp_testkit::exporter::api_target;
use mcp_testkit::gateways::{
    dual_era_origin, expect, fastmcp_gateway, missing, probe, s, seen, serve, tools, up,
    url_target, FASTMCP_PYTHON, PYTHON_V2, SERVE_LIMIT,
};
use mcp_testkit::peers::installed;
use mcp_testkit::{listing, names, sample, scenarios_simulator, Exporter, Proc};
use serde_json::{json, Value};

const LEGACY_ORIGIN: &str = "  - {name: legacy, scenario: healthy}\n";

/// `fastmcp` `mount` of the Python `mcp` 2.x peer as `dual` (23 tools, at
/// 2026-07-28 and 2025-era) and a simulator as `legacy` (20 tools,
/// 2025-era only), with both origins.
struct DualAndLegacyMount {
    sim: Proc,
    _scenarios: tempfile::NamedTempFile,
    dual: Proc,
    mount: Proc,
}

impl DualAndLegacyMount {
    fn start() -> DualAndLegacyMount {
        let (sim, scenarios) = scenarios_simulator(LEGACY_ORIGIN);
        let dual = dual_era_origin();
        let mount = fastmcp_gateway(&[
            s("mount"),
            format!("dual={}", dual.at("/mcp")),
            format!("legacy={}", sim.at("/mcp/legacy")),
        ]);
        DualAndLegacyMount {
            sim,
            _scenarios: scenarios,
            dual,
            mount,
        }
    }
}

/// The 20 tools of the legacy origin as the mount renames them.
fn legacy_names() -> Vec<String> {
    (1..=20).map(|i| format!("legacy_tool-{i:03}")).collect()
}

#[test]
fn zoo_fastmcp_mount_catalogue_depends_on_protocol() {
    if !installed(
        "zoo_fastmcp_mount_catalogue_depends_on_protocol",
        &[FASTMCP_PYTHON, PYTHON_V2],
    ) {
        return;
    }
    let zoo = DualAndLegacyMount::start();
    let (sim, dual) = (&zoo.sim, &zoo.dual);
    let url = zoo.mount.at("/mcp");
    let dual_names: Vec<String> = (0..23).map(|i| format!("dual_tool_{i:02}")).collect();

    // 2026-07-28 (negotiated): only the dual-era origin, 23 tools.
    let (_, report) = probe(&["--kind", "tools", "--timeout", "30s", "--url", &url]);
    assert_eq!(
        seen(&report, "tools"),
        expect("2026-07-28", "complete", None, 23, 1, None),
        "{report}"
    );
    assert_eq!(names(listing(&report, "tools")), dual_names);
    // 2025-11-25: both origins, 43 tools, renamed `<namespace>_<name>`.
    let (_, report) = probe(&[
        "--kind",
        "tools",
        "--timeout",
        "30s",
        "--protocol",
        "2025-11-25",
        "--url",
        &url,
    ]);
    assert_eq!(
        seen(&report, "tools"),
        expect("2025-11-25", "complete", None, 43, 1, None),
        "{report}"
    );
    let mut both = dual_names.clone();
    both.extend(legacy_names());
    both.sort();
    assert_eq!(names(listing(&report, "tools")), both);

    // References with today's `prefix:` see the renamed tools; the
    // negotiated gateway misses all 20 of the legacy origin's.
    let exporter = serve(&format!(
        "{}{}{}{}",
        url_target("origin-dual", &dual.at("/mcp"), ""),
        url_target("origin-legacy", &sim.at("/mcp/legacy"), ""),
        url_target(
            "mount-negotiated",
            &url,
            "    reference:\n      - {target: origin-dual, prefix: dual_}\n      - {target: origin-legacy, prefix: legacy_}\n"
        ),
        url_target(
            "mount-2025",
            &url,
            "    protocol_version: \"2025-11-25\"\n    reference:\n      - {target: origin-dual, prefix: dual_}\n      - {target: origin-legacy, prefix: legacy_}\n"
        ),
    ));
    let text = exporter.wait_metrics(SERVE_LIMIT, "both mounts compared with both origins", |t| {
        ["mount-negotiated", "mount-2025"].iter().all(|g| {
            missing(t, g, "origin-dual").is_some() && missing(t, g, "origin-legacy").is_some()
        })
    });
    assert_eq!(missing(&text, "mount-negotiated", "origin-dual"), Some(0.0));
    assert_eq!(
        missing(&text, "mount-negotiated", "origin-legacy"),
        Some(20.0)
    );
    assert_eq!(missing(&text, "mount-2025", "origin-dual"), Some(0.0));
    assert_eq!(missing(&text, "mount-2025", "origin-legacy"), Some(0.0));
    assert_eq!(up(&text, "mount-negotiated"), Some(1.0));
    // Against the union of both origins' renamed names: 43 expected; the
    // negotiated side lacks 20; nothing the gateway lists is unaccounted for.
    let union_of = |api: &[Value], target: &str| {
        api_target(api, target)["history"][0]["kinds"][0]["reference_union"].clone()
    };
    let api = exporter.wait_api(SERVE_LIMIT, "both unions in the API", |api| {
        ["mount-2025", "mount-negotiated"].iter().all(|t| {
            union_of(api, t)["references"]
                .as_array()
                .is_some_and(|r| r.len() == 2)
        })
    });
    let union = |target: &str| union_of(&api, target);
    for (target, lacking) in [("mount-2025", 0), ("mount-negotiated", 20)] {
        let u = union(target);
        assert_eq!(u["expected_items"], 43, "{target}: {u}");
        assert_eq!(u["missing_total"], lacking, "{target}: {u}");
        assert_eq!(u["unexpected_total"], 0, "{target}: {u}");
        assert_eq!(u["references"], json!(["origin-dual", "origin-legacy"]));
    }
}

/// FastMCP `mount` renames tools `<namespace>_<name>` and rewrites resource
/// URIs `sim://resources/001` → `sim://legacy/resources/001` (namespace
/// after the scheme), which a plain `prefix:` cannot describe: a per-kind
/// `map:` with a regular expression does.
#[test]
fn zoo_fastmcp_mount_reference_maps_rewritten_uris() {
    if !installed(
        "zoo_fastmcp_mount_reference_maps_rewritten_uris",
        &[FASTMCP_PYTHON],
    ) {
        return;
    }
    let (sim, _scenarios) = scenarios_simulator(LEGACY_ORIGIN);
    let mount = fastmcp_gateway(&[s("mount"), format!("legacy={}", sim.at("/mcp/legacy"))]);
    let global = "global:\n  schedule: {every: 3s}\n  jitter: 0s\n  kinds: [tools, resources, resource_templates]\n  invalid_cursor_probe: false\n";
    let mapped = "    protocol_version: \"2025-11-25\"\n    reference:\n      - target: origin-legacy\n        map:\n          tools: {prefix: legacy, separator: _}\n          resources: {regex: '^sim://(.*)$', replace: 'sim://legacy/$1'}\n          resource_templates: {regex: '^sim://', replace: 'sim://legacy/'}\n";
    // The same gateway compared with `prefix:` only: the URIs cannot match.
    let prefixed = "    protocol_version: \"2025-11-25\"\n    reference:\n      - {target: origin-legacy, prefix: legacy_}\n";
    let exporter = Exporter::start(&format!(
        "{global}targets:\n{}{}{}",
        url_target("origin-legacy", &sim.at("/mcp/legacy"), ""),
        url_target("mount", &mount.at("/mcp"), mapped),
        url_target("mount-prefix", &mount.at("/mcp"), prefixed),
    ));
    let gap = |t: &str, target: &str, kind: &str| {
        sample(
            t,
            "mcp_reference_missing_items",
            &[
                ("target", target),
                ("kind", kind),
                ("reference", "origin-legacy"),
            ],
        )
    };
    let text = exporter.wait_metrics(SERVE_LIMIT, "both mounts compared", |t| {
        ["mount", "mount-prefix"]
            .iter()
            .all(|g| gap(t, g, "resources").is_some() && gap(t, g, "resource_templates").is_some())
    });
    for kind in ["tools", "resources", "resource_templates"] {
        assert_eq!(gap(&text, "mount", kind), Some(0.0), "{kind}\n{text}");
    }
    // Without the map every resource and template looks missing.
    assert_eq!(gap(&text, "mount-prefix", "tools"), Some(0.0));
    let resources = sample(
        &text,
        "mcp_listing_items",
        &[("target", "origin-legacy"), ("kind", "resources")],
    );
    assert!(resources.is_some_and(|n| n > 0.0), "{text}");
    assert_eq!(gap(&text, "mount-prefix", "resources"), resources);
}

/// FastMCP `mount` of a dual-era origin (23 tools) and a legacy-only origin
/// (20 tools): 23 tools for a 2026-07-28 client, 43 for a 2025-11-25 client.
/// With `protocols:` the exporter lists both and reports the difference:
/// the gauge per version, the verdict naming the 20 tools the modern side
/// lacks, every name in `/api/targets`.
#[test]
fn zoo_fastmcp_mount_per_protocol_difference() {
    if !installed(
        "zoo_fastmcp_mount_per_protocol_difference",
        &[FASTMCP_PYTHON, PYTHON_V2],
    ) {
        return;
    }
    let zoo = DualAndLegacyMount::start();
    let exporter = serve(&url_target(
        "mount",
        &zoo.mount.at("/mcp"),
        "    protocols: [\"2025-11-25\", \"2026-07-28\"]\n",
    ));
    each_version_has_its_gauge(&exporter);
    the_verdict_and_the_api_name_what_the_modern_side_lacks(&exporter);
    probe_of_the_config_judges_the_same(&exporter);
}

/// `mcp_protocol_catalogue_missing_items` per version, for `protocols:`
/// targets only; the primary (newest) version feeds the usual series.
fn each_version_has_its_gauge(exporter: &Exporter) {
    let per = |t: &str, v: &str| {
        sample(
            t,
            "mcp_protocol_catalogue_missing_items",
            &[
                ("target", "mount"),
                ("kind", "tools"),
                ("protocol_version", v),
            ],
        )
    };
    let text = exporter.wait_metrics(SERVE_LIMIT, "both protocols listed", |t| {
        per(t, "2025-11-25").is_some() && per(t, "2026-07-28").is_some()
    });
    assert_eq!(per(&text, "2025-11-25"), Some(0.0), "{text}");
    assert_eq!(per(&text, "2026-07-28"), Some(20.0), "{text}");
    assert_eq!(
        sample(&text, "mcp_listing_items", &tools("mount")),
        Some(23.0)
    );
    assert_eq!(up(&text, "mount"), Some(1.0));
    assert!(
        text.contains("protocol_version=\"2026-07-28\",transport="),
        "server info of the primary: {text}"
    );
    assert_eq!(
        text.lines()
            .filter(|l| l.starts_with("mcp_protocol_catalogue_missing_items{"))
            .count(),
        2,
        "{text}"
    );
}

/// The verdict names the 20 tools the modern side lacks; `/api/targets`
/// and the target page have every name.
fn the_verdict_and_the_api_name_what_the_modern_side_lacks(exporter: &Exporter) {
    let api = exporter.wait_api(SERVE_LIMIT, "the per-protocol verdict", |api| {
        api_target(api, "mount")["history"][0]["protocols"].is_array()
    });
    let target = api_target(&api, "mount");
    assert_eq!(target["verdict"]["level"], "degraded", "{target}");
    let reason = &target["verdict"]["reasons"][0];
    assert_eq!(reason["code"], "protocol_catalogue_differs", "{target}");
    assert_eq!(reason["kind"], "tools");
    let message = reason["message"].as_str().unwrap_or_default();
    assert!(
        message.starts_with("20 tools missing at protocol 2026-07-28 (23 listed there, 43 under every configured version together): legacy_tool-001, "),
        "{message}"
    );
    let protocols = target["history"][0]["protocols"]
        .as_array()
        .unwrap_or_else(|| panic!("no protocols in {target}"));
    let at = |v: &str| {
        protocols
            .iter()
            .find(|p| p["protocol_version"] == v)
            .unwrap_or_else(|| panic!("no {v} in {protocols:?}"))
    };
    assert_eq!(at("2026-07-28")["primary"], true);
    assert_eq!(at("2025-11-25")["primary"], false);
    assert_eq!(at("2025-11-25")["kinds"][0]["unique_items"], 43);
    let missing: Vec<String> = at("2026-07-28")["kinds"][0]["missing"]
        .as_array()
        .map(|m| {
            m.iter()
                .map(|n| n.as_str().unwrap_or_default().to_string())
                .collect()
        })
        .unwrap_or_default();
    assert_eq!(missing, legacy_names());
    let (_, page) = exporter.get("/targets/mount");
    assert!(page.contains("Per protocol version"), "{page}");
    assert!(page.contains("legacy_tool-001, legacy_tool-002"), "{page}");
    assert!(page.contains("legacy_tool-020"), "{page}");
}

/// `probe --config.file` polls the target as `serve` does: both versions,
/// compared, and the same verdict.
fn probe_of_the_config_judges_the_same(exporter: &Exporter) {
    let config = exporter.config_path().to_string_lossy().into_owned();
    let (code, report) = probe(&["--config.file", &config, "--target", "mount"]);
    assert_eq!(code, Some(0), "{report}");
    assert_eq!(report["verdict"]["level"], "degraded", "{report}");
    assert_eq!(
        report["verdict"]["reasons"][0]["code"], "protocol_catalogue_differs",
        "{report}"
    );
    let versions = report["protocol_catalogues"]
        .as_array()
        .unwrap_or_else(|| panic!("no protocol_catalogues in {report}"));
    assert_eq!(versions.len(), 2, "{report}");
    let modern = versions
        .iter()
        .find(|p| p["protocol_version"] == "2026-07-28")
        .unwrap_or_else(|| panic!("no 2026-07-28 in {versions:?}"));
    assert_eq!(modern["primary"], true);
    assert_eq!(modern["kinds"][0]["missing_total"], 20, "{modern}");
}
