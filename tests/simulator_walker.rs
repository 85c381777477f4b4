//! The crate's own walker (mcp-listing) against real simulator processes
//! over stdio and Streamable HTTP: what docs/simulator.md states a correct
//! client reports for each scenario holds for the walker.

use mcp_listing::{
    walk, Era, ErrorKind, ExchangeFailure, Guard, Kind, ListingReport, Outcome, PageError,
    PageResult, Pager, WalkLimits,
};
use mcp_testkit::simulator::http_scenario;
use mcp_testkit::simulator::{numbered, StdioSim};
use serde_json::{json, Value};
use std::sync::mpsc;
use std::time::Duration;
use std::time::{Instant, SystemTime};

struct StdioPager {
    sim: StdioSim,
    modern: bool,
}

impl Pager for StdioPager {
    fn fetch_page(
        &mut self,
        kind: Kind,
        cursor: Option<&str>,
        timeout: Duration,
    ) -> impl std::future::Future<Output = PageResult> + Send {
        let mut params = json!({});
        if let Some(c) = cursor {
            params["cursor"] = json!(c);
        }
        if self.modern {
            params["_meta"] = json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                                     "io.modelcontextprotocol/clientCapabilities": {}});
        }
        let started = SystemTime::now();
        let t0 = Instant::now();
        let id = self.sim.send(kind.method(), params);
        let mut list_changed = 0;
        let mut bytes = 0;
        let outcome = loop {
            let left = timeout.saturating_sub(t0.elapsed());
            let line = match self.sim.lines.recv_timeout(left) {
                Ok(l) => l,
                Err(mpsc::RecvTimeoutError::Timeout) => {
                    break Err(PageError::Failed(ExchangeFailure::Timeout(timeout)))
                }
                Err(mpsc::RecvTimeoutError::Disconnected) => {
                    break Err(PageError::Failed(ExchangeFailure::Transport {
                        message: "process exited".into(),
                        http_status: None,
                    }))
                }
            };
            bytes += line.len() as u64;
            // One request in flight: an unparsable line is its answer.
            let Ok(v) = serde_json::from_str::<Value>(&line) else {
                break Err(PageError::Failed(ExchangeFailure::Malformed(
                    "not JSON".into(),
                )));
            };
            if v.get("id") != Some(&json!(id)) {
                if v["method"] == kind.list_changed_method() {
                    list_changed += 1;
                }
                continue;
            }
            if let Some(e) = v.get("error") {
                break Err(PageError::Rpc {
                    code: e["code"].as_i64().unwrap(),
                    message: e["message"].as_str().unwrap_or("").into(),
                });
            }
            break Ok(v["result"].clone());
        };
        let duration = t0.elapsed();
        async move {
            PageResult {
                outcome,
                request_id: id,
                bytes,
                duration,
                started,
                span_id: None,
                list_changed,
            }
        }
    }
}

async fn report(args: &[&str], limits: WalkLimits, era: Era) -> ListingReport {
    let mut sim = StdioSim::start(args);
    let modern = era.is_modern();
    if !modern {
        sim.init();
    }
    let mut pager = StdioPager { sim, modern };
    walk(&mut pager, Kind::Tools, &limits, era).await
}

async fn legacy(args: &[&str]) -> ListingReport {
    report(args, WalkLimits::default(), Era::Legacy).await
}

/// The default limits changed by `set`.
fn limits(set: impl FnOnce(&mut WalkLimits)) -> WalkLimits {
    let mut limits = WalkLimits::default();
    set(&mut limits);
    limits
}

/// `scenario` served and walked at 2026-07-28.
async fn modern_walk(scenario: &str) -> ListingReport {
    report(
        &["--scenario", scenario, "--protocol", "2026-07-28"],
        WalkLimits::default(),
        Era::Modern,
    )
    .await
}

/// How a walk ended and after how many page requests.
fn end(r: &ListingReport) -> (Outcome, u32) {
    (r.outcome, r.requests())
}

fn items(r: &ListingReport) -> Vec<u32> {
    r.pages.iter().map(|p| p.items).collect()
}

/// What docs/simulator.md states for scenarios a correct client completes.
#[tokio::test(flavor = "multi_thread")]
async fn whole_listings_complete_with_their_counts() {
    let r = legacy(&["--scenario", "healthy"]).await;
    assert_eq!(
        (r.outcome, r.requests(), r.unique_items),
        (Outcome::Complete, 4, 20)
    );

    let r = legacy(&["--scenario", "truncate"]).await;
    assert_eq!(
        (r.outcome, items(&r), r.unique_items),
        (Outcome::Complete, vec![5, 5, 5], 15)
    );

    let r = legacy(&["--scenario", "overlap"]).await;
    assert_eq!(
        (r.raw_items, r.unique_items, r.duplicate_items),
        (24, 20, 4)
    );
    assert_eq!(
        r.duplicate_names,
        ["tool-005", "tool-009", "tool-013", "tool-017"]
    );

    let r = legacy(&["--scenario", "missing-keys"]).await;
    assert_eq!(
        (r.outcome, r.invalid_items, r.unique_items),
        (Outcome::Complete, 4, 16)
    );
}

/// Loops and endless listings end at their guard, by protocol era.
#[tokio::test(flavor = "multi_thread")]
async fn loops_and_caps_abort_with_their_guard() {
    let r = legacy(&["--scenario", "repeat-cursor"]).await;
    assert_eq!(end(&r), (Outcome::Aborted(Guard::CursorCycle), 2));
    let r = modern_walk("repeat-cursor").await;
    assert_eq!(end(&r), (Outcome::Aborted(Guard::NoProgress), 3));
    assert_eq!((r.raw_items, r.unique_items), (15, 10));

    let r = legacy(&["--scenario", "cycle"]).await;
    assert_eq!(
        (r.outcome, r.requests(), r.unique_items),
        (Outcome::Aborted(Guard::CursorCycle), 3, 15)
    );
    let r = modern_walk("cycle").await;
    assert_eq!(
        (r.outcome, r.requests(), r.raw_items),
        (Outcome::Aborted(Guard::NoProgress), 4, 20)
    );

    let r = report(
        &["--scenario", "endless"],
        limits(|l| l.max_pages = 10),
        Era::Legacy,
    )
    .await;
    assert_eq!(
        (r.outcome, r.requests(), r.raw_items, r.unique_items),
        (Outcome::Aborted(Guard::PageCap), 10, 50, 20)
    );
    let r = report(
        &["--scenario", "endless"],
        limits(|l| l.max_items = 12),
        Era::Legacy,
    )
    .await;
    assert_eq!(end(&r), (Outcome::Aborted(Guard::ItemCap), 3));
}

/// How a page's cursor ends a listing: blank, null or not a string.
#[tokio::test(flavor = "multi_thread")]
async fn cursor_ends_are_read_by_protocol() {
    let r = legacy(&["--scenario", "blank-cursor"]).await;
    assert_eq!(
        (r.outcome, r.reason, r.unique_items),
        (
            Outcome::Complete,
            Some(mcp_listing::EndReason::BlankCursor),
            5
        )
    );
    let r = modern_walk("blank-cursor").await;
    assert_eq!(
        (r.outcome, r.requests(), r.duplicate_items),
        (Outcome::Aborted(Guard::NoProgress), 2, 5)
    );

    let r = legacy(&["--scenario", "null-cursor"]).await;
    assert_eq!(end(&r), (Outcome::Complete, 4));
    let r = legacy(&["--scenario", "number-cursor"]).await;
    assert_eq!(end(&r), (Outcome::Error(ErrorKind::MalformedResult), 1));
}

/// -32602, a silent restart and a list_changed storm restart the walk
/// (bounded); beyond the bound it is an error.
#[tokio::test(flavor = "multi_thread")]
async fn restarts_recover_within_their_bound() {
    let r = legacy(&["--scenario", "stale-cursor"]).await;
    assert_eq!(
        (
            r.outcome,
            r.requests(),
            r.final_pages,
            r.invalid_cursor_errors
        ),
        (Outcome::Complete, 6, 4, 1)
    );
    let r = legacy(&["--scenario", "stale-cursor", "--times", "2"]).await;
    assert_eq!(
        (r.outcome, r.requests(), r.invalid_cursor_errors),
        (Outcome::Error(ErrorKind::InvalidCursor), 4, 2)
    );

    let r = legacy(&["--scenario", "silent-restart"]).await;
    assert_eq!(
        (r.outcome, r.requests(), r.raw_items, r.unique_items),
        (Outcome::Complete, 5, 25, 20)
    );
    assert_eq!(r.duplicate_names, numbered("tool-", 1..=5));

    let r = legacy(&["--scenario", "list-changed-storm"]).await;
    assert_eq!(
        (
            r.outcome,
            r.requests(),
            r.final_pages,
            r.list_changed_notifications,
            r.restarts.len()
        ),
        (Outcome::Complete, 5, 4, 5, 1)
    );
}

/// A fault on page 2 ends the listing as its error label.
#[tokio::test(flavor = "multi_thread")]
async fn faults_end_as_their_error() {
    for (scenario, error) in [
        ("wrong-shape", ErrorKind::MalformedResult),
        ("malformed", ErrorKind::MalformedResult),
        ("rpc-error", ErrorKind::RpcError),
        ("crash", ErrorKind::TransportError),
    ] {
        let r = legacy(&["--scenario", scenario]).await;
        assert_eq!(
            (r.outcome, r.requests(), r.unique_items),
            (Outcome::Error(error), 2, 5),
            "{scenario}"
        );
    }
    // A bound on waiting: the page never comes.
    let quick = limits(|l| l.page_timeout = Duration::from_millis(300));
    let r = report(&["--scenario", "hang"], quick, Era::Legacy).await;
    assert_eq!(end(&r), (Outcome::Error(ErrorKind::Timeout), 2));
}

/// The 2026-07-28 walk: stateless, with its caching hints.
#[tokio::test(flavor = "multi_thread")]
async fn protocol_2026_completes_with_cache_hints() {
    let r = report(
        &["--scenario", "protocol-2026"],
        WalkLimits::default(),
        Era::Modern,
    )
    .await;
    assert_eq!(
        (r.outcome, r.requests(), r.unique_items),
        (Outcome::Complete, 4, 20)
    );
    assert_eq!(
        (r.cache.ttl_ms, r.cache.cache_scope.as_deref()),
        (Some(30000), Some("public"))
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn shrink_with_notify_restarts_the_second_listing_once() {
    let mut sim = StdioSim::start(&["--scenario", "shrink", "--notify"]);
    sim.init();
    let mut pager = StdioPager { sim, modern: false };
    let limits = WalkLimits::default();
    let first = walk(&mut pager, Kind::Tools, &limits, Era::Legacy).await;
    assert_eq!((first.outcome, first.unique_items), (Outcome::Complete, 20));
    let second = walk(&mut pager, Kind::Tools, &limits, Era::Legacy).await;
    assert_eq!(
        (
            second.outcome,
            second.requests(),
            second.final_pages,
            second.unique_items
        ),
        (Outcome::Complete, 5, 4, 19)
    );
    assert_eq!(second.list_changed_notifications, 1);
    assert_eq!(second.restarts[0].at_page, 0);
}

/// A Streamable HTTP (JSON) pager that re-initializes on 404.
struct HttpPager {
    http: reqwest::Client,
    url: String,
    session: Option<String>,
    next_id: i64,
}

impl HttpPager {
    async fn initialize(&mut self) {
        self.next_id += 1;
        let resp = self
            .http
            .post(&self.url)
            .json(
                &json!({"jsonrpc": "2.0", "id": self.next_id, "method": "initialize",
                          "params": {"protocolVersion": "2025-11-25", "capabilities": {}}}),
            )
            .send()
            .await
            .unwrap();
        self.session = Some(
            resp.headers()["mcp-session-id"]
                .to_str()
                .unwrap()
                .to_string(),
        );
        let resp = self
            .http
            .post(&self.url)
            .header("mcp-session-id", self.session.clone().unwrap())
            .json(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status().as_u16(), 202);
    }
}

impl Pager for HttpPager {
    fn fetch_page(
        &mut self,
        kind: Kind,
        cursor: Option<&str>,
        timeout: Duration,
    ) -> impl std::future::Future<Output = PageResult> + Send {
        let cursor = cursor.map(str::to_string);
        async move {
            self.next_id += 1;
            let id = self.next_id;
            let params = match cursor {
                Some(c) => json!({"cursor": c}),
                None => json!({}),
            };
            let started = SystemTime::now();
            let t0 = Instant::now();
            let sent = self
                .http
                .post(&self.url)
                .header("mcp-session-id", self.session.clone().unwrap())
                .timeout(timeout)
                .json(
                    &json!({"jsonrpc": "2.0", "id": id, "method": kind.method(), "params": params}),
                )
                .send()
                .await;
            let outcome = match sent {
                Err(e) => Err(PageError::Failed(ExchangeFailure::Transport {
                    message: e.to_string(),
                    http_status: None,
                })),
                Ok(r) if r.status().as_u16() == 404 => {
                    self.initialize().await;
                    Err(PageError::SessionRenewed)
                }
                Ok(r) => {
                    let v: Value = r.json().await.unwrap();
                    match v.get("error") {
                        Some(e) => Err(PageError::Rpc {
                            code: e["code"].as_i64().unwrap(),
                            message: String::new(),
                        }),
                        None => Ok(v["result"].clone()),
                    }
                }
            };
            PageResult {
                outcome,
                request_id: id,
                bytes: 0,
                duration: t0.elapsed(),
                started,
                span_id: None,
                list_changed: 0,
            }
        }
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn session_expiry_restarts_later_kinds_as_documented() {
    use mcp_listing::report::RestartReason;
    let sim = http_scenario("session-expiry", &[]);
    let mut pager = HttpPager {
        http: reqwest::Client::new(),
        url: format!("{}/mcp", sim.url),
        session: None,
        next_id: 0,
    };
    pager.initialize().await;
    let limits = WalkLimits::default();
    let tools = walk(&mut pager, Kind::Tools, &limits, Era::Legacy).await;
    assert_eq!((tools.outcome, tools.requests()), (Outcome::Complete, 4));
    assert!(tools.restarts.is_empty());
    for kind in [Kind::Prompts, Kind::Resources, Kind::ResourceTemplates] {
        let r = walk(&mut pager, kind, &limits, Era::Legacy).await;
        assert_eq!(
            (r.outcome, r.requests(), r.final_pages, r.unique_items),
            (Outcome::Complete, 7, 4, 20),
            "{kind}"
        );
        assert_eq!(r.restarts.len(), 1);
        assert_eq!(r.restarts[0].reason, RestartReason::SessionExpired);
        assert_eq!(r.restarts[0].at_page, 2);
    }

    // Fewer list requests than one listing needs: the renewed session
    // expires too.
    let sim = http_scenario("session-expiry", &["--expire-after", "3"]);
    pager.url = format!("{}/mcp", sim.url);
    pager.initialize().await;
    let r = walk(&mut pager, Kind::Tools, &limits, Era::Legacy).await;
    assert_eq!(r.outcome, Outcome::Error(ErrorKind::TransportError));
}
