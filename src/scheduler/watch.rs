//! Watch mode: between scheduled polls the session stays open, and each
//! `list_changed` the server sends re-lists that kind. A re-list is not a
//! poll: it goes to the sinks as a `RelistReport`, which updates only the
//! re-listed kinds (no poll duration, `up` from every kind, the failure
//! count kept).

use super::shared::Shared;
use crate::config::TargetConfig;
use crate::poll::{OpenSession, PollReport, RelistReport};
use mcp_listing::Kind;
use std::time::{Duration, Instant, SystemTime};

/// An open session kept between scheduled polls to hear list_changed.
pub struct Watch {
    pub session: OpenSession,
    /// The target's state as last listed: the poll's report, updated by
    /// every re-list.
    pub last: PollReport,
}

impl Watch {
    /// Watch `session`, opened by the poll that made `report`.
    pub fn new(session: OpenSession, report: &PollReport) -> Watch {
        Watch {
            session,
            last: report.clone(),
        }
    }
}

/// Notifications that arrive within this window after the first are
/// handled together: a storm costs one re-list, not one per message.
const WATCH_DEBOUNCE: Duration = Duration::from_millis(300);

/// Until `deadline`, re-list each kind the server says changed. A re-list
/// runs to completion before its result replaces anything, so a partial set
/// is never exposed.
pub async fn watch_until(
    w: &mut Watch,
    deadline: tokio::time::Instant,
    target: &TargetConfig,
    shared: &Shared,
) {
    loop {
        let first = tokio::select! {
            _ = tokio::time::sleep_until(deadline) => return,
            n = w.session.next_notification() => n,
        };
        let Some(first) = first else {
            // The server cannot push notifications (or went away): sleep.
            tokio::time::sleep_until(deadline).await;
            return;
        };
        let mut methods = vec![first];
        let debounce_end = (tokio::time::Instant::now() + WATCH_DEBOUNCE).min(deadline);
        while let Ok(Some(m)) =
            tokio::time::timeout_at(debounce_end, w.session.next_notification()).await
        {
            methods.push(m);
        }
        let changed = changed_kinds(&methods, &target.settings.kinds);
        if changed.is_empty() {
            continue;
        }
        let started = SystemTime::now();
        let t0 = Instant::now();
        let mut listings = Vec::new();
        for (kind, notices) in changed {
            let _permit = shared.acquire().await;
            let mut listing = w.session.relist(kind).await;
            // The change was announced: a smaller set now is not silent,
            // and the notifications are counted with the listing.
            listing.list_changed_notifications += notices;
            listings.push(listing);
        }
        let (relist, state) = RelistReport::new(&w.last, listings, started, t0.elapsed());
        w.last = state;
        shared.sinks.fanout().relist(relist, target);
    }
}

/// Per enabled kind, how many of `methods` announced its change.
fn changed_kinds(methods: &[String], kinds: &[Kind]) -> Vec<(Kind, u32)> {
    let mut changed: Vec<(Kind, u32)> = Vec::new();
    for m in methods {
        for &kind in kinds {
            if kind.list_changed_method() == m {
                match changed.iter_mut().find(|(k, _)| *k == kind) {
                    Some((_, n)) => *n += 1,
                    None => changed.push((kind, 1)),
                }
            }
        }
    }
    changed
}
