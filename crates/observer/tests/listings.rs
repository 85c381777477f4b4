//! Client listings from scripted tap events: each outcome, each transport's
//! way of pairing answers, cursors that are not the client's, and the items
//! a client that stopped early never saw.

mod script;

use mcp_listing::Kind;
use mcp_observer::{
    AbandonCause, CatalogueSource, ClientListing, CursorOrigin, Fact, Failure, ListingOutcome,
    ObserverLimits,
};
use mcp_tap_contract::identity::IdentitySource;
use mcp_tap_contract::{
    BodyFraming, CopyEnd, Direction, ExchangeEnd, ExchangeId, NotObserved, RequestMethod,
};
use script::{error, list_request, sse, tools_page, Head, Script};
use serde_json::json;
use std::time::Duration;

fn in_session(session: &str) -> Head<'_> {
    Head {
        session: Some(session),
        user_agent: Some("python-httpx/0.28.1"),
        ..Head::default()
    }
}

/// An observer that saw `client` initialize session `s`; the head of its
/// later requests.
fn initialized(client: &str, version: &str) -> (Script, Head<'static>) {
    let mut s = Script::new(ObserverLimits::default());
    s.initialize(&Head::default(), "s", client, version);
    (s, in_session("s"))
}

/// An observer that saw `client` initialize, then ask for its first page
/// of tools (id 1); the head of its requests and that exchange.
fn first_tools_request(client: &str, version: &str) -> (Script, Head<'static>, ExchangeId) {
    let (mut s, head) = initialized(client, version);
    let x = s.ask(&head, &list_request(1, "tools/list", None));
    (s, head, x)
}

fn invalid_cursor_facts(s: &Script) -> usize {
    s.facts
        .iter()
        .filter(|f| matches!(f, Fact::InvalidCursor(_)))
        .count()
}

/// A client that walks 14 tools paged by 8 to the end.
fn walk(s: &mut Script, session: &str, name: &str) {
    s.initialize(&Head::default(), session, name, "2.4.0");
    let head = in_session(session);
    s.tools(&head, 1, 0, 14);
    s.tools(&head, 2, 1, 14);
}

/// A client that reads page 1 only and leaves with DELETE.
fn first_page_only(s: &mut Script, session: &str) {
    s.initialize(&Head::default(), session, "mcp", "0.1.0");
    let head = in_session(session);
    s.tools(&head, 1, 0, 14);
    s.delete(session);
}

#[test]
fn a_walk_to_the_end_is_complete_and_teaches_the_catalogue() {
    let mut s = Script::new(ObserverLimits::default());
    walk(&mut s, "s-walk", "ts-client");
    let listings = s.listings();
    assert_eq!(listings.len(), 1, "{:?}", s.facts);
    let l = listings[0];
    assert_eq!(l.outcome, ListingOutcome::Complete);
    assert_eq!(
        (l.client.label(), l.version.as_deref()),
        ("ts-client", Some("2.4.0"))
    );
    assert_eq!(l.source, IdentitySource::ClientInfo);
    assert_eq!((l.pages, l.items, l.kind), (2, 14, Kind::Tools));
    assert!(l.missed.is_none());
    let pages: Vec<(Option<u32>, bool, u32)> = s
        .facts
        .iter()
        .filter_map(|f| match f {
            Fact::Page(p) => Some((p.page, p.next_cursor, p.items)),
            _ => None,
        })
        .collect();
    assert_eq!(pages, [(Some(1), true, 8), (Some(2), false, 6)]);
    let catalogue = s
        .observer
        .catalogue(&s.observer.default_route().clone(), Kind::Tools)
        .unwrap();
    assert_eq!((catalogue.items, catalogue.pages), (14, Some(2)));
    assert_eq!(catalogue.source, CatalogueSource::Walk);
}

#[test]
fn page_one_then_delete_is_abandoned_and_names_what_was_missed() {
    let mut s = Script::new(ObserverLimits::default());
    walk(&mut s, "s-walk", "ts-client");
    first_page_only(&mut s, "s-py");
    let l = *s.listings().last().unwrap();
    assert_eq!(l.outcome, ListingOutcome::Abandoned);
    assert_eq!(l.abandoned, Some(AbandonCause::SessionEnded));
    assert_eq!(
        (l.client.label(), l.version.as_deref()),
        ("mcp", Some("0.1.0"))
    );
    assert_eq!((l.pages, l.items), (1, 8));
    let missed = l.missed.as_ref().unwrap();
    assert_eq!((missed.count, missed.catalogue_items), (6, 14));
    assert_eq!(missed.catalogue_pages, Some(2));
    let names: Vec<&str> = missed.names.iter().map(|n| &**n).collect();
    assert_eq!(
        names,
        ["tool-009", "tool-010", "tool-011", "tool-012", "tool-013", "tool-014"]
    );
    assert_eq!(missed.last, None);
    let tally = s.tally_of(l);
    assert_eq!(tally.since_start.get(ListingOutcome::Abandoned), 1);
    assert_eq!(tally.items_missed, Some(6));
    assert_eq!(tally.last_abandoned.as_ref().unwrap().pages, 1);
}

#[test]
fn a_cursor_that_never_comes_back_is_abandoned_after_the_wait() {
    let mut s = Script::new(ObserverLimits {
        max_missed_names: 2,
        ..ObserverLimits::default()
    });
    let names: Vec<String> = (1..=14).map(|i| format!("tool-{i:03}")).collect();
    let route = s.observer.default_route().clone();
    s.observer
        .set_reference(&route, Kind::Tools, &names, None, s.now, &mut s.facts);
    s.initialize(&Head::default(), "s-ts", "ts1", "1.0");
    s.tools(&in_session("s-ts"), 1, 0, 14);
    s.wait(Duration::from_secs(29));
    s.tick();
    assert!(s.listings().is_empty(), "not yet");
    s.wait(Duration::from_secs(1));
    s.tick();
    let l = s.listings()[0];
    assert_eq!(l.abandoned, Some(AbandonCause::Timeout));
    let missed = l.missed.as_ref().unwrap();
    assert_eq!(missed.source, CatalogueSource::Reference);
    assert_eq!(missed.catalogue_pages, None);
    let names: Vec<&str> = missed.names.iter().map(|n| &**n).collect();
    assert_eq!(names, ["tool-009", "tool-010"]);
    assert_eq!(missed.last.as_deref(), Some("tool-014"));
}

#[test]
fn page_one_again_restarts_and_an_error_fails() {
    let (mut s, head) = initialized("c", "1");
    s.tools(&head, 1, 0, 14);
    s.tools(&head, 2, 0, 14);
    s.post(
        &head,
        &list_request(3, "tools/list", Some("p1")),
        &error(3, -32602),
    );
    let outcomes: Vec<ListingOutcome> = s.listings().iter().map(|l| l.outcome).collect();
    assert_eq!(
        outcomes,
        [ListingOutcome::Restarted, ListingOutcome::Failed]
    );
    let failed = s.listings()[1];
    assert_eq!(failed.failure, Some(Failure::Rpc(Some(-32602))));
    assert_eq!(failed.error_code(), Some(-32602));
    assert!(failed.invalid_cursor);
    assert_eq!(invalid_cursor_facts(&s), 1);
    // -32602 to a first page is not a cursor's fault.
    s.post(
        &head,
        &list_request(4, "prompts/list", None),
        &error(4, -32602),
    );
    assert_eq!(invalid_cursor_facts(&s), 1);
    assert_eq!(
        s.listings().last().unwrap().failure,
        Some(Failure::Rpc(Some(-32602)))
    );
}

#[test]
fn cursors_from_another_session_or_nowhere_are_foreign() {
    let mut s = Script::new(ObserverLimits::default());
    s.initialize(&Head::default(), "s-a", "a", "1");
    s.initialize(&Head::default(), "s-b", "b", "1");
    // A tools/list request from `session` and its answer.
    let list = |s: &mut Script, session, id, cursor, answer: serde_json::Value| {
        s.post(
            &in_session(session),
            &list_request(id, "tools/list", cursor),
            &answer,
        )
    };
    let page = |id: u64| json!({"jsonrpc": "2.0", "id": id, "result": {"tools": [{"name": "t"}], "nextCursor": "only-a"}});
    list(&mut s, "s-a", 1, None, page(1));
    list(&mut s, "s-b", 1, Some("only-a"), error(1, -32602));
    list(&mut s, "s-b", 2, Some("forged"), error(2, -32602));
    let origins: Vec<(String, CursorOrigin)> = s
        .facts
        .iter()
        .filter_map(|f| match f {
            Fact::ForeignCursor { cursor, origin } => Some((cursor.client.to_string(), *origin)),
            _ => None,
        })
        .collect();
    assert_eq!(
        origins,
        [
            ("b".into(), CursorOrigin::OtherSession),
            ("b".into(), CursorOrigin::Unknown)
        ]
    );
    let tally = s
        .observer
        .tallies()
        .find(|(c, _)| c.client.label() == "b")
        .unwrap()
        .1;
    assert_eq!(tally.kind(Kind::Tools).foreign_cursor, [1, 1]);
    assert_eq!(tally.kind(Kind::Tools).invalid_cursor, 2);
    // A server handing every session the same cursor: each one's own.
    list(&mut s, "s-b", 3, None, page(3));
    list(&mut s, "s-b", 4, Some("only-a"), tools_page(4, 1, 8, 9));
    assert_eq!(
        s.listings().last().unwrap().outcome,
        ListingOutcome::Complete
    );
}

#[test]
fn sse_answers_are_read_past_priming_events_and_notifications() {
    let (mut s, head) = initialized("sse-client", "1");
    s.post_sse(
        &head,
        &list_request(1, "tools/list", None),
        &tools_page(1, 0, 8, 14),
    );
    s.post_sse(
        &head,
        &list_request(2, "tools/list", Some("p1")),
        &tools_page(2, 1, 8, 14),
    );
    let l = s.listings()[0];
    assert_eq!(
        (l.outcome, l.pages, l.items),
        (ListingOutcome::Complete, 2, 14)
    );
    assert!(
        !s.facts.iter().any(|f| matches!(f, Fact::NotObserved(_))),
        "{:?}",
        s.facts
    );
}

#[test]
fn legacy_sse_answers_arrive_on_the_stream_and_its_end_ends_the_session() {
    let mut s = Script::new(ObserverLimits::default());
    let stream = s.open(RequestMethod::Get, &Head::default(), BodyFraming::Other);
    s.answered(stream, 200, BodyFraming::EventStream, None);
    s.message(
        stream,
        Direction::FromUpstream,
        b"event: endpoint\ndata: /messages?session_id=abc\n",
        100,
    );
    s.feed(mcp_tap_contract::TapEvent::LegacySession {
        exchange: stream,
        session: http::HeaderValue::from_static("abc"),
    });
    let head = Head {
        session: Some("abc"),
        ..Head::default()
    };
    let post = |s: &mut Script, request: serde_json::Value| {
        s.post_with(&head, &request, 202, None, None);
    };
    post(&mut s, script::initialize_request("legacy-client", "1.0"));
    let init = json!({"jsonrpc": "2.0", "id": 0, "result": {"protocolVersion": "2024-11-05"}});
    s.message(stream, Direction::FromUpstream, sse(&init).as_bytes(), 9);
    post(&mut s, list_request(1, "tools/list", None));
    s.message(
        stream,
        Direction::FromUpstream,
        sse(&tools_page(1, 0, 8, 14)).as_bytes(),
        9,
    );
    assert!(s.listings().is_empty());
    s.close(stream, ExchangeEnd::ClientGone);
    let l = s.listings()[0];
    assert_eq!(l.client.label(), "legacy-client");
    assert_eq!(
        (l.outcome, l.abandoned),
        (ListingOutcome::Abandoned, Some(AbandonCause::SessionEnded))
    );
}

#[test]
fn stdio_is_one_session_of_lines_ended_by_the_process() {
    let mut s = Script::new(ObserverLimits::default());
    let x = s.stdio();
    s.line(
        x,
        Direction::FromClient,
        &script::initialize_request("Claude Desktop", "0.9"),
    );
    s.line(
        x,
        Direction::FromClient,
        &list_request(1, "tools/list", None),
    );
    s.message(x, Direction::FromUpstream, b"   ", 50);
    s.line(x, Direction::FromUpstream, &tools_page(1, 0, 8, 14));
    s.close(x, ExchangeEnd::Completed);
    let l = s.listings()[0];
    assert_eq!(l.client.label(), "Claude Desktop");
    assert_eq!((l.outcome, l.pages), (ListingOutcome::Abandoned, 1));
    assert!(s.observer.usage().sessions == 0 && s.observer.usage().exchanges == 0);
}

/// A sessionless modern client (its `_meta` naming `version`) walks two
/// pages, the first ending in a blank `nextCursor`.
fn modern_walk(s: &mut Script, version: &str, name: &str) {
    let meta = json!({"io.modelcontextprotocol/protocolVersion": version,
                      "io.modelcontextprotocol/clientInfo": {"name": name, "version": "4.1"}});
    let request = |id: u64, cursor: Option<&str>| {
        let mut r = list_request(id, "prompts/list", cursor);
        r["params"]["_meta"] = meta.clone();
        r
    };
    let page = |id: u64, next: Option<&str>| {
        let mut result = json!({"prompts": [{"name": format!("p{id}")}], "resultType": "complete"});
        if let Some(next) = next {
            result["nextCursor"] = json!(next);
        }
        json!({"jsonrpc": "2.0", "id": id, "result": result})
    };
    let head = Head::default();
    s.post(&head, &request(1, None), &page(1, Some("")));
    s.post(&head, &request(2, Some("")), &page(2, None));
}

#[test]
fn sessionless_modern_clients_walk_by_cursor_and_blank_is_a_cursor() {
    let mut s = Script::new(ObserverLimits::default());
    modern_walk(&mut s, "2026-07-28", "fastmcp");
    let l = s.listings()[0];
    assert_eq!(
        (l.outcome, l.pages, l.modern),
        (ListingOutcome::Complete, 2, true)
    );
    assert_eq!(l.client.label(), "fastmcp");
    // A later revision we do not know yet is modern too, as the tap's
    // merging and the walker read it (`Era::of_label`).
    modern_walk(&mut s, "2027-03-01", "later");
    let l = s.listings()[1];
    assert_eq!(
        (l.outcome, l.pages, l.modern, l.client.label()),
        (ListingOutcome::Complete, 2, true, "later")
    );
    let head = Head::default();
    // Before 2026-07-28 a blank nextCursor ends the walk, as the walker's
    // blank_cursor does.
    let old = json!({"jsonrpc": "2.0", "id": 9, "result": {"prompts": [], "nextCursor": ""}});
    s.post(
        &Head {
            user_agent: Some("node"),
            ..head
        },
        &list_request(9, "prompts/list", None),
        &old,
    );
    let l = s.listings()[2];
    assert_eq!(
        (l.outcome, l.pages, l.modern),
        (ListingOutcome::Complete, 1, false)
    );
    assert_client(l, "node", IdentitySource::UserAgent);
}

#[test]
fn the_operators_header_names_the_client_first() {
    let mut s = Script::new(ObserverLimits::default());
    s.initialize(&Head::default(), "s", "mcp", "0.1.0");
    let head = Head {
        session: Some("s"),
        client_header: Some("team-7"),
        user_agent: Some("node"),
        peer: Some("127.0.0.2"),
        path: None,
    };
    s.tools(&head, 1, 0, 8);
    let l = s.listings()[0];
    assert_client(l, "team-7", IdentitySource::Header);
}

#[test]
fn the_operators_apps_tell_apart_clients_of_one_name() {
    use mcp_tap_contract::apps::{AppRule, Apps};
    let rule = |name: &str, from: &str| AppRule::new(name, vec![from.parse().unwrap()], None);
    let apps = Apps::new(vec![
        rule("desk", "127.0.0.2").unwrap(),
        rule("agents", "127.0.0.3/32").unwrap(),
    ])
    .unwrap();
    let mut s = Script::with_apps(ObserverLimits::default(), apps);
    let from = |peer, session| Head {
        session: Some(session),
        user_agent: Some("python-httpx/0.28.1"),
        peer: Some(peer),
        ..Head::default()
    };
    let (desk, agents, elsewhere) = (
        from("127.0.0.2", "s1"),
        from("127.0.0.3", "s2"),
        from("10.0.0.1", "s3"),
    );
    for (head, session) in [(&desk, "s1"), (&agents, "s2"), (&elsewhere, "s3")] {
        let opener = Head {
            session: None,
            ..head.clone()
        };
        s.initialize(&opener, session, "mcp", "0.1.0");
    }
    s.tools(&desk, 1, 0, 8);
    s.tools(&agents, 2, 0, 8);
    s.tools(&elsewhere, 3, 0, 8);
    let who: Vec<(&str, IdentitySource)> = s
        .listings()
        .iter()
        .map(|l| (l.client.label(), l.source))
        .collect();
    assert_eq!(
        who,
        [
            ("desk", IdentitySource::App),
            ("agents", IdentitySource::App),
            ("mcp", IdentitySource::ClientInfo),
        ],
        "both say mcp 0.1.0; an address no rule names reads as before"
    );
}

#[test]
fn batches_garbage_and_truncated_messages_are_counted_and_skipped() {
    let mut s = Script::new(ObserverLimits::default());
    let x = s.open(RequestMethod::Post, &Head::default(), BodyFraming::Json);
    s.message(
        x,
        Direction::FromClient,
        br#"[{"jsonrpc":"2.0","id":1,"method":"tools/list"}]"#,
        5,
    );
    let y = s.open(RequestMethod::Post, &Head::default(), BodyFraming::Json);
    s.message(y, Direction::FromClient, b"\x00\xffnot json", 5);
    let z = s.open(RequestMethod::Post, &Head::default(), BodyFraming::Json);
    s.message(
        z,
        Direction::FromClient,
        br#"{"jsonrpc":"2.0","id":1,"meth"#,
        5,
    );
    // The data path's own reasons are its to count.
    s.end(
        z,
        Direction::FromUpstream,
        CopyEnd::NotObserved(NotObserved::TooLarge),
    );
    let reasons: Vec<NotObserved> = s
        .facts
        .iter()
        .filter_map(|f| match f {
            Fact::NotObserved(r) => Some(*r),
            _ => None,
        })
        .collect();
    assert_eq!(
        reasons,
        [
            NotObserved::Batch,
            NotObserved::Unparsable,
            NotObserved::Unparsable
        ]
    );
    assert_eq!(s.observer.usage().buffered_bytes, 0);
}

#[test]
fn an_answer_that_passed_unread_lets_its_listing_go_on() {
    let (mut s, head, x) = first_tools_request("c", "1");
    s.answered(x, 200, BodyFraming::Json, None);
    s.end(
        x,
        Direction::FromUpstream,
        CopyEnd::NotObserved(NotObserved::TooLarge),
    );
    s.close(x, ExchangeEnd::Completed);
    s.tools(&head, 2, 1, 14);
    assert!(!s
        .facts
        .iter()
        .any(|f| matches!(f, Fact::ForeignCursor { .. })));
    let l = s.listings()[0];
    assert_eq!((l.outcome, l.pages), (ListingOutcome::Complete, 1));
}

#[test]
fn an_upstream_failure_or_http_error_fails_the_listing() {
    let (mut s, head, x) = first_tools_request("c", "1");
    s.close(
        x,
        ExchangeEnd::UpstreamFailed(mcp_tap_contract::UpstreamFailure::Reset),
    );
    s.post_with(
        &head,
        &list_request(2, "prompts/list", None),
        503,
        None,
        None,
    );
    let failures: Vec<Option<Failure>> = s.listings().iter().map(|l| l.failure).collect();
    assert_eq!(
        failures,
        [
            Some(Failure::Upstream(mcp_tap_contract::UpstreamFailure::Reset)),
            Some(Failure::Http(503))
        ]
    );
    // A 404 for the session ends it.
    s.tools(&head, 3, 0, 14);
    s.post_with(
        &head,
        &list_request(4, "tools/list", Some("p1")),
        404,
        None,
        None,
    );
    let last = *s.listings().last().unwrap();
    assert!(
        matches!(
            last.outcome,
            ListingOutcome::Abandoned | ListingOutcome::Failed
        ),
        "{last:?}"
    );
    assert_eq!(s.observer.usage().sessions, 0);
}

#[test]
fn a_merged_answer_is_a_complete_listing_that_says_so() {
    let (mut s, _, x) = first_tools_request("mcp", "0.1.0");
    s.answered(x, 200, BodyFraming::Json, None);
    s.feed(mcp_tap_contract::TapEvent::Merged {
        exchange: x,
        kind: Kind::Tools,
        outcome: mcp_tap_contract::MergeOutcome::Merged,
        pages: 2,
        items: 14,
    });
    s.message(
        x,
        Direction::FromUpstream,
        tools_page(1, 0, 14, 14).to_string().as_bytes(),
        99,
    );
    s.close(x, ExchangeEnd::Completed);
    let l = s.listings()[0];
    assert_eq!(
        (l.outcome, l.items, l.merged),
        (
            ListingOutcome::Complete,
            14,
            Some(mcp_tap_contract::MergeOutcome::Merged)
        )
    );
    assert_eq!(
        s.observer
            .catalogue(&s.observer.default_route().clone(), Kind::Tools)
            .unwrap()
            .pages,
        Some(2)
    );
    let tally = s.tally_of(l);
    assert!(tally.last_complete.as_ref().unwrap().merged);
}

#[test]
fn a_client_that_closes_its_stream_without_delete_abandons() {
    let (mut s, head) = initialized("ts1", "1.0");
    let stream = s.open(RequestMethod::Get, &head, BodyFraming::Other);
    s.answered(stream, 200, BodyFraming::EventStream, None);
    s.tools(&head, 1, 0, 14);
    s.close(stream, ExchangeEnd::ClientGone);
    let l = s.listings()[0];
    assert_eq!(
        (l.outcome, l.abandoned),
        (ListingOutcome::Abandoned, Some(AbandonCause::SessionEnded))
    );
    assert_eq!(s.observer.usage().sessions, 1, "who it is stays");
}

#[test]
fn a_stateless_servers_caller_keeps_the_name_it_gave_on_initialize() {
    let mut s = Script::new(ObserverLimits::default());
    let head = Head {
        user_agent: Some("python-httpx/0.28.1"),
        ..Head::default()
    };
    let answer = json!({"jsonrpc": "2.0", "id": 0, "result": {"protocolVersion": "2025-06-18"}});
    s.post(&head, &script::initialize_request("mcp", "0.1.0"), &answer);
    s.tools(&head, 1, 0, 14);
    s.post(
        &Head {
            user_agent: Some("node"),
            ..head
        },
        &list_request(1, "tools/list", None),
        &tools_page(1, 0, 8, 14),
    );
    s.wait(Duration::from_secs(30));
    s.tick();
    let mut names: Vec<(&str, IdentitySource)> = s
        .listings()
        .iter()
        .map(|l| (l.client.label(), l.source))
        .collect();
    names.sort_by_key(|n| n.0);
    assert_eq!(
        names,
        [
            ("mcp", IdentitySource::ClientInfo),
            ("node", IdentitySource::UserAgent)
        ]
    );
}

#[test]
fn on_stdio_a_merge_note_marks_one_answer_only() {
    let mut s = Script::new(ObserverLimits::default());
    let x = s.stdio();
    let init = script::initialize_request("mcp", "0.1.0");
    s.line(x, Direction::FromClient, &init);
    for (id, outcome) in [
        (1, mcp_tap_contract::MergeOutcome::Merged),
        (2, mcp_tap_contract::MergeOutcome::Reused),
    ] {
        s.line(
            x,
            Direction::FromClient,
            &list_request(id, "tools/list", None),
        );
        s.feed(mcp_tap_contract::TapEvent::Merged {
            exchange: x,
            kind: Kind::Tools,
            outcome,
            pages: if id == 1 { 2 } else { 0 },
            items: 14,
        });
        s.line(x, Direction::FromUpstream, &tools_page(id, 0, 14, 14));
    }
    s.line(
        x,
        Direction::FromClient,
        &list_request(3, "tools/list", None),
    );
    s.line(x, Direction::FromUpstream, &tools_page(3, 0, 8, 14));
    s.close(x, ExchangeEnd::Completed);
    let merged: Vec<_> = s.listings().iter().map(|l| (l.outcome, l.merged)).collect();
    assert_eq!(
        merged,
        [
            (
                ListingOutcome::Complete,
                Some(mcp_tap_contract::MergeOutcome::Merged)
            ),
            (
                ListingOutcome::Complete,
                Some(mcp_tap_contract::MergeOutcome::Reused)
            ),
            (ListingOutcome::Abandoned, None),
        ]
    );
    let catalogue = s
        .observer
        .catalogue(&s.observer.default_route().clone(), Kind::Tools)
        .unwrap();
    assert_eq!(
        (catalogue.items, catalogue.pages),
        (14, Some(2)),
        "a reused merge keeps the pages"
    );
    let missed = s.listings()[2].missed.as_ref().unwrap();
    assert_eq!((missed.count, missed.catalogue_pages), (6, Some(2)));
}

#[test]
fn an_id_sent_again_before_its_answer_leaves_no_listing_waiting() {
    let (mut s, head) = initialized("c", "1");
    s.tools(&head, 1, 0, 24);
    let again = list_request(2, "tools/list", Some("p1"));
    let first = s.ask(&head, &again);
    let second = s.ask(&head, &again);
    s.answered(second, 200, BodyFraming::Json, None);
    let answer = tools_page(2, 1, 8, 24).to_string();
    s.message(second, Direction::FromUpstream, answer.as_bytes(), 99);
    s.close(second, ExchangeEnd::Completed);
    s.close(first, ExchangeEnd::ClientGone);
    s.wait(Duration::from_secs(30));
    s.tick();
    let l = s.listings()[0];
    assert_eq!((l.outcome, l.pages), (ListingOutcome::Abandoned, 2));
    assert_eq!(l.abandoned, Some(AbandonCause::Timeout));
}

/// Who the listing says the client is, and from what it learned that.
fn assert_client(l: &ClientListing, label: &str, source: IdentitySource) {
    assert_eq!((l.client.label(), l.source), (label, source));
}
