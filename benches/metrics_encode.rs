//! Cost of recording polls and of one `/metrics` scrape for fleets of 10, 100 and
//! 2,000 targets with all four kinds (every pre-created series present).
//! Run: `cargo bench --bench metrics_encode`.

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use mcp_exporter::baseline::PolledTarget;
use mcp_exporter::poll::{PollReport, ServerInfo, TraceId};
use mcp_exporter::telemetry::metrics::{encode, TargetMetrics};
use mcp_listing::{CursorState, Kind, ListingReport, Outcome, PageRecord, TransportKind};
use prometheus_client::registry::Registry;
use std::collections::BTreeMap;
use std::hint::black_box;
use std::time::{Duration, SystemTime};

const TRACE: &str = "4bf92f3577b34da6a3ce929d0e0e4736";

fn listing(kind: Kind, pages: u32) -> ListingReport {
    let pages: Vec<PageRecord> = (0..pages)
        .map(|index| PageRecord {
            index,
            attempt: 0,
            sent_cursor: None,
            items: 20,
            new_items: 20,
            bytes: 4096,
            duration: Duration::from_millis(3 + u64::from(index)),
            started: SystemTime::now(),
            span_id: None,
            next_cursor: CursorState::Present("abcd".into()),
            request_id: i64::from(index),
            error: None,
            rpc_code: None,
            http_status: None,
        })
        .collect();
    ListingReport {
        final_pages: pages.len() as u32,
        raw_items: 20 * pages.len() as u64,
        unique_items: 20 * pages.len() as u64,
        pages,
        duration: Duration::from_millis(40),
        ..ListingReport::empty(kind, Outcome::Complete)
    }
}

fn polled(target: &str) -> PolledTarget {
    PolledTarget {
        report: PollReport {
            protocol_version: Some("2025-11-25".into()),
            server: Some(ServerInfo {
                name: "bench".into(),
                version: "1".into(),
            }),
            time_to_ready: Some(Duration::from_millis(200)),
            listings: Kind::ALL.into_iter().map(|k| listing(k, 10)).collect(),
            duration: Duration::from_millis(250),
            trace_id: TraceId::from_hex(TRACE),
            ..PollReport::new(target, TransportKind::StreamableHttp, SystemTime::now())
        },
        diffs: BTreeMap::new(),
        reference_missing: BTreeMap::new(),
        reference_union: BTreeMap::new(),
    }
}

fn fleet(targets: usize) -> (Registry, TargetMetrics, Vec<PolledTarget>) {
    let mut registry = Registry::default();
    let metrics = TargetMetrics::new(&mut registry);
    let polls: Vec<PolledTarget> = (0..targets)
        .map(|i| polled(&format!("target-{i}")))
        .collect();
    let expect = BTreeMap::from([(Kind::Tools, 10)]);
    for p in &polls {
        metrics.register_target(&p.report.target, &Kind::ALL, false);
        metrics.observe(p, &expect);
    }
    (registry, metrics, polls)
}

fn bench(c: &mut Criterion) {
    let expect = BTreeMap::from([(Kind::Tools, 10)]);
    let mut group = c.benchmark_group("metrics");
    for targets in [10usize, 100, 2000] {
        let (registry, metrics, polls) = fleet(targets);
        let bytes = encode(&registry).map(|s| s.len()).unwrap_or(0);
        eprintln!("{targets} targets: {bytes} bytes per scrape");
        group.bench_with_input(BenchmarkId::new("encode", targets), &registry, |b, r| {
            b.iter(|| black_box(encode(r)))
        });
        group.bench_with_input(
            BenchmarkId::new("observe_poll_4_kinds_x_10_pages", targets),
            &polls[0],
            |b, p| b.iter(|| metrics.observe(black_box(p), &expect)),
        );
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
