//! A tap learning its routes' catalogues up front (`learn_catalogue`,
//! `--learn-catalogue`): its own guarded walk of each route — the
//! upstream's own path and the named routes at start, every other route
//! when the observer first sees it — with the exporter's poll (src/poll:
//! the walker's guards, the tap's limits), again every `learn_every`. A
//! complete listing becomes the route's reference catalogue, so a client
//! that reads page 1 before anyone walked is told at once what it missed.
//!
//! One walk at a time per tap, each route at most once per `learn_every`,
//! at most [`MAX_ROUTES_WALKED`] routes: however many paths clients invent,
//! the upstream sees a bounded number of walks. The tap adds no
//! credentials: an upstream that wants them refuses the walk (logged), and
//! a configured `target:` with its own credentials is the way there.

use super::reference::{Reference, RouteRef};
use crate::poll::{poll, PollContext, TargetBuilder};
use crate::telemetry::events::RouteNotLearned;
use mcp_listing::{text, HttpMode, Kind, Outcome, WalkLimits};
use mcp_wire::transport::http::HttpSpec;
use mcp_wire::transport::scope::CredentialScope;
use mcp_wire::transport::TransportLimits;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::mpsc;
use tokio::time::Instant;

/// Routes a learner keeps walking, at most: the named ones and
/// `max_routes` besides fit well within it.
pub const MAX_ROUTES_WALKED: usize = 1024;

/// Routes waiting to be handed to the learner, at most (a full queue
/// drops the route until it is seen again: it is never seen again, so the
/// bound is generous).
pub const LEARN_QUEUE: usize = 256;

/// A route to walk: how the observer names it, and the path to ask.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LearnRoute {
    pub route: RouteRef,
    pub path: String,
}

/// What a tap's walks are made from: its upstream (TLS as the tap's), the
/// tap's limits, and how often.
#[derive(Debug, Clone)]
pub struct LearnSpec {
    pub upstream: url::Url,
    pub ca_file: Option<PathBuf>,
    pub insecure_skip_verify: bool,
    pub walk: WalkLimits,
    pub max_response_bytes: u64,
    pub connect_timeout: Duration,
    pub every: Duration,
}

struct Known {
    learn: LearnRoute,
    due: Instant,
}

/// Walk the routes that come on `routes` (and `start`) until the tap
/// stops; every complete listing goes to `references`.
pub async fn learn(
    tap: Arc<str>,
    spec: LearnSpec,
    start: Vec<LearnRoute>,
    mut routes: mpsc::Receiver<LearnRoute>,
    references: mpsc::Sender<Reference>,
) {
    let mut known: Vec<Known> = Vec::new();
    for route in start {
        add(&mut known, route);
    }
    loop {
        let next = known.iter().map(|k| k.due).min();
        let sleep = async {
            match next {
                Some(due) => tokio::time::sleep_until(due).await,
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            route = routes.recv() => match route {
                Some(route) => add(&mut known, route),
                None => return,
            },
            _ = sleep => {
                let now = Instant::now();
                if let Some(k) = known.iter_mut().filter(|k| k.due <= now).min_by_key(|k| k.due) {
                    k.due = now + spec.every;
                    let found = walk(&tap, &spec, &k.learn).await;
                    for reference in found {
                        if references.send(reference).await.is_err() {
                            return;
                        }
                    }
                }
            }
        }
    }
}

fn add(known: &mut Vec<Known>, route: LearnRoute) {
    if known.len() >= MAX_ROUTES_WALKED || known.iter().any(|k| k.learn == route) {
        return;
    }
    known.push(Known {
        learn: route,
        due: Instant::now(),
    });
}

/// One guarded walk of `route`: its complete listings, as references.
async fn walk(tap: &str, spec: &LearnSpec, route: &LearnRoute) -> Vec<Reference> {
    let target = target(spec, &route.path);
    // The walker bounds each listing; this bounds the whole walk, kinds,
    // handshake and a hanging close together.
    let limit = spec.connect_timeout + spec.walk.listing_timeout * (Kind::ALL.len() as u32 + 1);
    let shown = text::shown(&route.path);
    let report = match tokio::time::timeout(limit, poll(&target, PollContext::default())).await {
        Ok(report) => report,
        Err(_) => {
            let route = &shown;
            RouteNotLearned {
                tap,
                route,
                error: None,
            }
            .emit();
            return Vec::new();
        }
    };
    if let Some(failure) = &report.session_error {
        let error = text::shown(&failure.to_string());
        let (route, error) = (&shown, Some(error.as_ref()));
        RouteNotLearned { tap, route, error }.emit();
    }
    report
        .listings
        .into_iter()
        .filter(|l| l.outcome == Outcome::Complete)
        .map(|l| Reference {
            route: route.route.clone(),
            kind: l.kind,
            names: l.names,
            pages: Some(l.final_pages),
        })
        .collect()
}

/// The upstream at `path` (its query and credentials left out), polled
/// with the tap's limits and TLS and nothing of a client's.
fn target(spec: &LearnSpec, path: &str) -> crate::poll::PollTarget {
    let mut url = spec.upstream.clone();
    url.set_path(path);
    url.set_query(None);
    let http = HttpSpec {
        url: Some(url),
        headers: Vec::new(),
        bearer_token: None,
        ca_file: spec.ca_file.clone(),
        insecure_skip_verify: spec.insecure_skip_verify,
        max_redirects: 0,
        scope: CredentialScope::UnderTarget,
    };
    TargetBuilder::http("tap-learn", http, HttpMode::Auto)
        .limits(
            spec.walk.clone(),
            TransportLimits {
                max_response_bytes: spec.max_response_bytes,
                connect_timeout: spec.connect_timeout,
                ..TransportLimits::default()
            },
        )
        .build()
}
