use super::*;
use crate::poll::GarbageCursorAnswer;
use mcp_conformance::Requirement;
use mcp_listing::report::SessionFailure;
use mcp_listing::report::{Restart, RestartReason};
use mcp_listing::{
    CursorState, ErrorKind, Guard, Kind, ListingReport, Outcome, PageRecord, ProtocolVersion,
};
use std::time::{Duration, SystemTime};

const NOW: f64 = 1_800_000_000.0;

fn names(prefix: &str, n: usize) -> Vec<String> {
    (0..n).map(|i| format!("{prefix}{i:02}")).collect()
}

fn complete(kind: Kind, n: usize) -> ListingReport {
    let mut l = ListingReport::empty(kind, Outcome::Complete);
    l.names = names("tool-", n);
    l.unique_items = n as u64;
    l.raw_items = n as u64;
    l
}

fn page(index: u32, attempt: u32, error: Option<ErrorKind>) -> PageRecord {
    PageRecord {
        index,
        attempt,
        sent_cursor: None,
        items: 5,
        new_items: 5,
        bytes: 100,
        duration: Duration::from_millis(3),
        started: SystemTime::UNIX_EPOCH,
        span_id: None,
        next_cursor: CursorState::Present("abcd".into()),
        request_id: 1,
        error,
        rpc_code: None,
        http_status: None,
    }
}

fn kind_input(l: &ListingReport) -> KindInput<'_> {
    KindInput {
        listing: l,
        expected_min: None,
        reference_gaps: Vec::new(),
        garbage_cursor: Some(GarbageCursorAnswer::InvalidParams),
        protocol_gaps: Vec::new(),
        empty_is_suspect: false,
        page_latency: None,
    }
}

fn target<'a>(kinds: Vec<KindInput<'a>>, changes: &'a [Change]) -> TargetInput<'a> {
    TargetInput {
        session_error: None,
        kinds,
        changes,
        now_unix_seconds: NOW,
        event_window: DEFAULT_EVENT_WINDOW,
        conformance: None,
    }
}

fn shrink(kind: Kind, at: f64, from: u64, removed: &[&str]) -> Change {
    Change {
        kind,
        at_unix_seconds: at,
        from,
        to: from - removed.len() as u64,
        names: NameChanges {
            removed: removed.iter().map(|s| s.to_string()).collect(),
            removed_total: removed.len() as u64,
            ..NameChanges::default()
        },
        announced: false,
        silent_shrink: true,
    }
}

/// The reference `origin`, `reference_items` long, lacking every name of
/// `missing` (none cut off).
fn origin_gap(reference_items: u64, missing: Vec<String>) -> ReferenceGap {
    ReferenceGap {
        reference: "origin".into(),
        reference_items,
        missing_total: missing.len() as u64,
        missing,
    }
}

fn codes(v: &Verdict) -> Vec<Code> {
    v.reasons.iter().map(|r| r.code).collect()
}

/// The verdict of a target listing only `l`, after `changes`.
fn judge_listing(l: &ListingReport, changes: &[Change]) -> TargetVerdict {
    judge(&target(vec![kind_input(l)], changes))
}

/// The verdict of a target of one kind, `k`, without changes.
fn judge_kind(k: KindInput<'_>) -> TargetVerdict {
    judge(&target(vec![k], &[]))
}

/// The target's reasons have these codes, in order, and the one `at`
/// says `message`.
fn assert_reasons(v: &TargetVerdict, in_order: &[Code], at: usize, message: &str) {
    assert_eq!(codes(&v.overall), in_order);
    assert_eq!(v.overall.reasons[at].message, message);
}

/// The target's first reason, after checking the target's level, the
/// reason's code and how its message starts.
fn first_reason<'v>(v: &'v TargetVerdict, level: Health, code: Code, starts: &str) -> &'v Reason {
    assert_eq!(v.overall.level, level);
    let r = &v.overall.reasons[0];
    assert_eq!(r.code, code);
    assert!(r.message.starts_with(starts), "{}", r.message);
    r
}

#[test]
fn ages_read_naturally() {
    assert_eq!(ago(5.0), "5s");
    assert_eq!(ago(600.0), "10m");
    assert_eq!(ago(7200.0), "2.0h");
}

#[test]
fn a_change_reads_as_one_flat_object_on_the_api() {
    let c = shrink(Kind::Tools, 60.0, 20, &["tool-19"]);
    assert_eq!(
        serde_json::to_string(&c).unwrap(),
        r#"{"kind":"tools","at_unix_seconds":60.0,"from":20,"to":19,"added":[],"removed":["tool-19"],"added_total":0,"removed_total":1,"announced":false,"silent_shrink":true}"#
    );
}

#[test]
fn complete_listings_with_nothing_wrong_are_healthy() {
    let tools = complete(Kind::Tools, 20);
    let prompts = complete(Kind::Prompts, 3);
    let v = judge(&target(vec![kind_input(&tools), kind_input(&prompts)], &[]));
    assert_eq!(v.overall, Verdict::healthy());
    assert_eq!(v.kinds.len(), 2);
    assert!(v.kinds.iter().all(|(_, k)| k.level == Health::Healthy));
}

#[test]
fn a_gateway_below_its_minimum_and_missing_origin_items_is_degraded_with_names() {
    let tools = complete(Kind::Tools, 8);
    let mut k = kind_input(&tools);
    k.expected_min = Some(14);
    k.reference_gaps = vec![origin_gap(14, names("tool-", 14)[8..].to_vec())];
    let v = judge_kind(k);
    assert_eq!(v.overall.level, Health::Degraded);
    assert_reasons(
        &v,
        &[Code::ReferenceMissing, Code::BelowExpected],
        1,
        "8 of ≥ 14 tools expected: 6 below the configured minimum",
    );
    let gap = &v.overall.reasons[0].message;
    assert!(
        gap.starts_with("6 of origin's tools missing (it lists 14): tool-08, tool-09"),
        "{gap}"
    );
    assert!(gap.ends_with("tool-13"), "{gap}");
    assert_eq!(v.overall.reasons[0].kind, Some(Kind::Tools));
    // Meeting the minimum exactly is fine.
    let full = complete(Kind::Tools, 14);
    let mut k = kind_input(&full);
    k.expected_min = Some(14);
    k.reference_gaps = vec![origin_gap(14, Vec::new())];
    assert_eq!(judge_kind(k).overall, Verdict::healthy());
}

#[test]
fn long_name_lists_are_bounded_and_counted() {
    let tools = complete(Kind::Tools, 1);
    let mut k = kind_input(&tools);
    k.reference_gaps = vec![origin_gap(500, names("x", 499))];
    let v = judge_kind(k);
    let m = &v.overall.reasons[0].message;
    assert!(m.contains("x09, … and 489 more"), "{m}");
    assert!(!m.contains("x10"), "{m}");
}

#[test]
fn a_silent_shrink_keeps_the_kind_degraded_for_the_window_then_clears() {
    let tools = complete(Kind::Tools, 19);
    let at = NOW - 120.0;
    let changes = [shrink(Kind::Tools, at, 20, &["tool-19"])];
    let v = judge_listing(&tools, &changes);
    let r = first_reason(
        &v,
        Health::Degraded,
        Code::SilentShrink,
        "tools shrank from 20 to 19 without a list_changed notice at ",
    );
    assert!(r.message.contains(&reasons::clock(at)), "{}", r.message);
    assert!(r.message.contains("(2m ago)"), "{}", r.message);
    assert!(r.message.contains("removed: tool-19"), "{}", r.message);

    // Past the window it no longer counts; a shorter window clears it sooner.
    let mut late = target(vec![kind_input(&tools)], &changes);
    late.now_unix_seconds = at + 3601.0;
    assert_eq!(judge(&late).overall, Verdict::healthy());
    let mut short = target(vec![kind_input(&tools)], &changes);
    short.event_window = Duration::from_secs(60);
    assert_eq!(judge(&short).overall, Verdict::healthy());
}

#[test]
fn announced_shrinks_and_other_kinds_shrinks_do_not_count() {
    let tools = complete(Kind::Tools, 19);
    let mut announced = shrink(Kind::Tools, NOW - 10.0, 20, &["tool-19"]);
    announced.silent_shrink = false;
    announced.announced = true;
    let other = shrink(Kind::Prompts, NOW - 10.0, 5, &["p"]);
    let changes = [announced, other];
    let v = judge_listing(&tools, &changes);
    assert_eq!(v.overall, Verdict::healthy());
}

#[test]
fn several_shrinks_in_the_window_are_one_reason_with_every_removed_name() {
    let tools = complete(Kind::Tools, 17);
    let changes = [
        shrink(Kind::Tools, NOW - 60.0, 18, &["tool-17"]),
        shrink(Kind::Tools, NOW - 180.0, 20, &["tool-19", "tool-18"]),
    ];
    let v = judge_listing(&tools, &changes);
    assert_eq!(v.overall.reasons.len(), 1);
    let m = &v.overall.reasons[0].message;
    assert!(m.starts_with("tools shrank 2 times"), "{m}");
    assert!(m.contains("from 20 to 17"), "{m}");
    assert!(m.contains("removed: tool-17, tool-19, tool-18"), "{m}");
}

#[test]
fn duplicates_are_named() {
    let mut tools = complete(Kind::Tools, 20);
    tools.raw_items = 23;
    tools.duplicate_items = 3;
    tools.duplicate_names = vec!["tool-04".into(), "tool-09".into(), "tool-14".into()];
    let v = judge_listing(&tools, &[]);
    assert_eq!(v.overall.level, Health::Degraded);
    assert_eq!(
        v.overall.reasons[0].message,
        "3 duplicate tools across pages (23 raw, 20 unique): tool-04, tool-09, tool-14"
    );
}

#[test]
fn a_cursor_cycle_is_down_with_guard_and_page() {
    let mut tools = ListingReport::empty(Kind::Tools, Outcome::Aborted(Guard::CursorCycle));
    tools.pages = vec![page(0, 0, None), page(1, 0, None), page(2, 0, None)];
    tools.unique_items = 10;
    first_reason(
        &judge_listing(&tools, &[]),
        Health::Down,
        Code::ListingAborted,
        "tools listing aborted at page 3 by the cursor_cycle guard",
    );
}

#[test]
fn a_refused_cursor_after_the_restart_is_down_with_error_page_and_restart() {
    let mut tools = ListingReport::empty(Kind::Tools, Outcome::Error(ErrorKind::InvalidCursor));
    tools.pages = vec![
        page(0, 0, None),
        page(1, 0, Some(ErrorKind::InvalidCursor)),
        page(2, 1, None),
        page(3, 1, Some(ErrorKind::InvalidCursor)),
    ];
    tools.rpc_error_code = Some(-32602);
    tools.restarts = vec![Restart {
        reason: RestartReason::InvalidCursor,
        at_page: 1,
    }];
    tools.invalid_cursor_errors = 2;
    let v = judge_listing(&tools, &[]);
    assert_eq!(v.overall.level, Health::Down);
    assert_reasons(
        &v,
        &[Code::ListingFailed],
        0,
        "tools listing failed at page 4 (attempt 2): invalid_cursor (JSON-RPC -32602) after 1 restart",
    );
}

#[test]
fn a_restart_that_then_completes_is_degraded() {
    let mut tools = complete(Kind::Tools, 20);
    tools.restarts = vec![Restart {
        reason: RestartReason::InvalidCursor,
        at_page: 1,
    }];
    tools.invalid_cursor_errors = 1;
    tools.final_pages = 4;
    tools.pages = (0..6).map(|i| page(i, u32::from(i >= 2), None)).collect();
    let v = judge_listing(&tools, &[]);
    assert_eq!(codes(&v.overall), vec![Code::InvalidCursorRestarts]);
    assert!(v.overall.reasons[0]
        .message
        .contains("after 1 restart from page 1 (6 requests for 4 pages)"));
}

#[test]
fn the_target_is_its_worst_kind_and_reasons_come_worst_first() {
    let mut tools = complete(Kind::Tools, 20);
    tools.duplicate_items = 1;
    tools.duplicate_names = vec!["a".into()];
    let mut prompts = ListingReport::empty(Kind::Prompts, Outcome::Error(ErrorKind::Timeout));
    prompts.pages = vec![page(0, 0, Some(ErrorKind::Timeout))];
    let resources = ListingReport::empty(Kind::Resources, Outcome::Unsupported);
    let v = judge(&target(
        vec![
            kind_input(&tools),
            kind_input(&prompts),
            kind_input(&resources),
        ],
        &[],
    ));
    assert_eq!(v.overall.level, Health::Down);
    assert_eq!(
        codes(&v.overall),
        vec![Code::ListingFailed, Code::DuplicateItems]
    );
    assert_eq!(v.overall.reasons[0].kind, Some(Kind::Prompts));
    assert_eq!(v.kind(Kind::Tools).map(|k| k.level), Some(Health::Degraded));
    assert_eq!(v.kind(Kind::Prompts).map(|k| k.level), Some(Health::Down));
    // A kind the server does not offer is not a fault.
    assert_eq!(v.kind(Kind::Resources), Some(&Verdict::healthy()));
}

#[test]
fn a_session_failure_is_said_once_for_the_target_and_per_kind() {
    let tools = ListingReport::empty(Kind::Tools, Outcome::Error(ErrorKind::TransportError));
    let prompts = ListingReport::empty(Kind::Prompts, Outcome::Error(ErrorKind::TransportError));
    let mut input = target(vec![kind_input(&tools), kind_input(&prompts)], &[]);
    input.session_error = Some(SessionFailure {
        error: ErrorKind::TransportError,
        detail: "connection refused".into(),
        http_status: None,
    });
    let v = judge(&input);
    assert_eq!(codes(&v.overall), vec![Code::SessionFailed]);
    assert_eq!(v.overall.reasons[0].kind, None);
    assert_eq!(
        v.overall.reasons[0].message,
        "no session: transport_error: connection refused; nothing could be listed"
    );
    for (_, k) in &v.kinds {
        assert_eq!(codes(k), vec![Code::SessionFailed]);
    }
}

#[test]
fn items_without_key_and_an_accepted_garbage_cursor_degrade() {
    let mut tools = complete(Kind::Tools, 5);
    tools.invalid_items = 2;
    let mut k = kind_input(&tools);
    k.garbage_cursor = Some(GarbageCursorAnswer::SilentRestart);
    let v = judge_kind(k);
    assert_reasons(
        &v,
        &[Code::ItemsWithoutKey, Code::GarbageCursorAccepted],
        0,
        "2 tools without their identity key `name` were left out",
    );
    let mut k = kind_input(&tools);
    k.garbage_cursor = Some(GarbageCursorAnswer::OtherError);
    assert_eq!(codes(&judge_kind(k).overall), vec![Code::ItemsWithoutKey]);
}

#[test]
fn json_shape_is_level_and_reasons_with_code_kind_message() {
    let tools = complete(Kind::Tools, 8);
    let mut k = kind_input(&tools);
    k.expected_min = Some(14);
    let v = judge_kind(k);
    let json = serde_json::to_value(&v).unwrap();
    assert_eq!(json["level"], "degraded");
    assert_eq!(json["reasons"][0]["code"], "below_expected");
    assert_eq!(json["reasons"][0]["kind"], "tools");
    assert_eq!(json["reasons"][0]["level"], "degraded");
    assert!(json["reasons"][0]["message"].is_string());
    assert!(json.get("kinds").is_none());
    let session = reasons::session_failed(
        None,
        &SessionFailure {
            error: ErrorKind::Timeout,
            detail: "x".into(),
            http_status: None,
        },
    );
    assert!(serde_json::to_value(&session).unwrap()["kind"].is_null());
}

#[test]
fn codes_are_documented() {
    let doc = include_str!("../../docs/verdict.md");
    for code in Code::ALL {
        assert!(
            doc.contains(&format!("`{}`", code.label())),
            "docs/verdict.md does not describe {code}"
        );
        assert_eq!(
            serde_json::to_value(code).unwrap(),
            serde_json::Value::String(code.label().into())
        );
    }
}

#[test]
fn a_partial_update_replaces_only_its_kinds() {
    let tools = complete(Kind::Tools, 20);
    let mut prompts = complete(Kind::Prompts, 3);
    prompts.duplicate_items = 1;
    prompts.duplicate_names = vec!["p".into()];
    let before = judge(&target(vec![kind_input(&tools), kind_input(&prompts)], &[]));
    assert_eq!(before.overall.level, Health::Degraded);
    let fixed = complete(Kind::Prompts, 3);
    let relisted = judge_listing(&fixed, &[]);
    let after = before.updated_with(relisted);
    assert_eq!(after.overall, Verdict::healthy());
    assert_eq!(after.kinds.len(), 2);
}

#[test]
fn must_conformance_failures_degrade_their_kind_and_should_failures_do_not() {
    let failure = |kind, rule, level: Requirement| RuleFailure {
        kind,
        rule,
        level,
        message: format!("{rule} failed"),
        evidence: "listing 1 · page 0".into(),
    };
    let run = ConformanceResult {
        at_unix_seconds: NOW - 120.0,
        protocol_version: Some("2026-07-28".into()),
        passed: 20,
        failed: 3,
        not_applicable: 5,
        failures: vec![
            failure(Kind::Tools, "cache-ttl", Requirement::Must),
            failure(Kind::Tools, "cache-scope", Requirement::Must),
            failure(Kind::Prompts, "cursor-stable", Requirement::Should),
        ],
    };
    let tools = complete(Kind::Tools, 20);
    let prompts = complete(Kind::Prompts, 3);
    let mut input = target(vec![kind_input(&tools), kind_input(&prompts)], &[]);
    input.conformance = Some(&run);
    let v = judge(&input);
    assert_eq!(codes(&v.overall), vec![Code::ConformanceFailed]);
    let r = first_reason(
        &v,
        Health::Degraded,
        Code::ConformanceFailed,
        "2 MUST conformance rules fail for tools at the run of ",
    );
    assert_eq!(r.kind, Some(Kind::Tools));
    assert!(
        r.message.ends_with(
            "(2m ago): cache-ttl, cache-scope; first: cache-ttl failed (listing 1 · page 0)"
        ),
        "{}",
        r.message
    );
    assert_eq!(
        v.kind(Kind::Prompts).map(|k| k.level),
        Some(Health::Healthy)
    );
}

#[test]
fn protocol_gaps_name_what_one_era_lacks() {
    let tools = complete(Kind::Tools, 23);
    let missing: Vec<String> = (1..=20).map(|i| format!("legacy_tool-{i:03}")).collect();
    let mut k = kind_input(&tools);
    k.protocol_gaps = vec![
        ProtocolGap {
            protocol_version: ProtocolVersion::V2026_07_28,
            unique_items: 23,
            union_items: 43,
            missing: missing.clone(),
            missing_total: 20,
            failed: None,
        },
        ProtocolGap {
            protocol_version: ProtocolVersion::V2024_11_05,
            unique_items: 0,
            union_items: 43,
            missing: Vec::new(),
            missing_total: 0,
            failed: Some(Outcome::Error(ErrorKind::Timeout)),
        },
    ];
    let v = judge_kind(k);
    assert_eq!(v.overall.level, Health::Degraded);
    let codes: Vec<Code> = v.overall.reasons.iter().map(|r| r.code).collect();
    assert_eq!(
        codes,
        vec![Code::ProtocolCatalogueDiffers, Code::ProtocolListingFailed]
    );
    let m = &v.overall.reasons[0].message;
    assert!(
        m.starts_with("20 tools missing at protocol 2026-07-28 (23 listed there, 43 under every configured version together): legacy_tool-001, "),
        "{m}"
    );
    assert!(m.ends_with("… and 10 more"), "{m}");
    assert!(v.overall.reasons[1]
        .message
        .contains("at protocol 2024-11-05 did not complete: error timeout"));
}

#[test]
fn empty_but_advertised_is_degraded_unless_expected() {
    let empty = complete(Kind::Tools, 0);
    let mut k = kind_input(&empty);
    k.empty_is_suspect = true;
    let v = judge_kind(k.clone());
    assert_eq!(v.overall.level, Health::Degraded);
    assert_eq!(v.overall.reasons[0].code, Code::EmptyButAdvertised);
    // Forced (not advertised) or `expect: {tools: 0}`: the sink says so.
    k.empty_is_suspect = false;
    assert_eq!(judge_kind(k).overall, Verdict::healthy());
}

#[test]
fn a_conformance_result_replaces_the_last_ones_reasons_and_keeps_the_rest() {
    let mut tools = complete(Kind::Tools, 20);
    tools.duplicate_items = 1;
    tools.duplicate_names = vec!["tool-01".into()];
    let v = judge_listing(&tools, &[]);
    assert_eq!(codes(&v.overall), vec![Code::DuplicateItems]);
    let run = ConformanceResult {
        at_unix_seconds: NOW,
        protocol_version: None,
        passed: 1,
        failed: 1,
        not_applicable: 0,
        failures: vec![RuleFailure {
            kind: Kind::Tools,
            rule: "cursor-type",
            level: Requirement::Must,
            message: "nextCursor was a number".into(),
            evidence: String::new(),
        }],
    };
    let with = v.with_conformance(Some(&run), NOW);
    assert_eq!(
        codes(&with.overall),
        vec![Code::DuplicateItems, Code::ConformanceFailed]
    );
    // Judged again with the same result: the reason is not doubled.
    let again = with.with_conformance(Some(&run), NOW);
    assert_eq!(again, with);
    // Forgotten: back to the poll's own reasons.
    assert_eq!(with.with_conformance(None, NOW), v);
}

#[test]
fn slow_pages_are_degraded_with_the_measured_figure() {
    let mut slow = complete(Kind::Tools, 20);
    slow.pages = [800, 810, 790, 805]
        .iter()
        .enumerate()
        .map(|(i, ms)| {
            let mut p = page(i as u32, 0, None);
            p.duration = Duration::from_millis(*ms);
            p
        })
        .collect();
    let mut k = kind_input(&slow);
    k.page_latency = Some(Duration::from_millis(500));
    let v = judge_kind(k.clone());
    assert_eq!(v.overall.level, Health::Degraded);
    assert_reasons(
        &v,
        &[Code::SlowPages],
        0,
        "tools page 2 took 810 ms, more than the expected 500 ms (4 of 4 pages too slow)",
    );
    // Within the expectation, or none set: nothing to say.
    k.page_latency = Some(Duration::from_secs(1));
    assert_eq!(judge_kind(k.clone()).overall, Verdict::healthy());
    k.page_latency = None;
    assert_eq!(judge_kind(k).overall, Verdict::healthy());
}
