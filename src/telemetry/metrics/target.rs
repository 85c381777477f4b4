//! Per-target families: what each poll of each MCP server looked like.
//! Each group sets its own families; this file decides which groups a
//! poll, a re-list or a reload touches.

use super::families::Source;
use super::group::catalogue::CatalogueFamilies;
use super::group::churn::ChurnFamilies;
use super::group::compliance::ComplianceFamilies;
use super::group::detail::DetailFamilies;
use super::group::listing::ListingFamilies;
use super::group::page::PageFamilies;
use super::group::poll::PollFamilies;
use super::group::protocols::ProtocolFamilies;
use super::labels::{TargetKindLabels, TargetLabels, TraceLabel};
use super::series::{lock, Registrar, TargetSeries};
use crate::baseline::PolledTarget;
use crate::poll::{GarbageCursorCheck, PollReport};
use crate::verdict::TargetVerdict;
use mcp_listing::{Kind, ListingReport, Outcome};
use prometheus_client::registry::Registry;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Mutex, MutexGuard};
use std::time::SystemTime;

/// Every per-target family, in groups. Cheap to clone handles live in the
/// registry; the groups keep the other handle for updates.
///
/// Locking: each update takes one family guard at a time (two
/// `get_or_create` guards held together can deadlock), and `detail_targets`
/// serialises updates so that `forget_target` cannot interleave with an
/// `observe` of the same target and leave half its series behind. A group's
/// own lock (the label sets it remembers) is only taken under it. Encoding
/// takes none of them.
#[derive(Debug)]
pub struct TargetMetrics {
    poll: PollFamilies,
    listing: ListingFamilies,
    catalogue: CatalogueFamilies,
    churn: ChurnFamilies,
    compliance: ComplianceFamilies,
    page: PageFamilies,
    detail: DetailFamilies,
    protocols: ProtocolFamilies,
    /// Which families hold a target's series, and when they are created.
    series: TargetSeries,
    /// Observe the fleet-wide page histograms (scheduled polling only).
    fleet: bool,
    /// Targets with `metrics: {detail: true}`; its lock serialises updates.
    detail_targets: Mutex<BTreeSet<String>>,
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
        let mut r = Registrar::new(registry, source);
        let poll = PollFamilies::register(&mut r);
        let listing = ListingFamilies::register(&mut r);
        let catalogue = CatalogueFamilies::register(&mut r);
        let churn = ChurnFamilies::register(&mut r);
        let compliance = ComplianceFamilies::register(&mut r);
        let page = PageFamilies::register(&mut r);
        let detail = DetailFamilies::register(&mut r);
        let protocols = ProtocolFamilies::register(&mut r);
        TargetMetrics {
            poll,
            listing,
            catalogue,
            churn,
            compliance,
            page,
            detail,
            protocols,
            series: r.finish(),
            fleet: matches!(source, Source::Scheduled),
            detail_targets: Mutex::new(BTreeSet::new()),
        }
    }

    /// Pre-create at 0 the series alerts and `increase()` need from the
    /// first scrape (docs/metrics.md, "Pre-creation"); with `detail`, the
    /// target's histograms too. `kinds` is the target's full set of enabled
    /// kinds: series of kinds not listed are dropped, and detail series
    /// when `detail` is off, so calling this again after a config reload
    /// is correct.
    pub fn register_target(&self, target: &str, kinds: &[Kind], detail: bool) {
        let mut detail_targets = self.lock();
        if detail {
            detail_targets.insert(target.to_string());
        } else {
            detail_targets.remove(target);
        }
        self.series.configure(target, kinds, detail);
    }

    /// Drop every series of a target removed by a config reload, including
    /// other targets' `mcp_reference_missing_items{reference=target}`.
    pub fn forget_target(&self, target: &str) {
        let mut detail_targets = self.lock();
        detail_targets.remove(target);
        self.series.forget(target);
        self.poll.forget_target(target);
        self.protocols.forget_target(target);
        self.churn.forget_target(target);
    }

    /// Record one poll (scheduled or `/probe`). `expect` is the configured
    /// minimum of unique items per kind.
    pub fn observe(&self, polled: &PolledTarget, expect: &BTreeMap<Kind, u64>) {
        let detail_targets = self.lock();
        let report = &polled.report;
        let exemplar = TraceLabel::from_trace_id(report.trace_id);
        let detail = detail_targets.contains(&report.target);
        self.poll.observe(report);
        if detail {
            self.detail.observe_poll(report, &exemplar);
        }
        self.observe_listings(polled, &exemplar, detail);
        self.protocols.observe(report);
        self.catalogue.set_expected(&report.target, expect);
        for check in &report.garbage_cursor_checks {
            self.compliance.set_garbage_cursor(&report.target, check);
        }
    }

    /// Record a watch-mode re-list: the re-listed kinds only, and `up`
    /// (every kind's state, given by the caller); no poll duration or time
    /// to ready, which belong to scheduled polls.
    pub fn observe_relist(&self, polled: &PolledTarget, up: bool) {
        let detail_targets = self.lock();
        let detail = detail_targets.contains(&polled.report.target);
        self.poll
            .set_up(&TargetLabels::new(&polled.report.target), up);
        self.observe_listings(polled, &None, detail);
    }

    /// Server info, listings, churn and references of one report.
    fn observe_listings(&self, polled: &PolledTarget, exemplar: &Option<TraceLabel>, detail: bool) {
        let report = &polled.report;
        self.poll.set_server_info(report);
        for listing in &report.listings {
            self.observe_listing(report, listing, exemplar, detail);
        }
        self.churn.observe(&report.target, &polled.diffs);
        // A complete listing is compared with every configured reference
        // that has a listing; a kind missing from the map then compared with
        // none, so stale references (e.g. removed from the configuration)
        // are dropped. Incomplete listings leave the last comparison.
        let none = BTreeMap::new();
        for listing in &report.listings {
            if listing.outcome.is_complete() {
                let by_reference = polled.reference_missing.get(&listing.kind).unwrap_or(&none);
                self.churn
                    .set_reference_missing(&report.target, listing.kind, by_reference);
            }
        }
    }

    /// One listing of a poll or re-list, into every group that counts it.
    fn observe_listing(
        &self,
        report: &PollReport,
        listing: &ListingReport,
        exemplar: &Option<TraceLabel>,
        detail: bool,
    ) {
        let l = TargetKindLabels::new(&report.target, listing.kind);
        if listing.outcome == Outcome::Unsupported {
            // Nothing was sent: not an attempt, only a fact about the server.
            self.catalogue.set_unsupported(&l, true);
            return;
        }
        // A request went out, so the server advertised the kind. A failed
        // session sends nothing and leaves the last known value.
        if listing.requests() > 0 {
            self.catalogue.set_unsupported(&l, false);
        }
        self.listing.observe(&l, listing);
        self.catalogue
            .observe(&l, listing, listing_end(report, listing));
        if self.fleet {
            self.page.observe(listing, exemplar);
        }
        if detail {
            self.detail.observe_listing(&l, listing, exemplar);
        }
    }

    /// `mcp_verdict` per judged kind.
    pub fn set_verdict(&self, target: &str, verdict: &TargetVerdict) {
        let _serialised = self.lock();
        self.catalogue.set_verdict(target, verdict);
    }

    /// Result of the garbage-cursor check: its answer's series at 1, the
    /// other answers of (target, kind) dropped.
    pub fn set_garbage_cursor_check(&self, target: &str, check: &GarbageCursorCheck) {
        let _serialised = self.lock();
        self.compliance.set_garbage_cursor(target, check);
    }

    /// A `list_changed` notification seen by watch mode (outside a walk).
    pub fn watch_notification(&self, target: &str, kind: Kind) {
        let _serialised = self.lock();
        self.listing
            .list_changed_seen(&TargetKindLabels::new(target, kind));
    }

    fn lock(&self) -> MutexGuard<'_, BTreeSet<String>> {
        lock(&self.detail_targets)
    }
}

/// When the listing's last page finished; falls back to the poll's end.
fn listing_end(report: &PollReport, listing: &ListingReport) -> SystemTime {
    match listing.pages.last() {
        Some(page) => page.started + page.duration,
        None => report.started + report.duration,
    }
}
