//! An in-process OTLP trace receiver on 127.0.0.1 for integration tests:
//! HTTP/protobuf (`POST /v1/traces`) or gRPC (`TraceService/Export`). It
//! decodes every `ExportTraceServiceRequest` and keeps it with the request
//! headers (gRPC metadata), so tests can look at spans and at what went on
//! the wire.

use axum::body::Bytes;
use axum::http::{HeaderMap, StatusCode};
use opentelemetry_proto::tonic::collector::trace::v1::trace_service_server::{
    TraceService, TraceServiceServer,
};
use opentelemetry_proto::tonic::collector::trace::v1::{
    ExportTraceServiceRequest, ExportTraceServiceResponse,
};
use opentelemetry_proto::tonic::common::v1::any_value::Value as AnyValueKind;
use opentelemetry_proto::tonic::common::v1::{AnyValue, KeyValue};
use opentelemetry_proto::tonic::trace::v1::Span;
use prost::Message;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::{oneshot, Notify};

/// One export call as the receiver saw it.
#[derive(Debug, Clone)]
pub struct Received {
    /// Header (or gRPC metadata) names lowercased, with their values.
    pub headers: Vec<(String, String)>,
    pub request: ExportTraceServiceRequest,
}

/// A span with the resource and scope it arrived under.
#[derive(Debug, Clone)]
pub struct ReceivedSpan {
    pub resource: Vec<KeyValue>,
    pub scope_name: String,
    pub span: Span,
}

impl ReceivedSpan {
    pub fn trace_id(&self) -> String {
        hex::encode(&self.span.trace_id)
    }
    pub fn span_id(&self) -> String {
        hex::encode(&self.span.span_id)
    }
    pub fn parent_span_id(&self) -> String {
        hex::encode(&self.span.parent_span_id)
    }
    pub fn resource_attr(&self, key: &str) -> Option<String> {
        find_attr(&self.resource, key)
    }
    /// The attribute rendered as text (see `render`).
    pub fn attr(&self, key: &str) -> Option<String> {
        find_attr(&self.span.attributes, key)
    }
    pub fn event(&self, name: &str) -> Option<&opentelemetry_proto::tonic::trace::v1::span::Event> {
        self.span.events.iter().find(|e| e.name == name)
    }
    /// Every string that left the process for this span: name, attributes,
    /// events, status message and resource, for leak checks.
    pub fn all_text(&self) -> String {
        let mut out = vec![self.span.name.clone(), self.scope_name.clone()];
        for kv in self.span.attributes.iter().chain(self.resource.iter()) {
            out.push(format!("{}={}", kv.key, render(kv.value.as_ref())));
        }
        for e in &self.span.events {
            out.push(e.name.clone());
            for kv in &e.attributes {
                out.push(format!("{}={}", kv.key, render(kv.value.as_ref())));
            }
        }
        if let Some(s) = &self.span.status {
            out.push(s.message.clone());
        }
        out.join("\n")
    }
}

pub fn find_attr(attrs: &[KeyValue], key: &str) -> Option<String> {
    attrs
        .iter()
        .find(|kv| kv.key == key)
        .map(|kv| render(kv.value.as_ref()))
}

/// Strings as-is, numbers and bools via `to_string`, arrays as `[a,b]`.
pub fn render(v: Option<&AnyValue>) -> String {
    match v.and_then(|v| v.value.as_ref()) {
        None => String::new(),
        Some(AnyValueKind::StringValue(s)) => s.clone(),
        Some(AnyValueKind::BoolValue(b)) => b.to_string(),
        Some(AnyValueKind::IntValue(i)) => i.to_string(),
        Some(AnyValueKind::DoubleValue(d)) => d.to_string(),
        Some(AnyValueKind::ArrayValue(a)) => format!(
            "[{}]",
            a.values
                .iter()
                .map(|v| render(Some(v)))
                .collect::<Vec<_>>()
                .join(",")
        ),
        Some(other) => format!("{other:?}"),
    }
}

#[derive(Default)]
struct Store {
    received: Mutex<Vec<Received>>,
    arrived: Notify,
}

impl Store {
    fn push(&self, r: Received) {
        if let Ok(mut v) = self.received.lock() {
            v.push(r);
        }
        self.arrived.notify_waiters();
    }
}

/// Completes when the receiver drops.
type Stopped = std::pin::Pin<Box<dyn std::future::Future<Output = ()> + Send>>;

pub struct OtlpReceiver {
    pub addr: SocketAddr,
    store: Arc<Store>,
    stop: Option<oneshot::Sender<()>>,
}

impl OtlpReceiver {
    /// HTTP/protobuf receiver; export to `endpoint()` with `http/protobuf`.
    pub async fn http() -> OtlpReceiver {
        OtlpReceiver::serve(|listener, store, stopped| async move {
            let app = axum::Router::new().route(
                "/v1/traces",
                axum::routing::post(move |headers: HeaderMap, body: Bytes| {
                    let store = store.clone();
                    async move {
                        let request = match ExportTraceServiceRequest::decode(body) {
                            Ok(r) => r,
                            Err(_) => return (StatusCode::BAD_REQUEST, Vec::new()),
                        };
                        let headers = lowercased(&headers);
                        store.push(Received { headers, request });
                        (
                            StatusCode::OK,
                            ExportTraceServiceResponse::default().encode_to_vec(),
                        )
                    }
                }),
            );
            let _ = axum::serve(listener, app)
                .with_graceful_shutdown(stopped)
                .await;
        })
        .await
    }

    /// gRPC receiver; export to `endpoint()` with `grpc`.
    pub async fn grpc() -> OtlpReceiver {
        OtlpReceiver::serve(|listener, store, stopped| async move {
            let incoming = tonic::transport::server::TcpIncoming::from(listener);
            let _ = tonic::transport::Server::builder()
                .add_service(TraceServiceServer::new(GrpcTraces { store }))
                .serve_with_incoming_shutdown(incoming, stopped)
                .await;
        })
        .await
    }

    /// Binds 127.0.0.1:0 and runs `server` on it, filling a new store, until
    /// the receiver drops (the future it is given completes then).
    async fn serve<F>(
        server: impl FnOnce(tokio::net::TcpListener, Arc<Store>, Stopped) -> F,
    ) -> OtlpReceiver
    where
        F: std::future::Future<Output = ()> + Send + 'static,
    {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind 127.0.0.1:0 for the receiver");
        let addr = listener.local_addr().expect("its address");
        let store = Arc::new(Store::default());
        let (stop, stopped) = oneshot::channel::<()>();
        let stopped: Stopped = Box::pin(async move {
            let _ = stopped.await;
        });
        tokio::spawn(server(listener, store.clone(), stopped));
        OtlpReceiver {
            addr,
            store,
            stop: Some(stop),
        }
    }

    /// Base URL, `http://127.0.0.1:<port>` (the exporter adds `/v1/traces`
    /// for HTTP).
    pub fn endpoint(&self) -> String {
        format!("http://{}", self.addr)
    }

    pub fn received(&self) -> Vec<Received> {
        self.store
            .received
            .lock()
            .map(|v| v.clone())
            .unwrap_or_default()
    }

    pub fn spans(&self) -> Vec<ReceivedSpan> {
        let mut out = Vec::new();
        for r in self.received() {
            for rs in r.request.resource_spans {
                let resource = rs.resource.map(|r| r.attributes).unwrap_or_default();
                for ss in rs.scope_spans {
                    let scope_name = ss.scope.map(|s| s.name).unwrap_or_default();
                    for span in ss.spans {
                        out.push(ReceivedSpan {
                            resource: resource.clone(),
                            scope_name: scope_name.clone(),
                            span,
                        });
                    }
                }
            }
        }
        out
    }

    /// Wait until at least `n` spans arrived or `timeout` passed; returns
    /// whatever arrived.
    pub async fn wait_for_spans(&self, n: usize, timeout: Duration) -> Vec<ReceivedSpan> {
        let deadline = tokio::time::Instant::now() + timeout;
        loop {
            let notified = self.store.arrived.notified();
            let spans = self.spans();
            if spans.len() >= n {
                return spans;
            }
            // Re-check periodically as well, in case a notification raced.
            let wake = deadline.min(tokio::time::Instant::now() + Duration::from_millis(200));
            if tokio::time::timeout_at(wake, notified).await.is_err()
                && tokio::time::Instant::now() >= deadline
            {
                return self.spans();
            }
        }
    }
}

impl Drop for OtlpReceiver {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
    }
}

struct GrpcTraces {
    store: Arc<Store>,
}

#[tonic::async_trait]
impl TraceService for GrpcTraces {
    async fn export(
        &self,
        request: tonic::Request<ExportTraceServiceRequest>,
    ) -> Result<tonic::Response<ExportTraceServiceResponse>, tonic::Status> {
        let headers = lowercased(&request.metadata().clone().into_headers());
        self.store.push(Received {
            headers,
            request: request.into_inner(),
        });
        Ok(tonic::Response::new(ExportTraceServiceResponse::default()))
    }
}

/// Header names lowercased, with their values as text.
fn lowercased(headers: &HeaderMap) -> Vec<(String, String)> {
    headers
        .iter()
        .map(|(k, v)| {
            (
                k.as_str().to_ascii_lowercase(),
                String::from_utf8_lossy(v.as_bytes()).into_owned(),
            )
        })
        .collect()
}
