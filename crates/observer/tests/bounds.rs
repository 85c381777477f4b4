//! A flood stays inside the documented bounds (docs/reliability.md, "Byte
//! budgets", the observer's part): 10,000 sessions each naming a new
//! random client, 1 MiB cursors both ways, a session id taken over by
//! another client. The heap is measured with a counting allocator, not
//! assumed.

mod script;

use mcp_observer::{Fact, ListingOutcome, ObserverLimits, OTHER};
use script::{list_request, tools_page, Head, Script};
use serde_json::json;
use std::alloc::{GlobalAlloc, Layout, System};
use std::collections::HashSet;
use std::sync::atomic::{AtomicUsize, Ordering};

/// Bytes allocated and not yet freed, by anyone in this process.
static LIVE: AtomicUsize = AtomicUsize::new(0);
/// The most `LIVE` has been since a test last reset it.
static PEAK: AtomicUsize = AtomicUsize::new(0);

struct Counting;

// SAFETY: every call is passed to the system allocator unchanged; only
// the byte count around it is ours.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let live = LIVE.fetch_add(layout.size(), Ordering::Relaxed) + layout.size();
        PEAK.fetch_max(live, Ordering::Relaxed);
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let live = LIVE.fetch_add(new_size, Ordering::Relaxed) + new_size;
        PEAK.fetch_max(live, Ordering::Relaxed);
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static COUNTING: Counting = Counting;

/// A small, seeded generator: names nobody could guess, the same each run.
struct Lcg(u64);

impl Lcg {
    fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        self.0 >> 16
    }
}

const SESSIONS: usize = 10_000;
/// What one session may hold with its listing in progress, its cursors and
/// its share of the cross-session cursor index (docs/reliability.md: about
/// 2.0 KB measured).
const PER_SESSION_BOUND: usize = 5 << 9;
/// What the observer may hold after the flood, all of it: the documented
/// bound for default limits (10,000 sessions, their listings and cursors,
/// the cross-session cursor index, labels and tallies).
const HELD_BOUND: usize = SESSIONS * PER_SESSION_BOUND + (2 << 20);

/// The heap is one count for the whole process: the tests that measure
/// it take turns.
static MEASURING: std::sync::Mutex<()> = std::sync::Mutex::new(());

#[test]
fn ten_thousand_new_clients_and_huge_cursors_stay_inside_the_bounds() {
    let _turn = MEASURING.lock().unwrap_or_else(|e| e.into_inner());
    let limits = ObserverLimits::default();
    let before = LIVE.load(Ordering::Relaxed);
    let mut s = Script::new(limits.clone());
    let mut rng = Lcg(7);
    let huge = "c".repeat(1 << 20);
    let mut peak_buffered = 0;
    for i in 0..SESSIONS {
        let session = format!("s-{i}");
        let name = format!("client-{:016x}", rng.next());
        s.initialize(&Head::default(), &session, &name, "0.1.0");
        let head = Head {
            session: Some(&session),
            user_agent: Some("python-httpx/0.28.1"),
            ..Head::default()
        };
        let mut page = tools_page(1, 0, 8, 14);
        if i % 1000 == 0 {
            // A server's 1 MiB cursor, and a client's 1 MiB cursor back.
            page["result"]["nextCursor"] = json!(huge);
            s.post(&head, &list_request(1, "tools/list", None), &page);
            s.post(
                &head,
                &list_request(2, "tools/list", Some(&huge)),
                &tools_page(2, 1, 8, 14),
            );
        } else {
            s.post(&head, &list_request(1, "tools/list", None), &page);
        }
        peak_buffered = peak_buffered.max(s.observer.usage().buffered_bytes);
        // Facts are the application's to drain; keep this test's memory ours.
        check_labels(&s.take_facts(), &limits);
    }
    // Another client takes over a session id it never initialized.
    let stolen = Head {
        session: Some("s-9999"),
        user_agent: Some("evil/6.6"),
        ..Head::default()
    };
    s.tools(&stolen, 7, 0, 14);
    check_labels(&s.take_facts(), &limits);
    drop(huge);

    let usage = s.observer.usage();
    assert!(usage.sessions <= limits.max_sessions, "{usage:?}");
    assert!(usage.pending <= limits.max_pending, "{usage:?}");
    assert!(usage.cursors <= limits.max_cursors, "{usage:?}");
    assert!(usage.clients <= limits.max_clients + 1, "{usage:?}");
    assert!(usage.tracked_bytes <= limits.max_tracked_bytes, "{usage:?}");
    assert_eq!((usage.exchanges, usage.buffered_bytes), (0, 0), "{usage:?}");
    assert!(peak_buffered <= limits.max_buffered_bytes);
    let held = LIVE.load(Ordering::Relaxed).saturating_sub(before);
    println!(
        "after the flood: {usage:?}, {held} bytes held, {} a session",
        held / usage.sessions.max(1)
    );
    assert!(held <= HELD_BOUND, "{held} bytes held after the flood");

    // Time passes: every listing left open ends, every session goes.
    s.wait(limits.abandon_after);
    s.tick();
    let abandoned = s
        .take_facts()
        .iter()
        .filter(|f| matches!(f, Fact::Listing(l) if l.outcome == ListingOutcome::Abandoned))
        .count();
    assert_eq!(abandoned, usage.listings, "every listing left open");
    s.wait(limits.session_idle);
    s.tick();
    let usage = s.observer.usage();
    assert_eq!(
        (usage.sessions, usage.listings, usage.pending),
        (0, 0, 0),
        "{usage:?}"
    );
    assert_eq!(usage.tracked_bytes, 0);
    let held = LIVE.load(Ordering::Relaxed).saturating_sub(before);
    println!("after the wait: {usage:?}, {held} bytes held");
    assert!(held <= 1 << 20, "{held} bytes held when idle");
}

const GATEWAY_SESSIONS: usize = 100_000;
const GATEWAY_PATHS: usize = 1_000;
/// What the observer may hold after 100,000 sessions over 1,000 paths: the
/// sessions' cap as above, every route's and client's labels and tallies,
/// the catalogues of the routes walked, the kept items of page-1 listings.
const GATEWAY_HELD_BOUND: usize = SESSIONS * PER_SESSION_BOUND + (6 << 20);

/// In front of a gateway: 100,000 sessions (40 client names) spread over
/// 1,000 paths, each reading page 1, a walker on every tenth path. Routes
/// stop at `max_routes` (then `other`), pairs at `max_client_routes`,
/// sessions at `max_sessions`; the heap is measured.
#[test]
fn a_hundred_thousand_sessions_over_a_thousand_paths_stay_inside_the_bounds() {
    let _turn = MEASURING.lock().unwrap_or_else(|e| e.into_inner());
    let limits = ObserverLimits::default();
    let before = LIVE.load(Ordering::Relaxed);
    let routing = mcp_observer::Routing::learning(Some("/"));
    let mut s = Script::with_routing(limits.clone(), routing);
    let mut routes = HashSet::new();
    let mut other = 0;
    for i in 0..GATEWAY_SESSIONS {
        let path = format!("/mcp/s-{:04}", i % GATEWAY_PATHS);
        let session = format!("s-{i}");
        let init = Head {
            path: Some(&path),
            ..Head::default()
        };
        s.initialize(&init, &session, &format!("app-{}", (i / 7) % 40), "0.1.0");
        let head = Head {
            session: Some(&session),
            ..init
        };
        let pages = if i % 10 == 0 { 2 } else { 1 };
        for page in 0..pages {
            s.tools(&head, page as u64 + 1, page, 14);
        }
        for fact in s.take_facts() {
            match fact {
                Fact::NewRoute { route, .. } => {
                    routes.insert(route.name().to_string());
                }
                Fact::OtherRoute(_) => other += 1,
                _ => {}
            }
        }
    }
    let usage = s.observer.usage();
    assert!(usage.routes <= limits.max_routes + 2, "{usage:?}");
    assert_eq!(routes.len(), usage.routes);
    assert!(routes.iter().all(|r| r.len() <= 16));
    assert!(usage.client_routes <= limits.max_client_routes, "{usage:?}");
    assert!(usage.sessions <= limits.max_sessions, "{usage:?}");
    assert!(usage.tracked_bytes <= limits.max_tracked_bytes, "{usage:?}");
    assert!(s.observer.tallies().count() <= limits.max_client_routes + 41);
    assert!(other > GATEWAY_SESSIONS / 2, "counted: {other}");
    let held = LIVE.load(Ordering::Relaxed).saturating_sub(before);
    println!("100,000 sessions over 1,000 paths: {usage:?}, {held} bytes held");
    assert!(held <= GATEWAY_HELD_BOUND, "{held} bytes held");
}

/// Labels stay within `max_clients`, then `other`.
fn check_labels(facts: &[Fact], limits: &ObserverLimits) {
    let labels: HashSet<&str> = facts
        .iter()
        .filter_map(|f| match f {
            Fact::Listing(l) => Some(l.client.label()),
            Fact::Page(p) => Some(p.client.label()),
            Fact::NewClient(c) => Some(c.label()),
            _ => None,
        })
        .collect();
    assert!(labels.len() <= limits.max_clients + 1);
    for label in labels {
        assert!(label.len() <= 64 || label == OTHER, "{label}");
    }
}

#[test]
fn past_max_clients_every_new_name_is_other() {
    let limits = ObserverLimits {
        max_clients: 3,
        ..ObserverLimits::default()
    };
    let s = page_one_in_sessions(limits, 10, 8, |i| format!("name-{i}"));
    let labels: Vec<&str> = s.listings().iter().map(|l| l.client.label()).collect();
    assert_eq!(labels[..3], ["name-0", "name-1", "name-2"]);
    assert!(labels[3..].iter().all(|l| *l == OTHER), "{labels:?}");
    assert_eq!(s.observer.tallies().count(), 4);
    let other = s
        .observer
        .tallies()
        .find(|(c, _)| c.client.is_other())
        .unwrap()
        .1;
    assert_eq!(other.kind(mcp_listing::Kind::Tools).since_start.total(), 7);
}

#[test]
fn a_session_past_max_sessions_is_forgotten_and_its_listing_told() {
    let limits = ObserverLimits {
        max_sessions: 2,
        ..ObserverLimits::default()
    };
    let s = page_one_in_sessions(limits, 3, 14, |_| "c".into());
    let evicted: Vec<_> = s.listings().iter().map(|l| l.abandoned).collect();
    assert_eq!(evicted, [Some(mcp_observer::AbandonCause::Evicted)]);
    let full = Fact::NotObserved(mcp_tap_contract::NotObserved::ObserverFull);
    assert!(s.facts.contains(&full));
    assert_eq!(s.observer.usage().sessions, 2);
}

/// An observer with `limits` that saw `sessions` sessions, each
/// initialized by a client called `name(i)`, reading page 1 of `total`
/// tools.
fn page_one_in_sessions(
    limits: ObserverLimits,
    sessions: usize,
    total: usize,
    name: impl Fn(usize) -> String,
) -> Script {
    let mut s = Script::new(limits);
    for i in 0..sessions {
        let session = format!("s-{i}");
        s.initialize(&Head::default(), &session, &name(i), "1");
        let head = Head {
            session: Some(&session),
            ..Head::default()
        };
        s.tools(&head, 1, 0, total);
    }
    s
}

/// A page of a million `0`s (and one of keyless objects) answered to a
/// page-1 request: the observer counts such items, it keeps no slot for
/// each (it once held 72 bytes an item: 140 MiB for a 3.8 MB page).
#[test]
fn a_page_of_a_million_non_items_costs_about_its_bytes() {
    let _turn = MEASURING.lock().unwrap_or_else(|p| p.into_inner());
    let mut s = Script::new(ObserverLimits::default());
    s.initialize(&Head::default(), "s-zeros", "zeros", "1");
    let head = Head {
        session: Some("s-zeros"),
        ..Head::default()
    };
    for items in [
        json!(vec![0; 1_000_000]),
        json!(vec![json!({"x": 1}); 200_000]),
    ] {
        let answer = json!({"jsonrpc": "2.0", "id": 7, "result": {"tools": items}});
        let bytes = serde_json::to_vec(&answer).unwrap().len();
        let before = LIVE.load(Ordering::Relaxed);
        PEAK.store(before, Ordering::Relaxed);
        s.post(&head, &list_request(7, "tools/list", None), &answer);
        let peak = PEAK.load(Ordering::Relaxed) - before;
        // The message's copy, parsed in place: twice its bytes and a
        // little, not a slot per item.
        assert!(
            peak < 3 * bytes + (1 << 20),
            "{peak} bytes at the peak for a {bytes}-byte page"
        );
    }
    // Both pages were read (not dropped as too much): two listings, each
    // of one page with no item that has a name.
    let listings = s.listings();
    assert_eq!(listings.len(), 2);
    assert!(listings.iter().all(|l| l.pages == 1 && l.items == 0));
}
