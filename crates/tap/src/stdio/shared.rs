//! What the stdio tap's two pumps and its merges share: the one exchange
//! the observer follows, the server's stdin and the client's output (each
//! written whole lines at a time, so merges can add theirs), the routes of
//! the server's answers to merges, and the merges under way.

use super::routes::{Line, Routes};
use crate::copy::Copier;
use crate::exchange_tee::Exchange;
use crate::identity::ClientInfo;
use crate::locked::lock;
use crate::merge::ask::ListRequest;
use crate::merge::Merges;
use bytes::Bytes;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use tokio::io::{AsyncWrite, AsyncWriteExt};
use tokio::process::ChildStdin;

/// The one session key merges of a stdio tap use.
pub(crate) const SESSION: &[u8] = b"stdio";

/// Where the client reads, and the copies of what it got.
pub(crate) struct ClientOut {
    pub(crate) writer: Pin<Box<dyn AsyncWrite + Send>>,
    pub(crate) copier: Copier,
}

/// What the pumps and merges share.
pub(crate) struct Shared {
    pub(crate) exchange: Exchange,
    pub(crate) inspect_bytes: usize,
    pub(crate) merges: Option<Merges>,
    /// The client `initialize` named (one session: the process's life).
    pub(crate) client: Mutex<Option<ClientInfo>>,
    /// The server's stdin; whole lines only, so merges can add theirs.
    pub(crate) stdin: tokio::sync::Mutex<Option<ChildStdin>>,
    pub(crate) out: tokio::sync::Mutex<ClientOut>,
    pub(crate) routes: Mutex<Routes>,
    /// Merges in progress: the client gets their answers even when the
    /// server or the client's stdin ends first.
    pub(crate) merging: Mutex<Vec<tokio::task::JoinHandle<()>>>,
}

impl Shared {
    /// Wait for the merges in progress (each bounded by its walk's
    /// deadline; they fail fast once the server is gone).
    pub(crate) async fn merges_done(&self) {
        loop {
            let Some(task) = lock(&self.merging).pop() else {
                return;
            };
            let _ = task.await;
        }
    }

    /// Whether a server line may be for [`Shared::route`] (most lines,
    /// outside merges, are not, and pass unparsed).
    pub(crate) fn may_route(&self, line: &[u8]) -> bool {
        lock(&self.routes).may_route(line)
    }

    /// Whether a server line was the answer to a merge's request (and went
    /// to it). A `list_changed` passes to the client, is counted, and
    /// makes merged answers stale.
    pub(crate) fn route(&self, line: &Bytes) -> bool {
        let routed = lock(&self.routes).route(line);
        if routed == Line::ListChanged {
            if let Some(merges) = self.merges.as_ref() {
                merges.changed(SESSION);
            }
        }
        routed == Line::Taken
    }

    /// How many `list_changed` notifications have passed to the client.
    pub(crate) fn changes(&self) -> u64 {
        lock(&self.routes).changes()
    }

    /// Run `keep` (keeping a merged answer for reuse) unless a
    /// `list_changed` passed since `seen`: checked and kept under the lock
    /// [`Shared::route`] counts under, so a notification either stops the
    /// keep or clears what it kept.
    pub(crate) fn unless_changed_since(&self, seen: u64, keep: impl FnOnce()) {
        let routes = lock(&self.routes);
        if routes.changes() == seen {
            keep();
        }
    }
}

/// Write whole lines (or a too-long line's pieces) to the server.
pub(crate) async fn to_server(shared: &Shared, bytes: &[u8]) -> std::io::Result<()> {
    let mut stdin = shared.stdin.lock().await;
    let Some(stdin) = stdin.as_mut() else {
        return Err(std::io::ErrorKind::BrokenPipe.into());
    };
    stdin.write_all(bytes).await?;
    stdin.flush().await
}

/// Write to the client, copying for the observer.
pub(crate) async fn to_client(shared: &Shared, bytes: &Bytes) {
    let mut out = shared.out.lock().await;
    let out = &mut *out;
    out.copier.data(&shared.exchange, bytes);
    let _ = out.writer.write_all(bytes).await;
    let _ = out.writer.flush().await;
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
        if !lock(&shared.routes).claim(&id) {
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
        lock(&self.shared.routes).release(&self.id);
    }
}
