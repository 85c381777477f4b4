//! A target's kept state is bounded: after 1,000 polls of a catalogue that
//! changes on every poll, its history holds the documented number of
//! entries (docs/api.md) and its heap bytes (docs/performance.md) no more
//! than they were after the rings filled. Counts, not timings: a counting
//! global allocator measures live heap bytes, so this binary holds one
//! test only (a second one running beside it would be counted too).

use mcp_exporter::baseline::{self, BaselineStore};
use mcp_exporter::poll::{PollReport, ServerInfo};
use mcp_exporter::sinks::trend::TREND_POINTS;
use mcp_exporter::sinks::verdict::{observation, reference_sizes};
use mcp_exporter::sinks::{StatusStore, TargetDescription};
use mcp_exporter::verdict::history::{MAX_CHANGES, MAX_POINTS};
use mcp_exporter::verdict::DEFAULT_EVENT_WINDOW;
use mcp_listing::fingerprint::fingerprint;
use mcp_listing::{CursorState, Kind, ListingReport, Outcome, PageRecord, TransportKind};
use mcp_testkit::counting_alloc::{live_bytes, CountingAlloc};
use serde_json::json;
use std::collections::BTreeMap;
use std::time::{Duration, SystemTime};

#[global_allocator]
static ALLOCATOR: CountingAlloc = CountingAlloc;

const TARGET: &str = "churny";
const ITEMS: u32 = 20;
const HISTORY: usize = 20;
/// docs/performance.md, "Kept state per target": the bound for this
/// catalogue (4 kinds × 20 items, pages of 5, one item renamed per kind
/// on every poll) with every ring full.
const DOCUMENTED_BYTES: isize = 110 * 1024;

/// Poll `n`: 4 kinds of 20 items in pages of 5; the last item of every
/// kind is renamed on every poll, and every tenth poll drops one more
/// item (a shrink), so chart points, change entries and churn names are
/// all made.
fn report(n: u32) -> PollReport {
    let mut r = PollReport::new(TARGET, TransportKind::StreamableHttp, SystemTime::now());
    r.started = SystemTime::UNIX_EPOCH + Duration::from_secs(1_800_000_000 + u64::from(n) * 30);
    r.protocol_version = Some("2025-11-25".into());
    r.server = Some(ServerInfo {
        name: "churn".into(),
        version: "1".into(),
    });
    let items = if n % 10 == 0 { ITEMS - 1 } else { ITEMS };
    for kind in Kind::ALL {
        let mut l = ListingReport::empty(kind, Outcome::Complete);
        let mut prints = BTreeMap::new();
        for i in 1..=items {
            let id = if i == ITEMS - 1 { 1000 + n } else { i };
            let name = format!("{kind}-{id:04}");
            let item = json!({"name": name, "uri": name, "uriTemplate": name,
                "description": format!("item {id}"),
                "inputSchema": {"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]},
                "arguments": [{"name": "topic", "required": true}]});
            prints.insert(name.clone(), fingerprint(kind, &item, true));
            l.names.push(name);
        }
        l.names.sort();
        l.fingerprints = prints;
        l.unique_items = u64::from(items);
        l.raw_items = u64::from(items);
        l.final_pages = items.div_ceil(5);
        l.pages = (0..l.final_pages)
            .map(|index| PageRecord {
                index,
                attempt: 0,
                sent_cursor: (index > 0).then(|| format!("{index:08x}")),
                items: 5,
                new_items: 5,
                bytes: 1200,
                duration: Duration::from_millis(3),
                started: r.started,
                span_id: None,
                next_cursor: if index + 1 < l.final_pages {
                    CursorState::Present(format!("{:08x}", index + 1))
                } else {
                    CursorState::Absent
                },
                request_id: i64::from(index) + 2,
                error: None,
                rpc_code: None,
                http_status: None,
            })
            .collect();
        r.listings.push(l);
    }
    r
}

#[test]
fn a_target_polled_1000_times_with_a_changing_catalogue_keeps_its_documented_size() {
    let status = StatusStore::new(HISTORY);
    let mut baselines = BaselineStore::default();
    let expect = BTreeMap::new();
    let before = live_bytes();
    status.set_targets(&[TargetDescription {
        name: TARGET.into(),
        endpoint: "http://127.0.0.1:1 (streamable_http)".into(),
        schedule: "every 30s".into(),
        source: None,
    }]);
    let mut after_rings_filled = 0;
    for n in 1..=1000u32 {
        let (polled, _) = baseline::compare(&mut baselines, report(n), &[], n as f64);
        let sizes = reference_sizes(&baselines, &polled);
        let obs = observation(&polled, &expect, None, &sizes);
        status
            .judge(&obs, TARGET, DEFAULT_EVENT_WINDOW, false)
            .expect("a known target");
        status.record(&polled, 0);
        drop(polled);
        if n == 400 {
            // Every ring is full by now (points: 360 changing listings).
            after_rings_filled = live_bytes() - before;
        }
    }
    let kept = live_bytes() - before;
    eprintln!("kept: {after_rings_filled} bytes after 400 polls, {kept} after 1,000");

    let t = status.get(TARGET).expect("the target");
    assert_eq!(t.polls, 1000);
    assert_eq!(t.history.len(), HISTORY);
    // Only the newest poll keeps its page records.
    assert!(t.history[0]
        .kinds
        .iter()
        .all(|k| k.page_detail().len() == 4));
    assert!(t
        .history
        .iter()
        .skip(1)
        .all(|p| p.kinds.iter().all(|k| k.page_detail().is_empty())));
    for kind in Kind::ALL {
        assert_eq!(t.catalogue.points[&kind].len(), MAX_POINTS, "{kind}");
        assert_eq!(t.trend[&kind].len(), TREND_POINTS, "{kind}");
    }
    assert_eq!(t.catalogue.changes.len(), MAX_CHANGES);
    assert!(t.catalogue.failures.is_empty());
    drop(t);

    assert!(
        kept <= DOCUMENTED_BYTES,
        "kept {kept} bytes for one target, documented at most {DOCUMENTED_BYTES}"
    );
    // Flat once the rings are full: 600 more polls add nothing (a few
    // hundred bytes of name lengths aside).
    assert!(
        (kept - after_rings_filled).abs() < 2048,
        "{after_rings_filled} bytes after 400 polls, {kept} after 1,000"
    );
}
