//! The garbage-cursor check's answer per (target, kind).

use super::super::families::GaugeFamily;
use super::super::labels::{KindValueLabels, TargetKindLabels};
use super::super::series::{Creation, Registrar};
use crate::poll::{GarbageCursorAnswer, GarbageCursorCheck};

#[derive(Debug)]
pub struct ComplianceFamilies {
    garbage_cursor: GaugeFamily<KindValueLabels<GarbageCursorAnswer>>,
}

impl ComplianceFamilies {
    /// The family, registered through `r`. Not pre-created: a kind has a
    /// result once a check ran.
    pub fn register(r: &mut Registrar<'_>) -> Self {
        ComplianceFamilies {
            garbage_cursor: r.family(
                "mcp_invalid_cursor_probe_result",
                "Constant 1; the result label is the answer the server gave to a deliberately invalid cursor at the last compliance probe",
            )
            .new_per_kind(Creation::FirstValue),
        }
    }

    /// One series per (target, kind): the answer seen, at 1; a different
    /// answer replaces it (four series with three zeros cost 12 samples per
    /// target for nothing).
    pub fn set_garbage_cursor(&self, target: &str, check: &GarbageCursorCheck) {
        let series = TargetKindLabels::new(target, check.kind);
        for answer in GarbageCursorAnswer::ALL {
            let l = KindValueLabels::new(&series, answer);
            if answer == check.result {
                self.garbage_cursor.get_or_create(&l).set(1);
            } else {
                self.garbage_cursor.remove(&l);
            }
        }
    }
}
