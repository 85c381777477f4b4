//! Per (target, kind) counters of listing attempts: attempts by outcome and
//! their reasons, requests, and the rare events of a walk. What the last
//! listing found is `group::catalogue`. Attempts are the sum of the outcome
//! counter over `outcome` (no family of their own: a series that is a sum
//! of others is a cost and nothing more).
//!
//! Pre-created (at 0 when the target is configured): the outcome counters
//! and requests. Reason breakdowns (guard, error, restart
//! reason) and rare events are created when they first happen; alerts key
//! on the pre-created outcome counter instead (docs/metrics.md,
//! "Pre-creation").

use super::super::families::{
    error_labels, guard_labels, inc_when_seen, precreate, restart_labels, CounterFamily, Source,
};
use super::super::labels::{
    target_name, AttemptOutcome, EnumLabel, ErrorLabels, GuardLabels, OutcomeLabels, RestartLabels,
    TargetKindLabels,
};
use mcp_listing::report::RestartReason;
use mcp_listing::{ErrorKind, Guard, Kind, ListingReport, Outcome};
use prometheus_client::metrics::family::Family;
use prometheus_client::registry::Registry;

#[derive(Debug)]
pub struct ListingFamilies {
    outcomes: CounterFamily<OutcomeLabels>,
    aborts: CounterFamily<GuardLabels>,
    errors: CounterFamily<ErrorLabels>,
    restarts: CounterFamily<RestartLabels>,
    list_requests: CounterFamily<TargetKindLabels>,
    invalid_cursor: CounterFamily<TargetKindLabels>,
    list_changed: CounterFamily<TargetKindLabels>,
    blank_cursor: CounterFamily<TargetKindLabels>,
}

impl ListingFamilies {
    /// The families, registered in `r`.
    pub fn register(r: &mut Registry, _source: Source) -> Self {
        let g = ListingFamilies {
            outcomes: Family::default(),
            aborts: Family::default(),
            errors: Family::default(),
            restarts: Family::default(),
            list_requests: Family::default(),
            invalid_cursor: Family::default(),
            list_changed: Family::default(),
            blank_cursor: Family::default(),
        };
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
        g
    }

    /// Count one attempt (not an unsupported kind: nothing was sent): its
    /// requests and walk events, its outcome and the outcome's reason.
    pub fn observe(&self, l: &TargetKindLabels, listing: &ListingReport) {
        let target: &str = &l.target;
        self.list_requests
            .get_or_create(l)
            .inc_by(u64::from(listing.requests()));
        inc_when_seen(
            &self.invalid_cursor,
            l,
            u64::from(listing.invalid_cursor_errors),
        );
        for restart in &listing.restarts {
            self.restarts
                .get_or_create(&restart_labels(target, listing.kind, restart.reason))
                .inc();
        }
        inc_when_seen(
            &self.list_changed,
            l,
            u64::from(listing.list_changed_notifications),
        );
        let outcome = match listing.outcome {
            Outcome::Complete => {
                if listing.blank_cursor_end {
                    self.blank_cursor.get_or_create(l).inc();
                }
                AttemptOutcome::Complete
            }
            Outcome::Aborted(guard) => {
                self.aborts
                    .get_or_create(&guard_labels(target, listing.kind, guard))
                    .inc();
                AttemptOutcome::Aborted
            }
            Outcome::Error(error) => {
                self.errors
                    .get_or_create(&error_labels(target, listing.kind, error))
                    .inc();
                AttemptOutcome::Error
            }
            Outcome::Unsupported => return,
        };
        self.outcomes
            .get_or_create(&outcome_labels(target, listing.kind, outcome))
            .inc();
    }

    /// A `list_changed` notification seen by watch mode (outside a walk).
    pub fn list_changed_seen(&self, l: &TargetKindLabels) {
        inc_when_seen(&self.list_changed, l, 1);
    }

    /// Pre-create the attempt, outcome and request counters at 0.
    pub fn create_kind(&self, target: &str, kind: Kind) {
        let l = TargetKindLabels::new(target, kind);
        precreate(&self.list_requests, &l);
        for outcome in AttemptOutcome::ALL {
            precreate(&self.outcomes, &outcome_labels(target, kind, outcome));
        }
    }

    pub fn remove_kind(&self, target: &str, kind: Kind) {
        let l = TargetKindLabels::new(target, kind);
        for family in [
            &self.list_requests,
            &self.invalid_cursor,
            &self.list_changed,
            &self.blank_cursor,
        ] {
            family.remove(&l);
        }
        for outcome in AttemptOutcome::ALL {
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

fn outcome_labels(target: &str, kind: Kind, outcome: AttemptOutcome) -> OutcomeLabels {
    OutcomeLabels {
        target: target_name(target),
        kind: EnumLabel(kind),
        outcome: EnumLabel(outcome),
    }
}
