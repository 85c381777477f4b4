//! The walker's own cost per page, with the wire taken away: a 1,000-page
//! listing served from memory. Run: `cargo bench --bench walk`.

use criterion::{criterion_group, criterion_main, Criterion};
use mcp_listing::walk::PageResult;
use mcp_listing::{walk, Era, Kind, Pager, WalkLimits};
use serde_json::{json, Value};
use std::time::{Duration, SystemTime};

struct Memory {
    pages: Vec<Value>,
}

impl Pager for Memory {
    async fn fetch_page(&mut self, _: Kind, cursor: Option<&str>, _: Duration) -> PageResult {
        let i = cursor
            .and_then(|c| c.strip_prefix("c"))
            .and_then(|n| n.parse::<usize>().ok())
            .unwrap_or(0);
        PageResult {
            outcome: Ok(self.pages[i].clone()),
            request_id: i as i64,
            bytes: 0,
            duration: Duration::ZERO,
            started: SystemTime::now(),
            span_id: None,
            list_changed: 0,
        }
    }
}

fn pages(n: usize, per_page: usize) -> Vec<Value> {
    (0..n)
        .map(|p| {
            let tools: Vec<Value> = (0..per_page)
                .map(|i| json!({"name": format!("tool-{p:05}-{i:03}"), "inputSchema": {"type": "object"}}))
                .collect();
            if p + 1 < n {
                json!({"tools": tools, "nextCursor": format!("c{}", p + 1)})
            } else {
                json!({"tools": tools})
            }
        })
        .collect()
}

fn bench(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .expect("runtime");
    let mut memory = Memory {
        pages: pages(1000, 10),
    };
    let limits = WalkLimits {
        max_pages: 2000,
        ..WalkLimits::default()
    };
    c.bench_function("walk 1000 pages x 10 tools", |b| {
        b.iter(|| rt.block_on(walk(&mut memory, Kind::Tools, &limits, Era::Legacy)))
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);
