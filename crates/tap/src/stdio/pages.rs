//! Merges on the stdio tap: the walk's page requests are lines written to
//! the server between the client's lines, and their answers come back
//! routed by id. The client then gets one line: the merged answer, or the
//! server's own answer to its request (page 1) as the server wrote it.

use super::pumps::{to_client, to_server};
use super::routes;
use super::{Shared, SESSION};
use crate::event::{MergeFallback, MergeOutcome, TapEvent};
use crate::merge::ask::ListRequest;
use crate::merge::pager::{self, Exchanged, PageRequest, PageTransport, Spend, WalkPager};
use crate::merge::result::{self, Merged};
use crate::merge::reuse::{self, Asked, Key, Reusable};
use crate::merge::Start;
use bytes::Bytes;
use mcp_listing::{ExchangeFailure, PageError};
use std::sync::Arc;

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
        to_server(&self.shared, &line).await.map_err(|_| {
            PageError::Failed(ExchangeFailure::Transport {
                message: "the server's stdin is closed".into(),
                http_status: None,
            })
        })?;
        let routed = answer.await.map_err(|_| {
            PageError::Failed(ExchangeFailure::Transport {
                message: "the server closed its stdout".into(),
                http_status: None,
            })
        })?;
        if !request.room.take(routed.line.len()) {
            return Err(PageError::Failed(ExchangeFailure::Transport {
                message: "merging's bytes are spent".into(),
                http_status: None,
            }));
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
    let turn = match &key {
        Some(key) => merges.turn(key).await,
        None => None,
    };
    if turn.is_none() {
        return pass(&shared, &list, &line, MergeFallback::Busy).await;
    }
    if let Some(reused) = key.as_ref().and_then(|k| merges.reused(k)) {
        let (items, body) = (reused.result.items, line_of(&list, &reused.result));
        answer(&shared, &list, MergeOutcome::Reused, 0, items, body).await;
        return;
    }
    let seen = routes::changes(&shared);
    let Start { slot, charge } = match merges.start() {
        Ok(start) => start,
        Err(reason) => return pass(&shared, &list, &line, reason).await,
    };
    let settings = &merges.settings;
    let pipes = Pipes {
        shared: shared.clone(),
        first: None,
        changes: None,
    };
    let spend = Spend {
        charge,
        pages: &merges.pages,
        page_read_bytes: merges.page_read_bytes(),
        first_page_timeout: settings.walk.listing_timeout,
    };
    let max_merged = settings.max_merged_bytes;
    let mut pager = WalkPager::new(pipes, &list, line, &settings.walk, max_merged, spend);
    let (outcome, pages) = pager::walk(&mut pager, &settings.walk).await;
    let mut end = pager.end(outcome);
    drop(slot);
    match end.merged {
        Ok(m) => {
            let (items, body) = (m.items, line_of(&list, &m));
            let cost = reuse::cost(&no_head(), &m);
            let kept = Reusable {
                charge: end.spend.charge.split(cost),
                head: no_head(),
                result: m,
            };
            if let Some(key) = key {
                // Not across a `list_changed` the server wrote meanwhile.
                routes::unless_changed_since(&shared, seen, || {
                    merges.keep(key, Arc::new(kept));
                });
            }
            drop(turn);
            answer(&shared, &list, MergeOutcome::Merged, pages, items, body).await;
        }
        Err(fallback) => {
            drop(turn);
            told(&shared, &list, MergeOutcome::FirstPage(fallback), pages, 0);
            // The server's own answer to the client's request, if it came
            // (a server that went away leaves the client nothing, as it
            // would have without the tap).
            if let Some(first) = end.transport.first.take() {
                to_client(&shared, &first).await;
            }
        }
    }
}

/// The client's line goes to the server as it came, for `reason`.
async fn pass(shared: &Shared, list: &ListRequest, line: &Bytes, reason: MergeFallback) {
    told(shared, list, MergeOutcome::FirstPage(reason), 0, 0);
    let _ = to_server(shared, line).await;
}

/// The answer to `list` carrying `result`, as one line's text.
fn line_of(list: &ListRequest, result: &Merged) -> Vec<u8> {
    let parts = result::answer(list.id(), result, false);
    let mut line = Vec::with_capacity(parts.iter().map(Bytes::len).sum::<usize>() + 1);
    for part in parts {
        line.extend_from_slice(&part);
    }
    line
}

/// A merged answer to the client, as one line.
async fn answer(
    shared: &Shared,
    list: &ListRequest,
    outcome: MergeOutcome,
    pages: u32,
    items: u64,
    mut body: Vec<u8>,
) {
    told(shared, list, outcome, pages, items);
    body.push(b'\n');
    to_client(shared, &Bytes::from(body)).await;
}

fn told(shared: &Shared, list: &ListRequest, outcome: MergeOutcome, pages: u32, items: u64) {
    let exchange = &shared.exchange;
    exchange.stats.merge(outcome);
    exchange.offer(TapEvent::Merged {
        exchange: exchange.id,
        kind: list.kind,
        outcome,
        pages,
        items,
    });
}

/// Reused stdio answers are lines: no head to keep.
fn no_head() -> crate::http1::head::Response {
    crate::http1::head::Response {
        status: 0,
        reason: Bytes::new(),
        minor: 1,
        fields: Vec::new(),
    }
}
