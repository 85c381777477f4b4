//! Label sets of every family. Values are the target name, a kind, or a fixed
//! enum label, so cardinality stays bounded by the configuration; the only
//! server-chosen values (`mcp_server_info`) are truncated.

use crate::poll::{GarbageCursorAnswer, TraceId};
use mcp_listing::report::RestartReason;
use mcp_listing::{ErrorKind, Guard, Kind, TransportKind};
use mcp_observer::{CursorOrigin, ListingOutcome, OtherRoute};
use prometheus_client::encoding::{
    EncodeLabel, EncodeLabelSet, EncodeLabelValue, LabelSetEncoder, LabelValueEncoder,
};
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

/// A labelled enum that is a label of its own: the label's name and every
/// value (the series of a (target, kind) are created or dropped for all of
/// them at once).
pub(crate) trait LabelKey:
    Copy + std::fmt::Display + std::hash::Hash + Eq + 'static
{
    /// The label's name.
    const KEY: &'static str;
    /// Every value, in declaration order.
    fn all() -> &'static [Self];
}

/// Implements [`LabelKey`] for `labelled_enum!` types, whose `ALL` holds
/// every value.
macro_rules! label_key {
    ($($enum:ty => $key:literal),+ $(,)?) => {
        $(impl LabelKey for $enum {
            const KEY: &'static str = $key;
            fn all() -> &'static [Self] {
                &<$enum>::ALL
            }
        })+
    };
}

label_key! {
    AttemptOutcome => "outcome",
    Guard => "guard",
    ErrorKind => "error",
    RestartReason => "reason",
    GarbageCursorAnswer => "result",
    ListingOutcome => "outcome",
    CursorOrigin => "origin",
    ReportDrop => "reason",
    OtherRoute => "reason",
}

/// A series' labels (`S`) and one value of a labelled enum under its own
/// label, encoded in that order: a (target, kind)'s [`KindValueLabels`], a
/// tap client's (`ClientValueLabels`), a discovery source's outcome
/// (`SourceOutcomeLabels`).
#[derive(Clone, Debug, Hash, PartialEq, Eq)]
pub(crate) struct ValueLabels<S, E> {
    pub series: S,
    pub value: E,
}

/// A (target, kind) and a value (`outcome`, `guard`, `error`, `reason`,
/// `result`). Sixteen bytes: the shared name, the kind and the value.
pub(crate) type KindValueLabels<E> = ValueLabels<TargetKindLabels, E>;

impl<S: Clone, E: LabelKey> ValueLabels<S, E> {
    pub fn new(series: &S, value: E) -> Self {
        ValueLabels {
            series: series.clone(),
            value,
        }
    }
}

impl<S: EncodeLabelSet, E: LabelKey> EncodeLabelSet for ValueLabels<S, E> {
    fn encode(&self, encoder: &mut LabelSetEncoder<'_>) -> std::fmt::Result {
        self.series.encode(encoder)?;
        (E::KEY, EnumLabel(self.value)).encode(encoder.encode_label())
    }
}

mcp_listing::labelled_enum! {
    /// How a listing attempt ended, as `mcp_listing_outcomes_total` counts
    /// it (an unadvertised kind is no attempt). A discovery refresh ends
    /// the same three ways (`mcp_discovery_refreshes_total`).
    #[derive(Clone, Copy, Debug, Hash, PartialEq, Eq, PartialOrd, Ord)]
    pub(crate) enum AttemptOutcome as "attempt outcome" {
        Complete => "complete",
        Aborted => "aborted",
        Error => "error",
    }
}

/// `reference` is the name of another configured target.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub(crate) struct ReferenceLabels {
    pub target: TargetName,
    pub kind: KindLabel,
    pub reference: TargetName,
}

/// Server-chosen values, each cut to [`MAX_SERVER_LABEL_CHARS`].
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub(crate) struct ServerInfoLabels {
    pub target: TargetName,
    pub server_name: String,
    pub server_version: String,
    /// As negotiated (empty when unknown); a server may answer with a
    /// version we do not speak, so it is its text, cut.
    pub protocol_version: String,
    pub transport: EnumLabel<TransportKind>,
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

mcp_listing::labelled_enum! {
    /// Why a client listing was not written to a tap's report file (`--report`,
    /// `taps: report:`): the `reason` label.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
    pub enum ReportDrop as "report drop" {
        /// The file reached its byte bound.
        Full => "full",
        /// Writing failed (a full disk, an I/O error).
        WriteFailed => "write_failed",
        /// The file's writer thread was too far behind.
        QueueFull => "queue_full",
    }
}
