//! Per (target, kind) families of single page requests.

use super::super::families::{
    page_items_histogram, precreate, seconds_histogram, HistFamily, Source,
};
use super::super::labels::TargetKindLabels;
use crate::listing::Kind;
use prometheus_client::metrics::family::Family;
use prometheus_client::registry::Registry;
use prometheus_client::registry::Unit;

#[derive(Debug)]
pub struct PageFamilies {
    pub items: HistFamily<TargetKindLabels>,
    pub duration: HistFamily<TargetKindLabels>,
}

impl PageFamilies {
    /// The families, registered in `r`.
    pub fn register(r: &mut Registry, source: Source) -> Self {
        let g = PageFamilies {
            items: Family::new_with_constructor(page_items_histogram),
            duration: Family::new_with_constructor(seconds_histogram),
        };
        r.register(
            "mcp_listing_page_items",
            "Items per page, for every page whose result was parsed",
            g.items.clone(),
        );
        r.register_with_unit(
            "mcp_page_request_duration",
            "Round trip of one page request the server answered (result, JSON-RPC error or HTTP error status)",
            Unit::Seconds,
            g.duration.clone(),
        );
        let _ = source;
        g
    }

    pub fn create_kind(&self, target: &str, kind: Kind) {
        let l = TargetKindLabels::new(target, kind.label());
        precreate(&self.items, &l);
        precreate(&self.duration, &l);
    }

    pub fn remove_kind(&self, target: &str, kind: Kind) {
        let l = TargetKindLabels::new(target, kind.label());
        self.items.remove(&l);
        self.duration.remove(&l);
    }
}
