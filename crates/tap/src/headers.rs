//! What the data path reads from heads for the observer: how a body
//! carries messages (its `Content-Type`) and the values that identify the
//! client and its session, shared rather than copied.

use crate::event::BodyFraming;
use crate::http1::head::{value as field, Field};
use http::HeaderValue;

/// How a body of this `Content-Type` carries messages. No type at all is
/// taken for JSON (a body without one is still one message).
pub(crate) fn framing(fields: &[Field]) -> BodyFraming {
    let Some(value) = field(fields, "content-type") else {
        return BodyFraming::Json;
    };
    let essence = value
        .split(|&b| b == b';')
        .next()
        .unwrap_or_default()
        .trim_ascii();
    if essence.eq_ignore_ascii_case(b"application/json")
        || essence.len() > 5 && essence[essence.len() - 5..].eq_ignore_ascii_case(b"+json")
    {
        BodyFraming::Json
    } else if essence.eq_ignore_ascii_case(b"text/event-stream") {
        BodyFraming::EventStream
    } else {
        BodyFraming::Other
    }
}

/// The value of `name`, sharing the head's bytes.
pub(crate) fn value(fields: &[Field], name: &str) -> Option<HeaderValue> {
    HeaderValue::from_maybe_shared(field(fields, name)?.clone()).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use bytes::Bytes;

    fn typed(v: &'static str) -> Vec<Field> {
        vec![Field {
            name: Bytes::from_static(b"Content-Type"),
            value: Bytes::from_static(v.as_bytes()),
        }]
    }

    #[test]
    fn framing_follows_the_content_type() {
        assert_eq!(
            framing(&typed("application/json; charset=utf-8")),
            BodyFraming::Json
        );
        assert_eq!(framing(&typed("application/vnd.x+JSON")), BodyFraming::Json);
        assert_eq!(
            framing(&typed("Text/Event-Stream")),
            BodyFraming::EventStream
        );
        assert_eq!(framing(&typed("text/html")), BodyFraming::Other);
        assert_eq!(framing(&[]), BodyFraming::Json);
        assert_eq!(
            value(&typed("text/html"), "content-type").unwrap(),
            "text/html"
        );
    }
}
