//! Per (target, kind) families comparing a listing with the baselines.

use super::super::families::{precreate, CounterFamily, GaugeFamily, Source};
use super::super::labels::{ReferenceLabels, TargetKindLabels};
use mcp_listing::Kind;
use prometheus_client::metrics::family::Family;
use prometheus_client::registry::Registry;

#[derive(Debug)]
pub struct ChurnFamilies {
    pub items_added: CounterFamily<TargetKindLabels>,
    pub items_removed: CounterFamily<TargetKindLabels>,
    pub silent_shrinks: CounterFamily<TargetKindLabels>,
    pub items_changed: CounterFamily<TargetKindLabels>,
    pub reference_missing: GaugeFamily<ReferenceLabels>,
}

impl ChurnFamilies {
    /// The families, registered in `r`.
    pub fn register(r: &mut Registry, source: Source) -> Self {
        let g = ChurnFamilies {
            items_added: Family::default(),
            items_removed: Family::default(),
            silent_shrinks: Family::default(),
            items_changed: Family::default(),
            reference_missing: Family::default(),
        };
        r.register(
            "mcp_listing_items_added",
            "Items present in a complete listing but not in the previous complete listing",
            g.items_added.clone(),
        );
        r.register(
            "mcp_listing_items_removed",
            "Items of the previous complete listing missing from a complete listing",
            g.items_removed.clone(),
        );
        r.register(
            "mcp_listing_silent_shrinks",
            "Complete listings with fewer unique items than the previous one, no list_changed notification and no error",
            g.silent_shrinks.clone(),
        );
        r.register(
            "mcp_listing_items_changed",
            "Items in both a complete listing and the previous complete listing whose content callers depend on changed (description, schemas, annotations, arguments, mimeType, name)",
            g.items_changed.clone(),
        );
        r.register(
            "mcp_reference_missing_items",
            format!("Items of the reference target's last complete listing missing from this target's last complete listing, from {}", source.polls()),
            g.reference_missing.clone(),
        );
        g
    }

    /// References are not pre-created: they exist once compared.
    pub fn create_kind(&self, target: &str, kind: Kind) {
        let l = TargetKindLabels::new(target, kind.label());
        for family in [
            &self.items_added,
            &self.items_removed,
            &self.silent_shrinks,
            &self.items_changed,
        ] {
            precreate(family, &l);
        }
    }

    /// References are dropped by the caller, which knows which exist.
    pub fn remove_kind(&self, target: &str, kind: Kind) {
        let l = TargetKindLabels::new(target, kind.label());
        for family in [
            &self.items_added,
            &self.items_removed,
            &self.silent_shrinks,
            &self.items_changed,
        ] {
            family.remove(&l);
        }
    }
}
