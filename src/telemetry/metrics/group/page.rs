//! Fleet-wide histograms of single page requests, by kind only: the
//! latency and page-size distributions of the whole fleet cost 34 samples
//! per kind however many targets there are. Per-target distributions are
//! opt-in (`group::detail`). A `/probe` answer (one target) has none: there
//! they would be one more per-target histogram per probed target.

use super::super::families::{
    observe, page_items_histogram, page_was_answered, page_was_parsed, seconds_histogram,
    HistFamily, Source,
};
use super::super::labels::{EnumLabel, KindLabels, TraceLabel};
use super::super::series::{Registrar, Series};
use mcp_listing::{Kind, ListingReport};
use prometheus_client::metrics::family::Family;
use prometheus_client::registry::Unit;

#[derive(Debug)]
pub struct PageFamilies {
    items: HistFamily<KindLabels>,
    duration: HistFamily<KindLabels>,
}

impl PageFamilies {
    /// The families, registered through `r`; for scheduled polling every
    /// kind is pre-created.
    pub fn register(r: &mut Registrar<'_>) -> Self {
        let polls = r.source.polls();
        let g = PageFamilies {
            items: Family::new_with_constructor(page_items_histogram),
            duration: Family::new_with_constructor(seconds_histogram),
        };
        r.family(
            "mcp_listing_page_items",
            format!("Items per page, for every page whose result was parsed, across every target of {polls}"),
        )
        .plain(&g.items);
        r.family(
            "mcp_page_request_duration",
            format!("Round trip of one page request the server answered (result, JSON-RPC error or HTTP error status), across every target of {polls}"),
        )
        .unit(Unit::Seconds)
        .plain(&g.duration);
        if matches!(r.source, Source::Scheduled) {
            for kind in Kind::ALL {
                let l = KindLabels {
                    kind: EnumLabel(kind),
                };
                g.items.create(&l);
                g.duration.create(&l);
            }
        }
        g
    }

    /// Every page of one listing: the items of each parsed page, the round
    /// trip of each answered one.
    pub fn observe(&self, listing: &ListingReport, exemplar: &Option<TraceLabel>) {
        let l = KindLabels {
            kind: EnumLabel(listing.kind),
        };
        for page in &listing.pages {
            if page_was_parsed(page) {
                observe(&self.items, &l, f64::from(page.items), exemplar);
            }
            if page_was_answered(page) {
                observe(&self.duration, &l, page.duration.as_secs_f64(), exemplar);
            }
        }
    }
}
