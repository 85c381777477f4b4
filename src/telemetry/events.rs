//! Events of the exporter itself that are both logged and counted, one
//! struct each (vector's `internal_events`): `emit` writes the log line and
//! moves the series, so a log line never goes without its count or the
//! other way round. Events of the OTLP export thread live with it
//! (`spans/export.rs`: their counts are the thread's own), the orphan
//! sweeper's in the wire crate (`process_tree.rs`).

use super::metrics::ExporterMetrics;
use crate::poll::unix_now;

/// A configuration reload was refused (unreadable or invalid file); the
/// running configuration stays.
#[derive(Debug)]
pub struct ConfigReloadFailed<'a> {
    pub error: &'a str,
}

impl ConfigReloadFailed<'_> {
    pub fn emit(self, exporter: &ExporterMetrics) {
        tracing::error!(error = %self.error, "config reload failed; keeping the running config");
        exporter.config_reloaded(false, unix_now());
    }
}
