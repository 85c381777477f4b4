//! Label sets of every family. Values are the target name, a kind, or a fixed
//! enum label, so cardinality stays bounded by the configuration; the only
//! server-chosen values (`mcp_server_info`) are truncated.

use crate::poll::TraceId;
use prometheus_client::encoding::EncodeLabelSet;

/// Longest label value taken from a server's self-description.
pub const MAX_SERVER_LABEL_CHARS: usize = 128;

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub(crate) struct TargetLabels {
    pub target: String,
}

impl TargetLabels {
    pub fn new(target: &str) -> Self {
        TargetLabels {
            target: target.to_string(),
        }
    }
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub(crate) struct TargetKindLabels {
    pub target: String,
    pub kind: &'static str,
}

impl TargetKindLabels {
    pub fn new(target: &str, kind: &'static str) -> Self {
        TargetKindLabels {
            target: target.to_string(),
            kind,
        }
    }
}

/// Fleet-wide families: the kind only, no target.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub(crate) struct KindLabels {
    pub kind: &'static str,
}

/// `mcp_listing_outcomes_total`: `complete`, `aborted` or `error`.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub(crate) struct OutcomeLabels {
    pub target: String,
    pub kind: &'static str,
    pub outcome: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub(crate) struct GuardLabels {
    pub target: String,
    pub kind: &'static str,
    pub guard: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub(crate) struct ErrorLabels {
    pub target: String,
    pub kind: &'static str,
    pub error: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub(crate) struct RestartLabels {
    pub target: String,
    pub kind: &'static str,
    pub reason: &'static str,
}

/// `reference` is the name of another configured target.
#[derive(Clone, Debug, Hash, PartialEq, Eq, PartialOrd, Ord, EncodeLabelSet)]
pub(crate) struct ReferenceLabels {
    pub target: String,
    pub kind: &'static str,
    pub reference: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub(crate) struct GarbageCursorLabels {
    pub target: String,
    pub kind: &'static str,
    pub result: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub(crate) struct ServerInfoLabels {
    pub target: String,
    pub server_name: String,
    pub server_version: String,
    pub protocol_version: String,
    pub transport: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub(crate) struct BuildLabels {
    pub version: String,
    pub revision: String,
}

/// The exemplar label set: the W3C trace id of the poll's trace.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub(crate) struct TraceLabel {
    pub trace_id: String,
}

impl TraceLabel {
    /// The poll's trace id, when traced: always 32 hex digits, never zero,
    /// so it links to a trace (and fits OpenMetrics' 128-character cap on
    /// exemplar label sets).
    pub fn from_trace_id(trace_id: Option<TraceId>) -> Option<TraceLabel> {
        trace_id.map(|id| TraceLabel {
            trace_id: id.to_string(),
        })
    }
}

/// At most [`MAX_SERVER_LABEL_CHARS`] characters (not bytes, so never
/// splitting a UTF-8 sequence).
pub(crate) fn truncate_label(value: &str) -> String {
    value.chars().take(MAX_SERVER_LABEL_CHARS).collect()
}
