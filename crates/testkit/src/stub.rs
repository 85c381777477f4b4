//! A small HTTP/1.1 server on loopback whose answers a test decides, and
//! which keeps every request it got (method, path, query, headers): an
//! `http_sd` endpoint, a registry, a host that must never see a credential.
//! One thread per connection, one request per connection (`Connection:
//! close`), so what a client sends is all there is to read.

use crate::http::HeaderList;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// One request as the stub read it.
#[derive(Debug, Clone)]
pub struct StubRequest {
    pub method: String,
    /// The path without the query.
    pub path: String,
    /// Query pairs, percent-decoded, in order.
    pub query: Vec<(String, String)>,
    pub headers: HeaderList,
}

impl StubRequest {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name)
    }

    pub fn param(&self, name: &str) -> Option<&str> {
        self.query
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }
}

/// What the stub answers.
pub enum StubBody {
    Bytes(Vec<u8>),
    /// This many bytes of filler, without a length: a body that only ends
    /// when it is all written or the client goes away.
    Filler(u64),
    /// A file's bytes, streamed from it: a large answer the test process
    /// never holds (a child's peak RSS counts the test's own peak at the
    /// time the child started).
    File(std::path::PathBuf),
}

pub struct StubResponse {
    pub status: u16,
    pub content_type: String,
    pub body: StubBody,
}

impl StubResponse {
    /// 200 with a JSON body.
    pub fn json(body: &str) -> StubResponse {
        StubResponse::with(200, "application/json", body)
    }

    pub fn with(status: u16, content_type: &str, body: &str) -> StubResponse {
        StubResponse {
            status,
            content_type: content_type.to_string(),
            body: StubBody::Bytes(body.as_bytes().to_vec()),
        }
    }
}

type Handler = dyn Fn(&StubRequest) -> StubResponse + Send + Sync;

/// The server; it stops serving when dropped (its listener closes on the
/// next connection).
pub struct Stub {
    port: u16,
    requests: Arc<Mutex<Vec<StubRequest>>>,
    handler: Arc<Mutex<Arc<Handler>>>,
}

impl Stub {
    /// Serves `handler`'s answers.
    pub fn start(handler: impl Fn(&StubRequest) -> StubResponse + Send + Sync + 'static) -> Stub {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind the stub");
        let port = listener.local_addr().expect("local addr").port();
        let requests = Arc::new(Mutex::new(Vec::new()));
        let handler: Arc<Mutex<Arc<Handler>>> = Arc::new(Mutex::new(Arc::new(handler)));
        let (kept, current) = (requests.clone(), handler.clone());
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(stream) = stream else { continue };
                let (kept, current) = (kept.clone(), current.clone());
                std::thread::spawn(move || serve(stream, &kept, &current));
            }
        });
        Stub {
            port,
            requests,
            handler,
        }
    }

    /// Answer with `handler` from now on.
    pub fn set(&self, handler: impl Fn(&StubRequest) -> StubResponse + Send + Sync + 'static) {
        *self.handler.lock().unwrap() = Arc::new(handler);
    }

    /// `http://127.0.0.1:PORT`.
    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// Every request so far.
    pub fn requests(&self) -> Vec<StubRequest> {
        self.requests.lock().unwrap().clone()
    }
}

fn serve(stream: TcpStream, kept: &Mutex<Vec<StubRequest>>, handler: &Mutex<Arc<Handler>>) {
    let _ = stream.set_read_timeout(Some(Duration::from_secs(30)));
    let Ok(read_half) = stream.try_clone() else {
        return;
    };
    let mut reader = BufReader::new(read_half);
    let Some(request) = read_request(&mut reader) else {
        return;
    };
    kept.lock().unwrap().push(request.clone());
    let handler = handler.lock().unwrap().clone();
    let response = handler(&request);
    let _ = write_response(stream, &response);
}

fn read_request(reader: &mut impl BufRead) -> Option<StubRequest> {
    let mut line = String::new();
    reader.read_line(&mut line).ok()?;
    let mut parts = line.split_whitespace();
    let method = parts.next()?.to_string();
    let target = parts.next()?.to_string();
    let headers = HeaderList::read(reader)?;
    // Read (and drop) a body the client sent, so it sees our answer.
    let length: u64 = headers
        .get("content-length")
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    let _ = std::io::copy(&mut reader.take(length), &mut std::io::sink());
    let parsed = url::Url::parse(&format!("http://stub{target}")).ok()?;
    Some(StubRequest {
        method,
        path: parsed.path().to_string(),
        query: parsed.query_pairs().into_owned().collect(),
        headers,
    })
}

fn write_response(mut stream: TcpStream, r: &StubResponse) -> std::io::Result<()> {
    let reason = match r.status {
        200 => "OK",
        404 => "Not Found",
        500 => "Internal Server Error",
        _ => "Status",
    };
    let mut head = format!(
        "HTTP/1.1 {} {reason}\r\nContent-Type: {}\r\nConnection: close\r\n",
        r.status, r.content_type
    );
    match &r.body {
        StubBody::Bytes(bytes) => {
            head.push_str(&format!("Content-Length: {}\r\n\r\n", bytes.len()));
            stream.write_all(head.as_bytes())?;
            stream.write_all(bytes)?;
        }
        StubBody::File(path) => {
            let mut file = std::fs::File::open(path)?;
            let length = file.metadata()?.len();
            head.push_str(&format!("Content-Length: {length}\r\n\r\n"));
            stream.write_all(head.as_bytes())?;
            std::io::copy(&mut file, &mut stream)?;
        }
        StubBody::Filler(n) => {
            head.push_str("\r\n");
            stream.write_all(head.as_bytes())?;
            let chunk = vec![b' '; 64 * 1024];
            let mut left = *n;
            while left > 0 {
                let take = left.min(chunk.len() as u64) as usize;
                stream.write_all(&chunk[..take])?;
                left -= take as u64;
            }
        }
    }
    stream.flush()
}
