//! What `protocols:` found: one target's catalogue at each configured
//! protocol version (plain data; `protocols.rs` fills it).

use mcp_listing::{EndReason, Kind, Outcome, ProtocolVersion};
use serde::Serialize;

/// Missing names kept per version and kind (the count is always whole).
pub const MAX_MISSING_NAMES: usize = 200;

/// One version's catalogue of one target.
#[derive(Debug, Clone, Serialize)]
pub struct ProtocolCatalogue {
    /// The version asked for (the `protocol_version` label).
    pub protocol_version: ProtocolVersion,
    /// Whether this is the version whose report feeds the usual series.
    pub primary: bool,
    /// The version the server answered with (its text), when a session
    /// opened.
    pub negotiated: Option<String>,
    /// `error_label: detail` when no session opened at this version (the
    /// server does not speak it).
    pub session_error: Option<String>,
    pub kinds: Vec<ProtocolKind>,
}

/// One kind at one version.
#[derive(Debug, Clone, Serialize)]
pub struct ProtocolKind {
    pub kind: Kind,
    pub outcome: Outcome,
    /// The guard or error of an incomplete listing.
    pub reason: Option<EndReason>,
    pub unique_items: u64,
    /// Items listed completely under another version but not under this
    /// one; `None` when fewer than two versions listed this kind
    /// completely (nothing to compare).
    pub missing_total: Option<u64>,
    /// The first [`MAX_MISSING_NAMES`] of them, sorted.
    pub missing: Vec<String>,
}

impl ProtocolCatalogue {
    pub fn kind(&self, kind: Kind) -> Option<&ProtocolKind> {
        self.kinds.iter().find(|k| k.kind == kind)
    }
}
