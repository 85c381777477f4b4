//! How one request/response exchange failed, in the terms the wire and the
//! walker share: the wire's `ExchangeError` and the walker's `PageError`
//! both carry it, each beside the failures only it knows.

use std::time::{Duration, SystemTime};

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

    /// An HTTP answer that is not a success, as the failure it means to
    /// every caller (the wire, discovery, the tap's merged walks): 401 and
    /// 403 unauthorized; 429 rate limited, for the wait its `Retry-After`
    /// value asks (read at `now`, capped: `retry_after::parse`); any other
    /// status a transport failure that keeps it.
    pub fn from_http_status(
        status: http::StatusCode,
        retry_after: Option<&[u8]>,
        now: SystemTime,
    ) -> ExchangeFailure {
        match status.as_u16() {
            code @ (401 | 403) => ExchangeFailure::Unauthorized { status: code },
            429 => ExchangeFailure::RateLimited {
                retry_after: retry_after
                    .and_then(|v| std::str::from_utf8(v).ok())
                    .and_then(|v| crate::retry_after::parse(v, now)),
            },
            code => ExchangeFailure::Transport {
                message: format!("HTTP {status}"),
                http_status: Some(code),
            },
        }
    }

    /// The failure with `what` it answered in front of a transport
    /// failure's message (`GET for the SSE stream: HTTP 404 Not Found`).
    pub fn answering(self, what: &str) -> ExchangeFailure {
        match self {
            ExchangeFailure::Transport {
                message,
                http_status,
            } => ExchangeFailure::Transport {
                message: format!("{what}: {message}"),
                http_status,
            },
            other => other,
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

    #[test]
    fn an_http_status_means_one_failure_everywhere() {
        let now = SystemTime::UNIX_EPOCH + Duration::from_secs(784_111_777);
        let status = |code| http::StatusCode::from_u16(code).unwrap();
        let failed = |code, retry: Option<&str>| {
            ExchangeFailure::from_http_status(status(code), retry.map(str::as_bytes), now)
        };
        assert!(matches!(
            failed(403, None),
            ExchangeFailure::Unauthorized { status: 403 }
        ));
        assert!(matches!(
            failed(429, Some("Sun, 06 Nov 1994 08:50:07 GMT")),
            ExchangeFailure::RateLimited { retry_after: Some(d) } if d == Duration::from_secs(30)
        ));
        assert!(matches!(
            failed(429, Some("soon")),
            ExchangeFailure::RateLimited { retry_after: None }
        ));
        let missing = failed(404, None).answering("GET for the SSE stream");
        assert_eq!(
            missing.to_string(),
            "GET for the SSE stream: HTTP 404 Not Found"
        );
        assert_eq!(missing.http_status(), Some(404));
        assert_eq!(
            failed(599, None).to_string(),
            "HTTP 599 <unknown status code>"
        );
    }

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
