//! Scripted-page tests for every rule of the walker's contract.

use super::*;
use crate::scripted::ScriptedPager;
use serde_json::json;

fn tools(names: &[&str]) -> Vec<Value> {
    names.iter().map(|n| json!({"name": n})).collect()
}

fn page(names: &[&str], next: Option<&str>) -> Value {
    match next {
        Some(c) => json!({"tools": tools(names), "nextCursor": c}),
        None => json!({"tools": tools(names)}),
    }
}

fn legacy() -> WalkLimits {
    WalkLimits::default()
}

/// Legacy limits with at most `max_pages` pages.
fn page_cap(max_pages: u32) -> WalkLimits {
    WalkLimits {
        max_pages,
        ..legacy()
    }
}

/// A walk of tools by the legacy era's rules.
async fn run(script: &mut ScriptedPager, limits: &WalkLimits) -> ListingReport {
    run_in(script, limits, Era::Legacy).await
}

async fn run_in(script: &mut ScriptedPager, limits: &WalkLimits, era: Era) -> ListingReport {
    walk(script, Kind::Tools, limits, era).await
}

#[tokio::test]
async fn multi_page_union_threads_cursors_exactly() {
    let mut s = ScriptedPager::new()
        .page(None, page(&["a", "b"], Some("c1")))
        .page(Some("c1"), page(&["c", "d"], Some("c2")))
        .page(Some("c2"), page(&["e"], None));
    let r = run(&mut s, &legacy()).await;
    assert_eq!(r.outcome, Outcome::Complete);
    assert_eq!(s.sent(), vec![None, Some("c1"), Some("c2")]);
    // One page = exactly one request.
    assert_eq!(r.requests(), 3);
    assert_eq!(r.final_pages, 3);
    assert_eq!(r.names, vec!["a", "b", "c", "d", "e"]);
    assert_eq!((r.raw_items, r.unique_items, r.duplicate_items), (5, 5, 0));
    assert_eq!(r.pages[0].sent_cursor, None);
    assert_eq!(
        r.pages[1].sent_cursor.as_deref(),
        Some(crate::cursor::short_hash("c1").as_str())
    );
    assert_eq!(r.pages[2].next_cursor, CursorState::Absent);
    assert_eq!(r.reason, None);
}

#[tokio::test]
async fn null_cursor_ends_the_listing_in_both_eras() {
    for era in [Era::Legacy, Era::Modern] {
        let mut s = ScriptedPager::new()
            .page(None, page(&["a"], Some("c1")))
            .page(
                Some("c1"),
                json!({"tools": tools(&["b"]), "nextCursor": null}),
            );
        let r = run_in(&mut s, &legacy(), era).await;
        assert_eq!(r.outcome, Outcome::Complete);
        assert_eq!(r.requests(), 2);
        assert_eq!(r.pages[1].next_cursor, CursorState::Null);
        assert!(!r.blank_cursor_end);
    }
}

#[tokio::test]
async fn blank_cursor_ends_a_legacy_listing_and_is_a_cursor_from_2026_07_28() {
    // (era, cursors sent, items, ended on "")
    let eras = [
        (Era::Legacy, vec![None], vec!["a"], true),
        (Era::Modern, vec![None, Some("")], vec!["a", "b"], false),
    ];
    for (era, cursors, names, blank_end) in eras {
        let mut s = ScriptedPager::new()
            .page(None, page(&["a"], Some("")))
            .page(Some(""), page(&["b"], None));
        let r = run_in(&mut s, &legacy(), era).await;
        assert_eq!(r.outcome, Outcome::Complete);
        assert_eq!(s.sent(), cursors);
        assert_eq!(r.names, names);
        assert_eq!(r.blank_cursor_end, blank_end);
        assert_eq!(r.reason, blank_end.then_some(EndReason::BlankCursor));
        assert_eq!(r.pages[0].next_cursor, CursorState::Blank);
    }
}

#[tokio::test]
async fn repeated_cursor_aborts_as_cycle() {
    let mut s = ScriptedPager::new()
        .page(None, page(&["a"], Some("A")))
        .page(Some("A"), page(&["b"], Some("A")));
    let r = run(&mut s, &legacy()).await;
    assert_eq!(r.outcome, Outcome::Aborted(Guard::CursorCycle));
    assert_eq!(r.reason, Some(EndReason::Guard(Guard::CursorCycle)));
    // The repeated cursor is never sent again.
    assert_eq!(s.sent(), vec![None, Some("A")]);
    assert_eq!(r.names, vec!["a", "b"]);
}

#[tokio::test]
async fn a_b_a_cycle_aborts() {
    let mut s = ScriptedPager::new()
        .page(None, page(&["a"], Some("A")))
        .page(Some("A"), page(&["b"], Some("B")))
        .page(Some("B"), page(&["c"], Some("A")));
    let r = run(&mut s, &legacy()).await;
    assert_eq!(r.outcome, Outcome::Aborted(Guard::CursorCycle));
    assert_eq!(s.sent(), vec![None, Some("A"), Some("B")]);
    assert_eq!(r.requests(), 3);
}

#[tokio::test]
async fn constant_cursor_with_progress_is_legal_from_2026_07_28() {
    let mut s = constant_cursor(vec![
        page(&["b"], Some("K")),
        page(&["c"], Some("K")),
        page(&["d"], None),
    ]);
    let r = run_in(&mut s, &legacy(), Era::Modern).await;
    assert_eq!(r.outcome, Outcome::Complete);
    assert_eq!(r.names, vec!["a", "b", "c", "d"]);
    assert_eq!(r.requests(), 4);
    // The same script under a legacy protocol is a cycle.
    let mut s = constant_cursor(vec![page(&["b"], Some("K"))]);
    let r = run(&mut s, &legacy()).await;
    assert_eq!(r.outcome, Outcome::Aborted(Guard::CursorCycle));
}

#[tokio::test]
async fn constant_cursor_without_progress_aborts_as_no_progress() {
    let mut s = constant_cursor(vec![page(&["b"], Some("K")), page(&["a", "b"], Some("K"))]);
    let r = run_in(&mut s, &legacy(), Era::Modern).await;
    assert_eq!(r.outcome, Outcome::Aborted(Guard::NoProgress));
    assert_eq!(r.requests(), 3);
    assert_eq!(r.duplicate_names, vec!["a", "b"]);
}

/// Page one holds `a` and names cursor `K`; `K` is answered with `pages`
/// in turn.
fn constant_cursor(pages: Vec<Value>) -> ScriptedPager {
    let answers = pages.into_iter().map(Ok).collect();
    ScriptedPager::new()
        .page(None, page(&["a"], Some("K")))
        .sequence(Some("K"), answers)
}

/// Page one holds `a` and names cursor `c1`; `c1` is answered with `error`.
fn page_two_fails(error: impl Into<PageError>) -> ScriptedPager {
    ScriptedPager::new()
        .page(None, page(&["a"], Some("c1")))
        .error(Some("c1"), error)
}

fn chain(pages: u32) -> ScriptedPager {
    let mut s = ScriptedPager::new();
    for i in 0..pages {
        let cursor = (i > 0).then(|| format!("c{i}"));
        let next = (i + 1 < pages).then(|| format!("c{}", i + 1));
        let name = format!("t{i}");
        s = s.page(cursor.as_deref(), page(&[name.as_str()], next.as_deref()));
    }
    s
}

#[tokio::test]
async fn page_cap_boundary() {
    let limits = page_cap(5);
    let mut exactly = chain(5);
    let r = run(&mut exactly, &limits).await;
    assert_eq!(r.outcome, Outcome::Complete);
    assert_eq!(r.requests(), 5);

    let mut one_more = chain(6);
    let r = run(&mut one_more, &limits).await;
    assert_eq!(r.outcome, Outcome::Aborted(Guard::PageCap));
    // The sixth page is never requested.
    assert_eq!(r.requests(), 5);
    assert_eq!(r.unique_items, 5);
}

#[tokio::test]
async fn endless_cursors_stop_at_the_page_cap() {
    let limits = page_cap(50);
    let mut s = chain(10_000);
    let r = run(&mut s, &limits).await;
    assert_eq!(r.outcome, Outcome::Aborted(Guard::PageCap));
    assert_eq!(r.requests(), 50);
}

#[tokio::test]
async fn item_cap_counts_unique_items() {
    let limits = WalkLimits {
        max_items: 3,
        ..legacy()
    };
    let mut s = ScriptedPager::new()
        .page(None, page(&["a", "b", "a"], Some("c1")))
        .page(Some("c1"), page(&["b", "c"], Some("c2")))
        .page(Some("c2"), page(&["d"], None));
    let r = run(&mut s, &limits).await;
    assert_eq!(r.outcome, Outcome::Aborted(Guard::ItemCap));
    assert_eq!(r.requests(), 3);
    // Exactly at the cap completes.
    let mut s = ScriptedPager::new()
        .page(None, page(&["a", "b"], Some("c1")))
        .page(Some("c1"), page(&["c"], None));
    assert_eq!(run(&mut s, &limits).await.outcome, Outcome::Complete);
}

#[tokio::test]
async fn invalid_params_on_the_first_page_is_an_error_without_restart() {
    let mut s = ScriptedPager::new().error(
        None,
        PageError::Rpc {
            code: INVALID_PARAMS,
            message: "bad".into(),
        },
    );
    let r = run(&mut s, &legacy()).await;
    // No cursor was sent, so it is not `invalid_cursor`.
    assert_eq!(r.outcome, Outcome::Error(ErrorKind::InvalidParams));
    assert_eq!(r.reason, Some(EndReason::Error(ErrorKind::InvalidParams)));
    assert_eq!(r.pages[0].error, Some(ErrorKind::InvalidParams));
    assert_eq!(r.requests(), 1);
    assert!(r.restarts.is_empty());
    // -32602 without a cursor is not an answer to a cursor.
    assert_eq!(r.invalid_cursor_errors, 0);
    assert_eq!(r.rpc_error_code, Some(INVALID_PARAMS));
}

#[tokio::test]
async fn invalid_params_on_page_three_restarts_once() {
    let stale = || {
        Err(PageError::Rpc {
            code: INVALID_PARAMS,
            message: "stale".into(),
        })
    };
    let mut s = ScriptedPager::new()
        .page(None, page(&["a"], Some("c1")))
        .page(Some("c1"), page(&["b"], Some("c2")))
        .sequence(Some("c2"), vec![stale(), Ok(page(&["c"], None))]);
    let r = run(&mut s, &legacy()).await;
    assert_eq!(r.outcome, Outcome::Complete);
    assert_eq!(
        s.sent(),
        vec![None, Some("c1"), Some("c2"), None, Some("c1"), Some("c2")]
    );
    assert_eq!(r.invalid_cursor_errors, 1);
    assert_eq!(r.restarts.len(), 1);
    assert_eq!(r.restarts[0].reason, RestartReason::InvalidCursor);
    assert_eq!(r.restarts[0].at_page, 2);
    assert_eq!(r.final_pages, 3);
    assert_eq!(r.pages.len(), 6);
    assert_eq!(r.pages[3].attempt, 1);
    assert_eq!(r.names, vec!["a", "b", "c"]);

    // Past the allowed restarts it is an error.
    let mut s = ScriptedPager::new()
        .page(None, page(&["a"], Some("c1")))
        .page(Some("c1"), page(&["b"], Some("c2")))
        .sequence(Some("c2"), vec![stale(), stale()]);
    let r = run(&mut s, &legacy()).await;
    assert_eq!(r.outcome, Outcome::Error(ErrorKind::InvalidCursor));
    assert_eq!(r.pages[5].error, Some(ErrorKind::InvalidCursor));
    assert_eq!(r.invalid_cursor_errors, 2);
    assert_eq!(r.requests(), 6);
}

#[tokio::test]
async fn non_string_cursor_is_malformed() {
    for bad in [json!(42), json!({"offset": 5}), json!(true)] {
        let mut s =
            ScriptedPager::new().page(None, json!({"tools": tools(&["a"]), "nextCursor": bad}));
        let r = run(&mut s, &legacy()).await;
        assert_eq!(r.outcome, Outcome::Error(ErrorKind::MalformedResult));
        assert_eq!(r.pages[0].next_cursor, CursorState::Invalid);
        assert_eq!(r.requests(), 1);
    }
}

#[tokio::test]
async fn wrong_shape_is_malformed() {
    let mut s = ScriptedPager::new().page(None, json!({"tools": {"a": 1}}));
    let r = run(&mut s, &legacy()).await;
    assert_eq!(r.outcome, Outcome::Error(ErrorKind::MalformedResult));
    let mut s = ScriptedPager::new().page(None, json!("nope"));
    assert_eq!(
        run(&mut s, &legacy()).await.outcome,
        Outcome::Error(ErrorKind::MalformedResult)
    );
}

#[tokio::test]
async fn items_without_identity_key_are_counted_and_left_out() {
    let mut s = ScriptedPager::new().page(
        None,
        json!({"tools": [{"name": "a"}, {"description": "no name"}, {"name": 7}, {"name": "b"}]}),
    );
    let r = run(&mut s, &legacy()).await;
    assert_eq!(r.outcome, Outcome::Complete);
    assert_eq!(r.invalid_items, 2);
    assert_eq!(r.unique_items, 2);
    assert_eq!(r.raw_items, 2);
    assert_eq!(r.pages[0].items, 4);
}

#[tokio::test]
async fn duplicates_across_pages_are_counted_and_named() {
    let mut s = ScriptedPager::new()
        .page(None, page(&["a", "b", "c"], Some("c1")))
        .page(Some("c1"), page(&["c", "d"], Some("c2")))
        .page(Some("c2"), page(&["d", "a", "e"], None));
    let r = run(&mut s, &legacy()).await;
    assert_eq!(r.outcome, Outcome::Complete);
    assert_eq!((r.raw_items, r.unique_items, r.duplicate_items), (8, 5, 3));
    assert_eq!(r.duplicate_names, vec!["a", "c", "d"]);
    assert_eq!(r.pages[1].new_items, 1);
}

#[tokio::test]
async fn identity_key_follows_the_kind() {
    let mut s = ScriptedPager::new().page(
        None,
        json!({"resourceTemplates": [{"uriTemplate": "file:///{p}"}, {"name": "x"}]}),
    );
    let r = walk(&mut s, Kind::ResourceTemplates, &legacy(), Era::Legacy).await;
    assert_eq!(r.names, vec!["file:///{p}"]);
    assert_eq!(r.invalid_items, 1);
}

#[tokio::test]
async fn list_changed_mid_walk_restarts_once() {
    let mut s = chain(3).list_changed_on(2);
    let r = run(&mut s, &legacy()).await;
    assert_eq!(r.outcome, Outcome::Complete);
    assert_eq!(r.restarts.len(), 1);
    assert_eq!(r.restarts[0].reason, RestartReason::ListChanged);
    assert_eq!(r.requests(), 5);
    assert_eq!(r.list_changed_notifications, 1);
    assert_eq!(r.final_pages, 3);
}

#[tokio::test]
async fn rpc_and_transport_errors_keep_their_detail() {
    let mut s = page_two_fails(PageError::Rpc {
        code: -32603,
        message: "boom".into(),
    });
    let r = run(&mut s, &legacy()).await;
    assert_eq!(r.outcome, Outcome::Error(ErrorKind::RpcError));
    assert_eq!(r.rpc_error_code, Some(-32603));
    assert_eq!(r.pages[1].rpc_code, Some(-32603));

    let mut s = ScriptedPager::new().error(
        None,
        ExchangeFailure::Transport {
            message: "reset".into(),
            http_status: Some(502),
        },
    );
    let r = run(&mut s, &legacy()).await;
    assert_eq!(r.outcome, Outcome::Error(ErrorKind::TransportError));
    assert_eq!(r.http_status, Some(502));

    for (failure, kind) in [
        (
            ExchangeFailure::Unauthorized { status: 401 },
            ErrorKind::Unauthorized,
        ),
        (
            ExchangeFailure::TooLarge { limit: 10 },
            ErrorKind::ResponseTooLarge,
        ),
    ] {
        let mut s = ScriptedPager::new().error(None, failure);
        assert_eq!(run(&mut s, &legacy()).await.outcome, Outcome::Error(kind));
    }
}

#[tokio::test]
async fn session_renewal_restarts_from_page_one_once() {
    let mut s = ScriptedPager::new()
        .page(None, page(&["a"], Some("c1")))
        .sequence(
            Some("c1"),
            vec![Err(PageError::SessionRenewed), Ok(page(&["b"], None))],
        );
    let r = run(&mut s, &legacy()).await;
    assert_eq!(r.outcome, Outcome::Complete);
    assert_eq!(s.sent(), vec![None, Some("c1"), None, Some("c1")]);
    assert_eq!(r.restarts[0].reason, RestartReason::SessionExpired);
}

#[tokio::test]
async fn ttl_and_cache_scope_are_kept() {
    let mut s = ScriptedPager::new().page(
        None,
        json!({"tools": tools(&["a"]), "ttlMs": 30000, "cacheScope": "shared", "resultType": "complete"}),
    );
    let r = run_in(&mut s, &legacy(), Era::Modern).await;
    assert_eq!(r.cache.ttl_ms, Some(30000));
    assert_eq!(r.cache.cache_scope.as_deref(), Some("shared"));
    let mut s =
        ScriptedPager::new().page(None, json!({"tools": [], "resultType": "input_required"}));
    assert_eq!(
        run_in(&mut s, &legacy(), Era::Modern).await.outcome,
        Outcome::Error(ErrorKind::MalformedResult)
    );
}

#[tokio::test]
async fn empty_page_with_a_cursor_continues() {
    let mut s = ScriptedPager::new()
        .page(None, page(&[], Some("c1")))
        .page(Some("c1"), page(&["a"], None));
    let r = run(&mut s, &legacy()).await;
    assert_eq!(r.outcome, Outcome::Complete);
    assert_eq!(r.requests(), 2);
    assert_eq!(r.names, vec!["a"]);
}

#[tokio::test]
async fn http_429_is_rate_limited_with_its_retry_after() {
    let mut s = page_two_fails(ExchangeFailure::RateLimited {
        retry_after: Some(Duration::from_secs(7)),
    });
    let r = run(&mut s, &legacy()).await;
    assert_eq!(r.outcome, Outcome::Error(ErrorKind::RateLimited));
    assert_eq!(r.reason, Some(EndReason::Error(ErrorKind::RateLimited)));
    assert_eq!(r.http_status, Some(429));
    assert_eq!(r.retry_after, Some(Duration::from_secs(7)));
    // No retry inside the walk: the scheduler's backoff waits.
    assert_eq!(r.requests(), 2);
}

/// A catalogue of another shape: items under `entries`, identified by
/// `id`, the cursor under `meta.next` (as a registry of servers keeps it).
#[derive(Debug, Clone, Copy, serde::Serialize)]
struct Nested;

impl PageShape for Nested {
    fn array_field(self) -> &'static str {
        "entries"
    }
    fn identity(self, item: &Value) -> Option<std::borrow::Cow<'_, str>> {
        item.get("id")
            .and_then(Value::as_str)
            .map(std::borrow::Cow::Borrowed)
    }
    fn next_cursor(self, page: &Map<String, Value>) -> Option<&Value> {
        page.get("meta").and_then(|m| m.get("next"))
    }
    fn fingerprint(self, _item: &Value, _with_shape: bool) -> Option<ItemFingerprint> {
        None
    }
}

/// Answers `Nested` pages by cursor.
fn nested_script(pages: &[(Option<&str>, Value)]) -> ScriptedPager<Nested> {
    pages
        .iter()
        .fold(ScriptedPager::new(), |s, (cursor, page)| {
            s.page(*cursor, page.clone())
        })
}

fn nested(ids: &[&str], next: Value) -> Value {
    let entries: Vec<Value> = ids.iter().map(|i| json!({"id": i})).collect();
    json!({"entries": entries, "meta": {"next": next}})
}

#[tokio::test]
async fn another_shape_gets_every_guard() {
    // Complete, ended by an empty cursor (a legacy-era end).
    let mut s = nested_script(&[
        (None, nested(&["a", "b"], json!("c1"))),
        (Some("c1"), nested(&["b", "c"], json!(""))),
    ]);
    let r = walk(&mut s, Nested, &legacy(), Era::Legacy).await;
    assert_eq!(r.outcome, Outcome::Complete);
    assert_eq!(r.names, vec!["a", "b", "c"]);
    assert_eq!(r.duplicate_names, vec!["b"]);
    assert!(r.fingerprints.is_empty());
    // A cycle A -> B -> A.
    let mut s = nested_script(&[
        (None, nested(&["a"], json!("A"))),
        (Some("A"), nested(&["b"], json!("B"))),
        (Some("B"), nested(&["c"], json!("A"))),
    ]);
    let r = walk(&mut s, Nested, &legacy(), Era::Legacy).await;
    assert_eq!(r.outcome, Outcome::Aborted(Guard::CursorCycle));
    assert_eq!(r.requests(), 3);
    // A cursor that is not a string; no `meta` at all ends the walk.
    let mut s = nested_script(&[(None, nested(&["a"], json!(7)))]);
    let r = walk(&mut s, Nested, &legacy(), Era::Legacy).await;
    assert_eq!(r.outcome, Outcome::Error(ErrorKind::MalformedResult));
    let mut s = nested_script(&[(None, json!({"entries": []}))]);
    assert_eq!(
        walk(&mut s, Nested, &legacy(), Era::Legacy).await.outcome,
        Outcome::Complete
    );
    // The page cap.
    let limits = page_cap(2);
    let mut s = nested_script(&[
        (None, nested(&["a"], json!("1"))),
        (Some("1"), nested(&["b"], json!("2"))),
        (Some("2"), nested(&["c"], json!("3"))),
    ]);
    let r = walk(&mut s, Nested, &limits, Era::Legacy).await;
    assert_eq!(r.outcome, Outcome::Aborted(Guard::PageCap));
}

#[tokio::test]
async fn long_names_and_echoes_are_kept_cut_and_huge_cursors_still_cycle() {
    let a = format!("{}A", "n".repeat(60_000));
    let b = format!("{}B", "n".repeat(60_000));
    let huge = "c".repeat(1 << 20);
    let mut s = ScriptedPager::new()
        .page(None, page(&[a.as_str(), b.as_str()], Some(huge.as_str())))
        .page(
            Some(huge.as_str()),
            page(&[a.as_str()], Some(huge.as_str())),
        );
    let r = run(&mut s, &legacy()).await;
    // The repeated 1 MiB cursor is recognised through its digest.
    assert_eq!(r.outcome, Outcome::Aborted(Guard::CursorCycle));
    assert_eq!(
        r.names.len(),
        2,
        "two names that differ past the cut stay apart"
    );
    assert!(r.names.iter().all(|n| n.len() <= text::MAX_NAME_BYTES));
    assert_eq!(r.duplicate_names, vec![text::name(&a).into_owned()]);
    assert!(r
        .fingerprints
        .keys()
        .all(|n| n.len() <= text::MAX_NAME_BYTES));

    let mut s = ScriptedPager::new().page(
        None,
        json!({"tools": tools(&["x"]), "resultType": "r".repeat(5_000_000)}),
    );
    let r = run(&mut s, &legacy()).await;
    assert_eq!(r.outcome, Outcome::Error(ErrorKind::MalformedResult));
    assert!(r
        .detail
        .as_deref()
        .is_some_and(|d| d.len() <= text::MAX_ECHO_BYTES));
}
