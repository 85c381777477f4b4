//! The one body type both directions use: what a peer sent, forwarded and
//! observed, or a body of the tap's own (its 502/504 answers).

use crate::body::ObservedBody;
use bytes::Bytes;
use http_body_util::Full;
use hyper::body::{Body, Frame, Incoming, SizeHint};
use std::pin::Pin;
use std::task::{Context, Poll};

pub(crate) enum TapBody {
    Forwarded(ObservedBody<Incoming>),
    Own(Full<Bytes>),
}

impl TapBody {
    pub(crate) fn own(bytes: impl Into<Bytes>) -> TapBody {
        TapBody::Own(Full::new(bytes.into()))
    }
}

impl Body for TapBody {
    type Data = Bytes;
    type Error = hyper::Error;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, hyper::Error>>> {
        match self.get_mut() {
            TapBody::Forwarded(b) => Pin::new(b).poll_frame(cx),
            TapBody::Own(b) => Pin::new(b)
                .poll_frame(cx)
                .map(|f| f.map(|f| f.map_err(|never| match never {}))),
        }
    }

    fn is_end_stream(&self) -> bool {
        match self {
            TapBody::Forwarded(b) => b.is_end_stream(),
            TapBody::Own(b) => b.is_end_stream(),
        }
    }

    fn size_hint(&self) -> SizeHint {
        match self {
            TapBody::Forwarded(b) => b.size_hint(),
            TapBody::Own(b) => b.size_hint(),
        }
    }
}
