//! Per (target, kind) gauges of what the listings found: the last complete
//! listing's items, pages, duration and end; the last walk's raw, duplicate
//! and invalid counts; whether the server advertises the kind; the
//! configured minimum and the verdict.
//!
//! Pre-created (at 0 when the target is configured): the item counts and
//! the last success timestamp. The last-value gauges of a complete listing
//! (pages, duration), the verdict and the configured minimum appear when
//! they first have a value; invalid items and an unadvertised kind when
//! they are first seen.

use super::super::families::{saturating_i64, set_when_seen, FloatGaugeFamily, GaugeFamily};
use super::super::labels::TargetKindLabels;
use super::super::series::{Creation, Registrar};
use crate::poll::unix_seconds;
use crate::verdict::TargetVerdict;
use mcp_listing::{Kind, ListingReport, Outcome};
use prometheus_client::registry::Unit;
use std::collections::BTreeMap;
use std::time::SystemTime;

#[derive(Debug)]
pub struct CatalogueFamilies {
    items: GaugeFamily<TargetKindLabels>,
    raw_items: GaugeFamily<TargetKindLabels>,
    duplicate_items: GaugeFamily<TargetKindLabels>,
    invalid_items: GaugeFamily<TargetKindLabels>,
    unsupported: GaugeFamily<TargetKindLabels>,
    expected_min_items: GaugeFamily<TargetKindLabels>,
    /// `mcp_verdict`: 0 healthy, 1 degraded, 2 down (docs/verdict.md).
    verdict: GaugeFamily<TargetKindLabels>,
    last_success: FloatGaugeFamily<TargetKindLabels>,
    /// Last complete listing's pages and duration (last-value gauges).
    pages: GaugeFamily<TargetKindLabels>,
    duration: FloatGaugeFamily<TargetKindLabels>,
}

impl CatalogueFamilies {
    /// The families, registered through `r`.
    pub fn register(r: &mut Registrar<'_>) -> Self {
        let (poll, polls) = (r.source.poll(), r.source.polls());
        let (at_zero, first) = (Creation::AtZero, Creation::FirstValue);
        CatalogueFamilies {
            items: r.family(
                "mcp_listing_items",
                format!("Unique items (by identity key) of the last complete listing, from {polls}"),
            )
            .new_per_kind(at_zero),
            raw_items: r.family(
                "mcp_listing_raw_items",
                format!("Items before dedupe of the last listing that completed or was aborted by a guard, from {polls}"),
            )
            .new_per_kind(at_zero),
            duplicate_items: r.family(
                "mcp_listing_duplicate_items",
                format!("Raw minus unique items of the last listing that completed or was aborted by a guard, from {polls}"),
            )
            .new_per_kind(at_zero),
            invalid_items: r.family(
                "mcp_listing_invalid_items",
                format!("Items without their identity key in the last listing that completed or was aborted by a guard, from {polls} (created when first non-zero)"),
            )
            .new_per_kind(first),
            unsupported: r.family(
                "mcp_listing_unsupported",
                format!("1 if the server did not advertise the kind, as last seen by {polls}, else 0"),
            )
            .new_per_kind(first),
            verdict: r.family(
                "mcp_verdict",
                format!("Verdict of {poll} for the kind (docs/verdict.md): 0 healthy, 1 degraded, 2 down"),
            )
            .new_per_kind(first),
            expected_min_items: r.family(
                "mcp_listing_expected_min_items",
                "Configured minimum of unique items for the kind",
            )
            .new_per_kind(first),
            last_success: r.family(
                "mcp_last_success_timestamp",
                format!("Unix time at which the last complete listing ended, from {polls} (0 = none yet)"),
            )
            .unit(Unit::Seconds)
            .new_per_kind(at_zero),
            pages: r.family(
                "mcp_listing_pages",
                format!("Pages the final attempt of the last complete listing needed, from {polls}"),
            )
            .new_per_kind(first),
            duration: r.family(
                "mcp_listing_duration",
                format!("Duration of the last complete listing, restarts included, from {polls}"),
            )
            .unit(Unit::Seconds)
            .new_per_kind(first),
        }
    }

    /// Whether the server advertised the kind, as last seen. Created the
    /// first time a kind is not advertised (a rare condition; 0 on every
    /// healthy server would be four series per target for nothing), then
    /// it follows, back to 0 too.
    pub fn set_unsupported(&self, l: &TargetKindLabels, unsupported: bool) {
        set_when_seen(&self.unsupported, l, i64::from(unsupported));
    }

    /// A complete listing sets every gauge (`ended` is when its last page
    /// finished); an aborted one only the walk counts, its evidence (a
    /// cycling cursor shows as raw >> unique). Failed listings leave the
    /// last values.
    pub fn observe(&self, l: &TargetKindLabels, listing: &ListingReport, ended: SystemTime) {
        match listing.outcome {
            Outcome::Complete => {
                self.pages
                    .get_or_create(l)
                    .set(i64::from(listing.final_pages));
                self.duration
                    .get_or_create(l)
                    .set(listing.duration.as_secs_f64());
                self.items
                    .get_or_create(l)
                    .set(saturating_i64(listing.unique_items));
                self.set_walk_counts(l, listing);
                self.last_success.get_or_create(l).set(unix_seconds(ended));
            }
            Outcome::Aborted(_) => self.set_walk_counts(l, listing),
            Outcome::Error(_) | Outcome::Unsupported => {}
        }
    }

    fn set_walk_counts(&self, l: &TargetKindLabels, listing: &ListingReport) {
        self.raw_items
            .get_or_create(l)
            .set(saturating_i64(listing.raw_items));
        self.duplicate_items
            .get_or_create(l)
            .set(saturating_i64(listing.duplicate_items));
        set_when_seen(
            &self.invalid_items,
            l,
            saturating_i64(listing.invalid_items),
        );
    }

    /// `mcp_verdict` per judged kind. Not pre-created: a kind not judged
    /// yet has no verdict (0 would claim healthy).
    pub fn set_verdict(&self, target: &str, verdict: &TargetVerdict) {
        for (kind, v) in &verdict.kinds {
            self.verdict
                .get_or_create(&TargetKindLabels::new(target, *kind))
                .set(v.level.gauge_value());
        }
    }

    /// `mcp_listing_expected_min_items` as configured now.
    pub fn set_expected(&self, target: &str, expect: &BTreeMap<Kind, u64>) {
        for kind in Kind::ALL {
            let l = TargetKindLabels::new(target, kind);
            match expect.get(&kind) {
                Some(min) => {
                    self.expected_min_items
                        .get_or_create(&l)
                        .set(saturating_i64(*min));
                }
                None => {
                    self.expected_min_items.remove(&l);
                }
            }
        }
    }
}
