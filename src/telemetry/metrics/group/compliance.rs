//! The garbage-cursor check's answer per (target, kind).

use super::super::families::{GaugeFamily, Source};
use super::super::labels::GarbageCursorLabels;
use crate::poll::GarbageCursorAnswer;
use mcp_listing::Kind;
use prometheus_client::metrics::family::Family;
use prometheus_client::registry::Registry;

#[derive(Debug)]
pub struct ComplianceFamilies {
    pub garbage_cursor: GaugeFamily<GarbageCursorLabels>,
}

impl ComplianceFamilies {
    /// The families, registered in `r`.
    pub fn register(r: &mut Registry, source: Source) -> Self {
        let g = ComplianceFamilies {
            garbage_cursor: Family::default(),
        };
        r.register(
            "mcp_invalid_cursor_probe_result",
            "Constant 1; the result label is the answer the server gave to a deliberately invalid cursor at the last compliance probe",
            g.garbage_cursor.clone(),
        );
        let _ = source;
        g
    }

    /// Not pre-created: a kind has a result once a check ran.
    pub fn remove_kind(&self, target: &str, kind: Kind) {
        for answer in GarbageCursorAnswer::ALL {
            self.garbage_cursor.remove(&GarbageCursorLabels {
                target: target.to_string(),
                kind: kind.label(),
                result: answer.label(),
            });
        }
    }
}
