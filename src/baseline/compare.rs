//! A finished poll held against the baselines: per kind the churn since the
//! last complete listing, per reference the origin's items a gateway lacks.
//! Complete listings become the new baselines (persisted when a state
//! directory is configured).

use super::diff::{diff, missing_from, ContentDrift, KindDiff, MAX_CHANGES_NAMED};
use super::store::{BaselineError, BaselinePrints, BaselineStore, PendingWrite};
use crate::config::ReferenceConfig;
use crate::poll::PollReport;
use mcp_listing::fingerprint::changed_items;
use mcp_listing::ListingReport;
use mcp_listing::{Kind, Outcome};
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};

/// A poll report with what the baselines made of it: what sinks consume.
#[derive(Debug, Clone, Serialize)]
pub struct PolledTarget {
    pub report: PollReport,
    pub diffs: BTreeMap<Kind, KindDiff>,
    /// Per kind and reference target: reference items this target lacks.
    pub reference_missing: MissingByReference,
    /// Per kind compared with two or more references: this target against
    /// the union of their renamed names (several origins merged behind one
    /// gateway).
    pub reference_union: BTreeMap<Kind, ReferenceUnion>,
}

/// One kind of a gateway against the union of its references' names, each
/// renamed by its reference's `map`.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct ReferenceUnion {
    /// The references that were compared (their complete listings exist).
    pub references: Vec<String>,
    /// Distinct names the gateway should list (the renamed union).
    pub expected_items: u64,
    /// Of those, how many it lacks.
    pub missing_total: u64,
    /// Gateway names no reference accounts for (counted; the first
    /// [`MAX_UNION_NAMES`] named): its own items, or stale ones.
    pub unexpected_total: u64,
    pub unexpected: Vec<String>,
}

/// Per kind and reference target: the reference's items a target lacks.
pub type MissingByReference = BTreeMap<Kind, BTreeMap<String, Vec<String>>>;

/// Unexpected names kept per kind.
pub const MAX_UNION_NAMES: usize = 200;

impl PolledTarget {
    /// A report compared with nothing (`/probe` keeps no baselines).
    pub fn without_baseline(report: PollReport) -> PolledTarget {
        PolledTarget {
            report,
            diffs: BTreeMap::new(),
            reference_missing: BTreeMap::new(),
            reference_union: BTreeMap::new(),
        }
    }
}

/// A poll held against the baselines: per kind what changed since the last
/// complete listing, the complete listings kept as the new baselines (at
/// `now`, Unix seconds), then the target against each configured reference.
/// When a baseline changed and a state directory is configured, also
/// returns the target's file to write (or why it cannot be): the caller
/// writes it after releasing the store (the write syncs to disk).
pub fn compare(
    store: &mut BaselineStore,
    report: PollReport,
    references: &[ReferenceConfig],
    now: f64,
) -> (PolledTarget, Option<Result<PendingWrite, BaselineError>>) {
    let (diffs, write) = diff_and_keep(store, &report, now);
    let (reference_missing, reference_union) = against_references(store, &report, references);
    let polled = PolledTarget {
        report,
        diffs,
        reference_missing,
        reference_union,
    };
    (polled, write)
}

/// Churn and content drift of every listing since its baseline; complete
/// listings that differ from their baseline become it. An unchanged
/// catalogue writes nothing: at 2,000 targets a file synced per poll under
/// the store's lock stalled the whole poller.
fn diff_and_keep(
    store: &mut BaselineStore,
    report: &PollReport,
    now: f64,
) -> (
    BTreeMap<Kind, KindDiff>,
    Option<Result<PendingWrite, BaselineError>>,
) {
    let mut diffs = BTreeMap::new();
    let mut changed = false;
    for listing in &report.listings {
        let previous = store.names(&report.target, listing.kind);
        if let Some(mut d) = diff(previous, listing) {
            let before = store.fingerprints(&report.target, listing.kind);
            d.drift = content_changes(before, listing);
            diffs.insert(listing.kind, d);
        }
        if listing.outcome == Outcome::Complete
            && !store.holds(
                &report.target,
                listing.kind,
                &listing.names,
                &listing.fingerprints,
            )
        {
            store.set(
                &report.target,
                listing.kind,
                &listing.names,
                listing.fingerprints.clone(),
                now,
            );
            changed = true;
        }
    }
    let write = changed
        .then(|| store.encode(&report.target).transpose())
        .flatten();
    (diffs, write)
}

/// Per kind and reference, the reference's items (renamed by its `map`)
/// this target lacks; per kind compared with two or more references, the
/// target against their union. Only complete listings on both sides count.
fn against_references(
    store: &BaselineStore,
    report: &PollReport,
    references: &[ReferenceConfig],
) -> (MissingByReference, BTreeMap<Kind, ReferenceUnion>) {
    let mut reference_missing = MissingByReference::new();
    // Per kind: the renamed names of every compared reference.
    let mut expected: BTreeMap<Kind, (Vec<String>, BTreeSet<String>)> = BTreeMap::new();
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
            let map = reference.name_map(kind);
            let missing = missing_from(&listing.names, origin, &map);
            let (compared, names) = expected.entry(kind).or_default();
            compared.push(reference.target.clone());
            names.extend(origin.iter().map(|n| map.apply(n).into_owned()));
            reference_missing
                .entry(kind)
                .or_default()
                .insert(reference.target.clone(), missing);
        }
    }
    let reference_union = expected
        .into_iter()
        .filter(|(_, (compared, _))| compared.len() >= 2)
        .filter_map(|(kind, (compared, names))| {
            let listing = report.listing(kind)?;
            Some((kind, union_gap(&listing.names, compared, &names)))
        })
        .collect();
    (reference_missing, reference_union)
}

/// Item-content drift of a complete listing against the previous
/// fingerprints. Items new or gone are churn, not drift.
pub fn content_changes(
    previous: Option<BaselinePrints<'_>>,
    listing: &ListingReport,
) -> ContentDrift {
    let (count, changed) = match previous {
        Some(old) if listing.outcome == Outcome::Complete => changed_items(
            listing.kind,
            |name| old.get(name),
            &listing.fingerprints,
            MAX_CHANGES_NAMED,
        ),
        _ => (0, Vec::new()),
    };
    ContentDrift {
        changed_items: count,
        changed,
    }
}

fn union_gap(
    gateway: &[String],
    references: Vec<String>,
    expected: &BTreeSet<String>,
) -> ReferenceUnion {
    let have: BTreeSet<&str> = gateway.iter().map(String::as_str).collect();
    let missing_total = expected
        .iter()
        .filter(|n| !have.contains(n.as_str()))
        .count() as u64;
    let unexpected: Vec<&String> = gateway.iter().filter(|n| !expected.contains(*n)).collect();
    ReferenceUnion {
        references,
        expected_items: expected.len() as u64,
        missing_total,
        unexpected_total: unexpected.len() as u64,
        unexpected: unexpected
            .into_iter()
            .take(MAX_UNION_NAMES)
            .cloned()
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn report(names: &[&str]) -> PollReport {
        PollReport::tools_for_test("t", names)
    }

    #[test]
    fn only_a_changed_catalogue_is_written() {
        let dir = tempfile::tempdir().unwrap();
        let (mut store, _) = BaselineStore::open(Some(dir.path()));
        let (_, first) = compare(&mut store, report(&["a", "b"]), &[], 1.0);
        first
            .expect("the first listing is written")
            .unwrap()
            .run()
            .unwrap();
        let (polled, same) = compare(&mut store, report(&["a", "b"]), &[], 2.0);
        assert!(same.is_none(), "an unchanged listing rewrote its file");
        assert!(polled.diffs[&Kind::Tools].had_baseline);
        let (polled, shrunk) = compare(&mut store, report(&["a"]), &[], 3.0);
        assert_eq!(polled.diffs[&Kind::Tools].removed, ["b"]);
        shrunk
            .expect("a changed listing is written")
            .unwrap()
            .run()
            .unwrap();
        let (again, problems) = BaselineStore::open(Some(dir.path()));
        assert!(problems.is_empty());
        assert_eq!(again.names("t", Kind::Tools).unwrap(), ["a"]);
    }
}
