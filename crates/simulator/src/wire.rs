//! Turning a [`Reply`] into timed writes. A body is a list of [`Step`]s
//! played by a stream: each chunk is a separate write, a `Flush` makes the
//! HTTP server send what it has before the next chunk (the priming-event
//! stall), sleeps and hangs happen between writes.

use super::reply::{Body, Reply};
use bytes::Bytes;
use futures_util::Stream;
use serde_json::Value;
use std::collections::VecDeque;
use std::time::Duration;

/// How long a "never answers" request is held. Bounded so a forgotten
/// client cannot pin memory forever.
pub const HANG_FOR: Duration = Duration::from_secs(3600);

#[derive(Debug)]
pub enum Step {
    Chunk(Bytes),
    /// Return `Pending` once so hyper flushes the chunks it holds.
    Flush,
    Sleep(Duration),
    /// Fail the body: hyper drops the connection mid-response.
    Fail,
    /// Hold the response open (up to [`HANG_FOR`]), then end it.
    Hang,
}

/// One SSE `message` event.
pub fn sse_event(json: &str) -> Bytes {
    Bytes::from(format!("event: message\ndata: {json}\n\n"))
}

/// The priming event: an event id with empty data, which clients must not
/// dispatch. Written on its own, like the SDK servers do.
pub fn priming_event(event_id: u64) -> Bytes {
    Bytes::from(format!("id: {event_id}\ndata: \n\n"))
}

/// The steps of one answer inside an SSE stream (after any priming event):
/// delay, notifications, then the message itself.
pub fn sse_steps(reply: Reply) -> Vec<Step> {
    let mut steps = Vec::new();
    if !reply.delay.is_zero() {
        steps.push(Step::Sleep(reply.delay));
    }
    for n in &reply.notifications {
        steps.push(Step::Chunk(sse_event(&n.to_string())));
    }
    match reply.body {
        Body::None => {}
        Body::Json(v) => steps.push(Step::Chunk(sse_event(&v.to_string()))),
        Body::Raw(b) => steps.push(Step::Chunk(Bytes::from(format!(
            "event: message\ndata: {}\n\n",
            String::from_utf8_lossy(&b)
        )))),
        Body::Drip {
            bytes,
            chunk,
            every,
        } => {
            steps.push(Step::Chunk(Bytes::from_static(b"event: message\ndata: ")));
            push_drip(&mut steps, bytes, chunk, every);
            steps.push(Step::Chunk(Bytes::from_static(b"\n\n")));
        }
        Body::Hang => steps.push(Step::Hang),
        Body::Crash => steps.push(Step::Fail),
    }
    steps
}

/// The steps of a plain JSON body (no notifications: there is no place
/// for them). The delay is taken before the headers by the caller.
pub fn json_steps(body: Body) -> Vec<Step> {
    match body {
        Body::None => Vec::new(),
        Body::Json(v) => vec![Step::Chunk(Bytes::from(v.to_string()))],
        Body::Raw(b) => vec![Step::Chunk(b)],
        Body::Drip {
            bytes,
            chunk,
            every,
        } => {
            let mut steps = Vec::new();
            push_drip(&mut steps, bytes, chunk, every);
            steps
        }
        Body::Hang => vec![Step::Hang],
        Body::Crash => vec![Step::Fail],
    }
}

fn push_drip(steps: &mut Vec<Step>, bytes: Bytes, chunk: usize, every: Duration) {
    let mut rest = bytes;
    let mut first = true;
    while !rest.is_empty() {
        if !first {
            steps.push(Step::Sleep(every));
        }
        first = false;
        let take = chunk.min(rest.len());
        steps.push(Step::Chunk(rest.split_to(take)));
        steps.push(Step::Flush);
    }
}

/// One newline-terminated JSON line (stdio).
pub fn line(v: &Value) -> Bytes {
    let mut s = v.to_string();
    s.push('\n');
    Bytes::from(s)
}

/// Play steps as a body stream.
pub fn play(steps: Vec<Step>) -> impl Stream<Item = Result<Bytes, std::io::Error>> + Send {
    futures_util::stream::unfold(VecDeque::from(steps), |mut steps| async move {
        loop {
            match steps.pop_front()? {
                Step::Chunk(b) => return Some((Ok(b), steps)),
                Step::Flush => tokio::task::yield_now().await,
                Step::Sleep(d) => tokio::time::sleep(d).await,
                Step::Hang => {
                    tokio::time::sleep(HANG_FOR).await;
                    return None;
                }
                Step::Fail => {
                    steps.clear();
                    return Some((
                        Err(std::io::Error::new(
                            std::io::ErrorKind::ConnectionReset,
                            "simulated crash",
                        )),
                        steps,
                    ));
                }
            }
        }
    })
}
