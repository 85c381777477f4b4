//! Per-target families in small groups, each registering itself and
//! creating and dropping its own series: `poll` (up, polls, last poll,
//! server info), `listing` (attempts, outcomes, counts, last listing),
//! `churn` (against the baselines and references), `compliance` (the
//! garbage-cursor check), `page` (fleet-wide page histograms, no target
//! label), `detail` (opt-in per-target histograms) and `protocols`
//! (`protocols:` targets only). `conformance` (serve-mode rules, opt-in) is
//! registered on its own: it has its own schedule.
//!
//! A new family goes in a file of its own here: a struct with
//! `register(&mut Registry, Source)` and, if per target, create/remove
//! functions; `target.rs` holds it and calls them. Document every series
//! in docs/metrics.md and count it in the per-target budget there.

pub mod churn;
pub mod compliance;
pub mod conformance;
pub mod detail;
pub mod listing;
pub mod page;
pub mod poll;
pub mod protocols;
