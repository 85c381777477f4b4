//! Watching one scenario: the tap's copies go, through the application's
//! bounded queue, to the tap's own observer (the one vocabulary: complete,
//! abandoned, restarted, failed, foreign cursor) and to the recorder (the
//! detail a grade needs). A task drains the queue and publishes progress,
//! which the harness reads to stop a flood.

use super::record::{Record, Recorder};
use super::scenarios::Setup;
use crate::tap::queue::QueueReceiver;
use mcp_listing::Kind;
use mcp_observer::{ClientListing, Fact, Observer, ObserverLimits};
use mcp_tap::TapEvent;
use std::time::{Duration, Instant};
use tokio::sync::{mpsc, oneshot, watch};

/// Quiet after a listing ended before a serving mode grades: a restart or
/// a second listing may follow.
pub const SETTLE: Duration = Duration::from_secs(2);

/// Resolves once a client listing has ended and nothing has happened for
/// [`SETTLE`]; `false` when the watch is gone.
pub async fn settled(progress: &mut watch::Receiver<Progress>) -> bool {
    loop {
        let ended = progress.borrow_and_update().listings_ended > 0;
        tokio::select! {
            changed = progress.changed() => {
                if changed.is_err() {
                    return false;
                }
            }
            () = tokio::time::sleep(SETTLE), if ended => return true,
        }
    }
}

/// Finished client listings kept per scenario.
const MAX_LISTINGS: usize = 256;

/// What was seen of one scenario.
#[derive(Debug, Clone, Default)]
pub struct Observation {
    pub record: Record,
    /// The observer's finished listings, in order (at most 256).
    pub listings: Vec<ClientListing>,
    /// Cursors sent that the session was never handed.
    pub foreign_cursors: u32,
    /// Messages neither side could read (too large, cut, not JSON-RPC).
    pub not_observed: u64,
    /// stdio: server launches refused past the bound.
    pub launches_refused: u32,
}

/// How far a scenario has got, for the harness to act on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Progress {
    pub list_requests: u64,
    /// `initialize` requests: sessions opened.
    pub sessions: u32,
    /// Client listings the observer saw end.
    pub listings_ended: usize,
    pub any_request: bool,
}

/// The observer and the recorder of one scenario.
pub struct Watch {
    observer: Observer,
    recorder: Recorder,
    facts: Vec<Fact>,
    seen: Observation,
    abandon_after: Duration,
}

impl Watch {
    /// `setup`'s catalogue is the observer's reference for every kind, so
    /// a listing that stops early names what it missed.
    pub fn new(
        setup: &Setup,
        kinds: &[Kind],
        max_requests: usize,
        abandon_after: Duration,
    ) -> Watch {
        let mut observer = Observer::new(ObserverLimits {
            abandon_after,
            max_sessions: 256,
            max_exchanges: 1024,
            max_pending: 1024,
            max_tracked_bytes: 4 << 20,
            ..ObserverLimits::default()
        });
        let now = Instant::now();
        // One server per scenario: its listings are the tap's own route's.
        let route = observer.default_route().clone();
        let mut facts = Vec::new();
        for &kind in kinds {
            observer.set_reference(&route, kind, setup.catalogue(kind), None, now, &mut facts);
        }
        Watch {
            observer,
            recorder: Recorder::new(max_requests),
            facts,
            seen: Observation::default(),
            abandon_after,
        }
    }

    pub fn take(&mut self, event: TapEvent) {
        self.recorder.take(&event);
        self.observer.observe(event, &mut self.facts);
        self.settle();
    }

    pub fn tick(&mut self, now: Instant) {
        self.observer.tick(now, &mut self.facts);
        self.settle();
    }

    fn settle(&mut self) {
        for fact in self.facts.drain(..) {
            match fact {
                Fact::Listing(listing) if self.seen.listings.len() < MAX_LISTINGS => {
                    self.seen.listings.push(*listing);
                }
                Fact::ForeignCursor { .. } => {
                    self.seen.foreign_cursors = self.seen.foreign_cursors.saturating_add(1);
                }
                Fact::NotObserved(_) => self.seen.not_observed += 1,
                _ => {}
            }
        }
    }

    pub fn progress(&self) -> Progress {
        let record = &self.recorder.record;
        Progress {
            list_requests: record.list_requests,
            sessions: record.negotiation.initializes,
            listings_ended: self.seen.listings.len(),
            any_request: record.first_request.is_some(),
        }
    }

    /// Everything seen; listings still open end as abandoned.
    pub fn finish(mut self) -> Observation {
        let later = Instant::now() + self.abandon_after + Duration::from_secs(1);
        self.tick(later);
        let mut seen = self.seen;
        seen.record = self.recorder.record;
        seen
    }
}

/// The task that drains one scenario's queue into its [`Watch`].
pub struct WatchTask {
    finish: oneshot::Sender<()>,
    asks: mpsc::Sender<oneshot::Sender<Record>>,
    task: tokio::task::JoinHandle<Watch>,
    pub progress: watch::Receiver<Progress>,
}

impl WatchTask {
    pub fn spawn(mut receiver: QueueReceiver, mut watch: Watch) -> WatchTask {
        let (finish, mut finished) = oneshot::channel::<()>();
        let (asks, mut asked) = mpsc::channel::<oneshot::Sender<Record>>(4);
        let (publish, progress) = watch::channel(Progress::default());
        let task = tokio::spawn(async move {
            let mut tick = tokio::time::interval(Duration::from_millis(500));
            loop {
                tokio::select! {
                    event = receiver.recv() => match event {
                        Some(event) => watch.take(event),
                        None => break,
                    },
                    _ = &mut finished => break,
                    _ = tick.tick() => watch.tick(Instant::now()),
                    Some(reply) = asked.recv() => {
                        let _ = reply.send(watch.recorder.record.clone());
                    }
                }
                let now = watch.progress();
                publish.send_if_modified(|p| std::mem::replace(p, now) != now);
            }
            // What the data path offered before the end is still ours.
            while let Some(event) = receiver.try_recv() {
                watch.take(event);
            }
            watch
        });
        WatchTask {
            finish,
            asks,
            task,
            progress,
        }
    }

    /// The record so far (serving mode grades as it goes).
    pub async fn record_now(&self) -> Option<Record> {
        let (reply, answer) = oneshot::channel();
        self.asks.send(reply).await.ok()?;
        answer.await.ok()
    }

    /// Stop watching: the watch with everything queued so far.
    pub async fn stop(self) -> Option<Watch> {
        let _ = self.finish.send(());
        self.task.await.ok()
    }
}
