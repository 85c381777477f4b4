//! Per-target families in small groups, each registering itself, setting
//! its own series from a report and creating and dropping them: `poll` (up,
//! polls, last poll, server info), `listing` (attempts, outcomes and their
//! reasons, requests, walk events), `catalogue` (what the listings found:
//! items, counts, last complete listing, verdict), `churn` (against the
//! baselines and references), `compliance` (the garbage-cursor check),
//! `page` (fleet-wide page histograms, no target label), `detail` (opt-in
//! per-target histograms) and `protocols` (`protocols:` targets only).
//! `conformance` (serve-mode rules, opt-in) is registered on its own: it has
//! its own schedule.
//!
//! A new family goes in the group it belongs to, or a file of its own here:
//! a struct with private families, `register(&mut Registry, Source)`, the
//! methods that set them and, if per target, create/remove functions;
//! `target.rs` holds the group and calls them. Document every series in
//! docs/metrics.md and count it in the per-target budget there.

pub mod catalogue;
pub mod churn;
pub mod compliance;
pub mod conformance;
pub mod detail;
pub mod listing;
pub mod page;
pub mod poll;
pub mod protocols;
