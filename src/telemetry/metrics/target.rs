//! Per-target families: what each poll of each MCP server looked like.

use super::families::{inc_when_seen, set_when_seen, HistFamily, Source};
use super::group::churn::ChurnFamilies;
use super::group::compliance::ComplianceFamilies;
use super::group::detail::DetailFamilies;
use super::group::listing::{outcome_labels, ListingFamilies};
use super::group::page::PageFamilies;
use super::group::poll::PollFamilies;
use super::group::protocols::ProtocolFamilies;
use super::labels::{
    truncate_label, ErrorLabels, GarbageCursorLabels, GuardLabels, KindLabels, ReferenceLabels,
    RestartLabels, ServerInfoLabels, TargetKindLabels, TargetLabels, TraceLabel,
};
use crate::baseline::PolledTarget;
use crate::poll::{unix_seconds, GarbageCursorAnswer, GarbageCursorCheck, PollReport};
use crate::verdict::TargetVerdict;
use mcp_listing::{CursorState, Kind, ListingReport, Outcome, PageRecord};
use prometheus_client::registry::Registry;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::{Mutex, MutexGuard};
use std::time::SystemTime;

/// Every per-target family. Cheap to clone handles live in the registry; this
/// struct keeps the other handle for updates.
///
/// Locking: each update takes one family guard at a time (two
/// `get_or_create` guards held together can deadlock), and `open` serialises
/// updates so that `forget_target` cannot interleave with an `observe` of the
/// same target and leave half its series behind. Encoding never takes `open`.
#[derive(Debug)]
pub struct TargetMetrics {
    poll: PollFamilies,
    listing: ListingFamilies,
    churn: ChurnFamilies,
    compliance: ComplianceFamilies,
    page: PageFamilies,
    detail: DetailFamilies,
    protocols: ProtocolFamilies,
    /// Observe the fleet-wide page histograms (scheduled polling only).
    fleet: bool,
    open: Mutex<OpenLabels>,
}

/// Label sets whose values are not a fixed enum, remembered so that they can
/// be replaced (server info) or dropped (reference, removed target).
#[derive(Debug, Default)]
struct OpenLabels {
    server_info: HashMap<String, ServerInfoLabels>,
    references: BTreeSet<ReferenceLabels>,
    /// Targets with `metrics: {detail: true}`.
    detail: BTreeSet<String>,
}

impl TargetMetrics {
    /// Families for scheduled polling: HELP says values come from the last
    /// scheduled poll.
    pub fn new(registry: &mut Registry) -> Self {
        Self::with_source(registry, Source::Scheduled)
    }

    /// Families for one `/probe` answer (a fresh registry per request): HELP
    /// says values come from this probe.
    pub fn for_probe(registry: &mut Registry) -> Self {
        Self::with_source(registry, Source::Probe)
    }

    /// Each group registers its own families, in this order.
    fn with_source(registry: &mut Registry, source: Source) -> Self {
        TargetMetrics {
            poll: PollFamilies::register(registry, source),
            listing: ListingFamilies::register(registry, source),
            churn: ChurnFamilies::register(registry, source),
            compliance: ComplianceFamilies::register(registry, source),
            page: PageFamilies::register(registry, source),
            detail: DetailFamilies::register(registry, source),
            protocols: ProtocolFamilies::register(registry, source),
            fleet: matches!(source, Source::Scheduled),
            open: Mutex::new(OpenLabels::default()),
        }
    }

    /// Pre-create at 0 the series alerts and `increase()` need from the
    /// first scrape (docs/metrics.md, "Pre-creation"); with `detail`, the
    /// target's histograms too. `kinds` is the target's full set of enabled
    /// kinds: series of kinds not listed are dropped, and detail series
    /// when `detail` is off, so calling this again after a config reload
    /// is correct.
    pub fn register_target(&self, target: &str, kinds: &[Kind], detail: bool) {
        let mut open = self.lock_open();
        self.poll.create_target(target);
        if detail {
            open.detail.insert(target.to_string());
            self.detail.create_target(target);
        } else {
            open.detail.remove(target);
            self.detail.remove_target(target);
        }
        for kind in Kind::ALL {
            if kinds.contains(&kind) {
                self.create_kind(target, kind, detail);
            } else {
                self.remove_kind(target, kind);
            }
        }
    }

    /// Drop every series of a target removed by a config reload, including
    /// other targets' `mcp_reference_missing_items{reference=target}`.
    pub fn forget_target(&self, target: &str) {
        let mut open = self.lock_open();
        self.poll.remove_target(target);
        self.detail.remove_target(target);
        open.detail.remove(target);
        self.protocols.forget_target(target);
        if let Some(info) = open.server_info.remove(target) {
            self.poll.server_info.remove(&info);
        }
        for kind in Kind::ALL {
            self.remove_kind(target, kind);
        }
        let stale: Vec<ReferenceLabels> = open
            .references
            .iter()
            .filter(|r| r.target == target || r.reference == target)
            .cloned()
            .collect();
        for r in stale {
            self.churn.reference_missing.remove(&r);
            open.references.remove(&r);
        }
    }

    /// Record one poll (scheduled or `/probe`). `expect` is the configured
    /// minimum of unique items per kind.
    pub fn observe(&self, polled: &PolledTarget, expect: &BTreeMap<Kind, u64>) {
        let mut open = self.lock_open();
        let report = &polled.report;
        let t = TargetLabels::new(&report.target);
        let exemplar = TraceLabel::from_trace_id(report.trace_id);
        let detail = open.detail.contains(&report.target);
        self.poll
            .up
            .get_or_create(&t)
            .set(i64::from(report.all_complete()));
        self.poll.polls.get_or_create(&t).inc();
        let seconds = report.duration.as_secs_f64();
        self.poll.duration.get_or_create(&t).set(seconds);
        if detail {
            observe(&self.detail.poll_duration, &t, seconds, &exemplar);
        }
        if let Some(ready) = report.time_to_ready {
            let ready = ready.as_secs_f64();
            self.poll.time_to_ready.get_or_create(&t).set(ready);
            if detail {
                observe(&self.detail.time_to_ready, &t, ready, &exemplar);
            }
        }
        self.observe_listings(&mut open, polled, &exemplar);
        self.protocols.observe(report);
        self.set_expected(&report.target, expect);
        for check in &report.garbage_cursor_checks {
            self.set_garbage_cursor_result(&report.target, check);
        }
    }

    /// Record a watch-mode re-list: the re-listed kinds only, and `up`
    /// (every kind's state, given by the caller); no poll duration or time
    /// to ready, which belong to scheduled polls.
    pub fn observe_relist(&self, polled: &PolledTarget, up: bool) {
        let mut open = self.lock_open();
        self.poll
            .up
            .get_or_create(&TargetLabels::new(&polled.report.target))
            .set(i64::from(up));
        self.observe_listings(&mut open, polled, &None);
    }

    /// Server info, listings, churn and references of one report.
    fn observe_listings(
        &self,
        open: &mut OpenLabels,
        polled: &PolledTarget,
        exemplar: &Option<TraceLabel>,
    ) {
        let report = &polled.report;
        let target = report.target.as_str();
        self.set_server_info(open, report);

        let detail = open.detail.contains(target);
        for listing in &report.listings {
            self.observe_listing(report, listing, exemplar, detail);
        }
        for (kind, diff) in &polled.diffs {
            let l = TargetKindLabels::new(target, kind.label());
            self.churn
                .items_added
                .get_or_create(&l)
                .inc_by(diff.added.len() as u64);
            self.churn
                .items_removed
                .get_or_create(&l)
                .inc_by(diff.removed.len() as u64);
            if diff.silent_shrink {
                self.churn.silent_shrinks.get_or_create(&l).inc();
            }
            self.churn
                .items_changed
                .get_or_create(&l)
                .inc_by(diff.changed_items);
        }
        // A complete listing is compared with every configured reference
        // that has a listing; a kind missing from the map then compared with
        // none, so stale references (e.g. removed from the configuration)
        // are dropped. Incomplete listings leave the last comparison.
        let none = BTreeMap::new();
        for listing in &report.listings {
            if listing.outcome.is_complete() {
                let by_reference = polled.reference_missing.get(&listing.kind).unwrap_or(&none);
                self.set_reference_missing(open, target, listing.kind, by_reference);
            }
        }
    }

    /// `mcp_verdict` per judged kind. Not pre-created: a kind not judged
    /// yet has no verdict (0 would claim healthy).
    pub fn set_verdict(&self, target: &str, verdict: &TargetVerdict) {
        let _open = self.lock_open();
        for (kind, v) in &verdict.kinds {
            self.listing
                .verdict
                .get_or_create(&TargetKindLabels::new(target, kind.label()))
                .set(v.level.gauge_value());
        }
    }

    /// `mcp_listing_expected_min_items` as configured now.
    fn set_expected(&self, target: &str, expect: &BTreeMap<Kind, u64>) {
        for kind in Kind::ALL {
            let l = TargetKindLabels::new(target, kind.label());
            match expect.get(&kind) {
                Some(min) => {
                    self.listing
                        .expected_min_items
                        .get_or_create(&l)
                        .set(saturating_i64(*min));
                }
                None => {
                    self.listing.expected_min_items.remove(&l);
                }
            }
        }
    }

    /// Result of the garbage-cursor check: its answer's series at 1, the
    /// other answers of (target, kind) dropped.
    pub fn set_garbage_cursor_check(&self, target: &str, check: &GarbageCursorCheck) {
        let _open = self.lock_open();
        self.set_garbage_cursor_result(target, check);
    }

    /// One series per (target, kind): the answer seen, at 1; a different
    /// answer replaces it (four series with three zeros cost 12 samples per
    /// target for nothing).
    fn set_garbage_cursor_result(&self, target: &str, check: &GarbageCursorCheck) {
        for answer in GarbageCursorAnswer::ALL {
            let l = GarbageCursorLabels {
                target: target.to_string(),
                kind: check.kind.label(),
                result: answer.label(),
            };
            if answer == check.result {
                self.compliance.garbage_cursor.get_or_create(&l).set(1);
            } else {
                self.compliance.garbage_cursor.remove(&l);
            }
        }
    }

    /// A `list_changed` notification seen by watch mode (outside a walk).
    pub fn watch_notification(&self, target: &str, kind: Kind) {
        let _open = self.lock_open();
        inc_when_seen(
            &self.listing.list_changed,
            &TargetKindLabels::new(target, kind.label()),
            1,
        );
    }

    fn observe_listing(
        &self,
        report: &PollReport,
        listing: &ListingReport,
        exemplar: &Option<TraceLabel>,
        detail: bool,
    ) {
        let target = report.target.as_str();
        let kind = listing.kind.label();
        let l = TargetKindLabels::new(target, kind);

        match listing.outcome {
            Outcome::Unsupported => {
                // Nothing was sent: not an attempt, only a fact about the server.
                self.listing.unsupported.get_or_create(&l).set(1);
                return;
            }
            // A request went out, so the server advertised the kind. A failed
            // session sends nothing and leaves the last known value.
            _ if listing.requests() > 0 => {
                self.listing.unsupported.get_or_create(&l).set(0);
            }
            _ => {}
        }

        self.listing.listings.get_or_create(&l).inc();
        self.listing
            .list_requests
            .get_or_create(&l)
            .inc_by(u64::from(listing.requests()));
        inc_when_seen(
            &self.listing.invalid_cursor,
            &l,
            u64::from(listing.invalid_cursor_errors),
        );
        for restart in &listing.restarts {
            self.listing
                .restarts
                .get_or_create(&RestartLabels {
                    target: target.to_string(),
                    kind,
                    reason: restart.reason.label(),
                })
                .inc();
        }
        inc_when_seen(
            &self.listing.list_changed,
            &l,
            u64::from(listing.list_changed_notifications),
        );

        let fleet_labels = KindLabels { kind };
        for page in &listing.pages {
            if page_was_parsed(page) {
                let items = f64::from(page.items);
                if self.fleet {
                    observe(&self.page.items, &fleet_labels, items, exemplar);
                }
                if detail {
                    observe(&self.detail.page_items, &l, items, exemplar);
                }
            }
            if page_was_answered(page) {
                let seconds = page.duration.as_secs_f64();
                if self.fleet {
                    observe(&self.page.duration, &fleet_labels, seconds, exemplar);
                }
                if detail {
                    observe(&self.detail.page_duration, &l, seconds, exemplar);
                }
            }
        }

        let outcome = match listing.outcome {
            Outcome::Complete => {
                if listing.blank_cursor_end {
                    self.listing.blank_cursor.get_or_create(&l).inc();
                }
                let seconds = listing.duration.as_secs_f64();
                self.listing
                    .pages
                    .get_or_create(&l)
                    .set(i64::from(listing.final_pages));
                self.listing.duration.get_or_create(&l).set(seconds);
                if detail {
                    let pages = f64::from(listing.final_pages);
                    observe(&self.detail.listing_pages, &l, pages, exemplar);
                    observe(&self.detail.listing_duration, &l, seconds, exemplar);
                }
                self.listing
                    .items
                    .get_or_create(&l)
                    .set(saturating_i64(listing.unique_items));
                self.set_walk_counts(&l, listing);
                self.listing
                    .last_success
                    .get_or_create(&l)
                    .set(unix_seconds(listing_end(report, listing)));
                "complete"
            }
            Outcome::Aborted(guard) => {
                self.listing
                    .aborts
                    .get_or_create(&GuardLabels {
                        target: target.to_string(),
                        kind,
                        guard: guard.label(),
                    })
                    .inc();
                // An aborted walk's raw and duplicate counts are the evidence
                // (a cycling cursor shows as raw >> unique), so they update.
                self.set_walk_counts(&l, listing);
                "aborted"
            }
            Outcome::Error(error) => {
                self.listing
                    .errors
                    .get_or_create(&ErrorLabels {
                        target: target.to_string(),
                        kind,
                        error: error.label(),
                    })
                    .inc();
                "error"
            }
            Outcome::Unsupported => return,
        };
        self.listing
            .outcomes
            .get_or_create(&outcome_labels(target, listing.kind, outcome))
            .inc();
    }

    fn set_walk_counts(&self, l: &TargetKindLabels, listing: &ListingReport) {
        self.listing
            .raw_items
            .get_or_create(l)
            .set(saturating_i64(listing.raw_items));
        self.listing
            .duplicate_items
            .get_or_create(l)
            .set(saturating_i64(listing.duplicate_items));
        set_when_seen(
            &self.listing.invalid_items,
            l,
            saturating_i64(listing.invalid_items),
        );
    }

    /// Replaces the target's child when any label value changed, so exactly
    /// one `mcp_server_info` series exists per target.
    fn set_server_info(&self, open: &mut OpenLabels, report: &PollReport) {
        let Some(server) = &report.server else {
            return;
        };
        let labels = ServerInfoLabels {
            target: report.target.clone(),
            server_name: truncate_label(&server.name),
            server_version: truncate_label(&server.version),
            protocol_version: truncate_label(report.protocol_version.as_deref().unwrap_or("")),
            transport: truncate_label(report.transport.label()),
        };
        if let Some(old) = open.server_info.get(&report.target) {
            if *old != labels {
                self.poll.server_info.remove(old);
            }
        }
        self.poll.server_info.get_or_create(&labels).set(1);
        open.server_info.insert(report.target.clone(), labels);
    }

    /// Sets every reference given for (target, kind) and drops references
    /// that are no longer compared against.
    fn set_reference_missing(
        &self,
        open: &mut OpenLabels,
        target: &str,
        kind: Kind,
        by_reference: &BTreeMap<String, Vec<String>>,
    ) {
        let stale: Vec<ReferenceLabels> = open
            .references
            .iter()
            .filter(|r| {
                r.target == target
                    && r.kind == kind.label()
                    && !by_reference.contains_key(&r.reference)
            })
            .cloned()
            .collect();
        for r in stale {
            self.churn.reference_missing.remove(&r);
            open.references.remove(&r);
        }
        for (reference, missing) in by_reference {
            let l = ReferenceLabels {
                target: target.to_string(),
                kind: kind.label(),
                reference: reference.clone(),
            };
            self.churn
                .reference_missing
                .get_or_create(&l)
                .set(saturating_i64(missing.len() as u64));
            open.references.insert(l);
        }
    }

    fn create_kind(&self, target: &str, kind: Kind, detail: bool) {
        self.listing.create_kind(target, kind);
        self.churn.create_kind(target, kind);
        if detail {
            self.detail.create_kind(target, kind);
        } else {
            self.detail.remove_kind(target, kind);
        }
    }

    /// Removes every series of (target, kind) except references, which the
    /// caller handles with the open label sets it holds.
    fn remove_kind(&self, target: &str, kind: Kind) {
        self.listing.remove_kind(target, kind);
        self.churn.remove_kind(target, kind);
        self.compliance.remove_kind(target, kind);
        self.detail.remove_kind(target, kind);
    }

    fn lock_open(&self) -> MutexGuard<'_, OpenLabels> {
        // A panic elsewhere while holding the lock leaves the label sets
        // usable (each update is a whole insert or remove), so recover.
        self.open.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// One observation; the family guard lives only for this call.
fn observe<L>(family: &HistFamily<L>, labels: &L, value: f64, exemplar: &Option<TraceLabel>)
where
    L: Clone + std::hash::Hash + Eq,
{
    family
        .get_or_create(labels)
        .observe(value, exemplar.clone(), None);
}

/// The page's result was an object with the kind's array (its `items` is
/// real); the walker sets a cursor state only then.
fn page_was_parsed(page: &PageRecord) -> bool {
    page.error.is_none() && page.next_cursor != CursorState::None
}

/// The server answered (result, JSON-RPC error or HTTP status). Timeouts and
/// connection failures are left out: their duration is our deadline, not the
/// server's latency.
fn page_was_answered(page: &PageRecord) -> bool {
    page.error.is_none() || page.rpc_code.is_some() || page.http_status.is_some()
}

/// When the listing's last page finished; falls back to the poll's end.
fn listing_end(report: &PollReport, listing: &ListingReport) -> SystemTime {
    match listing.pages.last() {
        Some(page) => page.started + page.duration,
        None => report.started + report.duration,
    }
}

fn saturating_i64(v: u64) -> i64 {
    i64::try_from(v).unwrap_or(i64::MAX)
}
