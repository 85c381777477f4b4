//! `mcp_protocol_catalogue_missing_items{target,kind,protocol_version}`:
//! with `protocols:`, per version the items listed under another version
//! but not under this one. Only targets with `protocols:` have it, and only
//! while at least two versions listed the kind completely: one gauge per
//! configured version and kind, nothing for every other target. The names
//! are in the verdict, `/api/targets` and the status page, never labels.

use super::super::families::{GaugeFamily, Source};
use super::super::labels::{EnumLabel, KindLabel};
use crate::poll::PollReport;
use mcp_listing::{Kind, ProtocolVersion};
use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::family::Family;
use prometheus_client::registry::Registry;
use std::collections::BTreeSet;
use std::sync::Mutex;

/// `protocol_version` is one of the versions the exporter speaks (checked
/// at config load), so the label has at most five values.
#[derive(Clone, Debug, Hash, PartialEq, Eq, PartialOrd, Ord, EncodeLabelSet)]
pub(crate) struct ProtocolLabels {
    pub target: String,
    pub kind: KindLabel,
    pub protocol_version: &'static str,
}

#[derive(Debug)]
pub struct ProtocolFamilies {
    missing: GaugeFamily<ProtocolLabels>,
    /// Series that exist, so a target's can be dropped.
    open: Mutex<BTreeSet<ProtocolLabels>>,
}

impl ProtocolFamilies {
    /// The family, registered in `r`.
    pub fn register(r: &mut Registry, source: Source) -> Self {
        let g = ProtocolFamilies {
            missing: Family::default(),
            open: Mutex::new(BTreeSet::new()),
        };
        r.register(
            "mcp_protocol_catalogue_missing_items",
            format!("With protocols configured: items listed completely under another protocol version but missing under this one, from {}", source.poll()),
            g.missing.clone(),
        );
        g
    }

    /// Set this poll's comparisons; drop series no longer compared (a
    /// version that did not complete, or `protocols:` removed).
    pub fn observe(&self, report: &PollReport) {
        let mut now = BTreeSet::new();
        for catalogue in &report.protocol_catalogues {
            for k in &catalogue.kinds {
                let Some(missing) = k.missing_total else {
                    continue;
                };
                let labels = labels(&report.target, k.kind, catalogue.protocol_version);
                self.missing
                    .get_or_create(&labels)
                    .set(i64::try_from(missing).unwrap_or(i64::MAX));
                now.insert(labels);
            }
        }
        let mut open = self.lock();
        let stale: Vec<ProtocolLabels> = open
            .iter()
            .filter(|l| l.target == report.target && !now.contains(*l))
            .cloned()
            .collect();
        for l in stale {
            self.missing.remove(&l);
            open.remove(&l);
        }
        open.extend(now);
    }

    /// Drop every series of `target` (removed by a reload).
    pub fn forget_target(&self, target: &str) {
        let mut open = self.lock();
        let gone: Vec<ProtocolLabels> = open
            .iter()
            .filter(|l| l.target == target)
            .cloned()
            .collect();
        for l in gone {
            self.missing.remove(&l);
            open.remove(&l);
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, BTreeSet<ProtocolLabels>> {
        match self.open.lock() {
            Ok(g) => g,
            Err(p) => p.into_inner(),
        }
    }
}

fn labels(target: &str, kind: Kind, version: ProtocolVersion) -> ProtocolLabels {
    ProtocolLabels {
        target: target.to_string(),
        kind: EnumLabel(kind),
        protocol_version: version.label(),
    }
}
