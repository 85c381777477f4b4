//! Per-target families of the poll as a whole: up, polls, the last poll's
//! duration and time to ready (last-value gauges, as blackbox_exporter's
//! `probe_duration_seconds`), server info.

use super::super::families::{precreate, CounterFamily, FloatGaugeFamily, GaugeFamily, Source};
use super::super::labels::{ServerInfoLabels, TargetLabels};
use prometheus_client::metrics::family::Family;
use prometheus_client::registry::Registry;
use prometheus_client::registry::Unit;

#[derive(Debug)]
pub struct PollFamilies {
    pub up: GaugeFamily<TargetLabels>,
    pub polls: CounterFamily<TargetLabels>,
    pub duration: FloatGaugeFamily<TargetLabels>,
    pub time_to_ready: FloatGaugeFamily<TargetLabels>,
    pub server_info: GaugeFamily<ServerInfoLabels>,
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

    /// Server info is dropped by the caller, which knows its labels.
    pub fn remove_target(&self, target: &str) {
        let t = TargetLabels::new(target);
        self.up.remove(&t);
        self.polls.remove(&t);
        self.duration.remove(&t);
        self.time_to_ready.remove(&t);
    }
}
