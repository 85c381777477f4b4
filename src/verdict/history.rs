//! What the status page keeps per target to answer "what happened to this
//! catalogue": unique items per kind over time, the change log with names,
//! recent failures kept apart from recent polls, and the current verdict
//! with the time its level began. Every list is bounded (docs/status.md).

use super::conformance::ConformanceResult;
use super::judge::judge;
use super::types::{
    Change, Health, KindInput, NameChanges, ReferenceGap, TargetInput, TargetVerdict,
};
use mcp_listing::report::SessionFailure;
use mcp_listing::{EndReason, Kind, ListingReport, Outcome};
use serde::Serialize;
use std::collections::{BTreeMap, VecDeque};
use std::time::Duration;

/// Points per kind on the chart (a day at one poll every 4 minutes, when
/// every poll differs: a run of equal listings keeps two points).
pub const MAX_POINTS: usize = 360;
/// Entries in the change log, all kinds together.
pub const MAX_CHANGES: usize = 100;
/// Names kept per change entry and direction (added / removed).
pub const MAX_NAMES_PER_CHANGE: usize = 200;
/// Bytes of names kept per change entry and direction: names of up to 256
/// bytes (`mcp_listing::text::MAX_NAME_BYTES`) fill it before the count
/// does, so 100 entries of a server churning long names stay under 1.6 MiB.
pub const MAX_NAME_BYTES_PER_CHANGE: usize = 8 * 1024;
/// Failures kept, all kinds together; polls do not push them out.
pub const MAX_FAILURES: usize = 50;

/// One complete listing on the chart.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Point {
    pub at_unix_seconds: f64,
    /// u32 (saturating) keeps a point at 16 bytes: a fleet holds
    /// targets × kinds × MAX_POINTS of them.
    pub unique_items: u32,
    /// What changed against the previous complete listing, if anything.
    pub mark: Option<Mark>,
    /// The server sent `list_changed` for this kind during the listing.
    pub list_changed: bool,
}

impl Point {
    /// `next` only extends this point's level: the same count, and neither
    /// marked nor announced.
    fn continues(&self, next: &Point) -> bool {
        let plain = |p: &Point| p.mark.is_none() && !p.list_changed;
        plain(self) && plain(next) && self.unique_items == next.unique_items
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Mark {
    /// Fewer items, no notice.
    SilentShrink,
    /// Fewer items, announced.
    Shrink,
    Growth,
    /// Same count, other names.
    Churn,
}

/// A listing (or the session) that did not complete.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Failure {
    pub at_unix_seconds: f64,
    /// `None` when the session failed (every kind).
    pub kind: Option<Kind>,
    /// `aborted`, `error`, or `session`.
    pub outcome: &'static str,
    /// The guard or error.
    pub reason: Option<EndReason>,
    pub detail: Option<String>,
    /// Index (0-based) of the page where it happened; `None` before the
    /// first page.
    pub page_index: Option<u32>,
}

/// One kind of one poll, as the sinks hand it over: what its verdict
/// depends on, and what the history keeps besides.
#[derive(Debug, Clone)]
pub struct KindObservation<'a> {
    pub input: KindInput<'a>,
    /// This poll's change against the previous complete listing, when
    /// there was a previous one and anything changed.
    pub change: Option<Change>,
}

/// One poll of one target, as the sinks hand it over.
#[derive(Debug, Clone)]
pub struct Observation<'a> {
    pub at_unix_seconds: f64,
    pub session_error: Option<SessionFailure>,
    pub kinds: Vec<KindObservation<'a>>,
}

/// Per target: chart points, change log, failures, verdict.
#[derive(Debug, Clone, Default, Serialize)]
pub struct CatalogueHistory {
    /// Oldest first.
    pub points: BTreeMap<Kind, VecDeque<Point>>,
    /// Newest first.
    pub changes: VecDeque<Change>,
    /// Newest first.
    pub failures: VecDeque<Failure>,
    /// The latest reference comparison per kind (gateway vs origin).
    pub reference: BTreeMap<Kind, Vec<ReferenceGap>>,
    pub verdict: Option<TargetVerdict>,
    /// When the target's current level began (first poll with it).
    pub level_since_unix_seconds: Option<f64>,
    /// The latest serve-mode conformance run; judged with every poll until
    /// the next run replaces it.
    pub conformance: Option<ConformanceResult>,
}

impl CatalogueHistory {
    /// Record one poll and judge it. The change log (with this poll's
    /// changes) is the verdict's event input. `partial`: a watch re-list of
    /// some kinds; the other kinds keep their verdicts.
    pub fn observe(
        &mut self,
        obs: &Observation<'_>,
        event_window: Duration,
        partial: bool,
    ) -> &TargetVerdict {
        let at = obs.at_unix_seconds;
        if let Some(e) = &obs.session_error {
            self.push_failure(Failure {
                at_unix_seconds: at,
                kind: None,
                outcome: "session",
                reason: Some(EndReason::Error(e.error)),
                detail: Some(e.to_string()),
                page_index: None,
            });
        }
        for k in &obs.kinds {
            self.record_kind(k, at, obs.session_error.is_some());
        }
        self.changes.truncate(MAX_CHANGES);
        let verdict = self.judge_poll(obs, event_window);
        let verdict = match (&self.verdict, partial) {
            (Some(before), true) => before.updated_with(verdict),
            _ => verdict,
        };
        let previous: Option<Health> = self.verdict.as_ref().map(|v| v.overall.level);
        if previous != Some(verdict.overall.level) {
            self.level_since_unix_seconds = Some(at);
        }
        self.verdict.insert(verdict)
    }

    /// One kind of a poll: a complete listing's chart point and reference
    /// gaps, a failed one's failure (unless the session failed, which is
    /// kept once for the poll), its change.
    fn record_kind(&mut self, k: &KindObservation<'_>, at: f64, session_failed: bool) {
        let l = k.input.listing;
        match l.outcome {
            Outcome::Complete => self.push_point(l, k.change.as_ref(), at),
            Outcome::Unsupported => {}
            Outcome::Aborted(_) | Outcome::Error(_) if !session_failed => {
                self.push_failure(Failure {
                    at_unix_seconds: at,
                    kind: Some(l.kind),
                    outcome: l.outcome.label(),
                    reason: l.reason,
                    detail: l.detail.clone(),
                    page_index: failure_page(l),
                })
            }
            Outcome::Aborted(_) | Outcome::Error(_) => {}
        }
        if let Some(c) = &k.change {
            self.changes.push_front(c.clone());
        }
        if l.outcome == Outcome::Complete {
            self.set_reference_gaps(l.kind, &k.input.reference_gaps);
        }
    }

    /// The gaps of a complete listing against its references, each list of
    /// names capped; none drops the kind's entry.
    fn set_reference_gaps(&mut self, kind: Kind, gaps: &[ReferenceGap]) {
        if gaps.is_empty() {
            self.reference.remove(&kind);
            return;
        }
        let capped = gaps
            .iter()
            .map(|g| ReferenceGap {
                missing: g
                    .missing
                    .iter()
                    .take(MAX_NAMES_PER_CHANGE)
                    .cloned()
                    .collect(),
                ..g.clone()
            })
            .collect();
        self.reference.insert(kind, capped);
    }

    /// The verdict of this poll's kinds, with the kept change log and
    /// conformance result.
    fn judge_poll(&self, obs: &Observation<'_>, event_window: Duration) -> TargetVerdict {
        let changes: Vec<Change> = self.changes.iter().cloned().collect();
        judge(&TargetInput {
            session_error: obs.session_error.clone(),
            kinds: obs.kinds.iter().map(|k| k.input.clone()).collect(),
            changes: &changes,
            now_unix_seconds: obs.at_unix_seconds,
            event_window,
            conformance: self.conformance.as_ref(),
        })
    }

    /// Keep a conformance run's result (`None`: forget it) and re-judge the
    /// current verdict with it at once, rather than at the next poll.
    /// Returns the new verdict, if the target has one yet.
    pub fn set_conformance(
        &mut self,
        result: Option<ConformanceResult>,
        now_unix_seconds: f64,
    ) -> Option<TargetVerdict> {
        self.conformance = result;
        let before = self.verdict.as_ref()?;
        let after = before.with_conformance(self.conformance.as_ref(), now_unix_seconds);
        if after.overall.level != before.overall.level {
            self.level_since_unix_seconds = Some(now_unix_seconds);
        }
        Some(self.verdict.insert(after).clone())
    }

    fn push_point(&mut self, l: &ListingReport, change: Option<&Change>, at: f64) {
        let mark = change.map(|c| {
            if c.silent_shrink {
                Mark::SilentShrink
            } else if c.to < c.from {
                Mark::Shrink
            } else if c.to > c.from {
                Mark::Growth
            } else {
                Mark::Churn
            }
        });
        let point = Point {
            at_unix_seconds: at,
            unique_items: u32::try_from(l.unique_items).unwrap_or(u32::MAX),
            mark,
            list_changed: l.list_changed_notifications > 0,
        };
        let points = self.points.entry(l.kind).or_default();
        // A run of equal listings (same count, nothing marked or announced)
        // keeps only its first and last point: the chart draws the same
        // line, and a stable catalogue holds two points per kind rather
        // than MAX_POINTS.
        if let [.., before, last] = points.make_contiguous() {
            if last.continues(&point) && before.unique_items == point.unique_items {
                last.at_unix_seconds = at;
                return;
            }
        }
        while points.len() >= MAX_POINTS {
            points.pop_front();
        }
        // Grown by doubling but never past MAX_POINTS (a plain doubling
        // deque would overshoot to 512).
        if points.len() == points.capacity() {
            let more = points.len().max(2).min(MAX_POINTS - points.len());
            points.reserve_exact(more);
        }
        points.push_back(point);
    }

    fn push_failure(&mut self, f: Failure) {
        self.failures.push_front(f);
        self.failures.truncate(MAX_FAILURES);
    }
}

fn failure_page(l: &ListingReport) -> Option<u32> {
    l.pages
        .iter()
        .rev()
        .find(|p| p.error.is_some())
        .or(l.pages.last())
        .map(|p| p.index)
}

impl Change {
    /// A change entry from a baseline diff; `None` when nothing changed.
    /// Name lists are capped at [`MAX_NAMES_PER_CHANGE`]; totals are not.
    #[allow(clippy::too_many_arguments)]
    pub fn from_diff(
        kind: Kind,
        at_unix_seconds: f64,
        previous_items: u64,
        current_items: u64,
        added: &[String],
        removed: &[String],
        announced: bool,
        silent_shrink: bool,
    ) -> Option<Change> {
        if added.is_empty() && removed.is_empty() && previous_items == current_items {
            return None;
        }
        Some(Change {
            kind,
            at_unix_seconds,
            from: previous_items,
            to: current_items,
            names: NameChanges::capped(added, removed),
            announced,
            silent_shrink,
        })
    }
}

impl NameChanges {
    /// The first names of each list ([`capped_names`]) and every one counted.
    pub fn capped(added: &[String], removed: &[String]) -> NameChanges {
        NameChanges {
            added: capped_names(added),
            removed: capped_names(removed),
            added_total: added.len() as u64,
            removed_total: removed.len() as u64,
        }
    }
}

/// The first names of `names` within [`MAX_NAMES_PER_CHANGE`] and
/// [`MAX_NAME_BYTES_PER_CHANGE`]: what a change entry (or a poll's summary)
/// keeps of the names added or removed.
pub fn capped_names(names: &[String]) -> Vec<String> {
    let mut bytes = 0;
    names
        .iter()
        .take(MAX_NAMES_PER_CHANGE)
        .take_while(|n| {
            bytes += n.len();
            bytes <= MAX_NAME_BYTES_PER_CHANGE
        })
        .cloned()
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::verdict::{Code, DEFAULT_EVENT_WINDOW};

    #[test]
    fn change_names_are_bounded_in_bytes_as_well_as_count() {
        let long: Vec<String> = (0..200)
            .map(|i| format!("{i:03}{}", "n".repeat(253)))
            .collect();
        let c = Change::from_diff(Kind::Tools, 0.0, 200, 200, &long, &long, false, false)
            .expect("a change");
        let kept: usize = c.names.added.iter().map(String::len).sum();
        assert!(kept <= MAX_NAME_BYTES_PER_CHANGE, "{kept}");
        assert_eq!(c.names.added.len(), MAX_NAME_BYTES_PER_CHANGE / 256);
        assert_eq!(c.names.added_total, 200);
        let short: Vec<String> = (0..300).map(|i| format!("t{i}")).collect();
        let c = Change::from_diff(Kind::Tools, 0.0, 0, 300, &short, &[], false, false)
            .expect("a change");
        assert_eq!(c.names.added.len(), MAX_NAMES_PER_CHANGE);
    }
    use mcp_listing::ErrorKind;

    fn complete(n: u64) -> ListingReport {
        let mut l = ListingReport::empty(Kind::Tools, Outcome::Complete);
        l.unique_items = n;
        l
    }

    fn obs(at: f64, l: &ListingReport, change: Option<Change>) -> Observation<'_> {
        Observation {
            at_unix_seconds: at,
            session_error: None,
            kinds: vec![KindObservation {
                input: KindInput {
                    listing: l,
                    expected_min: None,
                    reference_gaps: Vec::new(),
                    garbage_cursor: None,
                    protocol_gaps: Vec::new(),
                    empty_is_suspect: false,
                    page_latency: None,
                },
                change,
            }],
        }
    }

    fn strings(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn a_silent_shrink_is_logged_charted_and_degrades_until_the_window_passes() {
        let mut h = CatalogueHistory::default();
        let l20 = complete(20);
        let l19 = complete(19);
        assert_eq!(
            h.observe(&obs(1000.0, &l20, None), DEFAULT_EVENT_WINDOW, false)
                .overall
                .level,
            Health::Healthy
        );
        let change = Change::from_diff(
            Kind::Tools,
            1060.0,
            20,
            19,
            &[],
            &strings(&["tool-19"]),
            false,
            true,
        );
        let v = h.observe(&obs(1060.0, &l19, change), DEFAULT_EVENT_WINDOW, false);
        assert_eq!(v.overall.level, Health::Degraded);
        assert_eq!(v.overall.reasons[0].code, Code::SilentShrink);
        assert_eq!(h.level_since_unix_seconds, Some(1060.0));
        // Later polls without changes: still degraded within the hour...
        let v = h.observe(&obs(2000.0, &l19, None), DEFAULT_EVENT_WINDOW, false);
        assert_eq!(v.overall.level, Health::Degraded);
        assert_eq!(h.level_since_unix_seconds, Some(1060.0));
        // ...healthy after it, and the change log still names the item.
        let v = h.observe(
            &obs(1060.0 + 3601.0, &l19, None),
            DEFAULT_EVENT_WINDOW,
            false,
        );
        assert_eq!(v.overall.level, Health::Healthy);
        assert_eq!(h.changes.len(), 1);
        assert_eq!(h.changes[0].names.removed, strings(&["tool-19"]));
        // 20, the marked 19, and one point for the run of plain 19s that
        // ends at the latest poll.
        let pts = &h.points[&Kind::Tools];
        assert_eq!(pts.len(), 3);
        assert_eq!(pts[1].mark, Some(Mark::SilentShrink));
        assert_eq!(pts[1].unique_items, 19);
        assert_eq!(pts[2].unique_items, 19);
        assert_eq!(pts[2].at_unix_seconds, 1060.0 + 3601.0);
    }

    #[test]
    fn failures_are_kept_apart_and_bounded_and_polls_do_not_push_them_out() {
        let mut h = CatalogueHistory::default();
        let bad = ListingReport::empty(Kind::Tools, Outcome::Error(ErrorKind::Timeout));
        for i in 0..(MAX_FAILURES + 7) {
            h.observe(&obs(i as f64, &bad, None), DEFAULT_EVENT_WINDOW, false);
        }
        // Every listing a different size: one point each.
        for i in 0..(MAX_POINTS + 5) {
            let good = complete(3 + i as u64 % 2);
            h.observe(
                &obs(1e6 + i as f64, &good, None),
                DEFAULT_EVENT_WINDOW,
                false,
            );
        }
        assert_eq!(h.failures.len(), MAX_FAILURES);
        assert_eq!(
            h.failures[0].reason,
            Some(EndReason::Error(ErrorKind::Timeout))
        );
        assert_eq!(h.points[&Kind::Tools].len(), MAX_POINTS);
        // Allocated once, never regrown past the bound.
        assert_eq!(h.points[&Kind::Tools].capacity(), MAX_POINTS);
    }

    #[test]
    fn a_stable_catalogue_keeps_two_points_per_kind() {
        let mut h = CatalogueHistory::default();
        let l = complete(20);
        for i in 0..1000 {
            h.observe(&obs(i as f64, &l, None), DEFAULT_EVENT_WINDOW, false);
        }
        let pts = &h.points[&Kind::Tools];
        assert_eq!(pts.len(), 2);
        assert_eq!(
            (pts[0].at_unix_seconds, pts[1].at_unix_seconds),
            (0.0, 999.0)
        );
        assert!(pts.capacity() <= 4);
    }

    #[test]
    fn a_chart_point_stays_small() {
        // targets × kinds × MAX_POINTS of these live in memory.
        assert_eq!(std::mem::size_of::<Point>(), 16);
    }

    #[test]
    fn change_entries_cap_names_but_keep_totals() {
        let removed: Vec<String> = (0..250).map(|i| format!("t{i}")).collect();
        let c = Change::from_diff(Kind::Tools, 0.0, 300, 50, &[], &removed, true, false).unwrap();
        assert_eq!(c.names.removed.len(), MAX_NAMES_PER_CHANGE);
        assert_eq!(c.names.removed_total, 250);
        assert!(Change::from_diff(Kind::Tools, 0.0, 5, 5, &[], &[], false, false).is_none());
    }

    #[test]
    fn a_session_failure_is_one_failure_entry() {
        let mut h = CatalogueHistory::default();
        let l = ListingReport::empty(Kind::Tools, Outcome::Error(ErrorKind::TransportError));
        let mut o = obs(5.0, &l, None);
        o.session_error = Some(SessionFailure {
            error: ErrorKind::TransportError,
            detail: "connection refused".into(),
            http_status: None,
        });
        let v = h.observe(&o, DEFAULT_EVENT_WINDOW, false);
        assert_eq!(v.overall.level, Health::Down);
        assert_eq!(h.failures.len(), 1);
        assert_eq!(h.failures[0].kind, None);
        assert_eq!(
            h.failures[0].reason,
            Some(EndReason::Error(ErrorKind::TransportError))
        );
        assert_eq!(
            h.failures[0].detail.as_deref(),
            Some("transport_error: connection refused")
        );
    }
}
