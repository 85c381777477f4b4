//! The tap's own answers, as any reverse proxy gives them: 502 when the
//! upstream could not be reached or broke before answering, 504 when its
//! answer head did not come in time, 400/405/431 for requests no proxy
//! forwards, 408 for a request body not sent in time. Short plain text naming the cause, never a URL or a header.
//! The connection closes after each: what the client sent next cannot be
//! trusted to be where it seems.

use crate::event::{ExchangeEnd, UpstreamFailure};
use crate::exchange_tee::Exchange;
use crate::peer::Peer;
use tokio::io::{AsyncRead, AsyncWrite};

/// What the client's connection does after an exchange.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum After {
    KeepAlive,
    Close,
}

/// Write an answer of the tap's own; the connection closes after it.
pub(crate) async fn send<C: AsyncRead + AsyncWrite + Unpin>(
    client: &mut Peer<C>,
    bytes: &[u8],
) -> After {
    let _ = client.write(bytes).await;
    After::Close
}

/// No answer from the upstream: the failure is counted, the exchange ends
/// with it, and the client gets a proxy's error.
pub(crate) async fn fail<C: AsyncRead + AsyncWrite + Unpin>(
    client: &mut Peer<C>,
    exchange: &Exchange,
    cause: UpstreamFailure,
) -> After {
    exchange.stats.upstream_error(cause);
    exchange.ended(ExchangeEnd::UpstreamFailed(cause));
    send(client, &upstream_failed(cause)).await
}

/// An answer of the tap's own, ready to write.
pub(crate) fn own(status: u16, reason: &str, text: &str, extra: &str) -> Vec<u8> {
    format!(
        "HTTP/1.1 {status} {reason}\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: {}\r\nConnection: close\r\n{extra}\r\n{text}",
        text.len()
    )
    .into_bytes()
}

pub(crate) fn upstream_failed(cause: UpstreamFailure) -> Vec<u8> {
    let (status, reason, why) = match cause {
        UpstreamFailure::Timeout => (
            504,
            "Gateway Timeout",
            "the upstream did not answer in time",
        ),
        UpstreamFailure::Connect => (502, "Bad Gateway", "the upstream could not be reached"),
        UpstreamFailure::Tls => (
            502,
            "Bad Gateway",
            "the TLS handshake with the upstream failed",
        ),
        UpstreamFailure::Reset => (
            502,
            "Bad Gateway",
            "the upstream broke off without a valid answer",
        ),
    };
    own(status, reason, &format!("{status} {reason}: {why}\n"), "")
}

/// CONNECT: a tunnel to wherever the client says is exactly what the tap
/// never makes.
pub(crate) fn method_not_allowed() -> Vec<u8> {
    own(
        405,
        "Method Not Allowed",
        "405 Method Not Allowed: this is a reverse proxy for one upstream\n",
        "Allow: GET, POST, DELETE, HEAD, OPTIONS, PUT, PATCH\r\n",
    )
}

/// A request that is not HTTP/1.x, has no path to forward, or whose body
/// framing is ambiguous.
pub(crate) fn bad_request() -> Vec<u8> {
    own(400, "Bad Request", "400 Bad Request\n", "")
}

pub(crate) fn head_too_large() -> Vec<u8> {
    own(
        431,
        "Request Header Fields Too Large",
        "431 Request Header Fields Too Large\n",
        "",
    )
}

/// A request body that did not come within its deadline.
pub(crate) fn request_timeout() -> Vec<u8> {
    own(
        408,
        "Request Timeout",
        "408 Request Timeout: the request body did not come in time\n",
        "",
    )
}
