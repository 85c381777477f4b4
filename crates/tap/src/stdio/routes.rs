//! Which merge a server line is for. A merge's requests go to the server
//! between the client's lines, so the answers come back among the client's
//! and are told apart by id: a walk's own requests carry ids no client can
//! send (`merge::request_id`), and its first request is the client's own,
//! whose id one merge at a time may hold. `list_changed` notifications pass
//! to the client and are counted here, in the order the server wrote them,
//! so a walk learns of each one that came while it walked and a merged
//! answer is never kept for reuse across one.

use bytes::Bytes;
use mcp_listing::Kind;
use serde_json::Value;
use std::collections::{HashMap, HashSet};
use tokio::sync::oneshot;

/// Requests of merges waiting for an answer, at most (older ones given up).
const MAX_ROUTES: usize = 1024;
/// Client requests merged at once, at most (walking or waiting for their
/// turn); past it a first-page request passes to the server as it is.
const MAX_MERGING: usize = 64;

/// An answer on its way to the merge that asked.
pub(crate) struct Routed {
    pub(crate) line: Bytes,
    /// The asked kind's `list_changed` notifications passed so far (at the
    /// answer: every one the server wrote before it).
    pub(crate) changes: u64,
}

/// What a server line was.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Line {
    /// The answer to a merge's request: it went to that merge.
    Taken,
    /// A `list_changed` notification (counted): it passes to the client,
    /// and merged answers kept are stale.
    ListChanged,
    /// Anything else: it passes to the client.
    Passes,
}

/// The merges' requests the server has yet to answer, by JSON id; the ids
/// of the client requests merges hold; what `list_changed` passed.
#[derive(Default)]
pub(crate) struct Routes {
    pending: HashMap<String, (Kind, oneshot::Sender<Routed>)>,
    claimed: HashSet<String>,
    /// `list_changed` notifications passed, each kind's (as in
    /// `Kind::ALL`), and all of them.
    by_kind: [u64; Kind::ALL.len()],
    changes: u64,
}

impl Routes {
    /// Route the answer to `id` to the receiver; the `kind`'s
    /// `list_changed` notifications passed so far.
    pub(crate) fn expect(&mut self, id: &Value, kind: Kind) -> (oneshot::Receiver<Routed>, u64) {
        if self.pending.len() >= MAX_ROUTES {
            self.pending.retain(|_, (_, answer)| !answer.is_closed());
        }
        let (tx, rx) = oneshot::channel();
        self.pending.insert(id.to_string(), (kind, tx));
        (rx, self.changes_of(kind))
    }

    fn changes_of(&self, kind: Kind) -> u64 {
        let at = Kind::ALL.iter().position(|k| *k == kind);
        at.map_or(0, |at| self.by_kind[at])
    }

    /// The server is gone: merges waiting for an answer will get none.
    pub(crate) fn closed(&mut self) {
        self.pending.clear();
    }

    /// Whether a server line may be for [`Routes::route`]: merges are
    /// waiting for an answer, or it may be a `list_changed`. Most lines,
    /// outside merges, are not, and pass unparsed.
    pub(crate) fn may_route(&self, line: &[u8]) -> bool {
        !self.pending.is_empty() || mentions_list_changed(line)
    }

    /// What a server line is: the answer to a merge's request goes to it.
    pub(crate) fn route(&mut self, line: &Bytes) -> Line {
        let changed = mentions_list_changed(line);
        if self.pending.is_empty() && !changed {
            return Line::Passes;
        }
        // Read for its method and id only: never a tree of a page's items.
        let Some(message) = mcp_wire::jsonrpc::RawMessage::read(line) else {
            return Line::Passes;
        };
        if let Some(method) = message.method() {
            if !changed {
                return Line::Passes;
            }
            for (at, kind) in Kind::ALL.iter().enumerate() {
                self.by_kind[at] += u64::from(kind.list_changed_method() == method);
            }
            self.changes += 1;
            return Line::ListChanged;
        }
        let Some(key) = message.id_text() else {
            return Line::Passes;
        };
        let Some((kind, answer)) = self.pending.remove(&key) else {
            return Line::Passes;
        };
        let routed = Routed {
            line: line.clone(),
            changes: self.changes_of(kind),
        };
        // A merge that gave up waiting has dropped its end: the answer is its
        // all the same, and goes nowhere.
        let _ = answer.send(routed);
        Line::Taken
    }

    /// How many `list_changed` notifications have passed to the client.
    pub(crate) fn changes(&self) -> u64 {
        self.changes
    }

    /// Hold a client request's id for its merge, unless a merge already
    /// holds it (a client sending an id again before its answer) or too
    /// many merges are under way.
    pub(crate) fn claim(&mut self, id: &str) -> bool {
        self.claimed.len() < MAX_MERGING && self.claimed.insert(id.to_string())
    }

    /// A merge ended: its client request's id is free again.
    pub(crate) fn release(&mut self, id: &str) {
        self.claimed.remove(id);
    }
}

fn mentions_list_changed(line: &[u8]) -> bool {
    line.windows(12).any(|w| w == b"list_changed")
}
