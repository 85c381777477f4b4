//! From what a tap's observer keeps (its per-client tallies and known
//! catalogues) and the recent misuse beside it, to each client's verdict and
//! the views people read.

use super::client_views::{
    CatalogueView, ClientKindView, ClientVerdictView, ClientView, ListingView, MergeView,
};
use super::recent_misuse::Recent;
use crate::verdict::client::{
    judge_client, Abandoned, ClientInput, ClientKindInput, ClientVerdict, ForeignCursors, Missed,
    Outcomes,
};
use mcp_listing::Kind;
use mcp_observer::{
    CatalogueInfo, ClientRoute, ClientTally, KindTally, LastListing, ListingOutcome, MissedItems,
    OutcomeCounts,
};
use mcp_tap::{MergeCount, MergeOutcome, TapStats};
use std::collections::BTreeMap;
use std::time::{Instant, SystemTime, UNIX_EPOCH};

/// One moment as the monotonic clock and as Unix time, to show the
/// observer's instants as dates.
#[derive(Debug, Clone, Copy)]
pub struct Clock {
    pub now: Instant,
    unix: f64,
}

impl Clock {
    pub fn now() -> Clock {
        let unix = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0.0, |d| d.as_secs_f64());
        Clock {
            now: Instant::now(),
            unix,
        }
    }

    pub fn unix(&self, at: Instant) -> f64 {
        match self.now.checked_duration_since(at) {
            Some(ago) => self.unix - ago.as_secs_f64(),
            None => self.unix + at.duration_since(self.now).as_secs_f64(),
        }
    }

    /// `at` as wall-clock time.
    pub fn system(&self, at: Instant) -> SystemTime {
        UNIX_EPOCH + std::time::Duration::from_secs_f64(self.unix(at).max(0.0))
    }

    pub fn unix_now(&self) -> f64 {
        self.unix
    }
}

/// One client's verdict and view on one route (its `since` filled in by
/// the caller, who knows when its level last changed). The sentence names
/// the route wherever series carry it as a label.
pub fn client(
    id: &ClientRoute,
    tally: &ClientTally,
    recent: &Recent,
    clock: &Clock,
) -> (ClientVerdict, ClientView) {
    let listed: Vec<Kind> = Kind::ALL
        .into_iter()
        .filter(|&k| has_activity(tally.kind(k)) || recent.of(id, k) != Default::default())
        .collect();
    let inputs: Vec<ClientKindInput> = listed
        .iter()
        .map(|&k| kind_input(k, tally.kind(k), recent, id))
        .collect();
    let version = tally.versions.last().map(|v| v.as_ref());
    let verdict = judge_client(&ClientInput {
        name: id.client.label(),
        version,
        route: id.route.label(),
        kinds: inputs,
    });
    let kinds = listed
        .iter()
        .zip(&verdict.kinds)
        .map(|(&k, (_, v))| {
            let last_merge = recent.of(id, k).last_merge.map(merge_view);
            (
                k.label(),
                kind_view(tally.kind(k), v.clone(), last_merge, clock),
            )
        })
        .collect();
    let view = ClientView {
        client: id.client.label().to_string(),
        route: id.route.name().to_string(),
        versions: tally.versions.iter().map(|v| v.to_string()).collect(),
        first_seen_unix_seconds: clock.unix(tally.first_seen),
        last_seen_unix_seconds: clock.unix(tally.last_seen),
        verdict: ClientVerdictView {
            verdict: verdict.overall.clone(),
            since_unix_seconds: clock.unix_now(),
        },
        kinds,
    };
    (verdict, view)
}

fn has_activity(k: &KindTally) -> bool {
    k.since_start.total() > 0 || k.pages > 0
}

fn kind_input(kind: Kind, k: &KindTally, recent: &Recent, id: &ClientRoute) -> ClientKindInput {
    let outcomes = outcomes(k.recent());
    let misuse = recent.of(id, kind);
    ClientKindInput {
        recent: outcomes,
        invalid_cursors: misuse.invalid_cursors,
        foreign_cursors: misuse.foreign,
        last_abandoned: k
            .last_abandoned
            .as_ref()
            .filter(|_| outcomes.abandoned > 0)
            .map(abandoned_input),
        last_error_code: misuse.last_error_code,
        ..ClientKindInput::new(kind)
    }
}

fn abandoned_input(last: &LastListing) -> Abandoned {
    Abandoned {
        pages_read: last.pages,
        items_received: last.items,
        missed: last.missed.as_ref().map(missed_view),
    }
}

fn merge_view(outcome: MergeOutcome) -> MergeView {
    MergeView {
        outcome: outcome.label(),
        fallback: match outcome {
            MergeOutcome::FirstPage(why) => Some(why.label()),
            MergeOutcome::Merged | MergeOutcome::Reused => None,
        },
    }
}

fn kind_view(
    k: &KindTally,
    verdict: crate::verdict::Verdict,
    last_merge: Option<MergeView>,
    clock: &Clock,
) -> ClientKindView {
    ClientKindView {
        verdict,
        recent: outcomes(k.recent()),
        since_start: outcomes(k.since_start),
        pages: k.pages,
        invalid_cursors: k.invalid_cursor,
        foreign_cursors: ForeignCursors {
            other_session: k.foreign_cursor[mcp_observer::CursorOrigin::OtherSession as usize],
            unknown: k.foreign_cursor[mcp_observer::CursorOrigin::Unknown as usize],
        },
        items_missed: k.items_missed,
        last_abandoned: k.last_abandoned.as_ref().map(|l| listing_view(l, clock)),
        last_complete: k.last_complete.as_ref().map(|l| listing_view(l, clock)),
        last_merge,
    }
}

fn outcomes(c: OutcomeCounts) -> Outcomes {
    Outcomes {
        complete: c.get(ListingOutcome::Complete),
        abandoned: c.get(ListingOutcome::Abandoned),
        restarted: c.get(ListingOutcome::Restarted),
        failed: c.get(ListingOutcome::Failed),
    }
}

fn listing_view(l: &LastListing, clock: &Clock) -> ListingView {
    ListingView {
        pages: l.pages,
        items: l.items,
        version: l.version.as_ref().map(|v| v.to_string()),
        merged: l.merged,
        missed: l.missed.as_ref().map(missed_view),
        ended_unix_seconds: clock.unix(l.ended),
    }
}

/// What a listing missed, as the API and the report file show it.
pub fn missed_view(m: &MissedItems) -> Missed {
    Missed {
        count: m.count,
        catalogue_items: m.catalogue_items,
        catalogue_pages: m.catalogue_pages,
        names: m.names.iter().map(|n| n.to_string()).collect(),
        last: m.last.as_ref().map(|n| n.to_string()),
    }
}

/// The catalogues a tap knows of one route, by kind label.
pub fn catalogues(
    known: impl Fn(Kind) -> Option<CatalogueInfo>,
    clock: &Clock,
) -> BTreeMap<&'static str, CatalogueView> {
    Kind::ALL
        .into_iter()
        .filter_map(|k| Some((k.label(), catalogue_view(&known(k)?, clock))))
        .collect()
}

pub fn catalogue_view(info: &CatalogueInfo, clock: &Clock) -> CatalogueView {
    CatalogueView {
        items: info.items,
        pages: info.pages,
        source: info.source.label(),
        learned_unix_seconds: clock.unix(info.learned),
    }
}

/// The tap's merges by what it did, those that happened.
pub fn merges(stats: &TapStats) -> BTreeMap<&'static str, u64> {
    MergeCount::ALL
        .into_iter()
        .map(|m| (m.label(), stats.merges(m)))
        .filter(|(_, n)| *n > 0)
        .collect()
}
