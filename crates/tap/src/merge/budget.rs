//! What merging may spend per tap, whatever clients send: bytes held
//! (walks in flight, answers kept or being written) and page requests of
//! the tap's own to the upstream. Both are taken before they are spent;
//! past either, the client gets page 1 as the upstream gave it.

use crate::locked::lock;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

/// Bytes merging holds at once, per tap.
#[derive(Debug)]
pub(crate) struct ByteBudget {
    max: usize,
    used: AtomicUsize,
}

impl ByteBudget {
    pub(crate) fn new(max: usize) -> Arc<ByteBudget> {
        Arc::new(ByteBudget {
            max,
            used: AtomicUsize::new(0),
        })
    }

    /// `bytes` of the budget, held until the charge is dropped; `None`
    /// when they are not left.
    pub(crate) fn charge(self: &Arc<Self>, bytes: usize) -> Option<Charge> {
        self.take(bytes).then(|| Charge {
            budget: self.clone(),
            bytes,
        })
    }

    /// Bytes held now.
    #[cfg(test)]
    pub(crate) fn used(&self) -> usize {
        self.used.load(Ordering::Relaxed)
    }

    pub(crate) fn take(&self, bytes: usize) -> bool {
        self.used
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |used| {
                used.checked_add(bytes).filter(|&total| total <= self.max)
            })
            .is_ok()
    }

    pub(crate) fn give(&self, bytes: usize) {
        // Never below zero: every give follows its own take.
        let _ = self
            .used
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |used| {
                Some(used.saturating_sub(bytes))
            });
    }
}

/// Bytes taken from a [`ByteBudget`], given back when dropped.
#[derive(Debug)]
pub(crate) struct Charge {
    budget: Arc<ByteBudget>,
    bytes: usize,
}

impl Charge {
    /// Hold `bytes` from now on: more (false, unchanged, when the budget
    /// has not got them) or fewer.
    pub(crate) fn resize(&mut self, bytes: usize) -> bool {
        if bytes > self.bytes {
            if !self.budget.take(bytes - self.bytes) {
                return false;
            }
        } else {
            self.budget.give(self.bytes - bytes);
        }
        self.bytes = bytes;
        true
    }

    pub(crate) fn bytes(&self) -> usize {
        self.bytes
    }

    /// The budget this charge is on.
    pub(crate) fn budget(&self) -> Arc<ByteBudget> {
        self.budget.clone()
    }

    /// Move `bytes` of this charge (at most all of it) into a charge of
    /// their own.
    pub(crate) fn split(&mut self, bytes: usize) -> Charge {
        let bytes = bytes.min(self.bytes);
        self.bytes -= bytes;
        Charge {
            budget: self.budget.clone(),
            bytes,
        }
    }
}

impl Drop for Charge {
    fn drop(&mut self) {
        self.budget.give(self.bytes);
    }
}

/// The bytes one page read may take as they arrive: `factor` times each
/// byte read (buffers grow by doubling; an event's data is copied out of
/// the stream; the page's new items are copied into the merge), beyond a
/// part paid for beforehand (`prepaid`). Given back when dropped; once the
/// budget refuses, the read stops.
#[derive(Debug)]
pub(crate) struct Room<'a> {
    budget: &'a ByteBudget,
    factor: usize,
    prepaid: usize,
    /// Bytes of the page read so far, times the factor.
    spent: AtomicUsize,
    /// Bytes taken from the budget beyond the prepaid part.
    taken: AtomicUsize,
    refused: std::sync::atomic::AtomicBool,
}

impl<'a> Room<'a> {
    pub(crate) fn new(budget: &'a ByteBudget, factor: usize, prepaid: usize) -> Room<'a> {
        Room {
            budget,
            factor,
            prepaid,
            spent: AtomicUsize::new(0),
            taken: AtomicUsize::new(0),
            refused: std::sync::atomic::AtomicBool::new(false),
        }
    }

    /// `bytes` more of the page were read: false (and from then on) when
    /// the budget has no room for them.
    pub(crate) fn take(&self, bytes: usize) -> bool {
        if self.refused() {
            return false;
        }
        let cost = bytes.saturating_mul(self.factor);
        let spent = self
            .spent
            .fetch_add(cost, Ordering::AcqRel)
            .saturating_add(cost);
        let beyond = spent.saturating_sub(self.prepaid);
        let taken = self.taken.load(Ordering::Acquire);
        if beyond > taken {
            if !self.budget.take(beyond - taken) {
                self.refused.store(true, Ordering::Release);
                return false;
            }
            self.taken.store(beyond, Ordering::Release);
        }
        true
    }

    /// The budget refused a part of the page.
    pub(crate) fn refused(&self) -> bool {
        self.refused.load(Ordering::Acquire)
    }
}

impl Drop for Room<'_> {
    fn drop(&mut self) {
        self.budget.give(*self.taken.get_mut());
    }
}

/// Page requests the tap's merges may send the upstream (beyond the
/// clients' own first pages): a bucket of `burst` that refills at
/// `per_second`. Over any `t` seconds merging adds at most
/// `burst + per_second × t` upstream requests, however clients loop,
/// rotate credentials or leave out their session.
#[derive(Debug)]
pub(crate) struct PageRate {
    burst: f64,
    per_second: f64,
    state: Mutex<Bucket>,
}

#[derive(Debug)]
struct Bucket {
    tokens: f64,
    at: Instant,
}

impl PageRate {
    pub(crate) fn new(burst: u32, per_second: u32) -> PageRate {
        PageRate {
            burst: f64::from(burst),
            per_second: f64::from(per_second),
            state: Mutex::new(Bucket {
                tokens: f64::from(burst),
                at: Instant::now(),
            }),
        }
    }

    /// Take one page request; false when none is left now.
    pub(crate) fn take(&self) -> bool {
        self.take_at(Instant::now())
    }

    /// Whether a page request is left now (none taken).
    pub(crate) fn any_left(&self) -> bool {
        let mut bucket = lock(&self.state);
        self.refill(&mut bucket, Instant::now());
        bucket.tokens >= 1.0
    }

    fn take_at(&self, now: Instant) -> bool {
        let mut bucket = lock(&self.state);
        self.refill(&mut bucket, now);
        if bucket.tokens < 1.0 {
            return false;
        }
        bucket.tokens -= 1.0;
        true
    }

    fn refill(&self, bucket: &mut Bucket, now: Instant) {
        let passed = now.saturating_duration_since(bucket.at);
        bucket.at = now.max(bucket.at);
        let grown = bucket.tokens + passed.as_secs_f64() * self.per_second;
        bucket.tokens = grown.min(self.burst);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn charges_hold_bytes_until_dropped_and_never_pass_the_budget() {
        let budget = ByteBudget::new(100);
        let mut a = budget.charge(60).unwrap();
        assert!(budget.charge(41).is_none());
        let b = budget.charge(40).unwrap();
        assert_eq!(budget.used(), 100);
        assert!(!a.resize(61), "growing past the budget fails");
        assert_eq!(a.bytes(), 60);
        assert!(a.resize(10));
        assert_eq!(budget.used(), 50);
        drop(b);
        assert!(a.resize(100));
        let part = a.split(30);
        assert_eq!((a.bytes(), part.bytes()), (70, 30));
        drop(a);
        assert_eq!(budget.used(), 30);
        drop(part);
        assert_eq!(budget.used(), 0);
        assert!(budget.charge(usize::MAX).is_none(), "no overflow");
    }

    #[test]
    fn a_page_read_takes_its_bytes_as_they_come_beyond_what_was_prepaid() {
        let budget = ByteBudget::new(100);
        let room = Room::new(&budget, 2, 10);
        assert!(room.take(5), "within the prepaid part");
        assert_eq!(budget.used(), 0);
        assert!(room.take(20), "40 more, 40 beyond");
        assert_eq!(budget.used(), 40);
        assert!(!room.take(40), "80 more do not fit");
        assert!(room.refused());
        assert!(!room.take(1), "refused from then on");
        drop(room);
        assert_eq!(budget.used(), 0);
    }

    #[test]
    fn page_requests_come_in_a_burst_then_at_the_rate() {
        let rate = PageRate::new(3, 10);
        let start = Instant::now();
        let taken = (0..10).filter(|_| rate.take_at(start)).count();
        assert_eq!(taken, 3);
        // 0.25 s later: two and a half more, two whole.
        let later = start + Duration::from_millis(250);
        let taken = (0..10).filter(|_| rate.take_at(later)).count();
        assert_eq!(taken, 2);
        // Long idle: never more than the burst.
        let much_later = later + Duration::from_secs(3600);
        let taken = (0..10).filter(|_| rate.take_at(much_later)).count();
        assert_eq!(taken, 3);
        let still = PageRate::new(1, 0);
        assert!(still.take());
        assert!(!still.take());
        assert!(!still.any_left());
    }
}
