//! What the observer's tallies count since the start but a verdict wants
//! recent: each client's cursor misuse (-32602 answers, foreign cursors)
//! within the verdict's event window, the error code of its last failed
//! listing, and what the tap did with its last listing it was to merge. Bounded: at most [`KEPT_PER_KIND`] events per client and kind,
//! and only for the client labels the observer hands out (at most
//! `max_clients` plus `other`).

use crate::verdict::client::ForeignCursors;
use mcp_listing::Kind;
use mcp_observer::{ClientId, ClientRoute, CursorOrigin, Fact, ListingOutcome, RouteId};
use mcp_tap::MergeOutcome;
use std::collections::{HashMap, VecDeque};
use std::time::{Duration, Instant};

/// Misuse events kept per client and kind; more within the window are
/// counted as this many (the verdict says "at least").
pub const KEPT_PER_KIND: usize = 64;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Misuse {
    InvalidCursor,
    Foreign(CursorOrigin),
}

#[derive(Debug, Default)]
struct KindRecent {
    misuse: VecDeque<(Instant, Misuse)>,
    last_error_code: Option<i64>,
    last_merge: Option<MergeOutcome>,
}

/// Recent misuse counts of one client and kind.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RecentMisuse {
    pub invalid_cursors: u32,
    pub foreign: ForeignCursors,
    pub last_error_code: Option<i64>,
    /// What the tap did with its last listing it was asked to merge.
    pub last_merge: Option<MergeOutcome>,
}

fn pair(client: &ClientId, route: &RouteId) -> ClientRoute {
    ClientRoute {
        client: client.clone(),
        route: route.clone(),
    }
}

/// Every client's recent misuse on one tap.
#[derive(Debug)]
pub struct Recent {
    window: Duration,
    kinds: HashMap<(ClientRoute, Kind), KindRecent>,
}

impl Recent {
    pub fn new(window: Duration) -> Recent {
        Recent {
            window,
            kinds: HashMap::new(),
        }
    }

    pub fn fact(&mut self, fact: &Fact) {
        match fact {
            Fact::InvalidCursor(c) => {
                let key = pair(&c.client, &c.route);
                self.push(key, c.kind, c.at, Misuse::InvalidCursor);
            }
            Fact::ForeignCursor { cursor, origin } => {
                let misuse = Misuse::Foreign(*origin);
                let key = pair(&cursor.client, &cursor.route);
                self.push(key, cursor.kind, cursor.at, misuse);
            }
            Fact::Listing(l) => {
                if l.outcome != ListingOutcome::Failed && l.merged.is_none() {
                    return;
                }
                let key = (pair(&l.client, &l.route), l.kind);
                let entry = self.kinds.entry(key).or_default();
                entry.last_error_code = l.error_code().or(entry.last_error_code);
                entry.last_merge = l.merged.or(entry.last_merge);
            }
            Fact::ClientGone(client) => self.kinds.retain(|(key, _), _| key.client != *client),
            _ => {}
        }
    }

    fn push(&mut self, key: ClientRoute, kind: Kind, at: Instant, misuse: Misuse) {
        let entry = self.kinds.entry((key, kind)).or_default();
        if entry.misuse.len() >= KEPT_PER_KIND {
            entry.misuse.pop_front();
        }
        entry.misuse.push_back((at, misuse));
    }

    /// Forget what left the window.
    pub fn prune(&mut self, now: Instant) {
        let window = self.window;
        for entry in self.kinds.values_mut() {
            while entry
                .misuse
                .front()
                .is_some_and(|(at, _)| now.saturating_duration_since(*at) > window)
            {
                entry.misuse.pop_front();
            }
        }
        self.kinds.retain(|_, e| {
            !e.misuse.is_empty() || e.last_error_code.is_some() || e.last_merge.is_some()
        });
    }

    /// The counts within the window (as of the last [`Recent::prune`]).
    pub fn of(&self, key: &ClientRoute, kind: Kind) -> RecentMisuse {
        let Some(entry) = self.kinds.get(&(key.clone(), kind)) else {
            return RecentMisuse::default();
        };
        let mut out = RecentMisuse {
            last_error_code: entry.last_error_code,
            last_merge: entry.last_merge,
            ..RecentMisuse::default()
        };
        for (_, misuse) in &entry.misuse {
            match misuse {
                Misuse::InvalidCursor => out.invalid_cursors += 1,
                Misuse::Foreign(CursorOrigin::OtherSession) => out.foreign.other_session += 1,
                Misuse::Foreign(CursorOrigin::Unknown) => out.foreign.unknown += 1,
            }
        }
        out
    }
}
