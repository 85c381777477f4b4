//! The tap's own answers, as any reverse proxy gives them: 502 when the
//! upstream could not be reached or broke before answering, 504 when its
//! answer head did not come in time, 400/405 for requests no proxy
//! forwards. Short plain text naming the cause, never a URL or a header.

use crate::event::UpstreamFailure;
use crate::tap_body::TapBody;
use http::{header, HeaderValue, Response, StatusCode};

pub(crate) fn upstream_failed(cause: UpstreamFailure) -> Response<TapBody> {
    let (status, text) = match cause {
        UpstreamFailure::Timeout => (
            StatusCode::GATEWAY_TIMEOUT,
            "504 Gateway Timeout: the upstream did not answer in time\n",
        ),
        UpstreamFailure::Connect => (
            StatusCode::BAD_GATEWAY,
            "502 Bad Gateway: the upstream could not be reached\n",
        ),
        UpstreamFailure::Tls => (
            StatusCode::BAD_GATEWAY,
            "502 Bad Gateway: the TLS handshake with the upstream failed\n",
        ),
        UpstreamFailure::Reset => (
            StatusCode::BAD_GATEWAY,
            "502 Bad Gateway: the upstream closed the connection without an answer\n",
        ),
    };
    plain(status, text)
}

/// CONNECT: a tunnel to wherever the client says is exactly what the tap
/// never makes.
pub(crate) fn method_not_allowed() -> Response<TapBody> {
    let mut r = plain(
        StatusCode::METHOD_NOT_ALLOWED,
        "405 Method Not Allowed: this is a reverse proxy for one upstream\n",
    );
    r.headers_mut().insert(
        header::ALLOW,
        HeaderValue::from_static("GET, POST, DELETE, HEAD, OPTIONS, PUT, PATCH"),
    );
    r
}

/// A request without a path to forward (`OPTIONS *`, a malformed target).
pub(crate) fn bad_request() -> Response<TapBody> {
    plain(
        StatusCode::BAD_REQUEST,
        "400 Bad Request: no path to forward\n",
    )
}

fn plain(status: StatusCode, text: &'static str) -> Response<TapBody> {
    let mut r = Response::new(TapBody::own(text));
    *r.status_mut() = status;
    r.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    r
}
