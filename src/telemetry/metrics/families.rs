//! What every family group shares: family types with their histogram
//! buckets, the source of a registry's values (for HELP), and helpers that
//! set a series. Which series a target has is `series.rs`.

use super::buckets::{DURATION_BUCKETS_SECONDS, PAGES_BUCKETS, PAGE_ITEMS_BUCKETS};
use super::labels::TraceLabel;
use super::values::{CounterValue, FloatGaugeValue, GaugeValue};
use mcp_listing::{CursorState, PageRecord};
use prometheus_client::metrics::exemplar::HistogramWithExemplars;
use prometheus_client::metrics::family::Family;

pub type Exemplared = HistogramWithExemplars<TraceLabel>;
pub type HistFamily<L> = Family<L, Exemplared, fn() -> Exemplared>;
pub type CounterFamily<L> = Family<L, CounterValue>;
pub type GaugeFamily<L> = Family<L, GaugeValue>;
pub type FloatGaugeFamily<L> = Family<L, FloatGaugeValue>;

pub fn pages_histogram() -> Exemplared {
    HistogramWithExemplars::new(PAGES_BUCKETS.into_iter())
}

pub fn page_items_histogram() -> Exemplared {
    HistogramWithExemplars::new(PAGE_ITEMS_BUCKETS.into_iter())
}

pub fn seconds_histogram() -> Exemplared {
    HistogramWithExemplars::new(DURATION_BUCKETS_SECONDS.into_iter())
}

/// Which polls a registry's values come from, for HELP strings.
#[derive(Debug, Clone, Copy)]
pub enum Source {
    Scheduled,
    Probe,
}

impl Source {
    pub fn poll(self) -> &'static str {
        match self {
            Source::Scheduled => "the last scheduled poll",
            Source::Probe => "this probe",
        }
    }

    pub fn polls(self) -> &'static str {
        match self {
            Source::Scheduled => "scheduled polls",
            Source::Probe => "this probe",
        }
    }
}

/// Sets a gauge that is created only once it is non-zero (a rare
/// condition): 0 updates an existing series and creates none.
pub fn set_when_seen<L>(family: &GaugeFamily<L>, labels: &L, value: i64)
where
    L: Clone + std::hash::Hash + Eq,
{
    if value != 0 {
        family.get_or_create(labels).set(value);
    } else if let Some(gauge) = family.get(labels) {
        gauge.set(0);
    }
}

/// Adds to a counter that is created when its first event happens.
pub fn inc_when_seen<L>(family: &CounterFamily<L>, labels: &L, n: u64)
where
    L: Clone + std::hash::Hash + Eq,
{
    if n > 0 {
        family.get_or_create(labels).inc_by(n);
    }
}

/// One histogram observation; the family guard lives only for this call.
pub fn observe<L>(family: &HistFamily<L>, labels: &L, value: f64, exemplar: &Option<TraceLabel>)
where
    L: Clone + std::hash::Hash + Eq,
{
    family
        .get_or_create(labels)
        .observe(value, exemplar.clone(), None);
}

/// The page's result was an object with the kind's array (its `items` is
/// real); the walker sets a cursor state only then.
pub fn page_was_parsed(page: &PageRecord) -> bool {
    page.error.is_none() && page.next_cursor != CursorState::None
}

/// The server answered (result, JSON-RPC error or HTTP status). Timeouts and
/// connection failures are left out: their duration is our deadline, not the
/// server's latency.
pub fn page_was_answered(page: &PageRecord) -> bool {
    page.error.is_none() || page.rpc_code.is_some() || page.http_status.is_some()
}

/// A count as a gauge value; counts past `i64::MAX` pin there.
pub fn saturating_i64(v: u64) -> i64 {
    i64::try_from(v).unwrap_or(i64::MAX)
}
