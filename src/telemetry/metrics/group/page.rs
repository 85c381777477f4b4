//! Fleet-wide histograms of single page requests, by kind only: the
//! latency and page-size distributions of the whole fleet cost 34 samples
//! per kind however many targets there are. Per-target distributions are
//! opt-in (`group::detail`). A `/probe` answer (one target) has none: there
//! they would be one more per-target histogram per probed target.

use super::super::families::{
    page_items_histogram, precreate, seconds_histogram, HistFamily, Source,
};
use super::super::labels::KindLabels;
use mcp_listing::Kind;
use prometheus_client::metrics::family::Family;
use prometheus_client::registry::Registry;
use prometheus_client::registry::Unit;

#[derive(Debug)]
pub struct PageFamilies {
    pub items: HistFamily<KindLabels>,
    pub duration: HistFamily<KindLabels>,
}

impl PageFamilies {
    /// The families, registered in `r`; for scheduled polling every kind is
    /// pre-created.
    pub fn register(r: &mut Registry, source: Source) -> Self {
        let g = PageFamilies {
            items: Family::new_with_constructor(page_items_histogram),
            duration: Family::new_with_constructor(seconds_histogram),
        };
        r.register(
            "mcp_listing_page_items",
            format!(
                "Items per page, for every page whose result was parsed, across every target of {}",
                source.polls()
            ),
            g.items.clone(),
        );
        r.register_with_unit(
            "mcp_page_request_duration",
            format!("Round trip of one page request the server answered (result, JSON-RPC error or HTTP error status), across every target of {}", source.polls()),
            Unit::Seconds,
            g.duration.clone(),
        );
        if matches!(source, Source::Scheduled) {
            for kind in Kind::ALL {
                let l = KindLabels { kind: kind.label() };
                precreate(&g.items, &l);
                precreate(&g.duration, &l);
            }
        }
        g
    }
}
