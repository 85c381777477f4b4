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
//! a struct with private families, `register(&mut Registrar)` — which says,
//! per family, whether its series belong to a target or a target's kind and
//! when they are created, so configuring and forgetting a target needs no
//! code in the group (`series.rs`) — and the methods that set them; series
//! whose labels are not known in advance are kept in a `KeptLabels`.
//! `target.rs` holds the groups and calls them. Document every series in
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
