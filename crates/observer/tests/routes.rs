//! One tap in front of a gateway: the upstream serves many MCP servers at
//! many paths, and each client listing is compared with its own route's
//! catalogue. A page-1 listing seen before the catalogue is known says
//! what it missed once it is; a flood of invented paths stays bounded and
//! counted; paths differing only by encoding, slashes or query are one.

mod script;

use mcp_listing::Kind;
use mcp_observer::{
    ClientRoute, Fact, ListingOutcome, ObserverLimits, OtherRoute, RouteRule, Routing,
    UNMATCHED_AFTER,
};
use script::{list_request, tools_page, Head, Script};

/// A server at `path` paging `total` tools by `per_page`.
#[derive(Clone, Copy)]
struct Server<'a> {
    path: &'a str,
    total: usize,
    per_page: usize,
}

const ALPHA: Server = Server {
    path: "/mcp/alpha",
    total: 14,
    per_page: 8,
};
const BETA: Server = Server {
    path: "/mcp/beta",
    total: 40,
    per_page: 10,
};

fn gateway() -> Script {
    Script::with_routing(ObserverLimits::default(), Routing::learning(Some("/")))
}

fn head<'a>(server: &Server<'a>, session: &'a str) -> Head<'a> {
    Head {
        path: Some(server.path),
        session: Some(session),
        ..Head::default()
    }
}

/// A client walking `server` to its end in session `session`.
fn walk(s: &mut Script, server: Server, session: &str, name: &str) {
    let mut init = head(&server, session);
    init.session = None;
    s.initialize(&init, session, name, "1.0");
    let pages = server.total.div_ceil(server.per_page);
    for page in 0..pages {
        let cursor = (page > 0).then(|| format!("p{page}"));
        let request = list_request(page as u64 + 1, "tools/list", cursor.as_deref());
        let answer = tools_page(page as u64 + 1, page, server.per_page, server.total);
        s.post(&head(&server, session), &request, &answer);
    }
}

/// A client reading page 1 of `server`, then leaving (DELETE).
fn page_one(s: &mut Script, server: Server, session: &str) {
    let mut init = head(&server, session);
    init.session = None;
    s.initialize(&init, session, "mcp", "0.1.0");
    let answer = tools_page(1, 0, server.per_page, server.total);
    s.post(
        &head(&server, session),
        &list_request(1, "tools/list", None),
        &answer,
    );
    s.delete(session);
}

fn missed_of(s: &Script, route: &str, client: &str) -> (u64, u64, Option<u32>, String) {
    let l = s
        .listings()
        .into_iter()
        .rev()
        .find(|l| l.route.name() == route && l.client.label() == client)
        .unwrap_or_else(|| panic!("no listing of {client} on {route}: {:#?}", s.facts));
    let m = l.missed.as_ref().expect("the catalogue is known");
    let first = m.names.first().map(|n| n.to_string()).unwrap_or_default();
    (m.count, m.catalogue_items, m.catalogue_pages, first)
}

#[test]
fn two_servers_behind_one_tap_are_judged_against_their_own_catalogues() {
    let mut s = gateway();
    walk(&mut s, ALPHA, "a-walk", "walker");
    walk(&mut s, BETA, "b-walk", "walker");
    page_one(&mut s, ALPHA, "a-read");
    page_one(&mut s, BETA, "b-read");
    assert_eq!(
        missed_of(&s, "/mcp/alpha", "mcp"),
        (6, 14, Some(2), "tool-009".into())
    );
    assert_eq!(
        missed_of(&s, "/mcp/beta", "mcp"),
        (30, 40, Some(4), "tool-011".into())
    );
    let complete: Vec<(&str, u64)> = s
        .listings()
        .into_iter()
        .filter(|l| l.outcome == ListingOutcome::Complete)
        .map(|l| (l.route.name(), l.items))
        .collect();
    assert_eq!(complete, [("/mcp/alpha", 14), ("/mcp/beta", 40)]);
    let routes: Vec<String> = s
        .observer
        .tallies()
        .map(|(k, _)| format!("{} {}", k.client, k.route))
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .collect();
    assert_eq!(
        routes,
        [
            "mcp /mcp/alpha",
            "mcp /mcp/beta",
            "walker /mcp/alpha",
            "walker /mcp/beta"
        ]
    );
    let alpha = s.observer.route_named("/mcp/alpha").expect("learned");
    assert_eq!(alpha.label(), Some("/mcp/alpha"));
    let beta = s.observer.route_named("/mcp/beta").expect("learned");
    let known = |r| s.observer.catalogue(r, Kind::Tools).map(|c| c.items);
    assert_eq!((known(&alpha), known(&beta)), (Some(14), Some(40)));
}

#[test]
fn a_page_one_listing_before_any_walk_is_told_what_it_missed_once_the_catalogue_is_known() {
    let mut s = gateway();
    page_one(&mut s, BETA, "b-read");
    let l = s.listings()[0];
    assert_eq!(
        (l.outcome, l.missed.is_none()),
        (ListingOutcome::Abandoned, true)
    );
    let key = ClientRoute {
        client: l.client.clone(),
        route: l.route.clone(),
    };
    let tally = |s: &Script| s.observer.tally(&key).unwrap().kind(Kind::Tools).clone();
    assert_eq!(tally(&s).items_missed, None);
    // A walker comes: the catalogue is known, the earlier listing is told.
    s.take_facts();
    walk(&mut s, BETA, "b-walk", "walker");
    let told: Vec<_> = s
        .facts
        .iter()
        .filter_map(|f| match f {
            Fact::MissedKnown(m) => Some(m.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(told.len(), 1, "{:#?}", s.facts);
    assert_eq!(told[0].client.label(), "mcp");
    assert_eq!(
        (told[0].missed.count, told[0].missed.catalogue_items),
        (30, 40)
    );
    let t = tally(&s);
    assert_eq!(t.items_missed, Some(30));
    let last = t.last_abandoned.unwrap();
    assert_eq!(last.missed.unwrap().catalogue_pages, Some(4));
    assert_eq!(s.observer.usage().tracked_bytes, 0, "its items given back");
}

#[test]
fn a_reference_for_a_route_tells_the_listings_that_waited_for_it() {
    let mut s = gateway();
    page_one(&mut s, ALPHA, "a-read");
    page_one(&mut s, BETA, "b-read");
    let alpha = s.observer.route_named("/mcp/alpha").unwrap();
    let names: Vec<String> = (1..=14).map(|i| format!("tool-{i:03}")).collect();
    let now = s.now;
    let mut facts = Vec::new();
    s.observer
        .set_reference(&alpha, Kind::Tools, &names, Some(2), now, &mut facts);
    let told: Vec<(String, u64)> = facts
        .iter()
        .filter_map(|f| match f {
            Fact::MissedKnown(m) => Some((m.route.to_string(), m.missed.count)),
            _ => None,
        })
        .collect();
    assert_eq!(told, [("/mcp/alpha".to_string(), 6)], "beta still waits");
}

#[test]
fn paths_differing_by_encoding_slashes_or_query_are_one_route() {
    let mut s = gateway();
    walk(&mut s, ALPHA, "a-walk", "walker");
    for (i, path) in ["/mcp/alpha/", "/mcp//%61lpha?x=1", "/mcp/./alpha?"]
        .into_iter()
        .enumerate()
    {
        let session = format!("r-{i}");
        let server = Server { path, ..ALPHA };
        page_one(&mut s, server, &session);
    }
    let readers: Vec<(&str, u64)> = s
        .listings()
        .into_iter()
        .filter(|l| l.client.label() == "mcp")
        .map(|l| (l.route.name(), l.missed.as_ref().map_or(99, |m| m.count)))
        .collect();
    assert_eq!(readers, [("/mcp/alpha", 6); 3]);
    assert_eq!(s.observer.usage().routes, 1);
}

#[test]
fn a_route_flood_is_bounded_and_counted() {
    let limits = ObserverLimits {
        max_routes: 16,
        ..ObserverLimits::default()
    };
    let mut s = Script::with_routing(limits, Routing::learning(Some("/mcp")));
    for i in 0..5_000u64 {
        // Sessionless: every request a path of its own.
        let path = format!("/flood/{i}");
        let head = Head {
            path: Some(&path),
            ..Head::default()
        };
        let answer = tools_page(i, 0, 8, 14);
        s.post(&head, &list_request(i, "tools/list", None), &answer);
    }
    let usage = s.observer.usage();
    assert_eq!(usage.routes, 17, "16 learned and other");
    assert!(usage.sessions <= 17, "{usage:?}");
    let other = s
        .facts
        .iter()
        .filter(|f| matches!(f, Fact::OtherRoute(OtherRoute::MaxRoutes)))
        .count();
    assert_eq!(other, 5_000 - 16);
    // `other` stands for many paths: never a catalogue, never "missed".
    let other_route = s.observer.route_named("other").expect("used");
    assert!(s.observer.catalogue(&other_route, Kind::Tools).is_none());
    let on_other = s.listings().into_iter().filter(|l| l.route.is_other());
    assert!(on_other.clone().count() > 0);
    assert!(on_other.into_iter().all(|l| l.missed.is_none()));
}

#[test]
fn named_routes_and_patterns_name_their_requests_and_a_pattern_that_matches_nothing_is_told() {
    let rules = vec![
        RouteRule::parse(Some("alpha"), "/mcp/alpha").unwrap(),
        RouteRule::parse(Some("srv-{id}"), "/mcp/{id}").unwrap(),
        RouteRule::parse(None, "/servers/{id}/mcp").unwrap(),
    ];
    let routing = Routing {
        default_path: Some("/".into()),
        rules,
        learn_paths: false,
    };
    let mut s = Script::with_routing(ObserverLimits::default(), routing);
    walk(&mut s, ALPHA, "a-walk", "walker");
    walk(&mut s, BETA, "b-walk", "walker");
    page_one(&mut s, BETA, "b-read");
    let elsewhere = Server {
        path: "/elsewhere",
        ..ALPHA
    };
    page_one(&mut s, elsewhere, "e-read");
    let routes: Vec<(&str, Option<&str>)> = s
        .listings()
        .into_iter()
        .map(|l| (l.route.name(), l.route.label()))
        .collect();
    assert_eq!(
        routes,
        [
            ("alpha", Some("alpha")),
            ("srv-beta", Some("srv-beta")),
            ("srv-beta", Some("srv-beta")),
            ("other", Some("other")),
        ]
    );
    assert_eq!(
        s.facts
            .iter()
            .filter(|f| matches!(f, Fact::OtherRoute(OtherRoute::Unmatched)))
            .count(),
        1
    );
    for i in 0..UNMATCHED_AFTER {
        let session = format!("w-{i}");
        walk(&mut s, ALPHA, &session, "walker");
    }
    let unmatched: Vec<String> = s
        .facts
        .iter()
        .filter_map(|f| match f {
            Fact::RouteUnmatched { written, .. } => Some(written.to_string()),
            _ => None,
        })
        .collect();
    assert_eq!(unmatched, ["/servers/{id}/mcp"], "told once");
}

#[test]
fn a_legacy_session_belongs_to_its_streams_route() {
    let mut s = gateway();
    let get = Head {
        path: Some("/sse/alpha"),
        ..Head::default()
    };
    let stream = s.open(
        mcp_tap_contract::RequestMethod::Get,
        &get,
        mcp_tap_contract::BodyFraming::Other,
    );
    s.answered(
        stream,
        200,
        mcp_tap_contract::BodyFraming::EventStream,
        None,
    );
    s.feed(mcp_tap_contract::TapEvent::LegacySession {
        exchange: stream,
        session: http::HeaderValue::from_static("abc"),
    });
    let post = Head {
        path: Some("/messages?sessionId=abc"),
        session: Some("abc"),
        ..Head::default()
    };
    s.post_with(&post, &list_request(1, "tools/list", None), 202, None, None);
    let page = tools_page(1, 0, 8, 14);
    s.message(
        stream,
        mcp_tap_contract::Direction::FromUpstream,
        format!("event: message\ndata: {page}\n").as_bytes(),
        50,
    );
    s.close(stream, mcp_tap_contract::ExchangeEnd::ClientGone);
    let l = s.listings()[0];
    assert_eq!(l.route.name(), "/sse/alpha");
    assert!(s.observer.route_named("/messages").is_none(), "not a route");
}
