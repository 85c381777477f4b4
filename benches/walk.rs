//! The walker's own cost per page, with the wire taken away: a 1,000-page
//! listing served from memory. Run: `cargo bench --bench walk`.

use criterion::{criterion_group, criterion_main, Criterion};
use mcp_listing::scripted::{Answer, ScriptedPager};
use mcp_listing::{walk, Era, Kind, WalkLimits};
use serde_json::{json, Value};

/// Page `i` of `pages` is at cursor `c{i}` (none: page 0).
fn memory(pages: Vec<Value>) -> ScriptedPager {
    ScriptedPager::answering(move |asked| {
        let i = asked
            .cursor
            .and_then(|c| c.strip_prefix("c"))
            .and_then(|n| n.parse::<usize>().ok())
            .unwrap_or(0);
        Answer::page(pages[i].clone())
    })
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
    let mut memory = memory(pages(1000, 10));
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
