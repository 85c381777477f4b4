//! `/api/targets`: per target and kind the last outcome and recent polls.

use super::AppState;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;

pub async fn targets(State(app): State<AppState>) -> Response {
    Json(app.service.status().all()).into_response()
}

pub async fn target(State(app): State<AppState>, Path(name): Path<String>) -> Response {
    match app.service.status().get(&name) {
        Some(t) => Json(t).into_response(),
        None => (StatusCode::NOT_FOUND, "no such target\n").into_response(),
    }
}
