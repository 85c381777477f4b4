//! Per (target, kind) families of each listing: attempts, outcomes and
//! their reasons, counts, and the last complete listing's pages and time.
//!
//! Pre-created (at 0 when the target is configured): the attempt and
//! outcome counters, requests, the catalogue gauges. Reason breakdowns
//! (guard, error, restart reason) and rare events are created when they
//! first happen; alerts key on the pre-created outcome counter instead
//! (docs/metrics.md, "Pre-creation").

use super::super::families::{
    error_labels, guard_labels, precreate, restart_labels, CounterFamily, FloatGaugeFamily,
    GaugeFamily, Source,
};
use super::super::labels::{
    ErrorLabels, GuardLabels, OutcomeLabels, RestartLabels, TargetKindLabels,
};
use mcp_listing::report::RestartReason;
use mcp_listing::{ErrorKind, Guard, Kind};
use prometheus_client::metrics::family::Family;
use prometheus_client::registry::Registry;
use prometheus_client::registry::Unit;

/// Values of `mcp_listing_outcomes_total{outcome}`, all pre-created.
pub const OUTCOMES: [&str; 3] = ["complete", "aborted", "error"];

#[derive(Debug)]
pub struct ListingFamilies {
    pub listings: CounterFamily<TargetKindLabels>,
    pub outcomes: CounterFamily<OutcomeLabels>,
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
    /// `mcp_verdict`: 0 healthy, 1 degraded, 2 down (docs/verdict.md).
    pub verdict: GaugeFamily<TargetKindLabels>,
    pub last_success: FloatGaugeFamily<TargetKindLabels>,
    /// Last complete listing's pages and duration (last-value gauges).
    pub pages: GaugeFamily<TargetKindLabels>,
    pub duration: FloatGaugeFamily<TargetKindLabels>,
}

impl ListingFamilies {
    /// The families, registered in `r`.
    pub fn register(r: &mut Registry, source: Source) -> Self {
        let g = ListingFamilies {
            listings: Family::default(),
            outcomes: Family::default(),
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
            verdict: Family::default(),
            last_success: Family::default(),
            pages: Family::default(),
            duration: Family::default(),
        };
        r.register(
            "mcp_listings",
            "Listing attempts (every enabled kind the server advertises, once per poll)",
            g.listings.clone(),
        );
        r.register(
            "mcp_listing_outcomes",
            "Listing attempts by outcome: complete, aborted (a walker guard) or error",
            g.outcomes.clone(),
        );
        r.register(
            "mcp_listing_aborts",
            "Listings stopped by a walker guard although every response was well-formed, by guard (created at the first abort)",
            g.aborts.clone(),
        );
        r.register(
            "mcp_listing_errors",
            "Listings that failed, by error (created at the first error)",
            g.errors.clone(),
        );
        r.register(
            "mcp_listing_restarts",
            "Walks started over from the first page, by reason (created at the first restart)",
            g.restarts.clone(),
        );
        r.register(
            "mcp_list_requests",
            "Page requests sent (every page of every attempt, restarts included)",
            g.list_requests.clone(),
        );
        r.register(
            "mcp_list_invalid_cursor",
            "-32602 answers to a request that carried a cursor (created at the first)",
            g.invalid_cursor.clone(),
        );
        r.register(
            "mcp_list_changed_notifications",
            "list_changed notifications seen for the kind, during walks and by watch mode (created at the first)",
            g.list_changed.clone(),
        );
        r.register(
            "mcp_listing_blank_cursor",
            "Listings (protocol before 2026-07-28) ended by an empty-string nextCursor and counted complete (created at the first)",
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
            format!("Items without their identity key in the last listing that completed or was aborted by a guard, from {} (created when first non-zero)", source.polls()),
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
            "mcp_verdict",
            format!(
                "Verdict of {} for the kind (docs/verdict.md): 0 healthy, 1 degraded, 2 down",
                source.poll()
            ),
            g.verdict.clone(),
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
            format!(
                "Pages the final attempt of the last complete listing needed, from {}",
                source.polls()
            ),
            g.pages.clone(),
        );
        r.register_with_unit(
            "mcp_listing_duration",
            format!(
                "Duration of the last complete listing, restarts included, from {}",
                source.polls()
            ),
            Unit::Seconds,
            g.duration.clone(),
        );
        g
    }

    /// Pre-create the series every (target, kind) has at 0. Reason
    /// breakdowns, rare events and the last-value gauges are not: they
    /// appear when they first happen.
    pub fn create_kind(&self, target: &str, kind: Kind) {
        let l = TargetKindLabels::new(target, kind.label());
        precreate(&self.listings, &l);
        precreate(&self.list_requests, &l);
        for outcome in OUTCOMES {
            precreate(&self.outcomes, &outcome_labels(target, kind, outcome));
        }
        for family in [
            &self.items,
            &self.raw_items,
            &self.duplicate_items,
            &self.unsupported,
        ] {
            precreate(family, &l);
        }
        precreate(&self.last_success, &l);
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
            &self.verdict,
            &self.pages,
        ] {
            family.remove(&l);
        }
        self.duration.remove(&l);
        self.last_success.remove(&l);
        for outcome in OUTCOMES {
            self.outcomes.remove(&outcome_labels(target, kind, outcome));
        }
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

pub fn outcome_labels(target: &str, kind: Kind, outcome: &'static str) -> OutcomeLabels {
    OutcomeLabels {
        target: target.to_string(),
        kind: kind.label(),
        outcome,
    }
}
