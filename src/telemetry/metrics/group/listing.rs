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

use super::super::families::{inc_when_seen, CounterFamily};
use super::super::labels::{AttemptOutcome, KindValueLabels, TargetKindLabels};
use super::super::series::{Creation, Registrar};
use mcp_listing::report::RestartReason;
use mcp_listing::{ErrorKind, Guard, ListingReport, Outcome};

#[derive(Debug)]
pub struct ListingFamilies {
    outcomes: CounterFamily<KindValueLabels<AttemptOutcome>>,
    aborts: CounterFamily<KindValueLabels<Guard>>,
    errors: CounterFamily<KindValueLabels<ErrorKind>>,
    restarts: CounterFamily<KindValueLabels<RestartReason>>,
    list_requests: CounterFamily<TargetKindLabels>,
    invalid_cursor: CounterFamily<TargetKindLabels>,
    list_changed: CounterFamily<TargetKindLabels>,
    blank_cursor: CounterFamily<TargetKindLabels>,
}

impl ListingFamilies {
    /// The families, registered through `r`.
    pub fn register(r: &mut Registrar<'_>) -> Self {
        ListingFamilies {
            outcomes: r.family(
                "mcp_listing_outcomes",
                "Listing attempts by outcome: complete, aborted (a walker guard) or error",
            )
            .new_per_kind(Creation::AtZero),
            aborts: r.family(
                "mcp_listing_aborts",
                "Listings stopped by a walker guard although every response was well-formed, by guard (created at the first abort)",
            )
            .new_per_kind(Creation::FirstValue),
            errors: r.family(
                "mcp_listing_errors",
                "Listings that failed, by error (created at the first error)",
            )
            .new_per_kind(Creation::FirstValue),
            restarts: r.family(
                "mcp_listing_restarts",
                "Walks started over from the first page, by reason (created at the first restart)",
            )
            .new_per_kind(Creation::FirstValue),
            list_requests: r.family(
                "mcp_list_requests",
                "Page requests sent (every page of every attempt, restarts included)",
            )
            .new_per_kind(Creation::AtZero),
            invalid_cursor: r.family(
                "mcp_list_invalid_cursor",
                "-32602 answers to a request that carried a cursor (created at the first)",
            )
            .new_per_kind(Creation::FirstValue),
            list_changed: r.family(
                "mcp_list_changed_notifications",
                "list_changed notifications seen for the kind, during walks and by watch mode (created at the first)",
            )
            .new_per_kind(Creation::FirstValue),
            blank_cursor: r.family(
                "mcp_listing_blank_cursor",
                "Listings (protocol before 2026-07-28) ended by an empty-string nextCursor and counted complete (created at the first)",
            )
            .new_per_kind(Creation::FirstValue),
        }
    }

    /// Count one attempt (not an unsupported kind: nothing was sent): its
    /// requests and walk events, its outcome and the outcome's reason.
    pub fn observe(&self, l: &TargetKindLabels, listing: &ListingReport) {
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
                .get_or_create(&KindValueLabels::new(l, restart.reason))
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
                    .get_or_create(&KindValueLabels::new(l, guard))
                    .inc();
                AttemptOutcome::Aborted
            }
            Outcome::Error(error) => {
                self.errors
                    .get_or_create(&KindValueLabels::new(l, error))
                    .inc();
                AttemptOutcome::Error
            }
            Outcome::Unsupported => return,
        };
        self.outcomes
            .get_or_create(&KindValueLabels::new(l, outcome))
            .inc();
    }

    /// A `list_changed` notification seen by watch mode (outside a walk).
    pub fn list_changed_seen(&self, l: &TargetKindLabels) {
        inc_when_seen(&self.list_changed, l, 1);
    }
}
