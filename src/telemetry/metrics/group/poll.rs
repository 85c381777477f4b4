//! Per-target families of the poll as a whole: up, polls, the last poll's
//! duration and time to ready (last-value gauges, as blackbox_exporter's
//! `probe_duration_seconds`), server info.

use super::super::families::{CounterFamily, FloatGaugeFamily, GaugeFamily};
use super::super::labels::{
    target_name, truncate_label, EnumLabel, ServerInfoLabels, TargetLabels, TargetName,
};
use super::super::series::{lock, Creation, KeptLabels, Registrar};
use crate::poll::PollReport;
use prometheus_client::registry::Unit;
use std::sync::Mutex;

#[derive(Debug)]
pub struct PollFamilies {
    up: GaugeFamily<TargetLabels>,
    polls: CounterFamily<TargetLabels>,
    duration: FloatGaugeFamily<TargetLabels>,
    time_to_ready: FloatGaugeFamily<TargetLabels>,
    server_info: GaugeFamily<ServerInfoLabels>,
    /// Each target's `mcp_server_info` labels (server-chosen values), so a
    /// change replaces the series and a removed target's can be dropped.
    server_info_labels: Mutex<KeptLabels<TargetName, ServerInfoLabels>>,
}

impl PollFamilies {
    /// The families, registered through `r`. The last-value gauges appear
    /// with the first poll (0 would be a measurement).
    pub fn register(r: &mut Registrar<'_>) -> Self {
        let (poll, polls) = (r.source.poll(), r.source.polls());
        PollFamilies {
            up: r.family(
                "mcp_up",
                format!("1 if {poll} listed every enabled kind completely (unsupported kinds count as complete), else 0"),
            )
            .new_per_target(Creation::AtZero),
            polls: r.family(
                "mcp_polls",
                "Polls of the target (watch-mode re-lists are not polls)",
            )
            .new_per_target(Creation::AtZero),
            duration: r.family(
                "mcp_poll_duration",
                format!("Duration of {poll}: connect, handshake and every listing, whatever the outcome"),
            )
            .unit(Unit::Seconds)
            .new_per_target(Creation::FirstValue),
            time_to_ready: r.family(
                "mcp_time_to_ready",
                format!("Connect + handshake + every enabled kind listed completely, in the last of {polls} where every listing completed"),
            )
            .unit(Unit::Seconds)
            .new_per_target(Creation::FirstValue),
            server_info: r.family(
                "mcp_server_info",
                format!("Constant 1; labels are the server's self-description (each truncated to 128 characters) from the last handshake of {polls}"),
            )
            .new_plain(),
            server_info_labels: Mutex::default(),
        }
    }

    /// Drops the target's `mcp_server_info` (the other series are the
    /// registrar's to drop).
    pub fn forget_target(&self, target: &str) {
        lock(&self.server_info_labels).forget(&target.to_string(), &self.server_info);
    }

    /// One poll: `up`, the count, its duration and (when every listing
    /// completed) its time to ready.
    pub fn observe(&self, report: &PollReport) {
        let t = TargetLabels::new(&report.target);
        self.set_up(&t, report.all_complete());
        self.polls.get_or_create(&t).inc();
        self.duration
            .get_or_create(&t)
            .set(report.duration.as_secs_f64());
        if let Some(ready) = report.time_to_ready {
            self.time_to_ready
                .get_or_create(&t)
                .set(ready.as_secs_f64());
        }
    }

    pub fn set_up(&self, t: &TargetLabels, up: bool) {
        self.up.get_or_create(t).set(i64::from(up));
    }

    /// Replaces the target's series when any label value changed, so exactly
    /// one `mcp_server_info` series exists per target.
    pub fn set_server_info(&self, report: &PollReport) {
        let Some(server) = &report.server else {
            return;
        };
        let target = target_name(&report.target);
        let labels = ServerInfoLabels {
            target: target.clone(),
            server_name: truncate_label(&server.name),
            server_version: truncate_label(&server.version),
            protocol_version: truncate_label(report.protocol_version.as_deref().unwrap_or("")),
            transport: EnumLabel(report.transport),
        };
        let mut known = lock(&self.server_info_labels);
        self.server_info.get_or_create(&labels).set(1);
        known.replace(target, vec![labels], &self.server_info);
    }
}
