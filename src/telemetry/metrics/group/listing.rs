//! Per (target, kind) families of each listing: attempts, outcomes, counts, pages.

use super::super::families::{
    error_labels, guard_labels, pages_histogram, precreate, restart_labels, seconds_histogram,
    CounterFamily, FloatGaugeFamily, GaugeFamily, HistFamily, Source,
};
use super::super::labels::{ErrorLabels, GuardLabels, RestartLabels, TargetKindLabels};
use crate::listing::report::RestartReason;
use crate::listing::{ErrorKind, Guard, Kind};
use prometheus_client::metrics::family::Family;
use prometheus_client::registry::Registry;
use prometheus_client::registry::Unit;

#[derive(Debug)]
pub struct ListingFamilies {
    pub listings: CounterFamily<TargetKindLabels>,
    pub aborts: CounterFamily<GuardLabels>,
    pub errors: CounterFamily<ErrorLabels>,
    pub restarts: CounterFamily<RestartLabels>,
    pub list_requests: CounterFamily<TargetKindLabels>,
    pub invalid_cursor: CounterFamily<TargetKindLabels>,
    pub list_changed: CounterFamily<TargetKindLabels>,
    pub blank_cursor: CounterFamily<TargetKindLabels>,
    pub items: GaugeFamily<TargetKindLabels>,
    pub raw_items: GaugeFamily<TargetKindLabels>,
    pub duplicate_items: GaugeFamily<TargetKindLabels>,
    pub invalid_items: GaugeFamily<TargetKindLabels>,
    pub unsupported: GaugeFamily<TargetKindLabels>,
    pub expected_min_items: GaugeFamily<TargetKindLabels>,
    pub last_success: FloatGaugeFamily<TargetKindLabels>,
    pub pages: HistFamily<TargetKindLabels>,
    pub duration: HistFamily<TargetKindLabels>,
}

impl ListingFamilies {
    /// The families, registered in `r`.
    pub fn register(r: &mut Registry, source: Source) -> Self {
        let g = ListingFamilies {
            listings: Family::default(),
            aborts: Family::default(),
            errors: Family::default(),
            restarts: Family::default(),
            list_requests: Family::default(),
            invalid_cursor: Family::default(),
            list_changed: Family::default(),
            blank_cursor: Family::default(),
            items: Family::default(),
            raw_items: Family::default(),
            duplicate_items: Family::default(),
            invalid_items: Family::default(),
            unsupported: Family::default(),
            expected_min_items: Family::default(),
            last_success: Family::default(),
            pages: Family::new_with_constructor(pages_histogram),
            duration: Family::new_with_constructor(seconds_histogram),
        };
        r.register(
            "mcp_listings",
            "Listing attempts (every enabled kind the server advertises, once per poll)",
            g.listings.clone(),
        );
        r.register(
            "mcp_listing_aborts",
            "Listings stopped by a walker guard although every response was well-formed",
            g.aborts.clone(),
        );
        r.register(
            "mcp_listing_errors",
            "Listings that failed, by error",
            g.errors.clone(),
        );
        r.register(
            "mcp_listing_restarts",
            "Walks started over from the first page, by reason",
            g.restarts.clone(),
        );
        r.register(
            "mcp_list_requests",
            "Page requests sent (every page of every attempt, restarts included)",
            g.list_requests.clone(),
        );
        r.register(
            "mcp_list_invalid_cursor",
            "-32602 (invalid params) answers to a request that carried a cursor",
            g.invalid_cursor.clone(),
        );
        r.register(
            "mcp_list_changed_notifications",
            "list_changed notifications seen for the kind, during walks and by watch mode",
            g.list_changed.clone(),
        );
        r.register(
            "mcp_listing_blank_cursor",
            "Listings (protocol before 2026-07-28) ended by an empty-string nextCursor and counted complete",
            g.blank_cursor.clone(),
        );
        r.register(
            "mcp_listing_items",
            format!(
                "Unique items (by identity key) of the last complete listing, from {}",
                source.polls()
            ),
            g.items.clone(),
        );
        r.register(
            "mcp_listing_raw_items",
            format!("Items before dedupe of the last listing that completed or was aborted by a guard, from {}", source.polls()),
            g.raw_items.clone(),
        );
        r.register(
            "mcp_listing_duplicate_items",
            format!("Raw minus unique items of the last listing that completed or was aborted by a guard, from {}", source.polls()),
            g.duplicate_items.clone(),
        );
        r.register(
            "mcp_listing_invalid_items",
            format!("Items without their identity key in the last listing that completed or was aborted by a guard, from {}", source.polls()),
            g.invalid_items.clone(),
        );
        r.register(
            "mcp_listing_unsupported",
            format!(
                "1 if the server did not advertise the kind, as last seen by {}, else 0",
                source.polls()
            ),
            g.unsupported.clone(),
        );
        r.register(
            "mcp_listing_expected_min_items",
            "Configured minimum of unique items for the kind",
            g.expected_min_items.clone(),
        );
        r.register_with_unit(
            "mcp_last_success_timestamp",
            format!(
                "Unix time at which the last complete listing ended, from {} (0 = none yet)",
                source.polls()
            ),
            Unit::Seconds,
            g.last_success.clone(),
        );
        r.register(
            "mcp_listing_pages",
            "Pages the final attempt of a complete listing needed",
            g.pages.clone(),
        );
        r.register_with_unit(
            "mcp_listing_duration",
            "Duration of one complete listing, restarts included",
            Unit::Seconds,
            g.duration.clone(),
        );
        g
    }

    /// Pre-create every series of (target, kind) at 0, including each
    /// guard, error and restart label. `expected_min_items` is not: it
    /// exists only when configured.
    pub fn create_kind(&self, target: &str, kind: Kind) {
        let l = TargetKindLabels::new(target, kind.label());
        for family in [
            &self.listings,
            &self.list_requests,
            &self.invalid_cursor,
            &self.list_changed,
            &self.blank_cursor,
        ] {
            precreate(family, &l);
        }
        for family in [
            &self.items,
            &self.raw_items,
            &self.duplicate_items,
            &self.invalid_items,
            &self.unsupported,
        ] {
            precreate(family, &l);
        }
        precreate(&self.pages, &l);
        precreate(&self.duration, &l);
        precreate(&self.last_success, &l);
        for g in Guard::ALL {
            precreate(&self.aborts, &guard_labels(target, kind, g));
        }
        for e in ErrorKind::ALL {
            precreate(&self.errors, &error_labels(target, kind, e));
        }
        for r in RestartReason::ALL {
            precreate(&self.restarts, &restart_labels(target, kind, r));
        }
    }

    pub fn remove_kind(&self, target: &str, kind: Kind) {
        let l = TargetKindLabels::new(target, kind.label());
        for family in [
            &self.listings,
            &self.list_requests,
            &self.invalid_cursor,
            &self.list_changed,
            &self.blank_cursor,
        ] {
            family.remove(&l);
        }
        for family in [
            &self.items,
            &self.raw_items,
            &self.duplicate_items,
            &self.invalid_items,
            &self.unsupported,
            &self.expected_min_items,
        ] {
            family.remove(&l);
        }
        self.pages.remove(&l);
        self.duration.remove(&l);
        self.last_success.remove(&l);
        for g in Guard::ALL {
            self.aborts.remove(&guard_labels(target, kind, g));
        }
        for e in ErrorKind::ALL {
            self.errors.remove(&error_labels(target, kind, e));
        }
        for r in RestartReason::ALL {
            self.restarts.remove(&restart_labels(target, kind, r));
        }
    }
}
