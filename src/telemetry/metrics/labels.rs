//! Label sets of every family. Values are the target name, a kind, or a fixed
//! enum label, so cardinality stays bounded by the configuration; the only
//! server-chosen values (`mcp_server_info`) are truncated.

use crate::poll::TraceId;
use mcp_listing::Kind;
use prometheus_client::encoding::{EncodeLabelSet, EncodeLabelValue, LabelValueEncoder};
use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock, Weak};

/// A target's name as label sets hold it: one shared allocation per target
/// rather than one per series (a target has ~70 series), behind a thin
/// pointer (eight bytes in every label set; `Arc<str>` is sixteen).
pub(crate) type TargetName = Arc<String>;

/// Live target names, so every label set of a target shares one. Weak: a
/// name lives as long as some series (or caller) holds it — `/probe`
/// registries come and go — and dead entries are pruned whenever the map
/// has doubled since the last pruning.
struct Names {
    live: HashMap<Box<str>, Weak<String>>,
    prune_at: usize,
}

/// The shared name of `target`.
pub(crate) fn target_name(target: &str) -> TargetName {
    static NAMES: OnceLock<Mutex<Names>> = OnceLock::new();
    let names = NAMES.get_or_init(|| {
        Mutex::new(Names {
            live: HashMap::new(),
            prune_at: 64,
        })
    });
    // Each use is one lookup or insert: a panicking holder leaves it whole.
    let mut names = names.lock().unwrap_or_else(|p| p.into_inner());
    if let Some(name) = names.live.get(target).and_then(Weak::upgrade) {
        return name;
    }
    let name: TargetName = Arc::new(target.to_string());
    names.live.insert(Box::from(target), Arc::downgrade(&name));
    if names.live.len() >= names.prune_at {
        names.live.retain(|_, w| w.strong_count() > 0);
        names.prune_at = (names.live.len() * 2).max(64);
    }
    name
}

/// A labelled enum as a label value: one byte in every label set (a
/// `&'static str` is sixteen, in each of a target's ~75 series), its label
/// when encoded.
#[derive(Clone, Copy, Debug, Hash, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct EnumLabel<T>(pub T);

impl<T: std::fmt::Display> EncodeLabelValue for EnumLabel<T> {
    fn encode(&self, encoder: &mut LabelValueEncoder<'_>) -> std::fmt::Result {
        use std::fmt::Write;
        write!(encoder, "{}", self.0)
    }
}

/// The `kind` label.
pub(crate) type KindLabel = EnumLabel<Kind>;

/// Longest label value taken from a server's self-description.
pub const MAX_SERVER_LABEL_CHARS: usize = 128;

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub(crate) struct TargetLabels {
    pub target: TargetName,
}

impl TargetLabels {
    pub fn new(target: &str) -> Self {
        TargetLabels {
            target: target_name(target),
        }
    }
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub(crate) struct TargetKindLabels {
    pub target: TargetName,
    pub kind: KindLabel,
}

impl TargetKindLabels {
    pub fn new(target: &str, kind: Kind) -> Self {
        TargetKindLabels {
            target: target_name(target),
            kind: EnumLabel(kind),
        }
    }
}

/// Fleet-wide families: the kind only, no target.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub(crate) struct KindLabels {
    pub kind: KindLabel,
}

/// `mcp_listing_outcomes_total`: `complete`, `aborted` or `error`.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub(crate) struct OutcomeLabels {
    pub target: TargetName,
    pub kind: KindLabel,
    pub outcome: EnumLabel<AttemptOutcome>,
}

/// How a listing attempt ended, as `mcp_listing_outcomes_total` counts it
/// (an unadvertised kind is no attempt).
#[derive(Clone, Copy, Debug, Hash, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum AttemptOutcome {
    Complete,
    Aborted,
    Error,
}

impl AttemptOutcome {
    /// Every value, all pre-created.
    pub const ALL: [AttemptOutcome; 3] = [
        AttemptOutcome::Complete,
        AttemptOutcome::Aborted,
        AttemptOutcome::Error,
    ];
}

impl std::fmt::Display for AttemptOutcome {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            AttemptOutcome::Complete => "complete",
            AttemptOutcome::Aborted => "aborted",
            AttemptOutcome::Error => "error",
        })
    }
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub(crate) struct GuardLabels {
    pub target: TargetName,
    pub kind: KindLabel,
    pub guard: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub(crate) struct ErrorLabels {
    pub target: TargetName,
    pub kind: KindLabel,
    pub error: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub(crate) struct RestartLabels {
    pub target: TargetName,
    pub kind: KindLabel,
    pub reason: &'static str,
}

/// `reference` is the name of another configured target.
#[derive(Clone, Debug, Hash, PartialEq, Eq, PartialOrd, Ord, EncodeLabelSet)]
pub(crate) struct ReferenceLabels {
    pub target: String,
    pub kind: KindLabel,
    pub reference: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub(crate) struct GarbageCursorLabels {
    pub target: TargetName,
    pub kind: KindLabel,
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
