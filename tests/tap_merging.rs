//! Merging on the HTTP tap, against the simulator paging 14 tools by 8: a
//! client named for merging gets all 14 in one answer without
//! `nextCursor` (JSON and SSE answers), reused on its session; a client not
//! named, or a request with a cursor, passes untouched (a client not named
//! unread); an upstream that
//! cycles, fails on page 2, changes `cacheScope`, or a walk past a cap or
//! past `max_merged_bytes` leaves the client page 1 as it came, the reason
//! told and counted.

use mcp_tap::{
    Direction, MergeClients, MergeCount, MergeFallback, MergeOutcome, TapEvent, TapSettings,
};
use mcp_testkit::http::RawResponse;
use mcp_testkit::simulator::simulate_args;
use mcp_testkit::tap::{tool_names, RawConn, RunningTap, JSON_BODY, MCP_ACCEPT};
use mcp_testkit::Proc;
use serde_json::Value;

/// The simulator paging 14 tools by 8, with `flags`.
fn simulator(flags: &[&str]) -> Proc {
    let mut flags = flags.to_vec();
    flags.extend_from_slice(&["--items", "14", "--page-size", "8"]);
    let args = simulate_args("http", &flags);
    Proc::start(&args)
}

fn tap(upstream: &Proc, clients: MergeClients, tune: impl FnOnce(&mut TapSettings)) -> RunningTap {
    let mut settings = TapSettings::new(upstream.at("/mcp").parse().unwrap());
    settings.merge.clients = clients;
    tune(&mut settings);
    RunningTap::start(settings)
}

fn named(name: &str) -> MergeClients {
    MergeClients::Named(vec![name.to_string()])
}

/// A session opened through the tap by a client calling itself `name`.
struct Session {
    conn: RawConn,
    id: String,
    next: u32,
}

impl Session {
    fn open(tap: &RunningTap, name: &str) -> Session {
        let mut conn = RawConn::connect(tap.addr);
        let id = conn.open_session(name);
        Session { conn, id, next: 2 }
    }

    fn post(&mut self, body: &[u8]) -> RawResponse {
        let headers = [
            MCP_ACCEPT,
            JSON_BODY,
            ("Mcp-Session-Id", &self.id),
            ("Mcp-Protocol-Version", "2025-11-25"),
        ];
        self.conn
            .send("POST", "/mcp", &headers, Some(body))
            .answer()
    }

    /// `tools/list` with `params`; the answer and its JSON-RPC message.
    fn list(&mut self, params: &str) -> (RawResponse, Value) {
        let id = self.next;
        self.next += 1;
        let body =
            format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/list","params":{params}}}"#);
        let answer = self.post(body.as_bytes());
        let message = answer.message();
        assert_eq!(message["id"], id, "{}", answer.text());
        (answer, message)
    }
}

fn merge_events(tap: &RunningTap) -> Vec<(MergeOutcome, u32, u64)> {
    tap.recorder
        .events()
        .into_iter()
        .filter_map(|e| match e {
            TapEvent::Merged {
                outcome,
                pages,
                items,
                ..
            } => Some((outcome, pages, items)),
            _ => None,
        })
        .collect()
}

#[test]
fn a_named_client_gets_every_page_in_one_answer_and_others_pass_untouched() {
    for response in ["json", "sse"] {
        let upstream = simulator(&["--response", response]);
        let tap = tap(&upstream, named("desk-app"), |_| {});
        let mut desk = Session::open(&tap, "desk-app");
        let (answer, merged) = desk.list("{}");
        assert_eq!(
            tool_names(&merged).len(),
            14,
            "{response}: {}",
            answer.text()
        );
        assert!(merged["result"].get("nextCursor").is_none());
        let mut unique = tool_names(&merged);
        unique.dedup();
        assert_eq!(unique.len(), 14);
        // Reused on the same session: no walk.
        let (_, again) = desk.list("{}");
        assert_eq!(tool_names(&again), tool_names(&merged));
        assert_eq!(
            merge_events(&tap),
            [(MergeOutcome::Merged, 2, 14), (MergeOutcome::Reused, 0, 14)]
        );
        assert_eq!(tap.stats.merges(MergeCount::Merged), 1);
        // What the observer saw is what the client got.
        let answers = tap.recorder.texts(Direction::FromUpstream);
        assert!(answers
            .iter()
            .any(|a| a.contains("tool-014") && !a.contains("nextCursor")));

        let mut agent = Session::open(&tap, "agent-sdk");
        let (_, page1) = agent.list("{}");
        assert_eq!(
            tool_names(&page1).len(),
            8,
            "a client not named gets page 1"
        );
        let cursor = page1["result"]["nextCursor"]
            .as_str()
            .expect("a cursor")
            .to_string();
        let (_, page2) = desk.list(&format!(r#"{{"cursor":"{cursor}"}}"#));
        assert_eq!(
            tool_names(&page2).len(),
            6,
            "a request with a cursor passes"
        );
        assert_eq!(merge_events(&tap).len(), 2);
    }
}

/// Whether a request's body is read is decided before it comes: a client
/// whose session `initialize` named, not named for merging, is forwarded
/// unread (only that `initialize` was read, to name the session); when
/// only apps are merged for, a client no app rule names is never read at
/// all. The named client's requests are read, and merged.
#[test]
fn a_client_not_named_for_merging_is_forwarded_unread() {
    let upstream = simulator(&[]);
    let by_name = tap(&upstream, named("desk-app"), |_| {});
    let mut agent = Session::open(&by_name, "agent-sdk");
    assert_eq!(
        by_name.stats.merge_reads(),
        1,
        "its initialize, naming its session"
    );
    for _ in 0..5 {
        let (_, page1) = agent.list("{}");
        assert_eq!(tool_names(&page1).len(), 8);
    }
    let call = br#"{"jsonrpc":"2.0","id":99,"method":"ping"}"#;
    assert_eq!(agent.post(call).status, 200);
    assert_eq!(
        by_name.stats.merge_reads(),
        1,
        "nothing of agent-sdk's session read"
    );
    let mut desk = Session::open(&by_name, "desk-app");
    let (_, merged) = desk.list("{}");
    assert_eq!(tool_names(&merged).len(), 14);
    assert!(
        by_name.stats.merge_reads() >= 3,
        "desk-app's requests are read"
    );
    assert!(merge_events(&by_name)
        .iter()
        .all(|(o, _, _)| *o == MergeOutcome::Merged));

    let apps = mcp_tap::apps::Apps::new(vec![mcp_tap::apps::AppRule::new(
        "desk",
        vec!["127.0.0.2".parse().unwrap()],
        None,
    )
    .unwrap()])
    .unwrap();
    let only_apps = tap(&upstream, named("desk"), |s| s.apps = apps);
    let mut here = Session::open(&only_apps, "desk");
    let (_, page1) = here.list("{}");
    assert_eq!(
        tool_names(&page1).len(),
        8,
        "calling itself desk makes no app"
    );
    assert_eq!(only_apps.stats.merge_reads(), 0, "not even its initialize");
    assert!(merge_events(&only_apps).is_empty());
}

/// A tap merging for everyone in front of `flags`; what the first list
/// request got and the merge told. The body must be the upstream's own:
/// the same session on a twin simulator, through a tap that does not
/// merge (byte-exact, tests/tap_forwarding.rs), gets it too.
fn fallback(
    flags: &[&str],
    tune: impl FnOnce(&mut TapSettings),
) -> (Value, (MergeOutcome, u32, u64), RunningTap) {
    let upstream = simulator(flags);
    let twin = simulator(flags);
    let tap = tap(&upstream, MergeClients::All, tune);
    let mut session = Session::open(&tap, "mcp");
    let (answer, message) = session.list("{}");
    let direct = RunningTap::start(TapSettings::new(twin.at("/mcp").parse().unwrap()));
    let (unmerged, _) = Session::open(&direct, "mcp").list("{}");
    assert_eq!(
        answer.text(),
        unmerged.text(),
        "page 1 as the upstream gave it"
    );
    let told = merge_events(&tap);
    assert_eq!(told.len(), 1, "{told:?}");
    (message, told[0], tap)
}

#[test]
fn a_walk_that_is_not_complete_leaves_page_1_unchanged() {
    let (page1, (outcome, pages, _), _) = fallback(&["--scenario", "cycle"], |_| {});
    assert_eq!(tool_names(&page1).len(), 8);
    assert!(page1["result"]["nextCursor"].is_string());
    let MergeOutcome::FirstPage(reason) = outcome else {
        panic!("{outcome:?}")
    };
    assert_eq!(reason.label(), "cursor_cycle");
    assert!(pages >= 2);

    let (page1, (outcome, ..), tap) = fallback(&["--scenario", "rpc-error", "--page", "2"], |_| {});
    assert_eq!(tool_names(&page1).len(), 8);
    assert!(matches!(
        outcome,
        MergeOutcome::FirstPage(MergeFallback::Walk(_))
    ));
    assert_eq!(outcome_label(outcome), "rpc_error");
    assert_eq!(tap.stats.merges(MergeCount::Incomplete), 1);

    let (page1, (outcome, ..), _) = fallback(&[], |s| s.merge.walk.max_pages = 1);
    assert!(page1["result"]["nextCursor"].is_string());
    assert_eq!(outcome_label(outcome), "page_cap");

    let (page1, (outcome, ..), tap) = fallback(&[], |s| s.merge.max_merged_bytes = 1000);
    assert_eq!(tool_names(&page1).len(), 8);
    assert_eq!(outcome, MergeOutcome::FirstPage(MergeFallback::TooLarge));
    assert_eq!(tap.stats.merges(MergeCount::TooLarge), 1);
}

fn outcome_label(outcome: MergeOutcome) -> &'static str {
    match outcome {
        MergeOutcome::FirstPage(reason) => reason.label(),
        other => other.label(),
    }
}

#[test]
fn pages_whose_cache_scopes_differ_are_not_merged() {
    let upstream = simulator(&[
        "--scenario",
        "mixed-cache-scope",
        "--protocol",
        "2026-07-28",
    ]);
    let tap = tap(&upstream, MergeClients::All, |_| {});
    let body = r#"{"jsonrpc":"2.0","id":5,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"modern","version":"2"}}}}"#;
    let headers = [
        MCP_ACCEPT,
        JSON_BODY,
        ("Mcp-Protocol-Version", "2026-07-28"),
        ("Mcp-Method", "tools/list"),
    ];
    let answer = RawConn::connect(tap.addr)
        .send("POST", "/mcp", &headers, Some(body.as_bytes()))
        .answer();
    let page1 = answer.message();
    assert_eq!(tool_names(&page1).len(), 8, "{}", answer.text());
    assert_eq!(page1["result"]["cacheScope"], "public");
    assert_eq!(
        merge_events(&tap)[0].0,
        MergeOutcome::FirstPage(MergeFallback::ScopeChanged)
    );
}
