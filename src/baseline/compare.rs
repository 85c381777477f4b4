//! A finished poll held against the baselines: per kind the churn since the
//! last complete listing, per reference the origin's items a gateway lacks.
//! Complete listings become the new baselines (persisted when a state
//! directory is configured).

use super::diff::{content_changes, diff, missing_from, KindDiff};
use super::store::BaselineStore;
use crate::config::ReferenceConfig;
use crate::listing::{Kind, Outcome};
use crate::poll::PollReport;
use serde::Serialize;
use std::collections::BTreeMap;

/// A poll report with what the baselines made of it: what sinks consume.
#[derive(Debug, Clone, Serialize)]
pub struct PolledTarget {
    pub report: PollReport,
    pub diffs: BTreeMap<Kind, KindDiff>,
    /// Per kind and reference target: reference items this target lacks.
    pub reference_missing: BTreeMap<Kind, BTreeMap<String, Vec<String>>>,
}

impl PolledTarget {
    /// A report compared with nothing (`/probe` keeps no baselines).
    pub fn without_baseline(report: PollReport) -> PolledTarget {
        PolledTarget {
            report,
            diffs: BTreeMap::new(),
            reference_missing: BTreeMap::new(),
        }
    }
}

/// Diff every listing of `report` against `store`, store the complete ones
/// (at `now`, Unix seconds), and compare with each configured reference.
pub fn compare(
    store: &mut BaselineStore,
    report: PollReport,
    references: &[ReferenceConfig],
    now: f64,
) -> PolledTarget {
    let mut diffs = BTreeMap::new();
    let mut changed = false;
    for listing in &report.listings {
        let previous = store.names(&report.target, listing.kind);
        if let Some(mut d) = diff(previous, listing) {
            let before = store.fingerprints(&report.target, listing.kind);
            (d.changed_items, d.changed) = content_changes(before, listing);
            diffs.insert(listing.kind, d);
        }
        if listing.outcome == Outcome::Complete {
            store.set(&report.target, listing.kind, listing.names.clone(), now);
            store.set_fingerprints(&report.target, listing.kind, listing.fingerprints.clone());
            changed = true;
        }
    }
    if changed {
        if let Err(e) = store.persist(&report.target) {
            tracing::warn!(target_name = %report.target, error = %e, "could not persist baselines");
        }
    }
    let mut reference_missing: BTreeMap<_, BTreeMap<String, Vec<String>>> = BTreeMap::new();
    for reference in references {
        for &kind in &reference.kinds {
            let Some(listing) = report.listing(kind) else {
                continue;
            };
            if listing.outcome != Outcome::Complete {
                continue;
            }
            let Some(origin) = store.names(&reference.target, kind) else {
                continue;
            };
            let missing = missing_from(&listing.names, origin, reference.prefix.as_deref());
            reference_missing
                .entry(kind)
                .or_default()
                .insert(reference.target.clone(), missing);
        }
    }
    PolledTarget {
        report,
        diffs,
        reference_missing,
    }
}
