//! Each rule against a scripted server that breaks it (and one that does
//! not). The simulator-level table lives in tests/check_simulator.rs.

use super::rule::{Requirement, RuleVerdict};
use super::*;
use mcp_listing::scripted::{Answer, ScriptedPager};
use mcp_listing::walk::INVALID_PARAMS;
use mcp_listing::{Era, Kind, PageError, WalkLimits};
use serde_json::{json, Value};

fn names(range: std::ops::Range<u32>) -> Vec<Value> {
    range.map(|i| json!({"name": format!("t{i:02}")})).collect()
}

/// A server that answers each cursor of `pages` with its page, and any
/// other cursor with -32602.
fn scripted(
    pages: Vec<(Option<&'static str>, Value)>,
) -> impl FnMut(Option<&str>, u32) -> (Result<Value, PageError>, u32) {
    move |cursor, _| match pages.iter().find(|(c, _)| *c == cursor) {
        Some((_, v)) => (Ok(v.clone()), 0),
        None => (
            Err(PageError::Rpc {
                code: INVALID_PARAMS,
                message: "bad cursor".into(),
            }),
            0,
        ),
    }
}

/// A page of the tools `items` with `next` as its nextCursor (none: the
/// last page), and the 2026-07-28 result fields when `modern`.
fn page(items: std::ops::Range<u32>, next: Option<&str>, modern: bool) -> Value {
    let mut v = json!({"tools": names(items)});
    if let Some(n) = next {
        v["nextCursor"] = json!(n);
    }
    if modern {
        v["resultType"] = json!("complete");
        v["ttlMs"] = json!(1000);
        v["cacheScope"] = json!("public");
    }
    v
}

/// 3 pages of 2 at cursors None, "c1", "c2"; garbage → -32602.
fn healthy(modern: bool) -> impl FnMut(Option<&str>, u32) -> (Result<Value, PageError>, u32) {
    scripted(vec![
        (None, page(0..2, Some("c1"), modern)),
        (Some("c1"), page(2..4, Some("c2"), modern)),
        (Some("c2"), page(4..6, None, modern)),
    ])
}

fn limits() -> WalkLimits {
    WalkLimits {
        max_pages: 20,
        ..WalkLimits::default()
    }
}

async fn check_with(
    answer: impl FnMut(Option<&str>, u32) -> (Result<Value, PageError>, u32) + Send + 'static,
    modern: bool,
    advertised: Option<bool>,
) -> ConformanceReport {
    // A server as a function of (cursor, request number) → (answer, list_changed).
    let mut answer = answer;
    let mut m = ScriptedPager::answering(move |asked| {
        let (outcome, list_changed) = answer(asked.cursor, asked.number);
        Answer {
            outcome,
            list_changed,
        }
    });
    let era = Era::modern_if(modern);
    let obs = observe_kind(&mut m, Kind::Tools, &limits(), era, advertised).await;
    ConformanceReport::new("t", evaluate(&obs))
}

/// Rule `id`'s verdict in `r`.
fn rule_result<'r>(r: &'r ConformanceReport, id: &str) -> &'r RuleResult {
    r.rules
        .iter()
        .find(|x| x.id == id)
        .unwrap_or_else(|| panic!("no rule {id}"))
}

fn verdict(r: &ConformanceReport, id: &str) -> (RuleVerdict, Requirement) {
    let x = rule_result(r, id);
    (x.verdict, x.level)
}

/// Asserts that rule `id` failed at `level`.
#[track_caller]
fn assert_fails(r: &ConformanceReport, id: &str, level: Requirement) {
    assert_eq!(verdict(r, id), (RuleVerdict::Fail, level), "{id}");
}

fn fails(r: &ConformanceReport) -> Vec<&'static str> {
    r.rules
        .iter()
        .filter(|x| x.verdict == RuleVerdict::Fail)
        .map(|x| x.id)
        .collect()
}

#[tokio::test]
async fn a_healthy_legacy_server_fails_nothing() {
    let r = check_with(healthy(false), false, Some(true)).await;
    assert_eq!(fails(&r), Vec::<&str>::new(), "{:#?}", r.rules);
    assert_eq!(r.exit_code(), 0);
    assert_eq!(verdict(&r, "cache-ttl").0, RuleVerdict::NotApplicable);
    assert_eq!(verdict(&r, "cursor-stable").0, RuleVerdict::Pass);
    assert_eq!(verdict(&r, "cursor-invalid").0, RuleVerdict::Pass);
    // Every rule once, in catalogue order.
    let ids: Vec<&str> = r.rules.iter().map(|x| x.id).collect();
    assert_eq!(ids, rule::ALL.map(|x| x.id));
}

#[tokio::test]
async fn a_healthy_modern_server_fails_nothing() {
    let r = check_with(healthy(true), true, Some(true)).await;
    assert_eq!(fails(&r), Vec::<&str>::new(), "{:#?}", r.rules);
    assert_eq!(verdict(&r, "cache-ttl").0, RuleVerdict::Pass);
    assert_eq!(verdict(&r, "result-type-present").0, RuleVerdict::Pass);
}

#[tokio::test]
async fn endless_cursors_fail_cursor_ends_and_the_listing() {
    let r = check_with(
        |cursor, _| {
            let n: u32 = cursor.and_then(|c| c.parse().ok()).unwrap_or(0);
            (
                Ok(json!({"tools": names(n..n + 1), "nextCursor": (n + 1).to_string()})),
                0,
            )
        },
        false,
        None,
    )
    .await;
    assert_fails(&r, "cursor-ends", Requirement::Must);
    assert_eq!(verdict(&r, "listing-complete").0, RuleVerdict::Fail);
    assert_eq!(r.exit_code(), 1);
}

#[tokio::test]
async fn number_and_null_cursors_fail_cursor_type() {
    let r = check_with(
        |c, _| match c {
            None => (Ok(json!({"tools": names(0..2), "nextCursor": 2})), 0),
            _ => (Ok(json!({"tools": []})), 0),
        },
        false,
        None,
    )
    .await;
    assert_fails(&r, "cursor-type", Requirement::Must);
    let r = check_with(
        |_, _| (Ok(json!({"tools": names(0..2), "nextCursor": null})), 0),
        false,
        None,
    )
    .await;
    assert_eq!(verdict(&r, "cursor-type").0, RuleVerdict::Fail);
    assert_eq!(verdict(&r, "listing-complete").0, RuleVerdict::Pass);
}

fn blank_loop() -> impl FnMut(Option<&str>, u32) -> (Result<Value, PageError>, u32) {
    |_, _| (Ok(page(0..2, Some(""), true)), 0)
}

#[tokio::test]
async fn blank_cursor_is_advice_before_2026_and_a_must_after() {
    let r = check_with(blank_loop(), false, None).await;
    assert_fails(&r, "cursor-blank", Requirement::Advice);
    assert_eq!(verdict(&r, "cursor-ends").0, RuleVerdict::NotApplicable);
    let r = check_with(blank_loop(), true, None).await;
    assert_fails(&r, "cursor-blank", Requirement::Must);
    assert_eq!(verdict(&r, "cursor-cycle").0, RuleVerdict::Fail);
}

#[tokio::test]
async fn a_working_blank_cursor_passes_under_2026() {
    let working = scripted(vec![
        (None, page(0..2, Some(""), true)),
        (Some(""), page(2..4, None, true)),
    ]);
    let r = check_with(working, true, None).await;
    assert_eq!(verdict(&r, "cursor-blank").0, RuleVerdict::Pass);
    assert_eq!(fails(&r), Vec::<&str>::new(), "{:#?}", r.rules);
}

#[tokio::test]
async fn a_blank_cursor_the_server_refuses_fails_and_says_how_to_end() {
    // Page 2 ends with `""`, and `""` sent back gets -32602.
    let refusing = scripted(vec![
        (None, page(0..2, Some("p2"), true)),
        (Some("p2"), page(2..4, Some(""), true)),
    ]);
    let r = check_with(refusing, true, None).await;
    let rule = rule_result(&r, "cursor-blank");
    assert_eq!(rule.verdict, RuleVerdict::Fail, "{rule:#?}");
    assert!(rule.message.contains("-32602"), "{}", rule.message);
    assert!(
        rule.message.contains("leaving nextCursor out"),
        "{}",
        rule.message
    );
    // Evidence pages count from 1 for people: page 3 is the request that
    // sent `""` back and was refused.
    assert_eq!(rule.evidence.page, Some(3), "{:?}", rule.evidence);
    assert!(rule.evidence.cursor_hash.is_some());
}

#[tokio::test]
async fn a_cycle_fails_cursor_cycle() {
    let r = check_with(
        |c, _| match c {
            None => (Ok(json!({"tools": names(0..2), "nextCursor": "a"})), 0),
            Some("a") => (Ok(json!({"tools": names(2..4), "nextCursor": "b"})), 0),
            _ => (Ok(json!({"tools": names(4..6), "nextCursor": "a"})), 0),
        },
        false,
        None,
    )
    .await;
    assert_fails(&r, "cursor-cycle", Requirement::Must);
    let ev = &rule_result(&r, "cursor-cycle").evidence;
    assert_eq!(ev.page, Some(3), "page 3 (index 2) repeated a cursor");
    assert!(ev.cursor_hash.is_some());
}

#[tokio::test]
async fn items_without_a_name_fail_items_identity() {
    let r = check_edited(false, |v, _| {
        v["tools"][0] = json!({"description": "no name"});
    })
    .await;
    assert_fails(&r, "items-identity", Requirement::Must);
    assert_eq!(r.exit_code(), 1);
}

#[tokio::test]
async fn duplicates_fail_items_unique_at_should() {
    let r = check_edited(false, |v, c| {
        if c == Some("c1") {
            v["tools"][0] = json!({"name": "t00"});
        }
    })
    .await;
    assert_fails(&r, "items-unique", Requirement::Should);
    assert_eq!(r.exit_code(), 0, "a SHOULD does not fail the run");
}

#[tokio::test]
async fn garbage_cursor_answers_are_told_apart() {
    // Silent restart: any unknown cursor is page 1.
    let r = check_garbage(None).await;
    assert_fails(&r, "cursor-invalid", Requirement::Should);
    assert!(cites(&r, "cursor-invalid", "page 1 again"));
    // Accepted: an empty page.
    let r = check_garbage(Some((Ok(json!({"tools": []})), 0))).await;
    assert!(cites(&r, "cursor-invalid", "accepted"));
    // Another error code.
    let boom = PageError::Rpc {
        code: -32603,
        message: "boom".into(),
    };
    let r = check_garbage(Some((Err(boom), 0))).await;
    assert!(cites(&r, "cursor-invalid", "-32603"));
}

/// A healthy legacy listing whose answer to the checker's garbage cursor
/// is `garbage` (`None`: page 1 again, a silent restart), checked.
async fn check_garbage(garbage: Option<(Result<Value, PageError>, u32)>) -> ConformanceReport {
    let mut base = healthy(false);
    let answer = move |c: Option<&str>, n| match c {
        Some(x) if x.starts_with("mcp-exporter") => {
            garbage.clone().unwrap_or_else(|| base(None, n))
        }
        other => base(other, n),
    };
    check_with(answer, false, None).await
}

/// Whether rule `id`'s message says `text`.
fn cites(r: &ConformanceReport, id: &str, text: &str) -> bool {
    r.rules
        .iter()
        .any(|x| x.id == id && x.message.contains(text))
}

#[tokio::test]
async fn a_cursor_that_answers_differently_fails_cursor_stable() {
    let mut base = healthy(false);
    let r = check_with(
        move |c, n| {
            let (mut v, l) = base(c, n);
            // From the 7th request on, "c1" gives other items.
            if let (Some("c1"), true, Ok(v)) = (c, n >= 7, &mut v) {
                v["tools"] = json!(names(40..42));
            }
            (v, l)
        },
        false,
        None,
    )
    .await;
    assert_fails(&r, "cursor-stable", Requirement::Should);
}

#[tokio::test]
async fn a_silent_change_fails_listing_stable_and_a_notified_one_does_not() {
    let silent = |c: Option<&str>, n: u32| {
        let mut v = healthy(false)(c, n);
        if let (Some("c2"), true, Ok(v)) = (c, n > 3, &mut v.0) {
            v["tools"] = json!(names(4..5));
        }
        v
    };
    let r = check_with(silent, false, Some(true)).await;
    assert_fails(&r, "listing-stable", Requirement::Should);
    let r = check_with(silent, false, None).await;
    assert_fails(&r, "listing-stable", Requirement::Advice);
    // The same change announced on the second listing's first page.
    let told = move |c: Option<&str>, n: u32| {
        let (v, _) = silent(c, n);
        (v, u32::from(n == 4))
    };
    let r = check_with(told, false, Some(true)).await;
    assert_eq!(verdict(&r, "listing-stable").0, RuleVerdict::NotApplicable);
    assert_eq!(verdict(&r, "list-changed-capability").0, RuleVerdict::Pass);
}

#[tokio::test]
async fn a_new_tool_order_fails_tools_order_at_should_under_2026() {
    let reorder = |c: Option<&str>, n: u32| {
        let mut v = healthy(true)(c, n);
        if let (None, true, Ok(v)) = (c, n > 3, &mut v.0) {
            v["tools"] = json!([{"name": "t01"}, {"name": "t00"}]);
        }
        v
    };
    let r = check_with(reorder, true, None).await;
    assert_fails(&r, "tools-order", Requirement::Should);
    let r = check_with(
        move |c, n| {
            let (mut v, l) = reorder(c, n);
            if let Ok(v) = &mut v {
                for k in ["resultType", "ttlMs", "cacheScope"] {
                    v.as_object_mut().unwrap().remove(k);
                }
            }
            (v, l)
        },
        false,
        None,
    )
    .await;
    assert_fails(&r, "tools-order", Requirement::Advice);
}

/// A healthy listing (modern or not) with `edit` applied to each answered
/// page, checked.
async fn check_edited(
    modern: bool,
    edit: impl Fn(&mut Value, Option<&str>) + Send + 'static,
) -> ConformanceReport {
    let mut base = healthy(modern);
    let answer = move |c: Option<&str>, n| {
        let (mut v, l) = base(c, n);
        if let Ok(v) = &mut v {
            edit(v, c);
        }
        (v, l)
    };
    check_with(answer, modern, None).await
}

#[tokio::test]
async fn cache_hints_are_checked_on_every_page() {
    let r = check_edited(true, |v, c| {
        if c == Some("c1") {
            v.as_object_mut().unwrap().remove("ttlMs");
        }
    })
    .await;
    assert_fails(&r, "cache-ttl", Requirement::Must);
    assert_eq!(r.exit_code(), 1);
    let r = check_edited(true, |v, _| v["ttlMs"] = json!(-1)).await;
    assert_eq!(verdict(&r, "cache-ttl").0, RuleVerdict::Fail);
    let r = check_edited(true, |v, _| v["cacheScope"] = json!("shared")).await;
    assert_eq!(verdict(&r, "cache-scope").0, RuleVerdict::Fail);
    let r = check_edited(true, |v, c| {
        if c == Some("c2") {
            v["cacheScope"] = json!("private");
        }
    })
    .await;
    assert_eq!(verdict(&r, "cache-scope").0, RuleVerdict::Pass);
    assert_fails(&r, "cache-scope-consistent", Requirement::Must);
}

#[tokio::test]
async fn result_type_rules() {
    let r = check_edited(true, |v, c| {
        if c == Some("c1") {
            v["resultType"] = json!("input_required");
        }
    })
    .await;
    assert_fails(&r, "result-type", Requirement::Must);
    assert_eq!(verdict(&r, "listing-complete").0, RuleVerdict::Fail);
    let r = check_edited(true, |v, _| {
        v.as_object_mut().unwrap().remove("resultType");
    })
    .await;
    assert_eq!(verdict(&r, "result-type").0, RuleVerdict::Pass);
    assert_fails(&r, "result-type-present", Requirement::Must);
}

#[tokio::test]
async fn list_changed_must_match_the_capability() {
    let noisy = |c: Option<&str>, n: u32| {
        let (v, _) = healthy(false)(c, n);
        (v, u32::from(n == 2))
    };
    let r = check_with(noisy, false, None).await;
    assert_fails(&r, "list-changed-capability", Requirement::Should);
    let r = check_with(noisy, false, Some(true)).await;
    assert_eq!(verdict(&r, "list-changed-capability").0, RuleVerdict::Pass);
    let r = check_with(
        |c, n| {
            let (v, _) = healthy(true)(c, n);
            (v, u32::from(n == 2))
        },
        true,
        Some(true),
    )
    .await;
    assert_fails(&r, "list-changed-capability", Requirement::Must);
}

#[tokio::test]
async fn an_unsupported_kind_is_one_not_applicable_row() {
    let obs = KindObservations {
        kind: Kind::Prompts,
        era: Era::Legacy,
        advertised_list_changed: None,
        first: run::Listed {
            report: mcp_listing::ListingReport::empty(
                Kind::Prompts,
                mcp_listing::Outcome::Unsupported,
            ),
            pages: Vec::new(),
        },
        second: None,
        garbage: None,
        repeat: None,
        subscription: None,
    };
    let rows = evaluate(&obs);
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0].verdict, RuleVerdict::NotApplicable);
}

#[tokio::test]
async fn json_rows_have_the_documented_fields() {
    let r = check_with(healthy(false), false, None).await;
    let v = serde_json::to_value(&r).unwrap();
    let row = &v["rules"][0];
    for f in ["id", "kind", "level", "verdict", "spec", "message"] {
        assert!(row.get(f).is_some(), "{f} missing in {row}");
    }
    assert!(v["rules"]
        .as_array()
        .unwrap()
        .iter()
        .any(|r| r["verdict"] == "n/a"));
    assert_eq!(v["summary"]["fail"], 0);
}
