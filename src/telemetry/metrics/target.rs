//! Per-target families: what each poll of each MCP server looked like.

use super::buckets::{DURATION_BUCKETS_SECONDS, PAGES_BUCKETS, PAGE_ITEMS_BUCKETS};
use super::labels::{
    truncate_label, ErrorLabels, GuardLabels, ProbeResultLabels, ReferenceLabels, RestartLabels,
    ServerInfoLabels, TargetKindLabels, TargetLabels, TraceLabel,
};
use crate::baseline::PolledTarget;
use crate::listing::report::RestartReason;
use crate::listing::{CursorState, ErrorKind, Guard, Kind, ListingReport, Outcome, PageRecord};
use crate::poll::{unix_seconds, GarbageCursorAnswer, GarbageCursorCheck, PollReport};
use crate::verdict::TargetVerdict;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::exemplar::HistogramWithExemplars;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::registry::{Registry, Unit};
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::atomic::AtomicU64;
use std::sync::{Mutex, MutexGuard};
use std::time::SystemTime;

type Exemplared = HistogramWithExemplars<TraceLabel>;
type HistFamily<L> = Family<L, Exemplared, fn() -> Exemplared>;
type CounterFamily<L> = Family<L, Counter>;
type GaugeFamily<L> = Family<L, Gauge>;
type FloatGaugeFamily<L> = Family<L, Gauge<f64, AtomicU64>>;

fn pages_histogram() -> Exemplared {
    HistogramWithExemplars::new(PAGES_BUCKETS.into_iter())
}

fn page_items_histogram() -> Exemplared {
    HistogramWithExemplars::new(PAGE_ITEMS_BUCKETS.into_iter())
}

fn seconds_histogram() -> Exemplared {
    HistogramWithExemplars::new(DURATION_BUCKETS_SECONDS.into_iter())
}

/// Every per-target family. Cheap to clone handles live in the registry; this
/// struct keeps the other handle for updates.
///
/// Locking: each update takes one family guard at a time (two
/// `get_or_create` guards held together can deadlock), and `open` serialises
/// updates so that `forget_target` cannot interleave with an `observe` of the
/// same target and leave half its series behind. Encoding never takes `open`.
#[derive(Debug)]
pub struct TargetMetrics {
    up: GaugeFamily<TargetLabels>,
    poll_duration: HistFamily<TargetLabels>,
    time_to_ready: HistFamily<TargetLabels>,
    server_info: GaugeFamily<ServerInfoLabels>,

    listings: CounterFamily<TargetKindLabels>,
    aborts: CounterFamily<GuardLabels>,
    errors: CounterFamily<ErrorLabels>,
    restarts: CounterFamily<RestartLabels>,
    list_requests: CounterFamily<TargetKindLabels>,
    invalid_cursor: CounterFamily<TargetKindLabels>,
    items_added: CounterFamily<TargetKindLabels>,
    items_removed: CounterFamily<TargetKindLabels>,
    silent_shrinks: CounterFamily<TargetKindLabels>,
    list_changed: CounterFamily<TargetKindLabels>,
    blank_cursor: CounterFamily<TargetKindLabels>,

    items: GaugeFamily<TargetKindLabels>,
    raw_items: GaugeFamily<TargetKindLabels>,
    duplicate_items: GaugeFamily<TargetKindLabels>,
    invalid_items: GaugeFamily<TargetKindLabels>,
    unsupported: GaugeFamily<TargetKindLabels>,
    expected_min_items: GaugeFamily<TargetKindLabels>,
    last_success: FloatGaugeFamily<TargetKindLabels>,
    reference_missing: GaugeFamily<ReferenceLabels>,
    probe_result: GaugeFamily<ProbeResultLabels>,
    verdict: GaugeFamily<TargetKindLabels>,

    pages: HistFamily<TargetKindLabels>,
    page_items: HistFamily<TargetKindLabels>,
    listing_duration: HistFamily<TargetKindLabels>,
    page_duration: HistFamily<TargetKindLabels>,

    open: Mutex<OpenLabels>,
}

/// Which polls a registry's values come from, for HELP strings.
#[derive(Debug, Clone, Copy)]
enum Source {
    Scheduled,
    Probe,
}

impl Source {
    fn poll(self) -> &'static str {
        match self {
            Source::Scheduled => "the last scheduled poll",
            Source::Probe => "this probe",
        }
    }

    fn polls(self) -> &'static str {
        match self {
            Source::Scheduled => "scheduled polls",
            Source::Probe => "this probe",
        }
    }
}

/// Label sets whose values are not a fixed enum, remembered so that they can
/// be replaced (server info) or dropped (reference, removed target).
#[derive(Debug, Default)]
struct OpenLabels {
    server_info: HashMap<String, ServerInfoLabels>,
    references: BTreeSet<ReferenceLabels>,
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

    fn with_source(registry: &mut Registry, source: Source) -> Self {
        let m = TargetMetrics {
            up: Family::default(),
            poll_duration: Family::new_with_constructor(seconds_histogram),
            time_to_ready: Family::new_with_constructor(seconds_histogram),
            server_info: Family::default(),
            listings: Family::default(),
            aborts: Family::default(),
            errors: Family::default(),
            restarts: Family::default(),
            list_requests: Family::default(),
            invalid_cursor: Family::default(),
            items_added: Family::default(),
            items_removed: Family::default(),
            silent_shrinks: Family::default(),
            list_changed: Family::default(),
            blank_cursor: Family::default(),
            items: Family::default(),
            raw_items: Family::default(),
            duplicate_items: Family::default(),
            invalid_items: Family::default(),
            unsupported: Family::default(),
            expected_min_items: Family::default(),
            last_success: Family::default(),
            reference_missing: Family::default(),
            probe_result: Family::default(),
            verdict: Family::default(),
            pages: Family::new_with_constructor(pages_histogram),
            page_items: Family::new_with_constructor(page_items_histogram),
            listing_duration: Family::new_with_constructor(seconds_histogram),
            page_duration: Family::new_with_constructor(seconds_histogram),
            open: Mutex::new(OpenLabels::default()),
        };
        m.register(registry, source);
        m
    }

    fn register(&self, r: &mut Registry, source: Source) {
        r.register(
            "mcp_up",
            format!("1 if {} listed every enabled kind completely (unsupported kinds count as complete), else 0", source.poll()),
            self.up.clone(),
        );
        r.register_with_unit(
            "mcp_poll_duration",
            "Duration of one whole poll of a target: connect, handshake and every listing",
            Unit::Seconds,
            self.poll_duration.clone(),
        );
        r.register_with_unit(
            "mcp_time_to_ready",
            "Connect + handshake + every enabled kind listed completely; observed only for polls where every listing completed",
            Unit::Seconds,
            self.time_to_ready.clone(),
        );
        r.register(
            "mcp_server_info",
            format!("Constant 1; labels are the server's self-description (each truncated to 128 characters) from the last handshake of {}", source.polls()),
            self.server_info.clone(),
        );
        r.register(
            "mcp_listings",
            "Listing attempts (every enabled kind the server advertises, once per poll)",
            self.listings.clone(),
        );
        r.register(
            "mcp_listing_aborts",
            "Listings stopped by a walker guard although every response was well-formed",
            self.aborts.clone(),
        );
        r.register(
            "mcp_listing_errors",
            "Listings that failed, by error",
            self.errors.clone(),
        );
        r.register(
            "mcp_listing_restarts",
            "Walks started over from the first page, by reason",
            self.restarts.clone(),
        );
        r.register(
            "mcp_list_requests",
            "Page requests sent (every page of every attempt, restarts included)",
            self.list_requests.clone(),
        );
        r.register(
            "mcp_list_invalid_cursor",
            "-32602 (invalid params) answers to a request that carried a cursor",
            self.invalid_cursor.clone(),
        );
        r.register(
            "mcp_listing_items_added",
            "Items present in a complete listing but not in the previous complete listing",
            self.items_added.clone(),
        );
        r.register(
            "mcp_listing_items_removed",
            "Items of the previous complete listing missing from a complete listing",
            self.items_removed.clone(),
        );
        r.register(
            "mcp_listing_silent_shrinks",
            "Complete listings with fewer unique items than the previous one, no list_changed notification and no error",
            self.silent_shrinks.clone(),
        );
        r.register(
            "mcp_list_changed_notifications",
            "list_changed notifications seen for the kind, during walks and by watch mode",
            self.list_changed.clone(),
        );
        r.register(
            "mcp_listing_blank_cursor",
            "Listings (protocol before 2026-07-28) ended by an empty-string nextCursor and counted complete",
            self.blank_cursor.clone(),
        );
        r.register(
            "mcp_listing_items",
            format!(
                "Unique items (by identity key) of the last complete listing, from {}",
                source.polls()
            ),
            self.items.clone(),
        );
        r.register(
            "mcp_listing_raw_items",
            format!("Items before dedupe of the last listing that completed or was aborted by a guard, from {}", source.polls()),
            self.raw_items.clone(),
        );
        r.register(
            "mcp_listing_duplicate_items",
            format!("Raw minus unique items of the last listing that completed or was aborted by a guard, from {}", source.polls()),
            self.duplicate_items.clone(),
        );
        r.register(
            "mcp_listing_invalid_items",
            format!("Items without their identity key in the last listing that completed or was aborted by a guard, from {}", source.polls()),
            self.invalid_items.clone(),
        );
        r.register(
            "mcp_listing_unsupported",
            format!(
                "1 if the server did not advertise the kind, as last seen by {}, else 0",
                source.polls()
            ),
            self.unsupported.clone(),
        );
        r.register(
            "mcp_verdict",
            format!(
                "Verdict of {} for the kind (docs/verdict.md): 0 healthy, 1 degraded, 2 down",
                source.poll()
            ),
            self.verdict.clone(),
        );
        r.register(
            "mcp_listing_expected_min_items",
            "Configured minimum of unique items for the kind",
            self.expected_min_items.clone(),
        );
        r.register_with_unit(
            "mcp_last_success_timestamp",
            format!(
                "Unix time at which the last complete listing ended, from {} (0 = none yet)",
                source.polls()
            ),
            Unit::Seconds,
            self.last_success.clone(),
        );
        r.register(
            "mcp_reference_missing_items",
            format!("Items of the reference target's last complete listing missing from this target's last complete listing, from {}", source.polls()),
            self.reference_missing.clone(),
        );
        r.register(
            "mcp_invalid_cursor_probe_result",
            "1 for the answer the server gave to a deliberately invalid cursor at the last compliance probe, 0 for the others",
            self.probe_result.clone(),
        );
        r.register(
            "mcp_listing_pages",
            "Pages the final attempt of a complete listing needed",
            self.pages.clone(),
        );
        r.register(
            "mcp_listing_page_items",
            "Items per page, for every page whose result was parsed",
            self.page_items.clone(),
        );
        r.register_with_unit(
            "mcp_listing_duration",
            "Duration of one complete listing, restarts included",
            Unit::Seconds,
            self.listing_duration.clone(),
        );
        r.register_with_unit(
            "mcp_page_request_duration",
            "Round trip of one page request the server answered (result, JSON-RPC error or HTTP error status)",
            Unit::Seconds,
            self.page_duration.clone(),
        );
    }

    /// Pre-create at 0 every series known to exist for this target and kinds
    /// (counters for every guard/error/restart label, gauges, histograms) so
    /// `rate()` and `increase()` work from the first scrape. `kinds` is the
    /// target's full set of enabled kinds: series of kinds not listed are
    /// dropped, so calling this again after a config reload is correct.
    pub fn register_target(&self, target: &str, kinds: &[Kind]) {
        let _open = self.lock_open();
        let t = TargetLabels::new(target);
        precreate(&self.up, &t);
        precreate(&self.poll_duration, &t);
        precreate(&self.time_to_ready, &t);
        for kind in Kind::ALL {
            if kinds.contains(&kind) {
                self.create_kind(target, kind);
            } else {
                self.remove_kind(target, kind);
            }
        }
    }

    /// Drop every series of a target removed by a config reload, including
    /// other targets' `mcp_reference_missing_items{reference=target}`.
    pub fn forget_target(&self, target: &str) {
        let mut open = self.lock_open();
        let t = TargetLabels::new(target);
        self.up.remove(&t);
        self.poll_duration.remove(&t);
        self.time_to_ready.remove(&t);
        if let Some(info) = open.server_info.remove(target) {
            self.server_info.remove(&info);
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
            self.reference_missing.remove(&r);
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
        self.up
            .get_or_create(&t)
            .set(i64::from(report.all_complete()));
        observe(
            &self.poll_duration,
            &t,
            report.duration.as_secs_f64(),
            &exemplar,
        );
        if let Some(ready) = report.time_to_ready {
            observe(&self.time_to_ready, &t, ready.as_secs_f64(), &exemplar);
        }
        self.observe_listings(&mut open, polled, &exemplar);
        self.set_expected(&report.target, expect);
        for check in &report.garbage_cursor_checks {
            self.set_probe_result(&report.target, check);
        }
    }

    /// Record a watch-mode re-list: the re-listed kinds only, and `up`
    /// (every kind's state, given by the caller); no poll duration or time
    /// to ready, which belong to scheduled polls.
    pub fn observe_relist(&self, polled: &PolledTarget, up: bool) {
        let mut open = self.lock_open();
        self.up
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

        for listing in &report.listings {
            self.observe_listing(report, listing, exemplar);
        }
        for (kind, diff) in &polled.diffs {
            let l = TargetKindLabels::new(target, kind.label());
            self.items_added
                .get_or_create(&l)
                .inc_by(diff.added.len() as u64);
            self.items_removed
                .get_or_create(&l)
                .inc_by(diff.removed.len() as u64);
            if diff.silent_shrink {
                self.silent_shrinks.get_or_create(&l).inc();
            }
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
            self.verdict
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
                    self.expected_min_items
                        .get_or_create(&l)
                        .set(saturating_i64(*min));
                }
                None => {
                    self.expected_min_items.remove(&l);
                }
            }
        }
    }

    /// Result of the garbage-cursor check: its answer is set to 1 and the
    /// others of (target, kind) to 0.
    pub fn set_garbage_cursor_check(&self, target: &str, check: &GarbageCursorCheck) {
        let _open = self.lock_open();
        self.set_probe_result(target, check);
    }

    fn set_probe_result(&self, target: &str, check: &GarbageCursorCheck) {
        for answer in GarbageCursorAnswer::ALL {
            let l = ProbeResultLabels {
                target: target.to_string(),
                kind: check.kind.label(),
                result: answer.label(),
            };
            self.probe_result
                .get_or_create(&l)
                .set(i64::from(answer == check.result));
        }
    }

    /// A `list_changed` notification seen by watch mode (outside a walk).
    pub fn watch_notification(&self, target: &str, kind: Kind) {
        let _open = self.lock_open();
        self.list_changed
            .get_or_create(&TargetKindLabels::new(target, kind.label()))
            .inc();
    }

    fn observe_listing(
        &self,
        report: &PollReport,
        listing: &ListingReport,
        exemplar: &Option<TraceLabel>,
    ) {
        let target = report.target.as_str();
        let kind = listing.kind.label();
        let l = TargetKindLabels::new(target, kind);

        match listing.outcome {
            Outcome::Unsupported => {
                // Nothing was sent: not an attempt, only a fact about the server.
                self.unsupported.get_or_create(&l).set(1);
                return;
            }
            // A request went out, so the server advertised the kind. A failed
            // session sends nothing and leaves the last known value.
            _ if listing.requests() > 0 => {
                self.unsupported.get_or_create(&l).set(0);
            }
            _ => {}
        }

        self.listings.get_or_create(&l).inc();
        self.list_requests
            .get_or_create(&l)
            .inc_by(u64::from(listing.requests()));
        self.invalid_cursor
            .get_or_create(&l)
            .inc_by(u64::from(listing.invalid_cursor_errors));
        for restart in &listing.restarts {
            self.restarts
                .get_or_create(&RestartLabels {
                    target: target.to_string(),
                    kind,
                    reason: restart.reason.label(),
                })
                .inc();
        }
        if listing.list_changed_notifications > 0 {
            self.list_changed
                .get_or_create(&l)
                .inc_by(u64::from(listing.list_changed_notifications));
        }

        for page in &listing.pages {
            if page_was_parsed(page) {
                observe(&self.page_items, &l, f64::from(page.items), exemplar);
            }
            if page_was_answered(page) {
                observe(
                    &self.page_duration,
                    &l,
                    page.duration.as_secs_f64(),
                    exemplar,
                );
            }
        }

        match listing.outcome {
            Outcome::Complete => {
                if listing.blank_cursor_end {
                    self.blank_cursor.get_or_create(&l).inc();
                }
                observe(&self.pages, &l, f64::from(listing.final_pages), exemplar);
                observe(
                    &self.listing_duration,
                    &l,
                    listing.duration.as_secs_f64(),
                    exemplar,
                );
                self.items
                    .get_or_create(&l)
                    .set(saturating_i64(listing.unique_items));
                self.set_walk_counts(&l, listing);
                self.last_success
                    .get_or_create(&l)
                    .set(unix_seconds(listing_end(report, listing)));
            }
            Outcome::Aborted(guard) => {
                self.aborts
                    .get_or_create(&GuardLabels {
                        target: target.to_string(),
                        kind,
                        guard: guard.label(),
                    })
                    .inc();
                // An aborted walk's raw and duplicate counts are the evidence
                // (a cycling cursor shows as raw >> unique), so they update.
                self.set_walk_counts(&l, listing);
            }
            Outcome::Error(error) => {
                self.errors
                    .get_or_create(&ErrorLabels {
                        target: target.to_string(),
                        kind,
                        error: error.label(),
                    })
                    .inc();
            }
            Outcome::Unsupported => {}
        }
    }

    fn set_walk_counts(&self, l: &TargetKindLabels, listing: &ListingReport) {
        self.raw_items
            .get_or_create(l)
            .set(saturating_i64(listing.raw_items));
        self.duplicate_items
            .get_or_create(l)
            .set(saturating_i64(listing.duplicate_items));
        self.invalid_items
            .get_or_create(l)
            .set(saturating_i64(listing.invalid_items));
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
                self.server_info.remove(old);
            }
        }
        self.server_info.get_or_create(&labels).set(1);
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
            self.reference_missing.remove(&r);
            open.references.remove(&r);
        }
        for (reference, missing) in by_reference {
            let l = ReferenceLabels {
                target: target.to_string(),
                kind: kind.label(),
                reference: reference.clone(),
            };
            self.reference_missing
                .get_or_create(&l)
                .set(saturating_i64(missing.len() as u64));
            open.references.insert(l);
        }
    }

    fn create_kind(&self, target: &str, kind: Kind) {
        let l = TargetKindLabels::new(target, kind.label());
        for family in self.kind_counters() {
            precreate(family, &l);
        }
        for family in self.kind_gauges() {
            precreate(family, &l);
        }
        for family in self.kind_histograms() {
            precreate(family, &l);
        }
        precreate(&self.last_success, &l);
        for g in Guard::ALL {
            precreate(&self.aborts, &guard_labels(target, kind, g));
        }
        for e in ErrorKind::ALL {
            precreate(&self.errors, &error_labels(target, kind, e));
        }
        for r in RestartReason::ALL {
            precreate(&self.restarts, &restart_labels(target, kind, r));
        }
    }

    /// Removes every series of (target, kind) except references, which the
    /// caller handles with the open label sets it holds.
    fn remove_kind(&self, target: &str, kind: Kind) {
        let l = TargetKindLabels::new(target, kind.label());
        for family in self.kind_counters() {
            family.remove(&l);
        }
        for family in self.kind_gauges() {
            family.remove(&l);
        }
        for family in self.kind_histograms() {
            family.remove(&l);
        }
        self.expected_min_items.remove(&l);
        self.verdict.remove(&l);
        self.last_success.remove(&l);
        for g in Guard::ALL {
            self.aborts.remove(&guard_labels(target, kind, g));
        }
        for e in ErrorKind::ALL {
            self.errors.remove(&error_labels(target, kind, e));
        }
        for r in RestartReason::ALL {
            self.restarts.remove(&restart_labels(target, kind, r));
        }
        for answer in GarbageCursorAnswer::ALL {
            self.probe_result.remove(&ProbeResultLabels {
                target: target.to_string(),
                kind: kind.label(),
                result: answer.label(),
            });
        }
    }

    /// Per-kind counters pre-created at 0.
    fn kind_counters(&self) -> [&CounterFamily<TargetKindLabels>; 8] {
        [
            &self.listings,
            &self.list_requests,
            &self.invalid_cursor,
            &self.items_added,
            &self.items_removed,
            &self.silent_shrinks,
            &self.list_changed,
            &self.blank_cursor,
        ]
    }

    /// Per-kind integer gauges pre-created at 0 (`expected_min_items` is
    /// not: it exists only when configured).
    fn kind_gauges(&self) -> [&GaugeFamily<TargetKindLabels>; 5] {
        [
            &self.items,
            &self.raw_items,
            &self.duplicate_items,
            &self.invalid_items,
            &self.unsupported,
        ]
    }

    fn kind_histograms(&self) -> [&HistFamily<TargetKindLabels>; 4] {
        [
            &self.pages,
            &self.page_items,
            &self.listing_duration,
            &self.page_duration,
        ]
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

/// Creates the series at its zero value; the guard is released at once.
fn precreate<L, M, C>(family: &Family<L, M, C>, labels: &L)
where
    L: Clone + std::hash::Hash + Eq,
    C: prometheus_client::metrics::family::MetricConstructor<M>,
{
    drop(family.get_or_create(labels));
}

fn guard_labels(target: &str, kind: Kind, guard: Guard) -> GuardLabels {
    GuardLabels {
        target: target.to_string(),
        kind: kind.label(),
        guard: guard.label(),
    }
}

fn error_labels(target: &str, kind: Kind, error: ErrorKind) -> ErrorLabels {
    ErrorLabels {
        target: target.to_string(),
        kind: kind.label(),
        error: error.label(),
    }
}

fn restart_labels(target: &str, kind: Kind, reason: RestartReason) -> RestartLabels {
    RestartLabels {
        target: target.to_string(),
        kind: kind.label(),
        reason: reason.label(),
    }
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
