//! The stdio tap's side of a merge (`merge::flow`): the walk's page
//! requests are lines written to the server between the client's lines,
//! and their answers come back routed by id. The client then gets one
//! line: the merged answer, or the server's own answer to its request
//! (page 1) as the server wrote it.

use super::shared::{to_client, to_server, Shared, SESSION};
use crate::event::MergeOutcome;
use crate::exchange_tee::Exchange;
use crate::http1::head::Response;
use crate::merge::ask::ListRequest;
use crate::merge::flow::{self, Answer, FirstPage, MergeSite, MergeStep};
use crate::merge::pager::{Exchanged, PageRequest, PageTransport};
use crate::merge::result::{self, Merged};
use crate::merge::reuse::{self, Asked, Key};
use bytes::Bytes;
use mcp_listing::{ExchangeFailure, PageError};
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

struct Pipes {
    shared: Arc<Shared>,
    /// The server's answer to the first request (the client's own), as
    /// it wrote it.
    first: Option<Bytes>,
    /// The walked kind's `list_changed` notifications passed by the last
    /// answer (by the first request, before one came).
    changes: Option<u64>,
}

impl PageTransport for Pipes {
    async fn exchange(&mut self, request: PageRequest<'_>) -> Result<Exchanged, PageError> {
        let (answer, now) =
            crate::locked::lock(&self.shared.routes).expect(&request.id, request.kind);
        let since = *self.changes.get_or_insert(now);
        let mut line = request.body.to_vec();
        if line.last() != Some(&b'\n') {
            line.push(b'\n');
        }
        to_server(&self.shared, &line)
            .await
            .map_err(|_| failed("the server's stdin is closed"))?;
        let routed = answer
            .await
            .map_err(|_| failed("the server closed its stdout"))?;
        if !request.room.take(routed.line.len()) {
            return Err(failed("merging's bytes are spent"));
        }
        self.first.get_or_insert_with(|| routed.line.clone());
        // Every one the server wrote since the last answer, also between
        // two of the walk's requests.
        self.changes = Some(routed.changes);
        Ok(Exchanged {
            bytes: routed.line.len() as u64,
            answer: routed.line,
            list_changed: u32::try_from(routed.changes - since).unwrap_or(u32::MAX),
        })
    }
}

fn failed(message: &str) -> PageError {
    PageError::Failed(ExchangeFailure::Transport {
        message: message.into(),
        http_status: None,
    })
}

impl FirstPage for Pipes {
    type Page = Bytes;

    fn into_first(self) -> Option<Bytes> {
        self.first
    }
}

/// A merge over the pipes for the client's request `line`.
struct StdioMerge {
    shared: Arc<Shared>,
    line: Bytes,
}

impl MergeSite for StdioMerge {
    type Transport = Pipes;
    type Done = ();

    fn exchange(&self) -> &Exchange {
        &self.shared.exchange
    }

    fn first_page_timeout(&self) -> Duration {
        self.shared
            .merges
            .as_ref()
            .map_or(Duration::ZERO, |m| m.settings.walk.listing_timeout)
    }

    fn begin(&mut self) -> (Pipes, Bytes) {
        let pipes = Pipes {
            shared: self.shared.clone(),
            first: None,
            changes: None,
        };
        (pipes, self.line.clone())
    }

    async fn walking<F: Future>(&mut self, walk: F) -> Result<F::Output, ()> {
        Ok(walk.await)
    }

    fn changes(&self) -> u64 {
        self.shared.changes()
    }

    fn keep_unless_changed(&self, seen: u64, keep: impl FnOnce()) {
        // Not across a `list_changed` the server wrote meanwhile.
        self.shared.unless_changed_since(seen, keep);
    }

    fn merged_head(&mut self, _first: Option<Bytes>) -> (Response, Bytes) {
        // Reused stdio answers are lines: no head to keep, and the
        // server's notifications went to the client as they came.
        (reuse::no_head(), Bytes::new())
    }

    async fn answer(&mut self, list: &ListRequest, answer: Answer<Bytes>) {
        let shared = &self.shared;
        let (outcome, pages, result) = match &answer {
            Answer::Reused(reused) => (MergeOutcome::Reused, 0, &reused.result),
            Answer::Merged { kept, pages, .. } => (MergeOutcome::Merged, *pages, &kept.result),
            Answer::FirstPage {
                first,
                fallback,
                pages,
                ..
            } => {
                let outcome = MergeOutcome::FirstPage(*fallback);
                flow::tell(&shared.exchange, list, outcome, *pages, 0);
                // The server's own answer to the client's request, if it
                // came (a server that went away leaves the client nothing,
                // as it would have without the tap).
                if let Some(first) = first {
                    to_client(shared, first).await;
                }
                return;
            }
        };
        flow::tell(&shared.exchange, list, outcome, pages, result.items);
        to_client(shared, &line_of(list, result)).await;
    }
}

/// Merge for the client's first-page list request `line`.
pub(crate) async fn merge(shared: Arc<Shared>, list: ListRequest, line: Bytes) {
    let Some(merges) = shared.merges.as_ref() else {
        return;
    };
    let asked = Asked {
        path: b"",
        fields: &[],
        credential_headers: &[],
        params: list.message.get("params"),
    };
    let key = Key::new(Some(&Bytes::from_static(SESSION)), list.kind, &asked);
    let mut site = StdioMerge {
        shared: shared.clone(),
        line: line.clone(),
    };
    if let MergeStep::Pass = flow::merge(merges, &mut site, &list, key).await {
        // The client's line goes to the server as it came.
        let _ = to_server(&shared, &line).await;
    }
}

/// The answer to `list` carrying `result`, as one line.
fn line_of(list: &ListRequest, result: &Merged) -> Bytes {
    let parts = result::answer(list.id(), result, false);
    let mut line = Vec::with_capacity(parts.iter().map(Bytes::len).sum::<usize>() + 1);
    for part in parts {
        line.extend_from_slice(&part);
    }
    line.push(b'\n');
    Bytes::from(line)
}
