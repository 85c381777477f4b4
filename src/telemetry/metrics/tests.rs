//! Encode-level tests: reports built by hand, checked against the exact
//! series text a scrape would see.

use super::*;
use crate::baseline::{KindDiff, PolledTarget};
use crate::poll::{GarbageCursorAnswer, GarbageCursorCheck, PollReport, ServerInfo, TraceId};
use crate::telemetry::events::{
    AcceptFailed, BaselineWriteFailed, ConnectionRefused, PollsSkipped, SkipCause, TlsReloadFailed,
    TlsReloaded,
};
use mcp_listing::report::{Restart, RestartReason};
use mcp_listing::{
    CursorState, ErrorKind, Guard, Kind, ListingReport, Outcome, PageRecord, ProtocolVersion,
    TransportKind,
};
use mcp_testkit::listing_attempts;
use prometheus_client::registry::Registry;
use std::collections::BTreeMap;
use std::time::{Duration, SystemTime};

const TRACE: &str = "4bf92f3577b34da6a3ce929d0e0e4736";

fn page(index: u32, items: u32, next: CursorState, millis: u64) -> PageRecord {
    PageRecord {
        index,
        attempt: 0,
        sent_cursor: None,
        items,
        new_items: items,
        bytes: 100,
        duration: Duration::from_millis(millis),
        started: SystemTime::UNIX_EPOCH + Duration::from_secs(1_700_000_000),
        span_id: None,
        next_cursor: next,
        request_id: i64::from(index) + 1,
        error: None,
        rpc_code: None,
        http_status: None,
    }
}

fn failed_page(index: u32, error: ErrorKind, rpc_code: Option<i64>) -> PageRecord {
    PageRecord {
        error: Some(error),
        rpc_code,
        ..page(index, 0, CursorState::None, 7)
    }
}

fn cursor() -> CursorState {
    CursorState::Present("abcd".into())
}

/// A walk of `pages` that found `unique` items: its pages, raw and
/// duplicate counts follow from them.
fn walk(kind: Kind, outcome: Outcome, pages: Vec<PageRecord>, unique: u64) -> ListingReport {
    let raw: u64 = pages.iter().map(|p| u64::from(p.items)).sum();
    ListingReport {
        final_pages: u32::try_from(pages.len()).unwrap(),
        raw_items: raw,
        unique_items: unique,
        duplicate_items: raw - unique,
        pages,
        ..ListingReport::empty(kind, outcome)
    }
}

/// Three pages of 2 + 2 + 1 tools, 5 unique.
fn complete_tools() -> ListingReport {
    let pages = vec![
        page(0, 2, cursor(), 20),
        page(1, 2, cursor(), 30),
        page(2, 1, CursorState::Absent, 40),
    ];
    ListingReport {
        names: vec!["a".into(), "b".into(), "c".into(), "d".into(), "e".into()],
        duration: Duration::from_millis(95),
        ..walk(Kind::Tools, Outcome::Complete, pages, 5)
    }
}

/// One page of 2 prompts.
fn complete_prompts() -> ListingReport {
    let pages = vec![page(0, 2, CursorState::Absent, 10)];
    ListingReport {
        duration: Duration::from_millis(10),
        ..walk(Kind::Prompts, Outcome::Complete, pages, 2)
    }
}

/// `polled` lacks the tools `names` of the target `reference`.
fn lacks_tools(polled: &mut PolledTarget, reference: &str, names: &[&str]) {
    let names = names.iter().map(|&n| n.into()).collect();
    let by_reference = BTreeMap::from([(reference.to_string(), names)]);
    polled.reference_missing.insert(Kind::Tools, by_reference);
}

/// An untraced poll of `target` that listed [`complete_tools`].
fn tools_poll(target: &str) -> PolledTarget {
    poll(target, vec![complete_tools()], None)
}

fn poll(target: &str, listings: Vec<ListingReport>, trace_id: Option<&str>) -> PolledTarget {
    PolledTarget {
        report: PollReport {
            protocol_version: Some("2025-11-25".into()),
            server: Some(ServerInfo {
                name: "demo-server".into(),
                version: "1.2.3".into(),
            }),
            listings,
            duration: Duration::from_millis(150),
            // A malformed id never makes it into a report: it does not parse.
            trace_id: trace_id.and_then(TraceId::from_hex),
            ..PollReport::new(
                target,
                TransportKind::StreamableHttp,
                SystemTime::UNIX_EPOCH + Duration::from_secs(1_700_000_000),
            )
        },
        diffs: BTreeMap::new(),
        reference_missing: BTreeMap::new(),
        reference_union: BTreeMap::new(),
    }
}

fn check(result: GarbageCursorAnswer) -> GarbageCursorCheck {
    GarbageCursorCheck {
        kind: Kind::Tools,
        result,
    }
}

fn setup() -> (Registry, TargetMetrics) {
    let mut registry = Registry::default();
    let metrics = TargetMetrics::new(&mut registry);
    (registry, metrics)
}

fn text(registry: &Registry) -> String {
    encode(registry).expect("encoding into a String cannot fail")
}

/// The value of the sample whose name and labels are exactly `series`
/// (exemplar, if any, ignored). Label order is the label struct's field order.
fn value(text: &str, series: &str) -> Option<f64> {
    text.lines().find_map(|line| {
        let rest = line.strip_prefix(series)?.strip_prefix(' ')?;
        rest.split(' ').next()?.parse().ok()
    })
}

fn expect_value(text: &str, series: &str, want: f64) {
    match value(text, series) {
        // Relative tolerance: float sums and timestamps may differ in the last bit.
        Some(v) => assert!(
            (v - want).abs() <= 1e-9 * want.abs().max(1.0),
            "{series} = {v}, want {want}\n{text}"
        ),
        None => panic!("series {series} missing from\n{text}"),
    }
}

/// Each `(series, value)` as [`expect_value`] checks one.
fn expect_values(text: &str, want: &[(&str, f64)]) {
    for (series, v) in want {
        expect_value(text, series, *v);
    }
}

/// Each `(family, value)` of one (target, kind).
fn expect_kind_values(text: &str, target: &str, kind: &str, want: &[(&str, f64)]) {
    for (name, v) in want {
        expect_value(text, &tk(name, target, kind), *v);
    }
}

fn tk(name: &str, target: &str, kind: &str) -> String {
    format!("{name}{{target=\"{target}\",kind=\"{kind}\"}}")
}

#[test]
fn complete_multi_page_listing() {
    let (registry, m) = setup();
    let mut polled = tools_poll("alpha");
    polled.report.time_to_ready = Some(Duration::from_millis(120));
    let expect = BTreeMap::from([(Kind::Tools, 4)]);
    m.observe(&polled, &expect);
    let t = text(&registry);

    expect_value(&t, "mcp_up{target=\"alpha\"}", 1.0);
    assert_eq!(
        listing_attempts(&t, &[("target", "alpha"), ("kind", "tools")]),
        Some(1.0)
    );
    expect_kind_values(
        &t,
        "alpha",
        "tools",
        &[
            ("mcp_list_requests_total", 3.0),
            ("mcp_listing_items", 5.0),
            ("mcp_listing_raw_items", 5.0),
            ("mcp_listing_duplicate_items", 0.0),
        ],
    );
    // Created only when a kind is not advertised.
    assert_eq!(
        value(&t, &tk("mcp_listing_unsupported", "alpha", "tools")),
        None
    );
    expect_value(
        &t,
        &tk("mcp_listing_expected_min_items", "alpha", "tools"),
        4.0,
    );
    expect_value(
        &t,
        "mcp_listing_outcomes_total{target=\"alpha\",kind=\"tools\",outcome=\"complete\"}",
        1.0,
    );
    // Last-value gauges: one listing of 3 pages in 95 ms, a poll of 150 ms.
    expect_kind_values(
        &t,
        "alpha",
        "tools",
        &[
            ("mcp_listing_pages", 3.0),
            ("mcp_listing_duration_seconds", 0.095),
        ],
    );
    expect_values(
        &t,
        &[
            ("mcp_time_to_ready_seconds{target=\"alpha\"}", 0.12),
            ("mcp_poll_duration_seconds{target=\"alpha\"}", 0.15),
            ("mcp_polls_total{target=\"alpha\"}", 1.0),
        ],
    );
    // Fleet-wide page histograms (no target label): items 2, 2, 1.
    expect_values(
        &t,
        &[
            ("mcp_listing_page_items_count{kind=\"tools\"}", 3.0),
            ("mcp_listing_page_items_sum{kind=\"tools\"}", 5.0),
            (
                "mcp_listing_page_items_bucket{le=\"1.0\",kind=\"tools\"}",
                1.0,
            ),
            (
                "mcp_page_request_duration_seconds_count{kind=\"tools\"}",
                3.0,
            ),
            (
                "mcp_page_request_duration_seconds_bucket{le=\"0.025\",kind=\"tools\"}",
                1.0,
            ),
        ],
    );
    // No per-target histogram without `metrics: {detail: true}`.
    assert!(!t.contains("_bucket{le=\"1.0\",target="), "{t}");
    assert!(!t.contains("mcp_detail_"), "{t}");
    // Last page started at 1_700_000_000 and took 40 ms.
    expect_value(
        &t,
        &tk("mcp_last_success_timestamp_seconds", "alpha", "tools"),
        1_700_000_000.04,
    );
    expect_value(
        &t,
        "mcp_server_info{target=\"alpha\",server_name=\"demo-server\",server_version=\"1.2.3\",protocol_version=\"2025-11-25\",transport=\"streamable_http\"}",
        1.0,
    );
    assert!(t.contains("# TYPE mcp_listing_pages gauge\n"), "{t}");
    assert!(
        t.contains("# TYPE mcp_page_request_duration_seconds histogram\n"),
        "{t}"
    );
    assert!(t.contains("# TYPE mcp_listing_outcomes counter\n"), "{t}");
    assert!(
        !t.contains("mcp_listings"),
        "attempts are the outcomes' sum: {t}"
    );
    assert!(
        t.contains("# UNIT mcp_listing_duration_seconds seconds\n"),
        "{t}"
    );
    // No trace id: no exemplar anywhere.
    assert!(!t.contains("trace_id"), "{t}");
    // No sample timestamps: every sample line is `series value`.
    for line in t.lines().filter(|l| !l.starts_with('#')) {
        assert_eq!(
            line.split(' ').count(),
            2,
            "unexpected sample shape: {line}"
        );
    }
}

#[test]
fn aborted_cycle_updates_raw_and_duplicates_but_not_items() {
    let (registry, m) = setup();
    m.observe(&tools_poll("alpha"), &BTreeMap::new());
    let pages = (0..4).map(|i| page(i, 2, cursor(), 5)).collect();
    let cycle = walk(Kind::Tools, Outcome::Aborted(Guard::CursorCycle), pages, 2);
    m.observe(&poll("alpha", vec![cycle], None), &BTreeMap::new());
    let t = text(&registry);

    expect_values(
        &t,
        &[
            ("mcp_up{target=\"alpha\"}", 0.0),
            (
                "mcp_listing_aborts_total{target=\"alpha\",kind=\"tools\",guard=\"cursor_cycle\"}",
                1.0,
            ),
        ],
    );
    assert_eq!(
        listing_attempts(&t, &[("target", "alpha"), ("kind", "tools")]),
        Some(2.0)
    );
    expect_value(
        &t,
        "mcp_listing_outcomes_total{target=\"alpha\",kind=\"tools\",outcome=\"aborted\"}",
        1.0,
    );
    // Other guards appear only once they happen.
    assert!(!t.contains("guard=\"page_cap\""), "{t}");
    expect_value(&t, &tk("mcp_list_requests_total", "alpha", "tools"), 7.0);
    // Items stay at the last complete listing; raw/duplicates show the cycle.
    expect_kind_values(
        &t,
        "alpha",
        "tools",
        &[
            ("mcp_listing_items", 5.0),
            ("mcp_listing_raw_items", 8.0),
            ("mcp_listing_duplicate_items", 6.0),
        ],
    );
    // Pages and listing duration: complete listings only (the 3 pages of
    // the first poll stay).
    expect_value(&t, &tk("mcp_listing_pages", "alpha", "tools"), 3.0);
    // Page items: every parsed page of both polls.
    expect_value(&t, "mcp_listing_page_items_count{kind=\"tools\"}", 7.0);
}

#[test]
fn error_with_invalid_cursor_restart() {
    let (registry, m) = setup();
    let listing = ListingReport {
        pages: vec![
            page(0, 2, cursor(), 10),
            failed_page(1, ErrorKind::InvalidCursor, Some(-32602)),
            page(2, 2, cursor(), 10),
            failed_page(3, ErrorKind::InvalidCursor, Some(-32602)),
        ],
        invalid_cursor_errors: 2,
        restarts: vec![Restart {
            reason: RestartReason::InvalidCursor,
            at_page: 1,
        }],
        ..ListingReport::empty(Kind::Prompts, Outcome::Error(ErrorKind::InvalidCursor))
    };
    let timeout = ListingReport {
        pages: vec![failed_page(0, ErrorKind::Timeout, None)],
        ..ListingReport::empty(Kind::Tools, Outcome::Error(ErrorKind::Timeout))
    };
    m.observe(
        &poll("beta", vec![listing, timeout], Some(TRACE)),
        &BTreeMap::new(),
    );
    let t = text(&registry);

    expect_values(&t, &[("mcp_up{target=\"beta\"}", 0.0), ("mcp_listing_errors_total{target=\"beta\",kind=\"prompts\",error=\"invalid_cursor\"}", 1.0), ("mcp_listing_errors_total{target=\"beta\",kind=\"tools\",error=\"timeout\"}", 1.0), ("mcp_listing_restarts_total{target=\"beta\",kind=\"prompts\",reason=\"invalid_cursor\"}", 1.0), ]);
    expect_kind_values(
        &t,
        "beta",
        "prompts",
        &[
            ("mcp_list_invalid_cursor_total", 2.0),
            ("mcp_list_requests_total", 4.0),
        ],
    );
    // Failed listings set no item gauge and no success timestamp.
    assert_eq!(value(&t, &tk("mcp_listing_items", "beta", "prompts")), None);
    assert_eq!(
        value(
            &t,
            &tk("mcp_last_success_timestamp_seconds", "beta", "prompts")
        ),
        None
    );
    expect_value(
        &t,
        "mcp_listing_outcomes_total{target=\"beta\",kind=\"prompts\",outcome=\"error\"}",
        1.0,
    );
    // -32602 answers are round trips; the timeout is not.
    expect_values(
        &t,
        &[
            (
                "mcp_page_request_duration_seconds_count{kind=\"prompts\"}",
                4.0,
            ),
            (
                "mcp_page_request_duration_seconds_count{kind=\"tools\"}",
                0.0,
            ),
            ("mcp_listing_page_items_count{kind=\"prompts\"}", 2.0),
        ],
    );
}

#[test]
fn unsupported_kind_is_not_an_attempt_and_keeps_up() {
    let (registry, m) = setup();
    let unsupported = ListingReport::empty(Kind::Prompts, Outcome::Unsupported);
    m.observe(
        &poll("gamma", vec![complete_tools(), unsupported], None),
        &BTreeMap::new(),
    );
    let t = text(&registry);

    expect_value(&t, "mcp_up{target=\"gamma\"}", 1.0);
    expect_value(&t, &tk("mcp_listing_unsupported", "gamma", "prompts"), 1.0);
    assert_eq!(
        value(&t, &tk("mcp_listing_unsupported", "gamma", "tools")),
        None
    );
    // A kind the server advertises again goes back to 0.
    m.observe(
        &poll("gamma", vec![complete_tools(), complete_prompts()], None),
        &BTreeMap::new(),
    );
    expect_value(
        &text(&registry),
        &tk("mcp_listing_unsupported", "gamma", "prompts"),
        0.0,
    );
    assert_eq!(
        listing_attempts(&t, &[("target", "gamma"), ("kind", "prompts")]),
        None
    );
}

#[test]
fn silent_shrink_diff_counts_churn() {
    let (registry, m) = setup();
    let mut polled = tools_poll("delta");
    polled.diffs.insert(
        Kind::Tools,
        KindDiff {
            had_baseline: true,
            added: vec!["e".into()],
            removed: vec!["x".into(), "y".into()],
            silent_shrink: true,
            previous_items: 6,
            ..KindDiff::default()
        },
    );
    lacks_tools(&mut polled, "upstream", &["x", "y"]);
    m.observe(&polled, &BTreeMap::new());
    let t = text(&registry);

    expect_kind_values(
        &t,
        "delta",
        "tools",
        &[
            ("mcp_listing_silent_shrinks_total", 1.0),
            ("mcp_listing_items_added_total", 1.0),
            ("mcp_listing_items_removed_total", 2.0),
        ],
    );
    expect_value(
        &t,
        "mcp_reference_missing_items{target=\"delta\",kind=\"tools\",reference=\"upstream\"}",
        2.0,
    );

    // A failed listing leaves the last comparison in place.
    let failed = ListingReport::empty(Kind::Tools, Outcome::Error(ErrorKind::Timeout));
    m.observe(&poll("delta", vec![failed], None), &BTreeMap::new());
    expect_value(
        &text(&registry),
        "mcp_reference_missing_items{target=\"delta\",kind=\"tools\",reference=\"upstream\"}",
        2.0,
    );
    // A complete listing compared with nothing: the reference series goes away.
    m.observe(&tools_poll("delta"), &BTreeMap::new());
    let t = text(&registry);
    assert!(!t.contains("reference=\"upstream\""), "{t}");
    expect_value(
        &t,
        &tk("mcp_listing_silent_shrinks_total", "delta", "tools"),
        1.0,
    );
}

#[test]
fn register_target_precreates_zero_series_and_forget_removes_them() {
    let (registry, m) = setup();
    m.register_target("eps", &[Kind::Tools, Kind::Resources], false);
    let t = text(&registry);

    expect_values(
        &t,
        &[
            ("mcp_up{target=\"eps\"}", 0.0),
            ("mcp_polls_total{target=\"eps\"}", 0.0),
        ],
    );
    for kind in ["tools", "resources"] {
        for name in [
            "mcp_list_requests_total",
            "mcp_listing_items_added_total",
            "mcp_listing_items_removed_total",
            "mcp_listing_items_changed_total",
            "mcp_listing_silent_shrinks_total",
            "mcp_listing_items",
            "mcp_listing_raw_items",
            "mcp_listing_duplicate_items",
            "mcp_last_success_timestamp_seconds",
        ] {
            expect_value(&t, &tk(name, "eps", kind), 0.0);
        }
        for outcome in ["complete", "aborted", "error"] {
            let s = format!(
                "mcp_listing_outcomes_total{{target=\"eps\",kind=\"{kind}\",outcome=\"{outcome}\"}}"
            );
            expect_value(&t, &s, 0.0);
        }
    }
    // Reasons, rare events and last-value gauges wait for their first event.
    for absent in [
        "mcp_listing_aborts_total{",
        "mcp_listing_errors_total{",
        "mcp_listing_restarts_total{",
        "mcp_list_invalid_cursor_total{",
        "mcp_list_changed_notifications_total{",
        "mcp_listing_blank_cursor_total{",
        "mcp_listing_invalid_items{",
        "mcp_listing_unsupported{",
        "mcp_listing_pages{",
        "mcp_poll_duration_seconds{",
        "mcp_detail_",
    ] {
        assert!(!t.contains(absent), "{absent} pre-created:\n{t}");
    }
    // docs/metrics.md's budget: 2 per target and 12 per kind pre-created;
    // the first poll adds 2 per target (poll duration, time to ready) and 3
    // per kind (verdict, pages, listing duration), the exporter 1 per target.
    let per_target = t
        .lines()
        .filter(|l| !l.starts_with('#') && l.contains("target=\"eps\""))
        .count();
    assert_eq!(per_target, 2 + 2 * 12, "{t}");
    assert!(!t.contains("target=\"eps\",kind=\"prompts\""), "{t}");

    // A reload that disables resources drops its series.
    m.register_target("eps", &[Kind::Tools], false);
    let t = text(&registry);
    assert!(!t.contains("target=\"eps\",kind=\"resources\""), "{t}");
    assert_eq!(
        listing_attempts(&t, &[("target", "eps"), ("kind", "tools")]),
        Some(0.0)
    );

    // A second target survives the first one's removal.
    m.register_target("zeta", &[Kind::Tools], false);
    let mut polled = poll("eps", vec![complete_tools()], Some(TRACE));
    polled.report.time_to_ready = Some(Duration::from_millis(10));
    lacks_tools(&mut polled, "zeta", &["q"]);
    m.observe(&polled, &BTreeMap::from([(Kind::Tools, 1)]));
    m.set_garbage_cursor_check("eps", &check(GarbageCursorAnswer::SilentRestart));
    m.watch_notification("eps", Kind::Tools);
    m.forget_target("eps");
    let t = text(&registry);
    assert!(!t.contains("target=\"eps\""), "{t}");
    expect_value(&t, "mcp_up{target=\"zeta\"}", 0.0);
    assert!(t.ends_with("# EOF\n"), "{t}");
}

#[test]
fn forgetting_a_reference_target_drops_series_comparing_with_it() {
    let (registry, m) = setup();
    let mut polled = tools_poll("a");
    lacks_tools(&mut polled, "b", &["q"]);
    m.observe(&polled, &BTreeMap::new());
    assert!(text(&registry).contains("reference=\"b\""));
    m.forget_target("b");
    let t = text(&registry);
    assert!(!t.contains("reference=\"b\""), "{t}");
    expect_value(&t, "mcp_up{target=\"a\"}", 1.0);
}

#[test]
fn detail_targets_get_histograms_with_exemplars() {
    let (registry, m) = setup();
    m.register_target("eta", &[Kind::Tools], true);
    m.register_target("other", &[Kind::Tools], false);
    let mut polled = poll("eta", vec![complete_tools()], Some(TRACE));
    polled.report.time_to_ready = Some(Duration::from_millis(120));
    m.observe(&polled, &BTreeMap::new());
    m.observe(
        &poll("other", vec![complete_tools()], Some(TRACE)),
        &BTreeMap::new(),
    );
    let t = text(&registry);
    let exemplar = format!("# {{trace_id=\"{TRACE}\"}}");
    for bucket in [
        "mcp_detail_listing_pages_bucket{le=\"3.0\",target=\"eta\",kind=\"tools\"} 1 ",
        "mcp_detail_listing_page_items_bucket{le=\"2.0\",target=\"eta\",kind=\"tools\"} 3 ",
        "mcp_detail_listing_duration_seconds_bucket{le=\"0.1\",target=\"eta\",kind=\"tools\"} 1 ",
        "mcp_detail_page_request_duration_seconds_bucket{le=\"0.05\",target=\"eta\",kind=\"tools\"} 3 ",
        "mcp_detail_time_to_ready_seconds_bucket{le=\"0.25\",target=\"eta\"} 1 ",
        "mcp_detail_poll_duration_seconds_bucket{le=\"0.25\",target=\"eta\"} 1 ",
        // The fleet-wide histograms carry exemplars of traced polls too.
        "mcp_page_request_duration_seconds_bucket{le=\"0.05\",kind=\"tools\"} 6 ",
    ] {
        let line = t
            .lines()
            .find(|l| l.starts_with(bucket))
            .unwrap_or_else(|| panic!("no line starting {bucket:?} in\n{t}"));
        assert!(line.contains(&exemplar), "{line}");
    }
    // The pages exemplar's value is the observation itself.
    assert!(
        t.contains(&format!(
            "mcp_detail_listing_pages_bucket{{le=\"3.0\",target=\"eta\",kind=\"tools\"}} 1 {exemplar} 3.0\n"
        )),
        "{t}"
    );
    // Only the detail target has them.
    assert!(
        !t.contains("mcp_detail_poll_duration_seconds_count{target=\"other\"}"),
        "{t}"
    );
    // A reload that turns detail off drops them.
    m.register_target("eta", &[Kind::Tools], false);
    let t = text(&registry);
    assert!(!t.contains("mcp_detail_listing_pages_bucket{"), "{t}");
    assert!(
        !t.contains("mcp_detail_poll_duration_seconds_bucket{"),
        "{t}"
    );
}

#[test]
fn malformed_trace_id_gives_no_exemplar() {
    let (registry, m) = setup();
    for bad in ["xyz", "00000000000000000000000000000000", "4bf92f35"] {
        m.observe(
            &poll("theta", vec![complete_tools()], Some(bad)),
            &BTreeMap::new(),
        );
    }
    let t = text(&registry);
    assert!(!t.contains("trace_id"), "{t}");
    expect_value(&t, "mcp_polls_total{target=\"theta\"}", 3.0);
    for bad in ["xyz", "00000000000000000000000000000000", "4bf92f35"] {
        assert!(TraceId::from_hex(bad).is_none(), "{bad}");
    }
}

#[test]
fn server_info_is_replaced_and_truncated() {
    let (registry, m) = setup();
    m.observe(&tools_poll("iota"), &BTreeMap::new());
    let mut upgraded = tools_poll("iota");
    upgraded.report.server = Some(ServerInfo {
        name: "é".repeat(200),
        version: "2.0.0".into(),
    });
    m.observe(&upgraded, &BTreeMap::new());
    let t = text(&registry);
    let info: Vec<&str> = t
        .lines()
        .filter(|l| l.starts_with("mcp_server_info{"))
        .collect();
    assert_eq!(info.len(), 1, "{t}");
    let name = format!("server_name=\"{}\"", "é".repeat(MAX_SERVER_LABEL_CHARS));
    assert!(info[0].contains(&name), "{}", info[0]);
    assert!(info[0].contains("server_version=\"2.0.0\""), "{}", info[0]);
}

#[test]
fn garbage_cursor_check_keeps_one_series_for_the_answer_seen() {
    let (registry, m) = setup();
    m.set_garbage_cursor_check("kappa", &check(GarbageCursorAnswer::InvalidParams));
    m.set_garbage_cursor_check("kappa", &check(GarbageCursorAnswer::SilentRestart));
    let t = text(&registry);
    expect_value(
        &t,
        "mcp_invalid_cursor_probe_result{target=\"kappa\",kind=\"tools\",result=\"silent_restart\"}",
        1.0,
    );
    // The earlier answer is replaced, not kept at 0.
    assert_eq!(
        t.matches("mcp_invalid_cursor_probe_result{target=\"kappa\"")
            .count(),
        1,
        "{t}"
    );
}

#[test]
fn watch_notifications_and_blank_cursor_are_counted() {
    let (registry, m) = setup();
    let blank = ListingReport {
        blank_cursor_end: true,
        list_changed_notifications: 2,
        ..complete_tools()
    };
    m.observe(&poll("lambda", vec![blank], None), &BTreeMap::new());
    m.watch_notification("lambda", Kind::Tools);
    let t = text(&registry);
    expect_kind_values(
        &t,
        "lambda",
        "tools",
        &[
            ("mcp_list_changed_notifications_total", 3.0),
            ("mcp_listing_blank_cursor_total", 1.0),
        ],
    );
}

#[test]
fn expected_min_items_follows_the_configuration() {
    let (registry, m) = setup();
    m.observe(&tools_poll("mu"), &BTreeMap::from([(Kind::Tools, 3)]));
    expect_value(
        &text(&registry),
        &tk("mcp_listing_expected_min_items", "mu", "tools"),
        3.0,
    );
    m.observe(&tools_poll("mu"), &BTreeMap::new());
    let t = text(&registry);
    assert!(!t.contains("mcp_listing_expected_min_items{"), "{t}");
}

#[test]
fn session_failure_leaves_gauges_and_counts_errors() {
    let (registry, m) = setup();
    m.observe(&tools_poll("nu"), &BTreeMap::new());
    let mut failed = poll(
        "nu",
        vec![ListingReport::empty(
            Kind::Tools,
            Outcome::Error(ErrorKind::Unauthorized),
        )],
        None,
    );
    failed.report.session_error = Some(crate::poll::SessionFailure {
        error: ErrorKind::Unauthorized,
        detail: "HTTP 401".into(),
        http_status: Some(401),
    });
    failed.report.server = None;
    m.observe(&failed, &BTreeMap::new());
    let t = text(&registry);
    expect_values(
        &t,
        &[
            ("mcp_up{target=\"nu\"}", 0.0),
            (
                "mcp_listing_errors_total{target=\"nu\",kind=\"tools\",error=\"unauthorized\"}",
                1.0,
            ),
        ],
    );
    expect_value(&t, &tk("mcp_listing_items", "nu", "tools"), 5.0);
    assert!(t.contains("mcp_server_info{target=\"nu\""), "{t}");
}

#[test]
fn exporter_families() {
    let mut registry = Registry::default();
    let e = ExporterMetrics::new(&mut registry, "0.1.0", "abc123");
    ExporterMetrics::register_stdio_orphans_killed(&mut registry, || 3);
    e.config_reloaded(true, 1_700_000_000.5);
    e.config_reloaded(false, 1_700_000_100.0);
    e.set_targets(3);
    e.register_target("a");
    PollsSkipped {
        target: "b",
        count: 3,
        cause: SkipCause::StillRunning,
    }
    .emit(&e);
    let error = std::io::Error::other("disk full");
    BaselineWriteFailed {
        target: "b",
        error: &error,
    }
    .emit(&e);
    let first = e.poll_in_flight();
    {
        let _second = e.poll_in_flight();
        expect_value(&text(&registry), "mcp_exporter_polls_in_flight", 2.0);
    }
    // A running total: repeated and lower totals add nothing.
    e.set_spans_dropped_total(4);
    e.set_spans_dropped_total(7);
    e.set_spans_dropped_total(7);
    e.set_spans_dropped_total(5);
    let t = text(&registry);
    expect_values(
        &t,
        &[
            (
                "mcp_exporter_build_info{version=\"0.1.0\",revision=\"abc123\"}",
                1.0,
            ),
            ("mcp_exporter_config_last_reload_successful", 0.0),
            (
                "mcp_exporter_config_last_reload_success_timestamp_seconds",
                1_700_000_000.5,
            ),
            ("mcp_exporter_targets", 3.0),
            ("mcp_exporter_polls_in_flight", 1.0),
            ("mcp_exporter_skipped_polls_total{target=\"a\"}", 0.0),
            ("mcp_exporter_skipped_polls_total{target=\"b\"}", 3.0),
            ("mcp_exporter_baseline_write_failures_total", 1.0),
            ("mcp_exporter_spans_dropped_total", 7.0),
            ("mcp_exporter_stdio_orphans_killed_total", 3.0),
        ],
    );
    drop(first);
    expect_value(&text(&registry), "mcp_exporter_polls_in_flight", 0.0);
    e.forget_target("a");
    assert!(!text(&registry).contains("target=\"a\""));
}

#[test]
fn web_families_count_probes_reloads_and_connections() {
    let mut registry = Registry::default();
    let w = WebMetrics::register(&mut registry);
    let t = text(&registry);
    for series in [
        "mcp_exporter_probes_refused_total{reason=\"queue_full\"}",
        "mcp_exporter_probes_refused_total{reason=\"deadline\"}",
        "mcp_exporter_tls_reloads_total{result=\"success\"}",
        "mcp_exporter_tls_reloads_total{result=\"failure\"}",
        "mcp_exporter_accept_failures_total",
        "mcp_exporter_connections_refused_total",
    ] {
        expect_value(&t, series, 0.0);
    }
    let running = w.probe_running();
    let queued = w.probe_queued();
    w.probe_refused(ProbeRefused::Deadline);
    TlsReloaded.emit(&w);
    let error = std::io::Error::other("no certificate");
    TlsReloadFailed { error: &error }.emit(&w);
    for repeat in [false, true, true] {
        AcceptFailed {
            error: &error,
            repeat,
        }
        .emit(&w);
    }
    ConnectionRefused {
        limit: 2,
        repeat: false,
    }
    .emit(&w);
    let t = text(&registry);
    expect_values(
        &t,
        &[
            ("mcp_exporter_probes_running", 1.0),
            ("mcp_exporter_probes_queued", 1.0),
            (
                "mcp_exporter_probes_refused_total{reason=\"deadline\"}",
                1.0,
            ),
            ("mcp_exporter_tls_reloads_total{result=\"success\"}", 1.0),
            ("mcp_exporter_tls_reloads_total{result=\"failure\"}", 1.0),
        ],
    );
    // Every failure counts, though a run of them is logged once.
    expect_values(
        &t,
        &[
            ("mcp_exporter_accept_failures_total", 3.0),
            ("mcp_exporter_connections_refused_total", 1.0),
        ],
    );
    drop((running, queued));
    let t = text(&registry);
    expect_values(
        &t,
        &[
            ("mcp_exporter_probes_running", 0.0),
            ("mcp_exporter_probes_queued", 0.0),
        ],
    );
}

#[test]
fn encoded_text_ends_with_eof_and_content_type_is_openmetrics() {
    let (registry, m) = setup();
    m.observe(&tools_poll("xi"), &BTreeMap::new());
    assert!(text(&registry).ends_with("# EOF\n"));
    assert!(text(&Registry::default()).ends_with("# EOF\n"));
    assert_eq!(
        OPENMETRICS_CONTENT_TYPE,
        "application/openmetrics-text; version=1.0.0; charset=utf-8"
    );
}

/// Concurrent observes, forgets and encodes must neither deadlock nor lose
/// counts of targets that were not forgotten.
#[test]
fn concurrent_updates_and_scrapes() {
    let mut registry = Registry::default();
    let m = std::sync::Arc::new(TargetMetrics::new(&mut registry));
    let registry = std::sync::Arc::new(registry);
    let workers: Vec<_> = (0..4)
        .map(|i| {
            let m = m.clone();
            let registry = registry.clone();
            std::thread::spawn(move || {
                let target = format!("t{i}");
                for round in 0..60 {
                    m.register_target(&target, &Kind::ALL, round % 2 == 0);
                    m.observe(
                        &poll(&target, vec![complete_tools()], Some(TRACE)),
                        &BTreeMap::new(),
                    );
                    m.observe(&tools_poll("shared"), &BTreeMap::new());
                    if round % 20 == 19 {
                        m.forget_target(&target);
                    }
                    let _ = text(&registry);
                }
            })
        })
        .collect();
    for w in workers {
        w.join().expect("worker panicked");
    }
    let t = text(&registry);
    assert_eq!(
        listing_attempts(&t, &[("target", "shared"), ("kind", "tools")]),
        Some(240.0)
    );
    assert!(!t.contains("target=\"t0\""), "{t}");
}

#[test]
fn help_names_where_values_come_from() {
    let mut scheduled = Registry::default();
    let s = TargetMetrics::new(&mut scheduled);
    s.register_target("a", &[Kind::Tools], false);
    let t = text(&scheduled);
    assert!(
        t.contains("# HELP mcp_up 1 if the last scheduled poll listed every enabled kind"),
        "{t}"
    );
    let mut probe = Registry::default();
    let p = TargetMetrics::for_probe(&mut probe);
    p.register_target("a", &[Kind::Tools], false);
    p.observe(&tools_poll("a"), &BTreeMap::new());
    let t = text(&probe);
    assert!(
        t.contains("# HELP mcp_up 1 if this probe listed every enabled kind"),
        "{t}"
    );
    // One probe is one target: no fleet-wide histograms in its answer.
    assert!(!t.contains("mcp_page_request_duration_seconds"), "{t}");
    assert!(!t.contains("mcp_listing_page_items"), "{t}");
}

/// OpenMetrics HELP text may not hold a bare `"` or `\\` (they must be
/// escaped, and prometheus-client does not escape).
#[test]
fn help_texts_need_no_escaping() {
    let mut registry = Registry::default();
    let m = TargetMetrics::new(&mut registry);
    let e = ExporterMetrics::new(&mut registry, "v", "r");
    ExporterMetrics::register_stdio_orphans_killed(&mut registry, || 0);
    WebMetrics::register(&mut registry);
    m.register_target("a", &Kind::ALL, true);
    e.register_target("a");
    let mut polled = tools_poll("a");
    lacks_tools(&mut polled, "b", &["q"]);
    m.observe(&polled, &BTreeMap::from([(Kind::Tools, 1)]));
    // Every family created on first occurrence, once.
    let rare = ListingReport {
        blank_cursor_end: true,
        list_changed_notifications: 1,
        invalid_cursor_errors: 1,
        invalid_items: 1,
        restarts: vec![Restart {
            reason: RestartReason::ListChanged,
            at_page: 1,
        }],
        ..complete_prompts()
    };
    let aborted = ListingReport::empty(Kind::Resources, Outcome::Aborted(Guard::PageCap));
    let failed = ListingReport::empty(Kind::Tools, Outcome::Error(ErrorKind::Timeout));
    let unsupported = ListingReport::empty(Kind::ResourceTemplates, Outcome::Unsupported);
    let mut rare_poll = poll("a", vec![rare, aborted, failed, unsupported], None);
    rare_poll.report.time_to_ready = Some(Duration::from_millis(5));
    m.observe(&rare_poll, &BTreeMap::from([(Kind::Tools, 1)]));
    m.set_garbage_cursor_check("a", &check(GarbageCursorAnswer::Accepted));
    let t = text(&registry);
    let helps: Vec<&str> = t.lines().filter(|l| l.starts_with("# HELP ")).collect();
    // Every family of the three structs is present.
    // (every family but mcp_verdict, set by the fan-out's verdict stage)
    assert_eq!(helps.len(), 51, "{t}");
    for line in helps {
        assert!(!line.contains('"') && !line.contains('\\'), "{line}");
    }
}

#[test]
fn protocol_catalogue_series_exist_only_for_compared_versions() {
    use crate::poll::{ProtocolCatalogue, ProtocolKind};
    let (registry, metrics) = setup();
    let series = |t: &str| {
        t.lines()
            .filter(|l| l.starts_with("mcp_protocol_catalogue_missing_items{"))
            .count()
    };
    let mut plain = tools_poll("plain");
    metrics.observe(&plain, &BTreeMap::new());
    assert_eq!(
        series(&text(&registry)),
        0,
        "a target without protocols: has none"
    );

    let at = |version: ProtocolVersion, primary: bool, missing: Option<u64>| ProtocolCatalogue {
        protocol_version: version,
        primary,
        negotiated: Some(version.label().into()),
        session_error: None,
        kinds: vec![ProtocolKind {
            kind: Kind::Tools,
            outcome: Outcome::Complete,
            reason: None,
            unique_items: 5,
            missing_total: missing,
            missing: Vec::new(),
        }],
    };
    plain.report.target = "gw".into();
    plain.report.protocol_catalogues = vec![
        at(ProtocolVersion::V2026_07_28, true, Some(3)),
        at(ProtocolVersion::V2025_11_25, false, Some(0)),
    ];
    metrics.observe(&plain, &BTreeMap::new());
    let t = text(&registry);
    assert_eq!(series(&t), 2, "{t}");
    expect_value(
        &t,
        "mcp_protocol_catalogue_missing_items{target=\"gw\",kind=\"tools\",protocol_version=\"2026-07-28\"}",
        3.0,
    );
    // Next poll: the older version did not complete, so it is not compared.
    plain.report.protocol_catalogues = vec![
        at(ProtocolVersion::V2026_07_28, true, None),
        at(ProtocolVersion::V2025_11_25, false, None),
    ];
    metrics.observe(&plain, &BTreeMap::new());
    assert_eq!(series(&text(&registry)), 0);
    plain.report.protocol_catalogues = vec![
        at(ProtocolVersion::V2026_07_28, true, Some(1)),
        at(ProtocolVersion::V2025_11_25, false, Some(0)),
    ];
    metrics.observe(&plain, &BTreeMap::new());
    metrics.forget_target("gw");
    assert_eq!(series(&text(&registry)), 0);
}
