//! How one request/response exchange failed, in the terms the wire and the
//! walker share: the wire's `ExchangeError` and the walker's `PageError`
//! both carry it, each beside the failures only it knows.

use std::time::Duration;

/// A failed exchange that means the same to every layer.
#[derive(Debug, Clone, thiserror::Error)]
pub enum ExchangeFailure {
    #[error("no answer within {0:?}")]
    Timeout(Duration),
    #[error("{message}")]
    Transport {
        message: String,
        http_status: Option<u16>,
    },
    #[error("unauthorized (HTTP {status})")]
    Unauthorized { status: u16 },
    #[error("response exceeded {limit} bytes")]
    TooLarge { limit: u64 },
    #[error("malformed response: {0}")]
    Malformed(String),
    /// HTTP 429, with the server's `Retry-After` if it gave a valid one.
    #[error("rate limited (HTTP 429)")]
    RateLimited { retry_after: Option<Duration> },
}

impl ExchangeFailure {
    /// A transport failure without an HTTP status.
    pub fn transport(message: impl Into<String>) -> Self {
        ExchangeFailure::Transport {
            message: message.into(),
            http_status: None,
        }
    }

    /// The HTTP status the failure carried, if any.
    pub fn http_status(&self) -> Option<u16> {
        match self {
            ExchangeFailure::Transport { http_status, .. } => *http_status,
            ExchangeFailure::Unauthorized { status } => Some(*status),
            ExchangeFailure::RateLimited { .. } => Some(429),
            ExchangeFailure::Timeout(_)
            | ExchangeFailure::TooLarge { .. }
            | ExchangeFailure::Malformed(_) => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::walk::PageError;

    /// The texts reach pages, logs and spans through the errors that nest
    /// this one; nesting must not change a word.
    #[test]
    fn texts_are_the_same_nested_in_a_page_error() {
        let cases = [
            (
                ExchangeFailure::Timeout(Duration::from_secs(2)),
                "no answer within 2s",
            ),
            (ExchangeFailure::transport("reset"), "reset"),
            (
                ExchangeFailure::Unauthorized { status: 401 },
                "unauthorized (HTTP 401)",
            ),
            (
                ExchangeFailure::TooLarge { limit: 10 },
                "response exceeded 10 bytes",
            ),
            (
                ExchangeFailure::Malformed("x".into()),
                "malformed response: x",
            ),
            (
                ExchangeFailure::RateLimited { retry_after: None },
                "rate limited (HTTP 429)",
            ),
        ];
        for (failure, text) in cases {
            assert_eq!(failure.to_string(), text);
            assert_eq!(PageError::from(failure).to_string(), text);
        }
    }
}
