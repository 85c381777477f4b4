//! The data path's own counts, kept in plain atomics: the data path knows
//! nothing of metrics; telemetry reads these when it is scraped.

use crate::event::{Cut, MergeFallback, MergeOutcome, NotObserved, RequestMethod, UpstreamFailure};
use std::sync::atomic::{AtomicU64, Ordering};

/// Upper bounds (seconds) of the added-time buckets: the time the tap itself
/// adds to an exchange (its own work before forwarding the request and
/// before forwarding the answer head), not the upstream's.
pub const ADDED_SECONDS_BUCKETS: [f64; 10] = [
    0.000_025, 0.000_05, 0.000_1, 0.000_25, 0.000_5, 0.001, 0.002_5, 0.005, 0.01, 0.025,
];

mcp_listing::labelled_enum! {
    /// Merges as counted: [`MergeOutcome`]s, fallbacks by their kind (the
    /// walker's own reason travels in `TapEvent::Merged`).
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
    pub enum MergeCount as "outcome" {
        Merged => "merged",
        Reused => "reused",
        /// Page 1 went: the walk was not complete.
        Incomplete => "incomplete",
        ScopeChanged => "scope_change",
        TooLarge => "too_large",
        Busy => "busy",
        Throttled => "throttled",
    }
}

impl From<MergeOutcome> for MergeCount {
    fn from(outcome: MergeOutcome) -> MergeCount {
        match outcome {
            MergeOutcome::Merged => MergeCount::Merged,
            MergeOutcome::Reused => MergeCount::Reused,
            MergeOutcome::FirstPage(MergeFallback::Walk(_)) => MergeCount::Incomplete,
            MergeOutcome::FirstPage(MergeFallback::ScopeChanged) => MergeCount::ScopeChanged,
            MergeOutcome::FirstPage(MergeFallback::TooLarge) => MergeCount::TooLarge,
            MergeOutcome::FirstPage(MergeFallback::Busy) => MergeCount::Busy,
            MergeOutcome::FirstPage(MergeFallback::Throttled) => MergeCount::Throttled,
        }
    }
}

/// Counts of one tap's data path; all only grow but `open_streams`,
/// `connections` and `max_connections`.
#[derive(Debug, Default)]
pub struct TapStats {
    requests: [AtomicU64; RequestMethod::ALL.len()],
    upstream_errors: [AtomicU64; UpstreamFailure::ALL.len()],
    not_observed: [AtomicU64; NotObserved::ALL.len()],
    merges: [AtomicU64; MergeCount::ALL.len()],
    /// Request bodies read to see whether they are merged for.
    merge_reads: AtomicU64,
    cuts: [AtomicU64; Cut::ALL.len()],
    open_streams: AtomicU64,
    /// Client connections open now, and the most the listener admits.
    connections: AtomicU64,
    max_connections: AtomicU64,
    /// Times every connection slot was taken when a client came.
    listener_full: AtomicU64,
    /// One count per bucket of [`ADDED_SECONDS_BUCKETS`], then the overflow.
    added_buckets: [AtomicU64; ADDED_SECONDS_BUCKETS.len() + 1],
    added_sum_nanos: AtomicU64,
}

/// A histogram as read: cumulative counts per bucket bound, count, sum.
#[derive(Debug, Clone, PartialEq)]
pub struct AddedTime {
    pub cumulative: [u64; ADDED_SECONDS_BUCKETS.len()],
    pub count: u64,
    pub sum_seconds: f64,
}

impl TapStats {
    pub fn request(&self, method: RequestMethod) {
        self.requests[method as usize].fetch_add(1, Ordering::Relaxed);
    }

    pub fn upstream_error(&self, cause: UpstreamFailure) {
        self.upstream_errors[cause as usize].fetch_add(1, Ordering::Relaxed);
    }

    pub fn not_observed(&self, reason: NotObserved) {
        self.not_observed[reason as usize].fetch_add(1, Ordering::Relaxed);
    }

    pub fn merge(&self, outcome: MergeOutcome) {
        self.merges[MergeCount::from(outcome) as usize].fetch_add(1, Ordering::Relaxed);
    }

    pub fn merges(&self, count: MergeCount) -> u64 {
        self.merges[count as usize].load(Ordering::Relaxed)
    }

    /// A request body was read to see whether it is merged for (a client
    /// not named for merging never has one read).
    pub fn merge_read(&self) {
        self.merge_reads.fetch_add(1, Ordering::Relaxed);
    }

    pub fn merge_reads(&self) -> u64 {
        self.merge_reads.load(Ordering::Relaxed)
    }

    pub fn cut(&self, reason: Cut) {
        self.cuts[reason as usize].fetch_add(1, Ordering::Relaxed);
    }

    pub fn cuts(&self, reason: Cut) -> u64 {
        self.cuts[reason as usize].load(Ordering::Relaxed)
    }

    /// The listener admits at most `n` client connections.
    pub fn set_max_connections(&self, n: usize) {
        self.max_connections.store(n as u64, Ordering::Relaxed);
    }

    pub fn max_connections(&self) -> u64 {
        self.max_connections.load(Ordering::Relaxed)
    }

    pub fn connection_opened(&self) {
        self.connections.fetch_add(1, Ordering::Relaxed);
    }

    pub fn connection_closed(&self) {
        // Never below zero, whatever order drops run in.
        let _ = self
            .connections
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |n| n.checked_sub(1));
    }

    pub fn connections(&self) -> u64 {
        self.connections.load(Ordering::Relaxed)
    }

    /// Every slot was taken: the listener waits for one to free.
    pub fn listener_was_full(&self) {
        self.listener_full.fetch_add(1, Ordering::Relaxed);
    }

    pub fn listener_full(&self) -> u64 {
        self.listener_full.load(Ordering::Relaxed)
    }

    pub fn stream_opened(&self) {
        self.open_streams.fetch_add(1, Ordering::Relaxed);
    }

    pub fn stream_closed(&self) {
        // Never below zero, whatever order drops run in.
        let _ = self
            .open_streams
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |n| n.checked_sub(1));
    }

    /// Record the time the tap added to one exchange.
    pub fn record_added(&self, seconds: f64) {
        let slot = ADDED_SECONDS_BUCKETS
            .iter()
            .position(|bound| seconds <= *bound)
            .unwrap_or(ADDED_SECONDS_BUCKETS.len());
        self.added_buckets[slot].fetch_add(1, Ordering::Relaxed);
        // `as` saturates: a negative or absurd value cannot wrap the sum.
        let nanos = (seconds * 1e9) as u64;
        self.added_sum_nanos.fetch_add(nanos, Ordering::Relaxed);
    }

    pub fn requests(&self, method: RequestMethod) -> u64 {
        self.requests[method as usize].load(Ordering::Relaxed)
    }

    pub fn upstream_errors(&self, cause: UpstreamFailure) -> u64 {
        self.upstream_errors[cause as usize].load(Ordering::Relaxed)
    }

    pub fn not_observed_count(&self, reason: NotObserved) -> u64 {
        self.not_observed[reason as usize].load(Ordering::Relaxed)
    }

    pub fn open_streams(&self) -> u64 {
        self.open_streams.load(Ordering::Relaxed)
    }

    pub fn added_time(&self) -> AddedTime {
        let mut cumulative = [0u64; ADDED_SECONDS_BUCKETS.len()];
        let mut running = 0u64;
        for (slot, bucket) in cumulative.iter_mut().enumerate() {
            running += self.added_buckets[slot].load(Ordering::Relaxed);
            *bucket = running;
        }
        let count =
            running + self.added_buckets[ADDED_SECONDS_BUCKETS.len()].load(Ordering::Relaxed);
        AddedTime {
            cumulative,
            count,
            sum_seconds: self.added_sum_nanos.load(Ordering::Relaxed) as f64 / 1e9,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn added_time_is_cumulative_with_an_overflow_bucket() {
        let stats = TapStats::default();
        stats.record_added(0.000_01);
        stats.record_added(0.000_3);
        stats.record_added(1.0);
        let read = stats.added_time();
        assert_eq!(read.cumulative[0], 1);
        assert_eq!(read.cumulative[3], 1);
        assert_eq!(read.cumulative[4], 2);
        assert_eq!(read.cumulative[9], 2);
        assert_eq!(read.count, 3);
        assert!((read.sum_seconds - 1.000_31).abs() < 1e-9);
    }

    #[test]
    fn open_streams_never_go_below_zero() {
        let stats = TapStats::default();
        stats.stream_closed();
        stats.stream_opened();
        assert_eq!(stats.open_streams(), 1);
        stats.stream_closed();
        stats.stream_closed();
        assert_eq!(stats.open_streams(), 0);
    }
}
