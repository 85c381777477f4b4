//! Legacy HTTP+SSE transport (protocol 2024-11-05): `GET /sse` opens a
//! stream whose first event names the POST endpoint; every POST gets 202
//! and its answer arrives on that stream.

use super::app::{authorised, json_response, lock, App, SessionQuery, SseSession};
use super::engine::SessionState;
use super::reply::{error, PARSE_ERROR};
use super::wire::{self, Step};
use axum::body::{Body, Bytes};
use axum::extract::{Path, State};
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use serde_json::Value;
use std::collections::VecDeque;
use std::sync::Arc;
use tokio::sync::mpsc;

/// Queued answers per stream; a client that stops reading gets 503s
/// rather than growing the queue.
const QUEUE: usize = 64;

/// Removes the session when its stream is dropped (client gone, crash).
struct SessionGuard {
    app: Arc<App>,
    id: String,
}

impl Drop for SessionGuard {
    fn drop(&mut self) {
        lock(&self.app.sse_sessions).remove(&self.id);
    }
}

pub async fn open_default(State(app): State<Arc<App>>, headers: HeaderMap) -> Response {
    open(app, String::new(), headers)
}

pub async fn open_named(
    State(app): State<Arc<App>>,
    Path(name): Path<String>,
    headers: HeaderMap,
) -> Response {
    open(app, name, headers)
}

pub async fn message_default(
    State(app): State<Arc<App>>,
    query: SessionQuery,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    message(app, String::new(), query, headers, body).await
}

pub async fn message_named(
    State(app): State<Arc<App>>,
    Path(name): Path<String>,
    query: SessionQuery,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    message(app, name, query, headers, body).await
}

fn open(app: Arc<App>, name: String, headers: HeaderMap) -> Response {
    if let Err(denied) = authorised(&app, &name, &headers) {
        return *denied;
    }
    let id = app.new_session_id();
    let (tx, rx) = mpsc::channel(QUEUE);
    {
        let mut sessions = lock(&app.sse_sessions);
        if sessions.len() >= app.max_sessions() {
            return (StatusCode::SERVICE_UNAVAILABLE, "too many SSE sessions").into_response();
        }
        sessions.insert(
            id.clone(),
            SseSession {
                server: name.clone(),
                state: SessionState::default(),
                tx,
            },
        );
    }
    let endpoint = if name.is_empty() {
        format!("/messages?sessionId={id}")
    } else {
        format!("/sse/{name}/messages?sessionId={id}")
    };
    let first = Bytes::from(format!("event: endpoint\ndata: {endpoint}\n\n"));
    let guard = SessionGuard { app, id };
    let stream = futures_util::stream::unfold(
        (Some(first), rx, VecDeque::<Step>::new(), guard, false),
        |(mut first, mut rx, mut pending, guard, failed)| async move {
            if failed {
                return None;
            }
            if let Some(b) = first.take() {
                return Some((Ok(b), (None, rx, pending, guard, false)));
            }
            loop {
                let Some(step) = pending.pop_front() else {
                    pending.extend(rx.recv().await?);
                    continue;
                };
                match step {
                    Step::Chunk(b) => return Some((Ok(b), (None, rx, pending, guard, false))),
                    Step::Flush => tokio::task::yield_now().await,
                    Step::Sleep(d) => tokio::time::sleep(d).await,
                    // A hung request simply never gets its event.
                    Step::Hang => {}
                    Step::Fail => {
                        let err = std::io::Error::new(
                            std::io::ErrorKind::ConnectionReset,
                            "simulated crash",
                        );
                        return Some((Err(err), (None, rx, pending, guard, true)));
                    }
                }
            }
        },
    );
    (
        StatusCode::OK,
        [
            (header::CONTENT_TYPE, "text/event-stream"),
            (header::CACHE_CONTROL, "no-cache"),
        ],
        Body::from_stream(stream),
    )
        .into_response()
}

async fn message(
    app: Arc<App>,
    name: String,
    query: SessionQuery,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let server = match authorised(&app, &name, &headers) {
        Ok(server) => server,
        Err(denied) => return *denied,
    };
    let Some(id) = query.get("sessionId") else {
        return (StatusCode::BAD_REQUEST, "sessionId is required").into_response();
    };
    let msg: Value = match serde_json::from_slice(&body) {
        Ok(v) => v,
        Err(_) => return json_response(400, &error(&Value::Null, PARSE_ERROR, "Parse error")),
    };
    let (tx, reply) = {
        let mut sessions = lock(&app.sse_sessions);
        let Some(session) = sessions.get_mut(id).filter(|s| s.server == name) else {
            return (StatusCode::NOT_FOUND, "unknown session").into_response();
        };
        let reply = server.handle(&msg, &mut session.state);
        (session.tx.clone(), reply)
    };
    let steps = wire::sse_steps(reply);
    if !steps.is_empty() && tx.try_send(steps).is_err() {
        return (StatusCode::SERVICE_UNAVAILABLE, "stream not being read").into_response();
    }
    (StatusCode::ACCEPTED, "Accepted").into_response()
}
