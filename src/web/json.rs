//! The `/api` answers' JSON: `mcp_listing::shown_json`, so C1 controls and
//! invisible characters a server or client chose reach whoever reads the
//! answer (often a terminal, through `curl`) as `\uXXXX` escapes.

use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use serde::Serialize;

/// A JSON answer, as `axum::Json` makes one but with hidden characters
/// escaped.
pub struct ShownJson<T>(pub T);

impl<T: Serialize> IntoResponse for ShownJson<T> {
    fn into_response(self) -> Response {
        match mcp_listing::shown_json::to_vec(&self.0) {
            Ok(body) => (
                [(
                    header::CONTENT_TYPE,
                    HeaderValue::from_static("application/json"),
                )],
                body,
            )
                .into_response(),
            Err(e) => (
                StatusCode::INTERNAL_SERVER_ERROR,
                format!("cannot encode the answer: {e}\n"),
            )
                .into_response(),
        }
    }
}
