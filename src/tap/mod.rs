//! The tap inside the application: each configured tap (or the one of
//! `mcp-exporter tap`) runs the data path (`mcp_tap`) on its own listener,
//! hands its copies through a bounded queue to one observer task, and turns
//! what the observer finds into client verdicts, metrics, spans, logs and
//! the status page's "Clients" section.

pub mod client_verdicts;
pub mod client_views;
pub mod fds;
pub mod learn;
pub mod observe;
pub mod queue;
pub mod recent_misuse;
pub mod reference;
pub mod report_file;
pub mod run;
pub mod service;
pub mod setup;
pub mod start_error;
pub mod stdin;
pub mod stdio;
pub mod supervise;
#[cfg(debug_assertions)]
pub(crate) mod test_hooks;
