//! One merge, the same on the HTTP tap and the stdio tap: a first-page
//! list request of a client named for merging is walked — reusing a merged
//! answer of the same key when one stands, one walk per key at a time,
//! within the tap's walks at once, bytes and page requests (past them the
//! request passes as any other) — and answered with one page, or with
//! page 1 as the upstream gave it when the walk was not complete, was too
//! large, or its pages' scopes differed. The walk's slot is let go when
//! the walk ends and its turn once the merge is kept, before the answer is
//! written.
//!
//! Where a merge runs is a [`MergeSite`]: how the walk's page requests
//! travel and how the client is answered (`http_merge` for the HTTP tap,
//! the stdio tap's `pages` over its pipes).

use crate::event::{MergeFallback, MergeOutcome, TapEvent};
use crate::exchange_tee::Exchange;
use crate::http1::head::Response;
use crate::merge::ask::ListRequest;
use crate::merge::budget::Charge;
use crate::merge::pager::{self, PageTransport, Spend, WalkEnd, WalkPager};
use crate::merge::reuse::{self, Key, Reusable};
use crate::merge::{Merges, Start};
use bytes::Bytes;
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

/// The transport of a merged walk, which keeps page 1 as it came.
pub(crate) trait FirstPage: PageTransport {
    /// Page 1 as the upstream gave it.
    type Page;

    /// Page 1, if it came.
    fn into_first(self) -> Option<Self::Page>;
}

/// Where a merge runs: what the flow needs of the tap it runs in.
pub(crate) trait MergeSite {
    type Transport: FirstPage;
    /// What answering the client leaves (the HTTP connection's fate).
    type Done;

    /// The exchange the observer is told of the merge in.
    fn exchange(&self) -> &Exchange;

    /// How long page 1 (the client's own request) may take.
    fn first_page_timeout(&self) -> Duration;

    /// The walk begins: the transport its page requests go by, and the
    /// client's request as it sent it (the walk's first page request),
    /// taken from the client's side.
    fn begin(&mut self) -> (Self::Transport, Bytes);

    /// Run `walk`, unless the client leaves meanwhile (`Err`: what is left
    /// to do then).
    async fn walking<F: Future>(&mut self, walk: F) -> Result<F::Output, Self::Done>;

    /// `list_changed` notifications passed to the client so far.
    fn changes(&self) -> u64;

    /// Run `keep` (keeping a merged answer for reuse) unless a
    /// `list_changed` passed to the client since `seen`.
    fn keep_unless_changed(&self, seen: u64, keep: impl FnOnce());

    /// Page 1 of a complete walk: the head a merged answer goes with, and
    /// the upstream's own messages before its answer, which go first.
    fn merged_head(
        &mut self,
        first: Option<<Self::Transport as FirstPage>::Page>,
    ) -> (Response, Bytes);

    /// Answer the client.
    async fn answer(
        &mut self,
        list: &ListRequest,
        answer: Answer<<Self::Transport as FirstPage>::Page>,
    ) -> Self::Done;
}

/// What the client gets.
pub(crate) enum Answer<P> {
    /// A merged answer kept from an earlier walk.
    Reused(Arc<Reusable>),
    /// This walk's merge (kept for reuse when it could be), after `notes`.
    Merged {
        kept: Arc<Reusable>,
        notes: Bytes,
        pages: u32,
        /// What the answer still holds of merging's bytes.
        charge: Charge,
    },
    /// Page 1 as it came (`None`: it never came), for `fallback`.
    FirstPage {
        first: Option<P>,
        fallback: MergeFallback,
        pages: u32,
        charge: Charge,
    },
}

/// What became of a request the tap could merge for.
pub(crate) enum MergeStep<D> {
    /// The client was answered (merged, reused or page 1).
    Answered(D),
    /// The request goes on as any other (the observer was told why).
    Pass,
}

/// Merge for `list` (kept under `key` when it has one) at `site`.
pub(crate) async fn merge<S: MergeSite>(
    merges: &Merges,
    site: &mut S,
    list: &ListRequest,
    key: Option<Key>,
) -> MergeStep<S::Done> {
    let turn = match &key {
        Some(key) => match merges.turn(key).await {
            Some(turn) => Some(turn),
            None => return pass(site.exchange(), list, MergeFallback::Busy),
        },
        None => None,
    };
    if let Some(reused) = key.as_ref().and_then(|k| merges.reused(k)) {
        drop(turn);
        return MergeStep::Answered(site.answer(list, Answer::Reused(reused)).await);
    }
    let seen = site.changes();
    let Start { slot, charge } = match merges.start() {
        Ok(start) => start,
        Err(reason) => return pass(site.exchange(), list, reason),
    };
    let settings = &merges.settings;
    let (transport, original) = site.begin();
    let spend = Spend {
        charge,
        pages: &merges.pages,
        page_read_bytes: merges.page_read_bytes(),
        first_page_timeout: site.first_page_timeout(),
    };
    let max_merged = settings.max_merged_bytes;
    let mut pager = WalkPager::new(transport, list, original, &settings.walk, max_merged, spend);
    let walked = site.walking(pager::walk(&mut pager, &settings.walk)).await;
    let (outcome, pages) = match walked {
        Ok(walked) => walked,
        Err(done) => return MergeStep::Answered(done),
    };
    let WalkEnd {
        merged,
        transport,
        spend,
    } = pager.end(outcome);
    // The walk is over: its slot goes before the answer does.
    drop(slot);
    let mut charge = spend.charge;
    let first = transport.into_first();
    let merged = match merged {
        Ok(merged) => merged,
        Err(fallback) => {
            drop(turn);
            let answer = Answer::FirstPage {
                first,
                fallback,
                pages,
                charge,
            };
            return MergeStep::Answered(site.answer(list, answer).await);
        }
    };
    let (head, notes) = site.merged_head(first);
    let cost = reuse::cost(&head, &merged);
    let kept = Arc::new(Reusable {
        charge: charge.split(cost),
        head,
        result: merged,
    });
    // What is written stays charged until it is.
    charge.resize(notes.len());
    if let Some(key) = key {
        site.keep_unless_changed(seen, || merges.keep(key, kept.clone()));
    }
    drop(turn);
    let answer = Answer::Merged {
        kept,
        notes,
        pages,
        charge,
    };
    MergeStep::Answered(site.answer(list, answer).await)
}

/// Page 1 passes as any other request, for `reason`.
fn pass<D>(exchange: &Exchange, list: &ListRequest, reason: MergeFallback) -> MergeStep<D> {
    tell(exchange, list, MergeOutcome::FirstPage(reason), 0, 0);
    MergeStep::Pass
}

/// Count a merge's outcome and tell the observer, before the answer's
/// messages (which are what the client got).
pub(crate) fn tell(
    exchange: &Exchange,
    list: &ListRequest,
    outcome: MergeOutcome,
    pages: u32,
    items: u64,
) {
    exchange.stats.merge(outcome);
    exchange.offer(TapEvent::Merged {
        exchange: exchange.id,
        kind: list.kind,
        outcome,
        pages,
        items,
    });
}
