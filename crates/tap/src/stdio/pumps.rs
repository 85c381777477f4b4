//! The stdio tap's two directions. Without merging, bytes pass as they are
//! read, copied for the observer line by line on the way. With merging,
//! each direction passes whole lines (`lines`; a line longer than a page
//! may be passes in pieces, untouched): the client's first-page list requests of
//! a named client go to a merge instead of the server, and the server's
//! answers to the merge's own requests go to it instead of the client.

use super::lines::Lines;
use super::pages;
use super::shared::{to_client, to_server, Claim, Shared};
use crate::copy::Copier;
use crate::event::{BodyFraming, Direction};
use crate::identity;
use crate::merge::ask::{self, Inspected, ListRequest};
use crate::merge::eligible::{Known, Session};
use bytes::{Bytes, BytesMut};
use std::sync::Arc;
use tokio::io::{AsyncRead, AsyncReadExt};
use tokio::process::ChildStdout;

/// Bytes asked for per read.
const READ_SIZE: usize = 64 * 1024;

/// The client's lines to the server, until the client closes its side;
/// then merges in progress finish and the server's stdin closes.
pub(crate) async fn client<I: AsyncRead + Unpin>(shared: Arc<Shared>, mut input: I, merging: bool) {
    let mut copier = Copier::new(
        BodyFraming::Lines,
        Direction::FromClient,
        shared.inspect_bytes,
    );
    let mut lines = Lines::new(ask::MAX_INSPECTED_BYTES);
    while let Some(chunk) = next_chunk(&mut input).await {
        copier.data(&shared.exchange, &chunk);
        if !merging {
            if to_server(&shared, &chunk).await.is_err() {
                break;
            }
            continue;
        }
        let mut whole = Vec::new();
        lines.split(&chunk, |line, passing| whole.push((line, passing)));
        // Lines that pass go in one write per read, not one per line; a
        // merge's first request is the client's line, so what came before
        // it goes first.
        let mut pass = BytesMut::new();
        for (line, passing) in whole {
            match (!passing).then(|| wants_merge(&shared, &line)).flatten() {
                Some((claim, list)) => {
                    let _ = to_server(&shared, &pass.split()).await;
                    spawn_merge(&shared, claim, list, line);
                }
                None => pass.extend_from_slice(&line),
            }
        }
        let _ = to_server(&shared, &pass).await;
    }
    if let Some(rest) = lines.rest() {
        let _ = to_server(&shared, &rest).await;
    }
    copier.finish(&shared.exchange, false);
    shared.merges_done().await;
    drop(shared.stdin.lock().await.take());
}

/// Whether a client line is for a merge (a named client's first-page list
/// request, its id not held by another merge): the request and the hold
/// on its id. An `initialize` names the client on the way.
fn wants_merge(shared: &Arc<Shared>, line: &Bytes) -> Option<(Claim, ListRequest)> {
    let merging = shared.merges.as_ref()?;
    let bound = crate::locked::lock(&shared.client).clone();
    // Once `initialize` named a client not merged for, its lines pass
    // unread, as with merging off.
    let session = bound.as_ref().map_or(Session::None, Session::Bound);
    let known = Known {
        operator: None,
        session,
        user_agent: None,
        method: None,
    };
    if !merging.eligible.reads(&known) {
        return None;
    }
    shared.exchange.stats.merge_read();
    let list = match ask::inspect(line, None) {
        Inspected::Initialize(info) => {
            *crate::locked::lock(&shared.client) = Some(info);
            return None;
        }
        Inspected::Other => return None,
        Inspected::FirstPage(list) => list,
    };
    let (who, _) = identity::identify(identity::Claims {
        client_info: list.client_info.clone().or(bound),
        ..identity::Claims::default()
    });
    if !merging.eligible.names(&who) {
        return None;
    }
    Some((Claim::take(shared, &list)?, list))
}

/// Merge for the client's request `line`, in a task of its own.
fn spawn_merge(shared: &Shared, claim: Claim, list: ListRequest, line: Bytes) {
    let task = tokio::spawn(async move {
        pages::merge(claim.shared.clone(), list, line).await;
        drop(claim);
    });
    let mut merging = crate::locked::lock(&shared.merging);
    merging.retain(|t| !t.is_finished());
    merging.push(task);
}

/// The next bytes a pipe gives; `None` at its end (or a failed read).
async fn next_chunk<R: AsyncRead + Unpin>(pipe: &mut R) -> Option<Bytes> {
    let mut buf = BytesMut::with_capacity(READ_SIZE);
    match pipe.read_buf(&mut buf).await {
        Ok(0) | Err(_) => None,
        Ok(_) => Some(buf.freeze()),
    }
}

/// The server's lines to the client (or to the merge that asked), until
/// the server closes its stdout.
pub(crate) async fn server(shared: Arc<Shared>, stdout: Option<ChildStdout>, merging: bool) {
    let Some(mut stdout) = stdout else { return };
    let max = shared
        .merges
        .as_ref()
        .map_or(0, |m| m.settings.max_page_bytes);
    let mut lines = Lines::new(max);
    while let Some(chunk) = next_chunk(&mut stdout).await {
        if !merging {
            to_client(&shared, &chunk).await;
            continue;
        }
        let mut whole = Vec::new();
        lines.split(&chunk, |line, passing| whole.push((line, passing)));
        // Lines that pass go in one write per read; what came before an
        // answer a merge takes reaches the client before that merge can
        // answer.
        let mut pass = BytesMut::new();
        for (line, passing) in whole {
            if !passing && shared.may_route(&line) {
                if !pass.is_empty() {
                    to_client(&shared, &pass.split().freeze()).await;
                }
                if shared.route(&line) {
                    continue;
                }
            }
            pass.extend_from_slice(&line);
        }
        if !pass.is_empty() {
            to_client(&shared, &pass.freeze()).await;
        }
    }
    if let Some(rest) = lines.rest() {
        to_client(&shared, &rest).await;
    }
    crate::locked::lock(&shared.routes).closed();
    let mut out = shared.out.lock().await;
    let out = &mut *out;
    out.copier.finish(&shared.exchange, false);
}
