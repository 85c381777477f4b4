//! The walker's `Pager` over an MCP session, and the one mapping from a
//! wire failure (`ExchangeError`) to the walker's terms (`PageError`, and
//! through it `ErrorKind`).

use mcp_listing::{ErrorKind, ExchangeFailure, Kind, PageError, PageResult, Pager};
use mcp_wire::session::Session;
use mcp_wire::transport::ExchangeError;
use serde_json::{json, Map};
use std::future::Future;
use std::time::{Duration, SystemTime};

/// A wire failure as the walker sees it.
pub fn page_error(e: ExchangeError) -> PageError {
    match e {
        ExchangeError::Rpc { code, message, .. } => PageError::Rpc { code, message },
        ExchangeError::Failed(failure) => PageError::Failed(failure),
        ExchangeError::SessionExpired => PageError::SessionRenewed,
        e @ ExchangeError::NotAllowed { .. } => PageError::UrlNotAllowed(e.to_string()),
    }
}

/// The error label of a wire failure (a session that could not be set up).
pub fn error_kind(e: &ExchangeError) -> ErrorKind {
    page_error(e.clone()).error_kind()
}

/// The HTTP status a wire failure carried: the one place it is pulled out.
/// A JSON-RPC error keeps the status of the response that carried it, and an
/// expired session is the 404 that said so.
pub fn http_status(e: &ExchangeError) -> Option<u16> {
    match e {
        ExchangeError::Rpc { http_status, .. } => *http_status,
        ExchangeError::Failed(failure) => failure.http_status(),
        ExchangeError::SessionExpired => Some(404),
        ExchangeError::NotAllowed { .. } => None,
    }
}

/// The wait a rate-limited (HTTP 429) wire failure asked for.
pub fn retry_after(e: &ExchangeError) -> Option<Duration> {
    match e {
        ExchangeError::Failed(ExchangeFailure::RateLimited { retry_after }) => *retry_after,
        _ => None,
    }
}

/// Adapts a session to the walker's one-page interface.
pub struct SessionPager<'a> {
    pub session: &'a mut Session,
}

impl Pager for SessionPager<'_> {
    async fn fetch_page(
        &mut self,
        kind: Kind,
        cursor: Option<&str>,
        timeout: Duration,
    ) -> PageResult {
        within(timeout, self.fetch(kind, cursor, timeout)).await
    }
}

/// Past the page's own timeout, a little slack for the session to report it
/// itself before the hard bound does.
const GRACE: Duration = Duration::from_millis(250);

/// A hard bound on top of the session's own timeouts: whatever the wire does,
/// the walker has its page (a timeout) by `timeout` + [`GRACE`].
async fn within(timeout: Duration, page: impl Future<Output = PageResult>) -> PageResult {
    match tokio::time::timeout(timeout + GRACE, page).await {
        Ok(result) => result,
        Err(_) => PageResult {
            outcome: Err(ExchangeFailure::Timeout(timeout).into()),
            request_id: -1,
            bytes: 0,
            duration: timeout + GRACE,
            started: SystemTime::now() - (timeout + GRACE),
            span_id: None,
            list_changed: 0,
        },
    }
}

impl SessionPager<'_> {
    async fn fetch(&mut self, kind: Kind, cursor: Option<&str>, timeout: Duration) -> PageResult {
        let mut params = Map::new();
        if let Some(c) = cursor {
            params.insert("cursor".into(), json!(c));
        }
        let answer = self.session.request(kind.method(), params, timeout).await;
        let ex = answer.exchange;
        let list_changed = ex
            .notifications
            .iter()
            .filter(|m| m.as_str() == kind.list_changed_method())
            .count() as u32;
        let outcome = match ex.outcome {
            Ok(v) => Ok(v),
            Err(ExchangeError::SessionExpired) => match self.session.reinitialize().await {
                Ok(()) => Err(PageError::SessionRenewed),
                Err(e) => Err(PageError::Failed(ExchangeFailure::Transport {
                    message: format!("session expired and re-initialising failed: {e}"),
                    http_status: http_status(&e),
                })),
            },
            Err(e) => Err(page_error(e)),
        };
        PageResult {
            outcome,
            request_id: answer.request_id,
            bytes: ex.bytes,
            duration: ex.duration,
            started: answer.started,
            span_id: answer.span_id,
            list_changed,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn a_page_that_never_answers_is_a_timeout() {
        let result = within(Duration::from_secs(2), std::future::pending()).await;
        assert!(
            matches!(result.outcome, Err(PageError::Failed(ExchangeFailure::Timeout(d))) if d == Duration::from_secs(2))
        );
        assert_eq!(result.request_id, -1);
    }
}
