//! The exporter's own endpoints: `/probe`'s slots and queue
//! (`mcp_exporter_probes_*`), TLS certificate reloads, and connections
//! that failed to be accepted or were refused at the connection limit.
//! Registered here; the web layer moves them through these methods and
//! through the events that log them (`events.rs`).

use super::exporter::InFlight;
use super::families::Source;
use super::labels::EnumLabel;
use super::series::{Registrar, Series};
use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::registry::Registry;

mcp_listing::labelled_enum! {
    /// Why a probe request was not run: the `reason` label.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
    pub enum ProbeRefused as "probe refusal" {
        /// Every slot busy and the queue full.
        QueueFull => "queue_full",
        /// Queued until the request's own deadline passed.
        Deadline => "deadline",
    }
}

mcp_listing::labelled_enum! {
    /// How rebuilding the TLS configuration from changed files went.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
    pub enum ReloadResult as "reload result" {
        Success => "success",
        /// The files cannot be used; the previous configuration stays.
        Failure => "failure",
    }
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct RefusedLabels {
    reason: EnumLabel<ProbeRefused>,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ResultLabels {
    result: EnumLabel<ReloadResult>,
}

/// Handles on the endpoints' families; clones share them.
#[derive(Debug, Clone)]
pub struct WebMetrics {
    probes_running: Gauge,
    probes_queued: Gauge,
    probes_refused: Family<RefusedLabels, Counter>,
    tls_reloads: Family<ResultLabels, Counter>,
    accept_failures: Counter,
    connections_refused: Counter,
}

impl WebMetrics {
    pub fn register(registry: &mut Registry) -> WebMetrics {
        let mut r = Registrar::new(registry, Source::Scheduled);
        let m = WebMetrics {
            probes_running: r.family(
                "mcp_exporter_probes_running",
                "/probe requests polling now (bounded by --probe.concurrency)",
            )
            .new_plain(),
            probes_queued: r.family(
                "mcp_exporter_probes_queued",
                "/probe requests waiting for a slot (bounded by --probe.queue)",
            )
            .new_plain(),
            probes_refused: r.family(
                "mcp_exporter_probes_refused",
                "/probe requests answered 503 without polling: queue_full (every slot busy and the queue full) or deadline (queued past the request's scrape timeout)",
            )
            .new_plain(),
            tls_reloads: r.family(
                "mcp_exporter_tls_reloads",
                "Rebuilds of the TLS configuration after its files changed, by result: success, or failure (the previous configuration stays in use)",
            )
            .new_plain(),
            accept_failures: r.family(
                "mcp_exporter_accept_failures",
                "Connections our listener failed to accept (out of file descriptors, say); it retries",
            )
            .new_plain(),
            connections_refused: r.family(
                "mcp_exporter_connections_refused",
                "Connections closed at once because every connection up to the limit was busy with a request",
            )
            .new_plain(),
        };
        // Pre-created, so an alert sees the first one as an increase.
        for reason in ProbeRefused::ALL {
            m.probes_refused.create(&RefusedLabels {
                reason: EnumLabel(reason),
            });
        }
        for result in ReloadResult::ALL {
            m.tls_reloads.create(&ResultLabels {
                result: EnumLabel(result),
            });
        }
        m
    }

    /// Counts one probe as polling until the guard is dropped.
    pub fn probe_running(&self) -> InFlight {
        InFlight::new(&self.probes_running)
    }

    /// Counts one probe as queued until the guard is dropped.
    pub fn probe_queued(&self) -> InFlight {
        InFlight::new(&self.probes_queued)
    }

    pub fn probe_refused(&self, reason: ProbeRefused) {
        self.probes_refused
            .get_or_create(&RefusedLabels {
                reason: EnumLabel(reason),
            })
            .inc();
    }

    pub(in crate::telemetry) fn tls_reloaded(&self, result: ReloadResult) {
        self.tls_reloads
            .get_or_create(&ResultLabels {
                result: EnumLabel(result),
            })
            .inc();
    }

    pub(in crate::telemetry) fn accept_failed(&self) {
        self.accept_failures.inc();
    }

    pub(in crate::telemetry) fn connection_refused(&self) {
        self.connections_refused.inc();
    }
}
