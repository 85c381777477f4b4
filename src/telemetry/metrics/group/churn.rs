//! Per (target, kind) families comparing a listing with the baselines.

use super::super::families::{precreate, saturating_i64, CounterFamily, GaugeFamily, Source};
use super::super::labels::{EnumLabel, ReferenceLabels, TargetKindLabels};
use crate::baseline::KindDiff;
use mcp_listing::Kind;
use prometheus_client::metrics::family::Family;
use prometheus_client::registry::Registry;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Mutex, MutexGuard};

#[derive(Debug)]
pub struct ChurnFamilies {
    items_added: CounterFamily<TargetKindLabels>,
    items_removed: CounterFamily<TargetKindLabels>,
    silent_shrinks: CounterFamily<TargetKindLabels>,
    items_changed: CounterFamily<TargetKindLabels>,
    reference_missing: GaugeFamily<ReferenceLabels>,
    /// The `mcp_reference_missing_items` series that exist, so references
    /// no longer compared (or removed targets) can be dropped.
    references: Mutex<BTreeSet<ReferenceLabels>>,
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
            references: Mutex::new(BTreeSet::new()),
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

    /// One poll's diffs against the baselines.
    pub fn observe(&self, target: &str, diffs: &BTreeMap<Kind, KindDiff>) {
        for (kind, diff) in diffs {
            let l = TargetKindLabels::new(target, *kind);
            self.items_added
                .get_or_create(&l)
                .inc_by(diff.added.len() as u64);
            self.items_removed
                .get_or_create(&l)
                .inc_by(diff.removed.len() as u64);
            if diff.silent_shrink {
                self.silent_shrinks.get_or_create(&l).inc();
            }
            self.items_changed
                .get_or_create(&l)
                .inc_by(diff.changed_items);
        }
    }

    /// Sets every reference given for (target, kind) and drops references
    /// that are no longer compared against.
    pub fn set_reference_missing(
        &self,
        target: &str,
        kind: Kind,
        by_reference: &BTreeMap<String, Vec<String>>,
    ) {
        let mut references = self.lock_references();
        self.drop_references(&mut references, |r| {
            r.target == target
                && r.kind == EnumLabel(kind)
                && !by_reference.contains_key(&r.reference)
        });
        for (reference, missing) in by_reference {
            let l = ReferenceLabels {
                target: target.to_string(),
                kind: EnumLabel(kind),
                reference: reference.clone(),
            };
            self.reference_missing
                .get_or_create(&l)
                .set(saturating_i64(missing.len() as u64));
            references.insert(l);
        }
    }

    /// Drop the reference series of a removed target: its own and other
    /// targets' comparisons with it.
    pub fn forget_target(&self, target: &str) {
        let mut references = self.lock_references();
        self.drop_references(&mut references, |r| {
            r.target == target || r.reference == target
        });
    }

    fn drop_references(
        &self,
        references: &mut BTreeSet<ReferenceLabels>,
        stale: impl Fn(&ReferenceLabels) -> bool,
    ) {
        references.retain(|r| {
            let keep = !stale(r);
            if !keep {
                self.reference_missing.remove(r);
            }
            keep
        });
    }

    fn lock_references(&self) -> MutexGuard<'_, BTreeSet<ReferenceLabels>> {
        // Each update is a whole insert or remove, so a poisoned set is usable.
        self.references.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// References are not pre-created: they exist once compared.
    pub fn create_kind(&self, target: &str, kind: Kind) {
        let l = TargetKindLabels::new(target, kind);
        for family in [
            &self.items_added,
            &self.items_removed,
            &self.silent_shrinks,
            &self.items_changed,
        ] {
            precreate(family, &l);
        }
    }

    /// References stay until `forget_target` or the next comparison.
    pub fn remove_kind(&self, target: &str, kind: Kind) {
        let l = TargetKindLabels::new(target, kind);
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
