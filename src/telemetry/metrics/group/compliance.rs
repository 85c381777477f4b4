//! The garbage-cursor check's answer per (target, kind).

use super::super::families::{GaugeFamily, Source};
use super::super::labels::{target_name, EnumLabel, GarbageCursorLabels};
use crate::poll::{GarbageCursorAnswer, GarbageCursorCheck};
use mcp_listing::Kind;
use prometheus_client::metrics::family::Family;
use prometheus_client::registry::Registry;

#[derive(Debug)]
pub struct ComplianceFamilies {
    garbage_cursor: GaugeFamily<GarbageCursorLabels>,
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

    /// One series per (target, kind): the answer seen, at 1; a different
    /// answer replaces it (four series with three zeros cost 12 samples per
    /// target for nothing).
    pub fn set_garbage_cursor(&self, target: &str, check: &GarbageCursorCheck) {
        for answer in GarbageCursorAnswer::ALL {
            let l = labels(target, check.kind, answer);
            if answer == check.result {
                self.garbage_cursor.get_or_create(&l).set(1);
            } else {
                self.garbage_cursor.remove(&l);
            }
        }
    }

    /// Not pre-created: a kind has a result once a check ran.
    pub fn remove_kind(&self, target: &str, kind: Kind) {
        for answer in GarbageCursorAnswer::ALL {
            self.garbage_cursor.remove(&labels(target, kind, answer));
        }
    }
}

fn labels(target: &str, kind: Kind, answer: GarbageCursorAnswer) -> GarbageCursorLabels {
    GarbageCursorLabels {
        target: target_name(target),
        kind: EnumLabel(kind),
        result: answer.label(),
    }
}
