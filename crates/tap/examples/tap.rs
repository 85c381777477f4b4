//! One tap without the application, for `scripts/bench-tap`:
//!
//! ```text
//! tap --listen 127.0.0.1:9000 --upstream http://127.0.0.1:8000/mcp
//!     [--threads N] [--merge NAME|all]... [--reuse-ms MS] [--observe queue|none]
//! ```
//!
//! It observes as the application does in cost, not in kind: every event
//! goes through a bounded queue (`try_send`, never waiting) to a task that
//! lets it go. `--threads` sets the runtime's workers (1 by default, as
//! the benchmark's nginx has one worker); `--reuse-ms 0` makes every merge
//! walk; `--observe none` observes nothing (what observation costs is the
//! difference). Merging's page-request bucket is lifted: the benchmark
//! measures what a merge costs, not the rate bound on how many there are. It prints `listening on http://ADDR` to stderr once it listens,
//! and runs until stopped.

use mcp_tap::{MergeClients, Tap, TapEvent, TapSettings, TapStats, Tee};
use std::sync::Arc;
use tokio::sync::mpsc;

/// Events queued at most (the application bounds its queue in bytes too).
const QUEUE: usize = 65_536;

struct Queued(mpsc::Sender<TapEvent>);

impl Tee for Queued {
    fn offer(&self, event: TapEvent) -> bool {
        self.0.try_send(event).is_ok()
    }
}

fn usage() -> ! {
    eprintln!("usage: tap --listen ADDR --upstream URL [--threads N] [--merge NAME|all]...");
    eprintln!("           [--reuse-ms MS] [--observe queue|none]");
    std::process::exit(2)
}

struct Args {
    listen: String,
    settings: TapSettings,
    threads: usize,
    observe: bool,
}

fn args() -> Args {
    let (mut listen, mut upstream, mut threads, mut observe) = (None, None, 1, true);
    let mut merge = Vec::new();
    let mut reuse = None;
    let mut args = std::env::args().skip(1);
    while let Some(flag) = args.next() {
        let value = args.next().unwrap_or_else(|| usage());
        match flag.as_str() {
            "--listen" => listen = Some(value),
            "--upstream" => upstream = Some(value),
            "--threads" => threads = value.parse().unwrap_or_else(|_| usage()),
            "--merge" => merge.push(value),
            "--reuse-ms" => reuse = Some(value.parse().unwrap_or_else(|_| usage())),
            "--observe" => observe = value != "none",
            _ => usage(),
        }
    }
    let (Some(listen), Some(Ok(upstream))) = (listen, upstream.map(|u| u.parse())) else {
        usage()
    };
    let mut settings = TapSettings::new(upstream);
    settings.merge.clients = match merge.as_slice() {
        [] => MergeClients::Nobody,
        [all] if all == "all" => MergeClients::All,
        names => MergeClients::Named(names.to_vec()),
    };
    if let Some(ms) = reuse {
        settings.merge.reuse_for = std::time::Duration::from_millis(ms);
    }
    settings.merge.page_burst = u32::MAX;
    settings.merge.pages_per_second = u32::MAX;
    Args {
        listen,
        settings,
        threads,
        observe,
    }
}

fn main() {
    let args = args();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(args.threads.max(1))
        .enable_all()
        .build();
    match runtime {
        Ok(runtime) => runtime.block_on(run(args)),
        Err(e) => {
            eprintln!("tap: no runtime: {e}");
            std::process::exit(1)
        }
    }
}

async fn run(
    Args {
        listen,
        settings,
        observe,
        ..
    }: Args,
) {
    let tee: Arc<dyn Tee> = if observe {
        let (tx, mut rx) = mpsc::channel(QUEUE);
        tokio::spawn(async move { while rx.recv().await.is_some() {} });
        Arc::new(Queued(tx))
    } else {
        Arc::new(())
    };
    let stats = Arc::new(TapStats::default());
    let tap = match Tap::new(settings, tee, stats) {
        Ok(tap) => tap,
        Err(e) => {
            eprintln!("tap: {e}");
            std::process::exit(2)
        }
    };
    let listener = match tokio::net::TcpListener::bind(&listen).await {
        Ok(listener) => listener,
        Err(e) => {
            eprintln!("tap: cannot listen on {listen}: {e}");
            std::process::exit(1)
        }
    };
    if let Ok(addr) = listener.local_addr() {
        eprintln!("listening on http://{addr}");
    }
    tap.serve(listener, std::future::pending()).await;
}
