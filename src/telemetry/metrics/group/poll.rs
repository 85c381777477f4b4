//! Per-target families of the poll as a whole: up, polls, the last poll's
//! duration and time to ready (last-value gauges, as blackbox_exporter's
//! `probe_duration_seconds`), server info.

use super::super::families::{precreate, CounterFamily, FloatGaugeFamily, GaugeFamily, Source};
use super::super::labels::{truncate_label, ServerInfoLabels, TargetLabels};
use crate::poll::PollReport;
use prometheus_client::metrics::family::Family;
use prometheus_client::registry::Registry;
use prometheus_client::registry::Unit;
use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard};

#[derive(Debug)]
pub struct PollFamilies {
    up: GaugeFamily<TargetLabels>,
    polls: CounterFamily<TargetLabels>,
    duration: FloatGaugeFamily<TargetLabels>,
    time_to_ready: FloatGaugeFamily<TargetLabels>,
    server_info: GaugeFamily<ServerInfoLabels>,
    /// Each target's `mcp_server_info` labels (server-chosen values), so a
    /// change replaces the series and a removed target's can be dropped.
    server_info_labels: Mutex<HashMap<String, ServerInfoLabels>>,
}

impl PollFamilies {
    /// The families, registered in `r`.
    pub fn register(r: &mut Registry, source: Source) -> Self {
        let g = PollFamilies {
            up: Family::default(),
            polls: Family::default(),
            duration: Family::default(),
            time_to_ready: Family::default(),
            server_info: Family::default(),
            server_info_labels: Mutex::new(HashMap::new()),
        };
        r.register(
            "mcp_up",
            format!("1 if {} listed every enabled kind completely (unsupported kinds count as complete), else 0", source.poll()),
            g.up.clone(),
        );
        r.register(
            "mcp_polls",
            "Polls of the target (watch-mode re-lists are not polls)",
            g.polls.clone(),
        );
        r.register_with_unit(
            "mcp_poll_duration",
            format!(
                "Duration of {}: connect, handshake and every listing, whatever the outcome",
                source.poll()
            ),
            Unit::Seconds,
            g.duration.clone(),
        );
        r.register_with_unit(
            "mcp_time_to_ready",
            format!("Connect + handshake + every enabled kind listed completely, in the last of {} where every listing completed", source.polls()),
            Unit::Seconds,
            g.time_to_ready.clone(),
        );
        r.register(
            "mcp_server_info",
            format!("Constant 1; labels are the server's self-description (each truncated to 128 characters) from the last handshake of {}", source.polls()),
            g.server_info.clone(),
        );
        g
    }

    /// The last-value gauges appear with the first poll (0 would be a
    /// measurement).
    pub fn create_target(&self, target: &str) {
        let t = TargetLabels::new(target);
        precreate(&self.up, &t);
        precreate(&self.polls, &t);
    }

    pub fn remove_target(&self, target: &str) {
        let t = TargetLabels::new(target);
        self.up.remove(&t);
        self.polls.remove(&t);
        self.duration.remove(&t);
        self.time_to_ready.remove(&t);
        if let Some(info) = self.lock_server_info().remove(target) {
            self.server_info.remove(&info);
        }
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
        let labels = ServerInfoLabels {
            target: report.target.clone(),
            server_name: truncate_label(&server.name),
            server_version: truncate_label(&server.version),
            protocol_version: truncate_label(report.protocol_version.as_deref().unwrap_or("")),
            transport: truncate_label(report.transport.label()),
        };
        let mut known = self.lock_server_info();
        if let Some(old) = known.get(&report.target) {
            if *old != labels {
                self.server_info.remove(old);
            }
        }
        self.server_info.get_or_create(&labels).set(1);
        known.insert(report.target.clone(), labels);
    }

    fn lock_server_info(&self) -> MutexGuard<'_, HashMap<String, ServerInfoLabels>> {
        // Each update is a whole insert or remove, so a poisoned map is usable.
        self.server_info_labels
            .lock()
            .unwrap_or_else(|p| p.into_inner())
    }
}
