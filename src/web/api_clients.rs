//! `/api/clients`: every tap, the catalogue it knows and each client
//! identity behind it with its verdict and recent listings (docs/api.md,
//! "`GET /api/clients`"). Empty (`{"taps": []}`) without taps.

use super::json::ShownJson;
use super::AppState;
use crate::tap::client_views::TapView;
use axum::extract::State;
use serde::Serialize;
use std::sync::Arc;

#[derive(Debug, Serialize)]
pub struct ClientsAnswer {
    pub taps: Vec<Arc<TapView>>,
}

pub async fn clients(State(app): State<AppState>) -> ShownJson<ClientsAnswer> {
    ShownJson(ClientsAnswer {
        taps: app.clients.taps(),
    })
}
