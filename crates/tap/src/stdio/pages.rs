//! Merges on the stdio tap: the walk's page requests are lines written to
//! the server between the client's lines, and their answers come back
//! routed by id. The client then gets one line: the merged answer, or the
//! server's own answer to its request (page 1) as the server wrote it.

use super::pumps::{to_client, to_server};
use super::routes;
use super::{Shared, SESSION};
use crate::event::{MergeFallback, MergeOutcome, TapEvent};
use crate::merge::ask::ListRequest;
use crate::merge::pager::{Exchanged, PageRequest, PageTransport, WalkPager};
use crate::merge::result;
use crate::merge::Key;
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
    async fn exchange(&mut self, request: PageRequest) -> Result<Exchanged, PageError> {
        let (answer, now) =
            crate::merge::lock(&self.shared.routes).expect(&request.id, request.kind);
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
        self.first.get_or_insert_with(|| routed.line.clone());
        // Every one the server wrote since the last answer, also between
        // two of the walk's requests.
        self.changes = Some(routed.changes);
        Ok(Exchanged {
            answer: routed.message,
            list_changed: u32::try_from(routed.changes - since).unwrap_or(u32::MAX),
            bytes: routed.line.len() as u64,
        })
    }
}

/// Merge for the client's first-page list request `line`.
pub(crate) async fn merge(shared: Arc<Shared>, list: ListRequest, line: Bytes) {
    let Some(merges) = shared.merges.as_ref() else {
        return;
    };
    let key = Key::new(Some(&Bytes::from_static(SESSION)), None, list.kind);
    let _turn = merges.turn(key.as_ref()).await;
    if let Some(reused) = key.as_ref().and_then(|k| merges.reused(k)) {
        let body = result::envelope(list.id(), &reused.result);
        answer(&shared, &list, MergeOutcome::Reused, 0, reused.items, body).await;
        return;
    }
    let seen = routes::changes(&shared);
    let Ok(_walking) = merges.walks.try_acquire() else {
        told(
            &shared,
            &list,
            MergeOutcome::FirstPage(MergeFallback::Busy),
            0,
            0,
        );
        let _ = to_server(&shared, &line).await;
        return;
    };
    let settings = &merges.settings;
    let pipes = Pipes {
        shared: shared.clone(),
        first: None,
        changes: None,
    };
    let mut pager = WalkPager::new(pipes, &list, line, settings.max_merged_bytes);
    let report = mcp_listing::walk(&mut pager, list.kind, &settings.walk, list.era).await;
    let pages = report.pages.len() as u32;
    match pager.merged(report.outcome, settings.max_merged_bytes) {
        Ok((m, body)) => {
            answer(&shared, &list, MergeOutcome::Merged, pages, m.items, body).await;
            if let Some(key) = key {
                routes::unless_changed_since(&shared, seen, || {
                    merges.keep(key, no_head(), m.result, m.items, m.ttl_ms);
                });
            }
        }
        Err(fallback) => {
            told(&shared, &list, MergeOutcome::FirstPage(fallback), pages, 0);
            // The server's own answer to the client's request, if it came
            // (a server that went away leaves the client nothing, as it
            // would have without the tap).
            if let Some(first) = pager.transport.first.take() {
                to_client(&shared, &first).await;
            }
        }
    }
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
