//! What the exporter keeps per target, in heap bytes, component by
//! component: the state N targets hold after each has been polled P times.
//!
//!     cargo bench --bench kept_state -- [--targets 1000] [--polls 25] [--churn]
//!
//! Each poll is a real walk (`mcp_listing::walk`) of 4 kinds × 20 items in
//! pages of 5 served from memory, handed through the same stages as the
//! scheduler's fan-out (baseline compare, verdict judged against the kept
//! history, metrics, status store). `--churn` renames one item per kind on
//! every poll (a catalogue that changes every poll); without it the
//! catalogue is stable, as in `scripts/bench-scale`.
//!
//! A counting global allocator tracks live heap bytes; each stage's net
//! change summed over every poll is what that component keeps (a stage's
//! own temporary allocations are freed before it returns). docs/performance.md
//! has the table.

use mcp_exporter::baseline::{self, BaselineStore};
use mcp_exporter::config::{load_str, TargetConfig};
use mcp_exporter::poll::{PollReport, ServerInfo};
use mcp_exporter::scheduler::schedule::run_target;
use mcp_exporter::scheduler::Shared;
use mcp_exporter::sinks::verdict::{observation, reference_sizes};
use mcp_exporter::sinks::{Sinks, StatusStore, TargetDescription};
use mcp_exporter::telemetry::metrics::{
    ConformanceMetrics, DiscoveryMetrics, ExporterMetrics, TargetMetrics,
};
use mcp_exporter::telemetry::spans::TraceSink;
use mcp_listing::scripted::{Answer, ScriptedPager};
use mcp_listing::{walk, Era, Kind, TransportKind, WalkLimits};
use mcp_testkit::counting_alloc::{live_bytes, CountingAlloc};
use prometheus_client::registry::Registry;
use serde_json::{json, Value};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

#[global_allocator]
static ALLOCATOR: CountingAlloc = CountingAlloc;

/// Net heap bytes `f` left allocated (its result included).
fn kept<T>(into: &mut isize, f: impl FnOnce() -> T) -> T {
    let before = live_bytes();
    let out = f();
    *into += live_bytes() - before;
    out
}

const ITEMS: u32 = 20;
const PAGE: u32 = 5;

/// One target's catalogue served from memory, a page at a time.
struct Catalogue {
    /// Added to every item number: a new value renames one item per kind.
    generation: u32,
}

impl Catalogue {
    fn item(&self, kind: Kind, n: u32) -> Value {
        // The last item of each kind is renamed at every generation.
        let id = if n == ITEMS { n + self.generation } else { n };
        match kind {
            Kind::Tools => json!({
                "name": format!("tool-{id:03}"),
                "description": format!("Looks up record {id} in the inventory"),
                "inputSchema": {"type": "object",
                    "properties": {"query": {"type": "string"}, "limit": {"type": "integer"}},
                    "required": ["query"]},
            }),
            Kind::Prompts => json!({
                "name": format!("prompt-{id:03}"),
                "description": format!("Summarise document {id}"),
                "arguments": [{"name": "topic", "required": true}],
            }),
            Kind::Resources => json!({
                "uri": format!("sim://resources/{id:03}"),
                "name": format!("resource-{id:03}"),
                "mimeType": "text/plain",
            }),
            Kind::ResourceTemplates => json!({
                "uriTemplate": format!("sim://templates/{id:03}/{{id}}"),
                "name": format!("template-{id:03}"),
            }),
        }
    }
}

impl Catalogue {
    /// The page `cursor` names (none: the first), numbered from 0.
    fn page(&self, kind: Kind, cursor: Option<&str>) -> Value {
        let page: u32 = cursor.and_then(|c| c.parse().ok()).unwrap_or(0);
        let items: Vec<Value> = (page * PAGE + 1..=(page + 1) * PAGE)
            .map(|n| self.item(kind, n))
            .collect();
        let mut result = json!({ kind.array_field(): items });
        if (page + 1) * PAGE < ITEMS {
            result["nextCursor"] = Value::from(format!("{}", page + 1));
        }
        result
    }

    fn pager(self) -> ScriptedPager {
        ScriptedPager::answering(move |asked| Answer::page(self.page(asked.shape, asked.cursor)))
            .bytes_per_page(1200)
    }
}

async fn poll(target: &str, generation: u32) -> PollReport {
    let mut catalogue = Catalogue { generation }.pager();
    let mut report = PollReport::new(target, TransportKind::StreamableHttp, SystemTime::now());
    report.protocol_version = Some("2025-11-25".into());
    report.server = Some(ServerInfo {
        name: "bench-server".into(),
        version: "1.4.2".into(),
    });
    report.session_id = Some("3f2a9c1e-5b7d-4e8f-9a0b-1c2d3e4f5a6b".into());
    report.server_address = Some("127.0.0.1".into());
    report.server_port = Some(8080);
    report.time_to_ready = Some(Duration::from_millis(40));
    report.duration = Duration::from_millis(45);
    let limits = WalkLimits::default();
    for kind in Kind::ALL {
        report
            .listings
            .push(walk(&mut catalogue, kind, &limits, Era::Legacy).await);
    }
    report
}

#[derive(Default)]
struct Breakdown {
    scheduler: isize,
    configs: isize,
    baselines: isize,
    history: isize,
    recent_polls: isize,
    registry: isize,
    status_entry: isize,
    /// Negative: the baseline stage's diffs and the verdict stage's
    /// verdict, freed after the fan-out.
    freed_diffs: isize,
    freed_verdicts: isize,
}

struct Args {
    targets: usize,
    polls: u32,
    churn: bool,
}

fn args() -> Args {
    let mut a = Args {
        targets: 1000,
        polls: 25,
        churn: false,
    };
    let mut it = std::env::args().skip(1);
    while let Some(arg) = it.next() {
        match arg.as_str() {
            "--targets" => a.targets = it.next().and_then(|v| v.parse().ok()).unwrap_or(a.targets),
            "--polls" => a.polls = it.next().and_then(|v| v.parse().ok()).unwrap_or(a.polls),
            "--churn" => a.churn = true,
            // cargo bench passes --bench.
            _ => {}
        }
    }
    a
}

fn target_config(name: &str, template: &TargetConfig) -> TargetConfig {
    let mut t = template.clone();
    t.name = name.to_string();
    t
}

fn main() {
    let args = args();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .expect("runtime");
    let loaded = load_str(
        "global:\n  schedule: {every: 30s}\ntargets:\n  - {name: t, http: {url: \"http://127.0.0.1:8080/mcp/t\"}}\n",
        "bench.yaml",
    )
    .expect("bench config");
    let template = loaded.config.targets[0].clone();
    let mut registry = Registry::default();
    let metrics = TargetMetrics::new(&mut registry);
    let exporter = ExporterMetrics::new(&mut registry, "bench", "bench");
    let sinks = Sinks {
        baselines: Mutex::new(BaselineStore::default()),
        metrics,
        exporter,
        traces: TraceSink::disabled(),
        status: StatusStore::new(loaded.config.web.history),
        event_window: mcp_exporter::verdict::DEFAULT_EVENT_WINDOW,
        conformance: ConformanceMetrics::register(&mut registry),
        discovery: DiscoveryMetrics::register(&mut registry),
        levels: Default::default(),
    };
    let shared = Arc::new(Shared::new(sinks, &loaded.config.defaults));
    let sinks = &shared.sinks;
    let names: Vec<String> = (0..args.targets)
        .map(|i| format!("target-{i:05}"))
        .collect();
    let mut b = Breakdown::default();

    // What the service keeps per target before any poll: its config (the
    // task map's copy), the status entry, pre-created series, the task.
    let configs: Vec<Arc<TargetConfig>> = kept(&mut b.configs, || {
        names
            .iter()
            .map(|n| Arc::new(target_config(n, &template)))
            .collect()
    });
    kept(&mut b.status_entry, || {
        sinks.status.set_targets(
            &names
                .iter()
                .map(|n| TargetDescription {
                    name: n.clone(),
                    endpoint: "http://127.0.0.1:8080 (streamable_http)".into(),
                    schedule: "every 30s".into(),
                    source: None,
                })
                .collect::<Vec<_>>(),
        )
    });
    for t in &configs {
        kept(&mut b.registry, || {
            sinks
                .metrics
                .register_target(&t.name, &t.settings.kinds, false);
            sinks.exporter.register_target(&t.name);
        });
    }
    // A spawned target task is one allocation holding its future: sized
    // for the largest state it can be in, sleeping or polling.
    let tasks: Vec<_> = kept(&mut b.scheduler, || {
        configs
            .iter()
            .map(|t| Box::new(run_target(t.clone(), shared.clone(), Duration::ZERO)))
            .collect()
    });
    let task_bytes = std::mem::size_of_val(&*tasks[0]);

    for round in 0..args.polls {
        let generation = if args.churn { round } else { 0 };
        for t in &configs {
            let report = rt.block_on(poll(&t.name, generation));
            let (mut polled, write) = kept(&mut b.baselines, || {
                let mut store = sinks.baselines.lock().unwrap_or_else(|p| p.into_inner());
                baseline::compare(&mut store, report, &t.reference, now())
            });
            drop(write);
            let sizes = reference_sizes(
                &sinks.baselines.lock().unwrap_or_else(|p| p.into_inner()),
                &polled,
            );
            let verdict = kept(&mut b.history, || {
                let obs = observation(&polled, &t.expect.items, t.expect.page_latency, &sizes);
                sinks.status.judge(&obs, &t.name, sinks.event_window, false)
            })
            .expect("a known target");
            kept(&mut b.registry, || {
                sinks.metrics.observe(&polled, &t.expect.items);
                sinks.metrics.set_verdict(&t.name, &verdict);
            });
            kept(&mut b.recent_polls, || sinks.status.record(&polled, 0));
            // What the stages handed back, dropped after the fan-out: made
            // by the baseline and verdict stages, so taken off their
            // accounts (and shown apart: an earlier version of this bench
            // counted them as kept).
            kept(&mut b.freed_diffs, || {
                drop(std::mem::take(&mut polled.diffs));
                drop(std::mem::take(&mut polled.reference_missing));
                drop(std::mem::take(&mut polled.reference_union));
            });
            kept(&mut b.freed_verdicts, || drop(verdict));
        }
    }

    let n = args.targets as f64;
    let per = |bytes: isize| bytes as f64 / n;
    b.baselines += b.freed_diffs;
    b.history += b.freed_verdicts;
    let rows = [
        ("scheduler task (future)", b.scheduler),
        ("target config (task map)", b.configs),
        ("status entry (no polls)", b.status_entry),
        ("recent polls (status store)", b.recent_polls),
        ("chart, change log, failures, verdict", b.history),
        ("baselines with fingerprints", b.baselines),
        ("registry series (label sets, values)", b.registry),
    ];
    let total: isize = rows.iter().map(|(_, v)| v).sum();
    println!(
        "{} targets, {} polls each, catalogue {}; history {}",
        args.targets,
        args.polls,
        if args.churn {
            "renames one item per kind every poll"
        } else {
            "stable"
        },
        loaded.config.web.history
    );
    println!("{:<40} {:>12}", "component", "bytes/target");
    for (name, bytes) in rows {
        println!("{name:<40} {:>12.0}", per(bytes));
    }
    println!("{:<40} {:>12.0}", "total", per(total));
    println!("(one target task's future: {task_bytes} bytes; per target, diffs handed back and freed: {:.0}, verdicts: {:.0} — counted as kept by the first version of this bench)", -per(b.freed_diffs), -per(b.freed_verdicts));
    drop(tasks);
}

fn now() -> f64 {
    SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map(|d| d.as_secs_f64())
        .unwrap_or(0.0)
}
