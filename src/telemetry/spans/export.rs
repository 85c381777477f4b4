//! The bounded hand-off between polls and the OTLP exporter.
//!
//! Polls never wait on the collector: `submit` only bumps a counter and
//! pushes onto a channel. A dedicated thread with its own single-threaded
//! tokio runtime owns the exporter (gRPC via tonic or HTTP/protobuf via
//! reqwest) and sends batches one at a time. The queue is bounded in spans:
//! a poll whose spans do not fit is dropped whole (a trace without its root
//! is worse than no trace) and counted, as are spans of failed exports.
//!
//! We build `SpanData` ourselves rather than going through the SDK `Tracer`
//! because the 0.33 SDK `Tracer` ignores `SpanBuilder::span_id`/`trace_id`
//! (it always asks its `IdGenerator`), and the ids must be the ones already
//! sent to the server in `traceparent`. The SDK batch processor does not
//! expose its drop count, so the queue is ours too.

use super::error::TracingError;
use super::redact::{redacted_endpoint, scrub_urls};
use super::settings::Resolved;
use crate::config::OtlpProtocol;
use crate::telemetry::events::{SpanExportFailed, SpanExportRecovered, SpanExportStarted};
use opentelemetry::KeyValue;
use opentelemetry_otlp::{WithExportConfig, WithHttpConfig, WithTonicConfig};
use opentelemetry_sdk::resource::{
    EnvResourceDetector, ResourceDetector, SdkProvidedResourceDetector, TelemetryResourceDetector,
};
use opentelemetry_sdk::trace::{SpanData, SpanExporter as _};
use opentelemetry_sdk::Resource;
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::{mpsc, oneshot};

/// Upper bound on one export call, retries included, so a black-holed
/// collector cannot wedge the worker forever.
const EXPORT_DEADLINE: Duration = Duration::from_secs(30);

enum Msg {
    Spans(Vec<SpanData>),
    Flush(oneshot::Sender<()>),
    Shutdown(oneshot::Sender<()>),
}

#[derive(Default)]
struct Counters {
    /// Spans submitted and not yet exported or dropped.
    queued: AtomicUsize,
    dropped: AtomicU64,
    exported: AtomicU64,
}

pub struct ExportQueue {
    tx: mpsc::UnboundedSender<Msg>,
    counters: Arc<Counters>,
    max_queue_spans: usize,
    closed: AtomicBool,
}

impl ExportQueue {
    /// Start the worker thread and build the exporter on it. Returns once
    /// the exporter is built (or failed to build), without network I/O.
    pub fn start(resolved: &Resolved) -> Result<ExportQueue, TracingError> {
        let (tx, rx) = mpsc::unbounded_channel();
        let counters = Arc::new(Counters::default());
        let (ready_tx, ready_rx) = std::sync::mpsc::sync_channel::<Result<(), TracingError>>(1);

        let worker_counters = counters.clone();
        let worker_settings = resolved.clone();
        // Our own few log lines go to the caller's subscriber...
        let log = tracing::dispatcher::get_default(|d| d.clone());
        std::thread::Builder::new()
            .name("otlp-export".into())
            .spawn(move || {
                // ...while the SDK, tonic, hyper and reqwest, which all run
                // on this thread, stay quiet: with a collector down they
                // would warn on every attempt, and the SDK must not feed
                // its own logs back into a pipeline. `Outage` reports
                // failures once per outage instead.
                let _quiet =
                    tracing::subscriber::set_default(tracing::subscriber::NoSubscriber::default());
                let rt = match tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                {
                    Ok(rt) => rt,
                    Err(e) => {
                        let _ = ready_tx.send(Err(TracingError::Worker(e.to_string())));
                        return;
                    }
                };
                rt.block_on(async move {
                    // tonic's lazy channel needs the runtime that drives it,
                    // so the exporter is built here, not by the caller.
                    let exporter = match build_exporter(&worker_settings, &log) {
                        Ok(e) => e,
                        Err(e) => {
                            let _ = ready_tx.send(Err(e));
                            return;
                        }
                    };
                    let _ = ready_tx.send(Ok(()));
                    let outage = Outage {
                        log,
                        failing: false,
                    };
                    run(
                        exporter,
                        rx,
                        worker_counters,
                        worker_settings.max_batch_spans,
                        outage,
                    )
                    .await;
                });
            })
            .map_err(|e| TracingError::Worker(e.to_string()))?;

        match ready_rx.recv() {
            Ok(Ok(())) => Ok(ExportQueue {
                tx,
                counters,
                max_queue_spans: resolved.max_queue_spans,
                closed: AtomicBool::new(false),
            }),
            Ok(Err(e)) => Err(e),
            Err(_) => Err(TracingError::Worker(
                "export thread ended before the exporter was built".into(),
            )),
        }
    }

    /// Queue one poll's spans; never blocks. All or nothing.
    pub fn submit(&self, spans: Vec<SpanData>) {
        let n = spans.len();
        if n == 0 {
            return;
        }
        if self.closed.load(Ordering::Acquire) {
            self.counters.dropped.fetch_add(n as u64, Ordering::Relaxed);
            return;
        }
        // Reserve room first so concurrent submitters cannot overshoot.
        let before = self.counters.queued.fetch_add(n, Ordering::AcqRel);
        if before + n > self.max_queue_spans {
            self.counters.queued.fetch_sub(n, Ordering::AcqRel);
            self.counters.dropped.fetch_add(n as u64, Ordering::Relaxed);
            return;
        }
        if self.tx.send(Msg::Spans(spans)).is_err() {
            // The worker is gone (it only ends on shutdown).
            self.counters.queued.fetch_sub(n, Ordering::AcqRel);
            self.counters.dropped.fetch_add(n as u64, Ordering::Relaxed);
        }
    }

    pub fn dropped(&self) -> u64 {
        self.counters.dropped.load(Ordering::Relaxed)
    }

    pub fn exported(&self) -> u64 {
        self.counters.exported.load(Ordering::Relaxed)
    }

    /// Wait (at most `timeout`) until everything queued before this call
    /// was exported or dropped.
    pub async fn flush(&self, timeout: Duration) {
        let (done_tx, done_rx) = oneshot::channel();
        if self.tx.send(Msg::Flush(done_tx)).is_ok() {
            let _ = tokio::time::timeout(timeout, done_rx).await;
        }
    }

    /// Export what is queued (bounded by `timeout`), then stop the worker.
    /// Later submissions are counted as dropped.
    pub async fn shutdown(&self, timeout: Duration) {
        if self.closed.swap(true, Ordering::AcqRel) {
            return;
        }
        let (done_tx, done_rx) = oneshot::channel();
        if self.tx.send(Msg::Shutdown(done_tx)).is_ok() {
            let _ = tokio::time::timeout(timeout, done_rx).await;
        }
    }
}

fn build_exporter(
    r: &Resolved,
    log: &tracing::Dispatch,
) -> Result<opentelemetry_otlp::SpanExporter, TracingError> {
    // Build errors quote the endpoint, which may carry credentials.
    let build_err = |e: opentelemetry_otlp::ExporterBuildError| {
        TracingError::Exporter(scrub_urls(&e.to_string()))
    };
    let mut exporter = match r.protocol {
        OtlpProtocol::Grpc => {
            let mut metadata = opentelemetry_otlp::tonic_types::metadata::MetadataMap::new();
            for (name, value) in &r.headers {
                let key =
                    tonic::metadata::MetadataKey::from_bytes(name.to_ascii_lowercase().as_bytes())
                        .map_err(|_| TracingError::InvalidHeader(name.clone()))?;
                let value = tonic::metadata::MetadataValue::try_from(value.as_str())
                    .map_err(|_| TracingError::InvalidHeader(name.clone()))?;
                metadata.insert(key, value);
            }
            opentelemetry_otlp::SpanExporter::builder()
                .with_tonic()
                .with_endpoint(r.endpoint.clone())
                .with_metadata(metadata)
                .build()
                .map_err(build_err)?
        }
        OtlpProtocol::HttpProtobuf => opentelemetry_otlp::SpanExporter::builder()
            .with_http()
            .with_endpoint(r.endpoint.clone())
            .with_protocol(opentelemetry_otlp::Protocol::HttpBinary)
            .with_headers(r.headers.iter().cloned().collect::<HashMap<_, _>>())
            .build()
            .map_err(build_err)?,
    };
    exporter.set_resource(&resource(&r.service_name));
    SpanExportStarted {
        endpoint: &redacted_endpoint(&r.endpoint),
        protocol: r.protocol.label(),
    }
    .emit(log);
    Ok(exporter)
}

/// `service.name` as resolved, `service.version` unless the environment
/// says otherwise, plus the SDK's and `OTEL_RESOURCE_ATTRIBUTES`.
fn resource(service_name: &str) -> Resource {
    let detectors: [Box<dyn ResourceDetector>; 3] = [
        Box::new(SdkProvidedResourceDetector),
        Box::new(TelemetryResourceDetector),
        Box::new(EnvResourceDetector::new()),
    ];
    Resource::builder_empty()
        .with_attribute(KeyValue::new("service.version", env!("CARGO_PKG_VERSION")))
        .with_detectors(&detectors)
        .with_service_name(service_name.to_string())
        .build()
}

async fn run(
    exporter: opentelemetry_otlp::SpanExporter,
    mut rx: mpsc::UnboundedReceiver<Msg>,
    counters: Arc<Counters>,
    max_batch: usize,
    mut outage: Outage,
) {
    let mut pending: Vec<SpanData> = Vec::new();
    loop {
        let msg = rx.recv().await;
        match msg {
            Some(Msg::Spans(spans)) => {
                pending.extend(spans);
                // Keep gathering while more is already waiting, so a burst
                // of polls goes out in full batches.
                if pending.len() < max_batch && !rx.is_empty() {
                    continue;
                }
                export_all(&exporter, &mut pending, &counters, max_batch, &mut outage).await;
            }
            Some(Msg::Flush(done)) => {
                export_all(&exporter, &mut pending, &counters, max_batch, &mut outage).await;
                let _ = done.send(());
            }
            Some(Msg::Shutdown(done)) => {
                // Take whatever is already waiting; answer every waiter
                // once it is out.
                let mut waiters = vec![done];
                rx.close();
                while let Ok(msg) = rx.try_recv() {
                    match msg {
                        Msg::Spans(spans) => pending.extend(spans),
                        Msg::Flush(w) | Msg::Shutdown(w) => waiters.push(w),
                    }
                }
                export_all(&exporter, &mut pending, &counters, max_batch, &mut outage).await;
                let _ = exporter.shutdown_with_timeout(Duration::from_secs(1));
                for w in waiters {
                    let _ = w.send(());
                }
                return;
            }
            None => {
                // Every sink handle was dropped without shutdown.
                export_all(&exporter, &mut pending, &counters, max_batch, &mut outage).await;
                break;
            }
        }
    }
}

async fn export_all(
    exporter: &opentelemetry_otlp::SpanExporter,
    pending: &mut Vec<SpanData>,
    counters: &Counters,
    max_batch: usize,
    outage: &mut Outage,
) {
    while !pending.is_empty() {
        let take = pending.len().min(max_batch);
        let batch: Vec<SpanData> = pending.drain(..take).collect();
        let n = batch.len();
        let result = tokio::time::timeout(EXPORT_DEADLINE, exporter.export(batch)).await;
        counters.queued.fetch_sub(n, Ordering::AcqRel);
        match result {
            Ok(Ok(())) => {
                counters.exported.fetch_add(n as u64, Ordering::Relaxed);
                if outage.ended() {
                    SpanExportRecovered.emit(&outage.log);
                }
            }
            Ok(Err(e)) => SpanExportFailed {
                spans: n,
                error: &scrub_urls(&e.to_string()),
                first_of_outage: outage.began(),
            }
            .emit(&counters.dropped, &outage.log),
            Err(_) => SpanExportFailed {
                spans: n,
                error: "no answer within the export deadline",
                first_of_outage: outage.began(),
            }
            .emit(&counters.dropped, &outage.log),
        }
    }
}

/// Whether exports are failing, so an outage is logged once when it
/// begins and once when it ends; where those lines go (the export
/// thread's own subscriber is silent).
struct Outage {
    log: tracing::Dispatch,
    failing: bool,
}

impl Outage {
    /// An export failed: true when that begins an outage.
    fn began(&mut self) -> bool {
        !std::mem::replace(&mut self.failing, true)
    }

    /// An export worked: true when that ends an outage.
    fn ended(&mut self) -> bool {
        std::mem::replace(&mut self.failing, false)
    }
}
