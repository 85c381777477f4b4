//! `/api/targets`: per target its verdict, per kind the same verdict object,
//! the change log, failures, the reference comparison, the chart points and
//! recent polls; `/api/sources`: every discovery source, its last refresh
//! and what it leaves out. docs/api.md describes every field.

use super::json::ShownJson;
use super::AppState;
use crate::sinks::status::TargetStatus;
use crate::verdict::history::{Failure, Point};
use crate::verdict::{Change, ConformanceResult, Reason, ReferenceGap, Verdict};
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use mcp_listing::Kind;
use serde::Serialize;
use std::collections::{BTreeMap, VecDeque};

/// A verdict as the API shows it.
#[derive(Debug, Serialize)]
pub struct VerdictView<'a> {
    pub level: &'static str,
    /// When the target's current level began; only on the target's verdict.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub since_unix_seconds: Option<f64>,
    pub reasons: &'a [Reason],
}

impl<'a> VerdictView<'a> {
    fn of(v: &'a Verdict, since: Option<f64>) -> Self {
        VerdictView {
            level: v.level.label(),
            since_unix_seconds: since,
            reasons: &v.reasons,
        }
    }
}

/// One kind's current state.
#[derive(Debug, Serialize)]
pub struct KindView<'a> {
    pub verdict: VerdictView<'a>,
    /// Outcome of the kind's latest listing.
    pub outcome: Option<&'static str>,
    /// Unique items of the latest complete listing kept on the chart.
    pub unique_items: Option<u64>,
}

/// One target in `/api/targets`.
#[derive(Debug, Serialize)]
pub struct TargetView<'a> {
    #[serde(flatten)]
    pub status: &'a TargetStatus,
    /// `null` until the first poll finished.
    pub verdict: Option<VerdictView<'a>>,
    pub kinds: BTreeMap<Kind, KindView<'a>>,
    /// Newest first.
    pub changes: &'a VecDeque<Change>,
    /// Newest first, kept apart from `history`.
    pub failures: &'a VecDeque<Failure>,
    pub reference: &'a BTreeMap<Kind, Vec<ReferenceGap>>,
    /// Oldest first.
    pub catalogue_points: &'a BTreeMap<Kind, VecDeque<Point>>,
    /// The latest serve-mode conformance run; `null` when the target has
    /// none (`conformance:` off, or no run finished yet).
    pub conformance: Option<&'a ConformanceResult>,
}

impl<'a> TargetView<'a> {
    pub fn of(t: &'a TargetStatus) -> Self {
        let c = &t.catalogue;
        let latest = t.history.front();
        let kinds = c
            .verdict
            .iter()
            .flat_map(|v| v.kinds.iter())
            .map(|(kind, v)| {
                (
                    *kind,
                    KindView {
                        verdict: VerdictView::of(v, None),
                        outcome: latest.and_then(|p| {
                            p.kinds
                                .iter()
                                .find(|k| k.kind == *kind)
                                .map(|k| k.outcome.label())
                        }),
                        unique_items: c
                            .points
                            .get(kind)
                            .and_then(|p| p.back())
                            .map(|p| u64::from(p.unique_items)),
                    },
                )
            })
            .collect();
        TargetView {
            status: t,
            verdict: c
                .verdict
                .as_ref()
                .map(|v| VerdictView::of(&v.overall, c.level_since_unix_seconds)),
            kinds,
            changes: &c.changes,
            failures: &c.failures,
            reference: &c.reference,
            catalogue_points: &c.points,
            conformance: c.conformance.as_ref(),
        }
    }
}

pub async fn targets(State(app): State<AppState>) -> Response {
    let all = app.service.status().all();
    let views: Vec<TargetView<'_>> = all.iter().map(TargetView::of).collect();
    ShownJson(views).into_response()
}

pub async fn target(State(app): State<AppState>, Path(name): Path<String>) -> Response {
    match app.service.status().get(&name) {
        Some(t) => ShownJson(TargetView::of(&t)).into_response(),
        None => (StatusCode::NOT_FOUND, "no such target\n").into_response(),
    }
}

/// Every discovery source, in `discovery:` order.
pub async fn sources(State(app): State<AppState>) -> Response {
    ShownJson(app.service.sources()).into_response()
}
