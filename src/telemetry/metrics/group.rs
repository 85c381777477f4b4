//! Per-target families in small groups, each registering itself and
//! creating and dropping its own series: `poll` (up, durations, server
//! info), `listing` (attempts, outcomes, counts, pages), `churn` (against
//! the baselines and references), `compliance` (the garbage-cursor check)
//! `page` (single page requests) and `protocols` (`protocols:` targets only).
//! `conformance` (serve-mode rules, opt-in) is registered on its own: it has
//! its own schedule.

pub mod churn;
pub mod compliance;
pub mod conformance;
pub mod listing;
pub mod page;
pub mod poll;
pub mod protocols;
