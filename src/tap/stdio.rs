//! The stdio tap inside the application: `mcp-exporter tap --stdio -- CMD
//! ARGS…`, run by a client in place of its server. The data path
//! (`mcp_tap::run_stdio`) starts the server and forwards lines both ways on
//! our stdin and stdout; its copies go through the same queue and observer
//! task as an HTTP tap's. Nothing but the protocol is written to stdout:
//! what the tap finds goes to stderr (a line per client listing, a summary
//! at exit), to OTLP when configured, and to `--report FILE`.
//!
//! The tap ends with its server whatever the client does with our stdin
//! (`stdin`): when the server exits, what it wrote reaches the client, our
//! stdout is closed (the client reads its end), the observer drains and the
//! process exits with the server's status.

use super::client_views::ClientBook;
use super::observe::{ClientSinks, ListingSinks, ObserverInputs, ObserverTask, TapHeader};
use super::queue::{observer_queue, QueueBudget};
use super::start_error::TapStartError;
use super::stdin::client_stdin;
use super::supervise::supervise;
use crate::telemetry::events::TapSummarised;
use crate::telemetry::metrics::ObserverHealth;
use mcp_observer::{ObserverLimits, Routing};
use mcp_tap::{run_stdio, StdioTapSettings, TapStats};
use std::process::ExitStatus;
use std::sync::Arc;
use std::time::Duration;

/// Everything the stdio tap runs from.
pub struct StdioTapSpec {
    pub name: Arc<str>,
    pub settings: StdioTapSettings,
    pub abandon_after: Duration,
    pub max_clients: usize,
    pub listings: ListingSinks,
}

/// Longest wait, once the server is gone, for the observer to finish
/// what was queued.
const DRAIN: Duration = Duration::from_secs(5);

/// Run the server behind the tap until it exits; its exit status.
pub async fn run(spec: StdioTapSpec, sinks: Arc<ClientSinks>) -> Result<ExitStatus, TapStartError> {
    let stats = Arc::new(TapStats::default());
    let (queue, receiver) = observer_queue(QueueBudget::default());
    let task = ObserverTask {
        tap: spec.name.clone(),
        limits: ObserverLimits {
            inspect_bytes: spec.settings.inspect_bytes,
            abandon_after: spec.abandon_after,
            max_clients: spec.max_clients,
            ..ObserverLimits::default()
        },
        // One server behind a pipe: one route, no paths, one client.
        routing: Routing::learning(None),
        apps: mcp_tap::apps::Apps::default(),
        stats: stats.clone(),
        sinks: sinks.clone(),
        header: TapHeader {
            listen: "stdio".to_string(),
            upstream: format!("stdio: {}", spec.settings.server.command),
            merge_pages: super::run::merge_pages(&spec.settings.merge.clients),
        },
        tick: Duration::from_secs(1),
        listings: spec.listings,
        health: Arc::new(ObserverHealth::default()),
        learner: None,
    };
    let observing = tokio::spawn(supervise(ObserverInputs::new(receiver, None), task));
    let status = run_stdio(
        spec.settings,
        Arc::new(queue),
        stats,
        client_stdin(),
        tokio::io::stdout(),
    )
    .await;
    close_stdout();
    let _ = tokio::time::timeout(DRAIN, observing).await;
    summary(&sinks.book);
    status.map_err(|e| TapStartError::new(&spec.name, e))
}

/// The end of our output, for the client: fd 1 made `/dev/null` (closed,
/// when that cannot be opened), so nothing later writes to the client, nor
/// to whatever would reuse the number.
fn close_stdout() {
    use std::os::fd::AsRawFd;
    match std::fs::OpenOptions::new().write(true).open("/dev/null") {
        // SAFETY: dup2(2) takes two descriptors, ours (`null` is open
        // until the end of this arm) and stdout; no memory is involved.
        Ok(null) => unsafe {
            libc::dup2(null.as_raw_fd(), libc::STDOUT_FILENO);
        },
        // SAFETY: close(2) of our stdout, which nothing reads from here.
        Err(_) => unsafe {
            libc::close(libc::STDOUT_FILENO);
        },
    }
}

/// Each client's verdict as the tap last judged it, one line each.
fn summary(book: &ClientBook) {
    for tap in book.taps() {
        if tap.clients.is_empty() {
            TapSummarised {
                tap: &tap.name,
                client: None,
            }
            .emit();
        }
        for c in &tap.clients {
            // One route: the verdict is the client's.
            let verdict = &c.verdict.verdict;
            TapSummarised {
                tap: &tap.name,
                client: Some((&c.client, verdict.level, verdict.first_reason())),
            }
            .emit();
        }
    }
}
