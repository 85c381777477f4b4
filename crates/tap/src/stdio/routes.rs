//! Which merge a server line is for. A merge's requests go to the server
//! between the client's lines, so the answers come back among the client's
//! and are told apart by id: a walk's own requests carry ids no client can
//! send (`merge::request_id`), and its first request is the client's own,
//! whose id one merge at a time may hold. `list_changed` notifications pass
//! to the client and are counted here, in the order the server wrote them,
//! so a walk learns of each one that came while it walked and a merged
//! answer is never kept for reuse across one.

use super::{Shared, SESSION};
use crate::merge::ask::ListRequest;
use bytes::Bytes;
use mcp_listing::Kind;
use serde_json::Value;
use std::collections::{HashMap, HashSet};
use std::sync::Arc;
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
}

/// Whether a server line may be for [`route`]: merges are waiting for an
/// answer, or it may be a `list_changed`. Most lines, outside merges, are
/// not, and pass unparsed.
pub(crate) fn routed(shared: &Shared, line: &[u8]) -> bool {
    !crate::locked::lock(&shared.routes).pending.is_empty() || mentions_list_changed(line)
}

fn mentions_list_changed(line: &[u8]) -> bool {
    line.windows(12).any(|w| w == b"list_changed")
}

/// Whether a server line was the answer to a merge's request (and went to
/// it). A `list_changed` passes to the client, is counted, and makes
/// merged answers stale.
pub(crate) fn route(shared: &Shared, line: &Bytes) -> bool {
    let mut routes = crate::locked::lock(&shared.routes);
    let changed = mentions_list_changed(line);
    if routes.pending.is_empty() && !changed {
        return false;
    }
    // Read for its method and id only: never a tree of a page's items.
    let Some(message) = crate::merge::scan::Message::read(line) else {
        return false;
    };
    if let Some(method) = message.method() {
        if changed {
            for (at, kind) in Kind::ALL.iter().enumerate() {
                routes.by_kind[at] += u64::from(kind.list_changed_method() == method);
            }
            routes.changes += 1;
            if let Some(merges) = shared.merges.as_ref() {
                merges.changed(SESSION);
            }
        }
        return false;
    }
    let Some(key) = message.id_text() else {
        return false;
    };
    let Some((kind, answer)) = routes.pending.remove(&key) else {
        return false;
    };
    let routed = Routed {
        line: line.clone(),
        changes: routes.changes_of(kind),
    };
    // A merge that gave up waiting has dropped its end: the answer is its
    // all the same, and goes nowhere.
    let _ = answer.send(routed);
    true
}

/// How many `list_changed` notifications have passed to the client.
pub(crate) fn changes(shared: &Shared) -> u64 {
    crate::locked::lock(&shared.routes).changes
}

/// Run `keep` (keeping a merged answer for reuse) unless a `list_changed`
/// passed since `seen`: checked and kept under the lock [`route`] counts
/// under, so a notification either stops the keep or clears what it kept.
pub(crate) fn unless_changed_since(shared: &Shared, seen: u64, keep: impl FnOnce()) {
    let routes = crate::locked::lock(&shared.routes);
    if routes.changes == seen {
        keep();
    }
}

/// A client request's id, held by its merge until the merge ends.
pub(crate) struct Claim {
    pub(crate) shared: Arc<Shared>,
    id: String,
}

impl Claim {
    /// The id of `list`, unless a merge already holds it (a client sending
    /// an id again before its answer) or too many merges are under way.
    pub(crate) fn take(shared: &Arc<Shared>, list: &ListRequest) -> Option<Claim> {
        let id = list.id().to_string();
        let mut routes = crate::locked::lock(&shared.routes);
        if routes.claimed.len() >= MAX_MERGING || !routes.claimed.insert(id.clone()) {
            return None;
        }
        Some(Claim {
            shared: shared.clone(),
            id,
        })
    }
}

impl Drop for Claim {
    fn drop(&mut self) {
        crate::locked::lock(&self.shared.routes)
            .claimed
            .remove(&self.id);
    }
}
