//! Each running tap's own health (`mcp_tap_*`), read from its `TapStats` at
//! every scrape: the data path counts in plain atomics and knows nothing of
//! metrics. Registered on its own; taps come and go with reloads.

use super::observer_health::ObserverHealth;
use mcp_tap::stats::{AddedTime, ADDED_SECONDS_BUCKETS};
use mcp_tap::{Cut, MergeCount, NotObserved, RequestMethod, TapStats, UpstreamFailure};
use prometheus_client::collector::Collector;
use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::encoding::{DescriptorEncoder, EncodeMetric, MetricEncoder, NoLabelSet};
use prometheus_client::metrics::counter::{ConstCounter, Counter};
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::ConstGauge;
use prometheus_client::metrics::MetricType;
use prometheus_client::registry::{Registry, Unit};
use std::collections::BTreeMap;
use std::sync::{Arc, RwLock};

/// The taps running now, by name, each with the counts of its data path;
/// and the configured taps that could not start after a reload.
#[derive(Debug, Default)]
pub struct TapHealth {
    taps: RwLock<BTreeMap<Arc<str>, Running>>,
    start_failures: Family<TapLabel, Counter>,
}

/// One running tap's counts: its data path's and its observer's.
type Running = (Arc<TapStats>, Arc<ObserverHealth>);

/// A configured tap's name (bounded by the configuration).
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct TapLabel {
    tap: String,
}

impl TapHealth {
    /// Registers the `mcp_tap_*` families of whatever taps run at scrape time.
    pub fn register(registry: &mut Registry) -> Arc<TapHealth> {
        let health = Arc::new(TapHealth::default());
        registry.register_collector(Box::new(TapCollector(health.clone())));
        registry.register(
            "mcp_tap_start_failures",
            "Configured taps that could not start after a configuration reload (listener, TLS or report file); the log line says why",
            health.start_failures.clone(),
        );
        health
    }

    /// A configured tap did not start after a reload (see `TapNotStarted`).
    pub fn start_failed(&self, tap: &str) {
        self.start_failures
            .get_or_create(&TapLabel {
                tap: tap.to_string(),
            })
            .inc();
    }

    /// A tap started: its counts are exposed from now on.
    pub fn insert(&self, tap: Arc<str>, stats: Arc<TapStats>, observer: Arc<ObserverHealth>) {
        self.write().insert(tap, (stats, observer));
    }

    /// A tap stopped: its series go with it.
    pub fn remove(&self, tap: &str) {
        self.write().remove(tap);
    }

    fn write(&self) -> std::sync::RwLockWriteGuard<'_, BTreeMap<Arc<str>, Running>> {
        self.taps.write().unwrap_or_else(|e| e.into_inner())
    }

    /// A copy of the list, so no lock is held while encoding.
    fn running(&self) -> Vec<(Arc<str>, Arc<TapStats>)> {
        let taps = self.taps.read().unwrap_or_else(|e| e.into_inner());
        taps.iter()
            .map(|(n, (s, _))| (n.clone(), s.clone()))
            .collect()
    }

    fn observers(&self) -> Vec<(Arc<str>, Arc<ObserverHealth>)> {
        let taps = self.taps.read().unwrap_or_else(|e| e.into_inner());
        taps.iter()
            .map(|(n, (_, o))| (n.clone(), o.clone()))
            .collect()
    }
}

#[derive(Debug)]
struct TapCollector(Arc<TapHealth>);

type Encoded = Result<(), std::fmt::Error>;

impl Collector for TapCollector {
    fn encode(&self, mut encoder: DescriptorEncoder) -> Encoded {
        let taps = self.0.running();
        if taps.is_empty() {
            return Ok(());
        }
        counters(&mut encoder, &taps, TapStats::requests)?;
        counters(&mut encoder, &taps, TapStats::upstream_errors)?;
        counters(&mut encoder, &taps, TapStats::not_observed_count)?;
        counters(&mut encoder, &taps, TapStats::merges)?;
        per_tap(&mut encoder, &taps, &MERGE_READS)?;
        counters(&mut encoder, &taps, TapStats::cuts)?;
        for spec in &STREAMS_AND_CONNECTIONS {
            per_tap(&mut encoder, &taps, spec)?;
        }
        let observers = self.0.observers();
        for spec in &OBSERVER {
            per_tap(&mut encoder, &observers, spec)?;
        }
        added_time(&mut encoder, &taps)
    }
}

/// A counter family per enum of the data path: its name, help, the label
/// its values fill, and every value (all pre-created: a fixed enum).
trait CounterFamily: Copy + 'static {
    const NAME: &'static str;
    const HELP: &'static str;
    const LABEL: &'static str;
    const ALL: &'static [Self];
    fn label_of(self) -> &'static str;
}

macro_rules! counter_families {
    ($($t:ty => $name:literal, $label:literal, $help:literal;)*) => {$(
        impl CounterFamily for $t {
            const NAME: &'static str = $name;
            const HELP: &'static str = $help;
            const LABEL: &'static str = $label;
            const ALL: &'static [Self] = &<$t>::ALL;
            fn label_of(self) -> &'static str {
                self.label()
            }
        }
    )*};
}

counter_families! {
    RequestMethod => "mcp_tap_requests", "method",
        "Requests the tap received from clients, by HTTP method (stdio: the stdio tap's server runs)";
    UpstreamFailure => "mcp_tap_upstream_errors", "cause",
        "Exchanges the tap's upstream failed, by cause: connect and tls (the client got 502), timeout (504), reset (a cut answer)";
    MergeCount => "mcp_tap_merges", "outcome",
        "First-page list requests of clients named in merge_pages, by what the tap answered: merged (its own walk), reused (a merged answer kept for the session), or page 1 unchanged and why (incomplete walk, scope_change, too_large, busy, throttled)";
    Cut => "mcp_tap_cuts", "reason",
        "Connections the tap cut, by reason: a deadline a client or the upstream let pass (head_timeout, body_timeout, client_write_timeout, upstream_write_timeout) or framing a peer could read differently (bad_framing)";
    NotObserved => "mcp_tap_messages_not_observed", "reason",
        "Messages the tap forwarded unchanged but did not observe, by reason";
}

/// `T`'s counter family: one series per tap and value, each `read` from
/// the tap's stats.
fn counters<T: CounterFamily>(
    encoder: &mut DescriptorEncoder,
    taps: &[(Arc<str>, Arc<TapStats>)],
    read: fn(&TapStats, T) -> u64,
) -> Encoded {
    let mut family = encoder.encode_descriptor(T::NAME, T::HELP, None, MetricType::Counter)?;
    for (tap, stats) in taps {
        for &value in T::ALL {
            let labels = [("tap", tap.as_ref()), (T::LABEL, value.label_of())];
            let counter = ConstCounter::new(read(stats, value));
            counter.encode(family.encode_family(&labels)?)?;
        }
    }
    Ok(())
}

/// A family with one series per tap, each read from that tap's `S`.
struct PerTap<S> {
    name: &'static str,
    help: &'static str,
    kind: PerTapKind,
    read: fn(&S) -> u64,
}

#[derive(Clone, Copy)]
enum PerTapKind {
    Gauge,
    Counter,
}

/// Request bodies read for merging: what merging costs clients besides
/// those it answers.
const MERGE_READS: PerTap<TapStats> = PerTap {
    name: "mcp_tap_merge_reads",
    help: "Request bodies the tap read to see whether merging answers them (initialize and list requests that may be a named client's; a client not named in merge_pages is forwarded unread)",
    kind: PerTapKind::Counter,
    read: TapStats::merge_reads,
};

/// Open event streams; client connections: open now, the cap, and how
/// often the cap was met.
const STREAMS_AND_CONNECTIONS: [PerTap<TapStats>; 4] = [
    PerTap {
        name: "mcp_tap_open_streams",
        help: "Event-stream answers the tap is forwarding now (GET streams, legacy SSE streams, SSE answers to POSTs)",
        kind: PerTapKind::Gauge,
        read: TapStats::open_streams,
    },
    PerTap {
        name: "mcp_tap_connections",
        help: "Client connections the tap holds now",
        kind: PerTapKind::Gauge,
        read: TapStats::connections,
    },
    PerTap {
        name: "mcp_tap_max_connections",
        help: "Client connections the tap admits at once (its share of the open-file limit, or less when configured)",
        kind: PerTapKind::Gauge,
        read: TapStats::max_connections,
    },
    PerTap {
        name: "mcp_tap_listener_full",
        help: "Times a client came while every connection slot was taken (it waited in the kernel's backlog)",
        kind: PerTapKind::Counter,
        read: TapStats::listener_full,
    },
];

/// Whether each tap's observer observes, and how often it was restarted.
const OBSERVER: [PerTap<ObserverHealth>; 2] = [
    PerTap {
        name: "mcp_tap_observing",
        help: "1 while the tap's observer reads its copies; 0 after the observer ended, until a fresh one starts (the tap forwards all the same, and counts what passes as not observed)",
        kind: PerTapKind::Gauge,
        read: |health| u64::from(health.observing()),
    },
    PerTap {
        name: "mcp_tap_observer_restarts",
        help: "Times the tap's observer ended before the tap did (a panic); a fresh one starts after each, and the log says why",
        kind: PerTapKind::Counter,
        read: ObserverHealth::restarts,
    },
];

/// The family `spec` describes: one series per tap in `taps`.
fn per_tap<S>(
    encoder: &mut DescriptorEncoder,
    taps: &[(Arc<str>, Arc<S>)],
    spec: &PerTap<S>,
) -> Encoded {
    let metric_type = match spec.kind {
        PerTapKind::Gauge => MetricType::Gauge,
        PerTapKind::Counter => MetricType::Counter,
    };
    let mut family = encoder.encode_descriptor(spec.name, spec.help, None, metric_type)?;
    for (tap, state) in taps {
        let value = (spec.read)(state);
        let labels = [("tap", tap.as_ref())];
        let series = family.encode_family(&labels)?;
        match spec.kind {
            PerTapKind::Gauge => {
                ConstGauge::new(i64::try_from(value).unwrap_or(i64::MAX)).encode(series)?
            }
            PerTapKind::Counter => ConstCounter::new(value).encode(series)?,
        }
    }
    Ok(())
}

fn added_time(encoder: &mut DescriptorEncoder, taps: &[(Arc<str>, Arc<TapStats>)]) -> Encoded {
    let mut family = encoder.encode_descriptor(
        "mcp_tap_added",
        "Time the tap itself adds to a request (its own work before forwarding the request and before forwarding the answer head; not the upstream's time)",
        Some(&Unit::Seconds),
        MetricType::Histogram,
    )?;
    for (tap, stats) in taps {
        let histogram = ReadHistogram(stats.added_time());
        histogram.encode(family.encode_family(&[("tap", tap.as_ref())])?)?;
    }
    Ok(())
}

/// A histogram as `TapStats` reads it, encoded as it stands.
#[derive(Debug)]
struct ReadHistogram(AddedTime);

impl EncodeMetric for ReadHistogram {
    fn encode(&self, mut encoder: MetricEncoder) -> Encoded {
        let read = &self.0;
        // The encoder wants each bucket's own count and sums them itself.
        let mut buckets = Vec::with_capacity(ADDED_SECONDS_BUCKETS.len() + 1);
        let mut below = 0;
        for (bound, cumulative) in ADDED_SECONDS_BUCKETS.iter().zip(read.cumulative) {
            buckets.push((*bound, cumulative.saturating_sub(below)));
            below = cumulative;
        }
        buckets.push((f64::INFINITY, read.count.saturating_sub(below)));
        encoder.encode_histogram::<NoLabelSet>(read.sum_seconds, read.count, &buckets, None)
    }

    fn metric_type(&self) -> MetricType {
        MetricType::Histogram
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(registry: &Registry) -> String {
        let mut out = String::new();
        prometheus_client::encoding::text::encode(&mut out, registry).expect("encode");
        out
    }

    #[test]
    fn each_running_tap_shows_its_counts_and_a_stopped_one_none() {
        let mut registry = Registry::default();
        let health = TapHealth::register(&mut registry);
        assert!(!text(&registry).contains("mcp_tap_"), "no tap, no series");
        let stats = Arc::new(TapStats::default());
        stats.request(RequestMethod::Post);
        stats.request(RequestMethod::Post);
        stats.upstream_error(UpstreamFailure::Timeout);
        stats.not_observed(NotObserved::TooLarge);
        stats.stream_opened();
        stats.cut(Cut::BodyTimeout);
        stats.set_max_connections(112);
        stats.connection_opened();
        stats.listener_was_full();
        stats.record_added(0.000_03);
        stats.record_added(1.0);
        let observer = Arc::new(ObserverHealth::default());
        observer.started();
        health.insert(Arc::from("edge"), stats, observer.clone());
        let out = text(&registry);
        for line in [
            "mcp_tap_requests_total{tap=\"edge\",method=\"POST\"} 2",
            "mcp_tap_requests_total{tap=\"edge\",method=\"GET\"} 0",
            "mcp_tap_upstream_errors_total{tap=\"edge\",cause=\"timeout\"} 1",
            "mcp_tap_upstream_errors_total{tap=\"edge\",cause=\"connect\"} 0",
            "mcp_tap_messages_not_observed_total{tap=\"edge\",reason=\"too_large\"} 1",
            "mcp_tap_open_streams{tap=\"edge\"} 1",
            "mcp_tap_cuts_total{tap=\"edge\",reason=\"body_timeout\"} 1",
            "mcp_tap_cuts_total{tap=\"edge\",reason=\"bad_framing\"} 0",
            "mcp_tap_connections{tap=\"edge\"} 1",
            "mcp_tap_max_connections{tap=\"edge\"} 112",
            "mcp_tap_listener_full_total{tap=\"edge\"} 1",
            "mcp_tap_merges_total{tap=\"edge\",outcome=\"too_large\"} 0",
            "mcp_tap_added_seconds_bucket{le=\"0.000025\",tap=\"edge\"} 0",
            "mcp_tap_added_seconds_bucket{le=\"0.00005\",tap=\"edge\"} 1",
            "mcp_tap_added_seconds_bucket{le=\"0.025\",tap=\"edge\"} 1",
            "mcp_tap_added_seconds_bucket{le=\"+Inf\",tap=\"edge\"} 2",
            "mcp_tap_added_seconds_count{tap=\"edge\"} 2",
            "mcp_tap_observing{tap=\"edge\"} 1",
            "mcp_tap_observer_restarts_total{tap=\"edge\"} 0",
            "mcp_tap_messages_not_observed_total{tap=\"edge\",reason=\"observer_restart\"} 0",
        ] {
            assert!(out.contains(line), "missing {line:?} in\n{out}");
        }
        observer.ended();
        let out = text(&registry);
        assert!(out.contains("mcp_tap_observing{tap=\"edge\"} 0"), "{out}");
        assert!(out.contains("mcp_tap_observer_restarts_total{tap=\"edge\"} 1"));
        health.remove("edge");
        assert!(!text(&registry).contains("tap=\"edge\""));
    }
}
