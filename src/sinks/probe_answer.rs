//! The `/probe` answer: one report through the same fan-out the scheduler
//! uses, into a fresh registry of its own (metrics only: a probe keeps no
//! baselines, sends no spans and records no status). Its verdict alone
//! (`/probe?debug=true`, `probe --config.file`) needs no registry.

use super::fanout::Fanout;
use crate::config::TargetConfig;
use crate::poll::PollReport;
use crate::telemetry::metrics::{Exposition, TargetMetrics};
use crate::verdict::TargetVerdict;
use prometheus_client::registry::Registry;

/// The metrics text of one probed target, in `format`.
pub fn render(
    report: PollReport,
    target: &TargetConfig,
    format: Exposition,
) -> Result<String, std::fmt::Error> {
    let mut registry = Registry::default();
    let metrics = TargetMetrics::for_probe(&mut registry);
    metrics.register_target(
        &target.name,
        &target.settings.kinds,
        target.settings.metrics_detail,
    );
    Fanout::metrics_only(&metrics).poll(report, target, 0);
    format.encode(&registry)
}

/// `/probe?debug=true`: the human report of one probe — its verdict, then
/// every page with cursors as short hashes — instead of metrics.
pub fn debug(report: PollReport, target: &TargetConfig) -> String {
    let (report, verdict) = judged(report, target);
    format!(
        "probe of target {}\n\n{}\n{}",
        target.name,
        crate::verdict::text::render(&verdict),
        crate::poll::poll_report_text::render(&report)
    )
}

/// One report judged as the scheduler judges it (the target's `expect:`,
/// its per-protocol catalogues), with nothing kept: for `/probe?debug=true`
/// and `mcp-exporter probe --config.file`.
pub fn judged(report: PollReport, target: &TargetConfig) -> (PollReport, TargetVerdict) {
    let (polled, verdict) = Fanout::verdict_only().poll(report, target, 0);
    (polled.report, verdict)
}
