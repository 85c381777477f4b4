//! Per (target, kind) families comparing a listing with the baselines.

use super::super::families::{saturating_i64, CounterFamily, GaugeFamily};
use super::super::labels::{target_name, ReferenceLabels, TargetKindLabels};
use super::super::series::{lock, Creation, KeptLabels, Registrar};
use crate::baseline::KindDiff;
use mcp_listing::Kind;
use std::collections::BTreeMap;
use std::sync::Mutex;

#[derive(Debug)]
pub struct ChurnFamilies {
    items_added: CounterFamily<TargetKindLabels>,
    items_removed: CounterFamily<TargetKindLabels>,
    silent_shrinks: CounterFamily<TargetKindLabels>,
    items_changed: CounterFamily<TargetKindLabels>,
    reference_missing: GaugeFamily<ReferenceLabels>,
    /// The `mcp_reference_missing_items` series of each (target, kind), so
    /// references no longer compared (or removed targets) can be dropped.
    references: Mutex<KeptLabels<TargetKindLabels, ReferenceLabels>>,
}

impl ChurnFamilies {
    /// The families, registered through `r`. References are not
    /// pre-created: they exist once compared.
    pub fn register(r: &mut Registrar<'_>) -> Self {
        ChurnFamilies {
            items_added: r.family(
                "mcp_listing_items_added",
                "Items present in a complete listing but not in the previous complete listing",
            )
            .new_per_kind(Creation::AtZero),
            items_removed: r.family(
                "mcp_listing_items_removed",
                "Items of the previous complete listing missing from a complete listing",
            )
            .new_per_kind(Creation::AtZero),
            silent_shrinks: r.family(
                "mcp_listing_silent_shrinks",
                "Complete listings with fewer unique items than the previous one, no list_changed notification and no error",
            )
            .new_per_kind(Creation::AtZero),
            items_changed: r.family(
                "mcp_listing_items_changed",
                "Items in both a complete listing and the previous complete listing whose content callers depend on changed (description, schemas, annotations, arguments, mimeType, name)",
            )
            .new_per_kind(Creation::AtZero),
            reference_missing: r.family(
                "mcp_reference_missing_items",
                format!("Items of the reference target's last complete listing missing from this target's last complete listing, from {}", r.source.polls()),
            )
            .new_plain(),
            references: Mutex::default(),
        }
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
                .inc_by(diff.drift.changed_items);
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
        let series = TargetKindLabels::new(target, kind);
        let mut references = lock(&self.references);
        let now = by_reference
            .iter()
            .map(|(reference, missing)| {
                let l = ReferenceLabels {
                    target: series.target.clone(),
                    kind: series.kind,
                    reference: target_name(reference),
                };
                self.reference_missing
                    .get_or_create(&l)
                    .set(saturating_i64(missing.len() as u64));
                l
            })
            .collect();
        references.replace(series, now, &self.reference_missing);
    }

    /// Drop the reference series of a removed target: its own and other
    /// targets' comparisons with it.
    pub fn forget_target(&self, target: &str) {
        lock(&self.references).forget_where(&self.reference_missing, |_, r| {
            r.target.as_str() == target || r.reference.as_str() == target
        });
    }
}
