//! Counter and gauge values held in their family's map itself.
//!
//! prometheus-client's `Counter` and `Gauge` are an `Arc` around an atomic
//! (so a handle can outlive a lookup): a family of them costs an allocation
//! per series on top of its map entry. The per-target families are only
//! ever updated through their family (`get_or_create`, under its lock), so
//! the atomic can sit in the map's slot: ~75 allocations fewer per target
//! (docs/performance.md, "Kept state per target").

use prometheus_client::encoding::{EncodeGaugeValue, EncodeMetric, MetricEncoder, NoLabelSet};
use prometheus_client::metrics::{MetricType, TypedMetric};
use std::marker::PhantomData;
use std::sync::atomic::{AtomicU64, Ordering};

/// A monotonic count, encoded as an OpenMetrics counter.
#[derive(Debug, Default)]
pub struct CounterValue(AtomicU64);

impl CounterValue {
    pub fn inc(&self) {
        self.inc_by(1);
    }

    /// Saturates at `u64::MAX` rather than wrapping to 0 (a counter that
    /// went back would read as a reset).
    pub fn inc_by(&self, n: u64) {
        // `fetch_update` only fails when the closure returns `None`; it
        // never does here.
        let _ = self
            .0
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |v| {
                Some(v.saturating_add(n))
            });
    }

    pub fn get(&self) -> u64 {
        self.0.load(Ordering::Relaxed)
    }
}

/// A level, encoded as an OpenMetrics gauge: whole ([`GaugeValue`]) or in
/// seconds ([`FloatGaugeValue`]: a duration or a Unix time). Either sits in
/// one atomic as its bits.
#[derive(Debug, Default)]
pub struct LevelValue<T>(AtomicU64, PhantomData<T>);

pub type GaugeValue = LevelValue<i64>;
pub type FloatGaugeValue = LevelValue<f64>;

/// A level's value as the bits its atomic holds, and back.
pub trait LevelBits: Copy {
    fn to_bits(self) -> u64;
    fn from_bits(bits: u64) -> Self;
}

impl LevelBits for i64 {
    fn to_bits(self) -> u64 {
        u64::from_ne_bytes(self.to_ne_bytes())
    }

    fn from_bits(bits: u64) -> Self {
        i64::from_ne_bytes(bits.to_ne_bytes())
    }
}

impl LevelBits for f64 {
    fn to_bits(self) -> u64 {
        f64::to_bits(self)
    }

    fn from_bits(bits: u64) -> Self {
        f64::from_bits(bits)
    }
}

impl<T: LevelBits> LevelValue<T> {
    pub fn set(&self, v: T) {
        self.0.store(v.to_bits(), Ordering::Relaxed);
    }

    pub fn get(&self) -> T {
        T::from_bits(self.0.load(Ordering::Relaxed))
    }
}

impl<T> TypedMetric for LevelValue<T> {
    const TYPE: MetricType = MetricType::Gauge;
}

impl<T: LevelBits + EncodeGaugeValue> EncodeMetric for LevelValue<T> {
    fn encode(&self, mut encoder: MetricEncoder) -> Result<(), std::fmt::Error> {
        encoder.encode_gauge(&self.get())
    }

    fn metric_type(&self) -> MetricType {
        Self::TYPE
    }
}

impl TypedMetric for CounterValue {
    const TYPE: MetricType = MetricType::Counter;
}

impl EncodeMetric for CounterValue {
    fn encode(&self, mut encoder: MetricEncoder) -> Result<(), std::fmt::Error> {
        encoder.encode_counter::<NoLabelSet, _, u64>(&self.get(), None)
    }

    fn metric_type(&self) -> MetricType {
        Self::TYPE
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use prometheus_client::encoding::text::encode;
    use prometheus_client::metrics::family::Family;
    use prometheus_client::registry::Registry;

    #[test]
    fn values_encode_as_their_types_and_counters_saturate() {
        let mut registry = Registry::default();
        let counters = Family::<Vec<(String, String)>, CounterValue>::default();
        let gauges = Family::<Vec<(String, String)>, GaugeValue>::default();
        let seconds = Family::<Vec<(String, String)>, FloatGaugeValue>::default();
        registry.register("c", "a counter", counters.clone());
        registry.register("g", "a gauge", gauges.clone());
        registry.register("s", "seconds", seconds.clone());
        let l = vec![("target".to_string(), "a".to_string())];
        counters.get_or_create(&l).inc_by(u64::MAX - 1);
        counters.get_or_create(&l).inc_by(5);
        gauges.get_or_create(&l).set(-3);
        seconds.get_or_create(&l).set(0.25);
        let mut text = String::new();
        encode(&mut text, &registry).unwrap();
        assert!(text.contains("# TYPE c counter\n"), "{text}");
        assert!(
            text.contains(&format!("c_total{{target=\"a\"}} {}\n", u64::MAX)),
            "{text}"
        );
        assert!(
            text.contains("# TYPE g gauge\ng{target=\"a\"} -3\n"),
            "{text}"
        );
        assert!(text.contains("s{target=\"a\"} 0.25\n"), "{text}");
    }
}
