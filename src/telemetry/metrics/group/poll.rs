//! Per-target families of the poll as a whole: up, durations, server info.

use super::super::families::{precreate, seconds_histogram, GaugeFamily, HistFamily, Source};
use super::super::labels::{ServerInfoLabels, TargetLabels};
use prometheus_client::metrics::family::Family;
use prometheus_client::registry::Registry;
use prometheus_client::registry::Unit;

#[derive(Debug)]
pub struct PollFamilies {
    pub up: GaugeFamily<TargetLabels>,
    pub duration: HistFamily<TargetLabels>,
    pub time_to_ready: HistFamily<TargetLabels>,
    pub server_info: GaugeFamily<ServerInfoLabels>,
}

impl PollFamilies {
    /// The families, registered in `r`.
    pub fn register(r: &mut Registry, source: Source) -> Self {
        let g = PollFamilies {
            up: Family::default(),
            duration: Family::new_with_constructor(seconds_histogram),
            time_to_ready: Family::new_with_constructor(seconds_histogram),
            server_info: Family::default(),
        };
        r.register(
            "mcp_up",
            format!("1 if {} listed every enabled kind completely (unsupported kinds count as complete), else 0", source.poll()),
            g.up.clone(),
        );
        r.register_with_unit(
            "mcp_poll_duration",
            "Duration of one whole poll of a target: connect, handshake and every listing",
            Unit::Seconds,
            g.duration.clone(),
        );
        r.register_with_unit(
            "mcp_time_to_ready",
            "Connect + handshake + every enabled kind listed completely; observed only for polls where every listing completed",
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

    pub fn create_target(&self, target: &str) {
        let t = TargetLabels::new(target);
        precreate(&self.up, &t);
        precreate(&self.duration, &t);
        precreate(&self.time_to_ready, &t);
    }

    /// Server info is dropped by the caller, which knows its labels.
    pub fn remove_target(&self, target: &str) {
        let t = TargetLabels::new(target);
        self.up.remove(&t);
        self.duration.remove(&t);
        self.time_to_ready.remove(&t);
    }
}
