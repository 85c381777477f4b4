//! `mcp_protocol_catalogue_missing_items{target,kind,protocol_version}`:
//! with `protocols:`, per version the items listed under another version
//! but not under this one. Only targets with `protocols:` have it, and only
//! while at least two versions listed the kind completely: one gauge per
//! configured version and kind, nothing for every other target. The names
//! are in the verdict, `/api/targets` and the status page, never labels.

use super::super::families::{saturating_i64, GaugeFamily};
use super::super::labels::{target_name, EnumLabel, KindLabel, TargetName};
use super::super::series::{lock, KeptLabels, Registrar};
use crate::poll::PollReport;
use mcp_listing::ProtocolVersion;
use prometheus_client::encoding::EncodeLabelSet;
use std::sync::Mutex;

/// `protocol_version` is one of the versions the exporter speaks (checked
/// at config load), so the label has at most five values.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub(crate) struct ProtocolLabels {
    pub target: TargetName,
    pub kind: KindLabel,
    pub protocol_version: EnumLabel<ProtocolVersion>,
}

#[derive(Debug)]
pub struct ProtocolFamilies {
    missing: GaugeFamily<ProtocolLabels>,
    /// Each target's series, so those no longer compared can be dropped.
    open: Mutex<KeptLabels<TargetName, ProtocolLabels>>,
}

impl ProtocolFamilies {
    /// The family, registered through `r`.
    pub fn register(r: &mut Registrar<'_>) -> Self {
        ProtocolFamilies {
            missing: r.family(
                "mcp_protocol_catalogue_missing_items",
                format!("With protocols configured: items listed completely under another protocol version but missing under this one, from {}", r.source.poll()),
            )
            .new_plain(),
            open: Mutex::default(),
        }
    }

    /// Set this poll's comparisons; drop series no longer compared (a
    /// version that did not complete, or `protocols:` removed).
    pub fn observe(&self, report: &PollReport) {
        let target = target_name(&report.target);
        let mut open = lock(&self.open);
        let mut now = Vec::new();
        for catalogue in &report.protocol_catalogues {
            for k in &catalogue.kinds {
                let Some(missing) = k.missing_total else {
                    continue;
                };
                let labels = ProtocolLabels {
                    target: target.clone(),
                    kind: EnumLabel(k.kind),
                    protocol_version: EnumLabel(catalogue.protocol_version),
                };
                self.missing
                    .get_or_create(&labels)
                    .set(saturating_i64(missing));
                now.push(labels);
            }
        }
        open.replace(target, now, &self.missing);
    }

    /// Drop every series of `target` (removed by a reload).
    pub fn forget_target(&self, target: &str) {
        lock(&self.open).forget(&target.to_string(), &self.missing);
    }
}
