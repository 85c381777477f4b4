//! Opt-in per-target histograms (`metrics: {detail: true}` globally or per
//! target): the distributions of the last-value gauges and of the fleet-wide
//! page histograms, for the targets someone is debugging. Buckets carry an
//! exemplar with the poll's trace id when the poll was traced. About 80
//! samples per kind, which is why they are off by default.

use super::super::families::{
    observe, page_items_histogram, page_was_answered, page_was_parsed, pages_histogram,
    seconds_histogram, HistFamily,
};
use super::super::labels::{TargetKindLabels, TargetLabels, TraceLabel};
use super::super::series::{Creation, Registrar};
use crate::poll::PollReport;
use mcp_listing::{ListingReport, Outcome};
use prometheus_client::metrics::family::Family;
use prometheus_client::registry::Unit;

#[derive(Debug)]
pub struct DetailFamilies {
    poll_duration: HistFamily<TargetLabels>,
    time_to_ready: HistFamily<TargetLabels>,
    listing_pages: HistFamily<TargetKindLabels>,
    listing_duration: HistFamily<TargetKindLabels>,
    page_items: HistFamily<TargetKindLabels>,
    page_duration: HistFamily<TargetKindLabels>,
}

impl DetailFamilies {
    /// The families, registered through `r` (empty until a target opts in).
    pub fn register(r: &mut Registrar<'_>) -> Self {
        let polls = r.source.polls();
        let detail = Creation::Detail;
        DetailFamilies {
            poll_duration: r.family(
                "mcp_detail_poll_duration",
                format!("Duration of each of {polls}: connect, handshake and every listing (detail targets only)"),
            )
            .unit(Unit::Seconds)
            .per_target(detail, Family::new_with_constructor(seconds_histogram)),
            time_to_ready: r.family(
                "mcp_detail_time_to_ready",
                format!("Connect + handshake + every kind listed, for each of {polls} where every listing completed (detail targets only)"),
            )
            .unit(Unit::Seconds)
            .per_target(detail, Family::new_with_constructor(seconds_histogram)),
            listing_pages: r.family(
                "mcp_detail_listing_pages",
                format!("Pages of each complete listing of {polls} (detail targets only)"),
            )
            .per_kind(detail, Family::new_with_constructor(pages_histogram)),
            listing_duration: r.family(
                "mcp_detail_listing_duration",
                format!("Duration of each complete listing of {polls} (detail targets only)"),
            )
            .unit(Unit::Seconds)
            .per_kind(detail, Family::new_with_constructor(seconds_histogram)),
            page_items: r.family(
                "mcp_detail_listing_page_items",
                format!("Items per parsed page of {polls} (detail targets only)"),
            )
            .per_kind(detail, Family::new_with_constructor(page_items_histogram)),
            page_duration: r.family(
                "mcp_detail_page_request_duration",
                format!("Round trip of each answered page request of {polls} (detail targets only)"),
            )
            .unit(Unit::Seconds)
            .per_kind(detail, Family::new_with_constructor(seconds_histogram)),
        }
    }

    /// One poll's duration and (when every listing completed) time to ready.
    pub fn observe_poll(&self, report: &PollReport, exemplar: &Option<TraceLabel>) {
        let t = TargetLabels::new(&report.target);
        observe(
            &self.poll_duration,
            &t,
            report.duration.as_secs_f64(),
            exemplar,
        );
        if let Some(ready) = report.time_to_ready {
            observe(&self.time_to_ready, &t, ready.as_secs_f64(), exemplar);
        }
    }

    /// One listing: every page as the fleet-wide page histograms count it,
    /// and a complete listing's pages and duration.
    pub fn observe_listing(
        &self,
        l: &TargetKindLabels,
        listing: &ListingReport,
        exemplar: &Option<TraceLabel>,
    ) {
        for page in &listing.pages {
            if page_was_parsed(page) {
                observe(&self.page_items, l, f64::from(page.items), exemplar);
            }
            if page_was_answered(page) {
                let seconds = page.duration.as_secs_f64();
                observe(&self.page_duration, l, seconds, exemplar);
            }
        }
        if listing.outcome == Outcome::Complete {
            let pages = f64::from(listing.final_pages);
            observe(&self.listing_pages, l, pages, exemplar);
            let seconds = listing.duration.as_secs_f64();
            observe(&self.listing_duration, l, seconds, exemplar);
        }
    }
}
