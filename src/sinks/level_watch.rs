//! The last verdict level of every scheduled target, so a change is logged
//! once when it happens (`VerdictLevelChanged`), not with every poll.

use crate::telemetry::events::{LevelChange, VerdictLevelChanged};
use crate::verdict::{Health, TargetVerdict};
use std::collections::HashMap;
use std::sync::Mutex;

#[derive(Debug, Default)]
pub struct LevelWatch {
    levels: Mutex<HashMap<String, Health>>,
}

impl LevelWatch {
    /// Keep `verdict`'s level for `target`; log when it differs from the
    /// one kept (or, for a target's first verdict, when it is not healthy).
    pub fn observe(&self, target: &str, verdict: &TargetVerdict) {
        let to = verdict.overall.level;
        let from = {
            let mut levels = self.levels.lock().unwrap_or_else(|p| p.into_inner());
            match levels.get_mut(target) {
                Some(kept) => Some(std::mem::replace(kept, to)),
                None => {
                    levels.insert(target.to_string(), to);
                    None
                }
            }
        };
        let changed = match from {
            Some(from) => from != to,
            None => to != Health::Healthy,
        };
        if changed {
            VerdictLevelChanged {
                target,
                change: LevelChange {
                    from,
                    to,
                    first_reason: verdict.overall.reasons.first(),
                },
            }
            .emit();
        }
    }

    /// A target that left: its next verdict, if it comes back, is a first.
    pub fn forget(&self, target: &str) {
        let mut levels = self.levels.lock().unwrap_or_else(|p| p.into_inner());
        levels.remove(target);
    }
}
