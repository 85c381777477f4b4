//! The tap's data path in a test: the tap on its own runtime
//! ([`RunningTap`]) with a [`Recorder`] as its observer, a blocking HTTP/1.1
//! client that keeps exactly what it reads ([`RawConn`]), and an upstream
//! whose every byte a test scripts ([`Scripted`]). Everything talks over
//! real loopback sockets.

use crate::http::{HeaderList, RawResponse};
use mcp_tap::{CopyEnd, Direction, ExchangeId, TapEvent, TapSettings, TapStats, Tee};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// A bound on one read (a hang, not a measurement).
pub const READ_DEADLINE: Duration = Duration::from_secs(60);

// ---------------------------------------------------------------- observer

/// An observer that keeps every event it takes; told to, it refuses
/// chunks (a full queue).
#[derive(Default)]
pub struct Recorder {
    events: Mutex<Vec<TapEvent>>,
    refuse_chunks: AtomicBool,
}

impl Tee for Recorder {
    fn offer(&self, event: TapEvent) -> bool {
        if matches!(event, TapEvent::Chunk { .. }) && self.refuse_chunks.load(Ordering::Relaxed) {
            return false;
        }
        self.events
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(event);
        true
    }
}

/// One message as the observer can put it together.
#[derive(Debug, Clone, PartialEq)]
pub struct Message {
    pub exchange: ExchangeId,
    pub direction: Direction,
    pub bytes: Vec<u8>,
    pub copy: CopyEnd,
}

impl Recorder {
    pub fn refuse_chunks(&self, refuse: bool) {
        self.refuse_chunks.store(refuse, Ordering::Relaxed);
    }

    pub fn events(&self) -> Vec<TapEvent> {
        self.events
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// Every message ended so far, chunks put back together, in the order
    /// their ends came.
    pub fn messages(&self) -> Vec<Message> {
        let mut open: Vec<(ExchangeId, Direction, Vec<u8>)> = Vec::new();
        let mut done = Vec::new();
        for event in self.events() {
            match event {
                TapEvent::Chunk {
                    exchange,
                    direction,
                    bytes,
                } => match open
                    .iter_mut()
                    .find(|(e, d, _)| *e == exchange && *d == direction)
                {
                    Some((_, _, b)) => b.extend_from_slice(&bytes),
                    None => open.push((exchange, direction, bytes.to_vec())),
                },
                TapEvent::MessageEnd {
                    exchange,
                    direction,
                    copy,
                    ..
                } => {
                    let at = open
                        .iter()
                        .position(|(e, d, _)| *e == exchange && *d == direction);
                    let bytes = at.map(|i| open.remove(i).2).unwrap_or_default();
                    done.push(Message {
                        exchange,
                        direction,
                        bytes,
                        copy,
                    });
                }
                _ => {}
            }
        }
        done
    }

    /// The messages in `direction`, as text.
    pub fn texts(&self, direction: Direction) -> Vec<String> {
        self.messages()
            .into_iter()
            .filter(|m| m.direction == direction)
            .map(|m| String::from_utf8_lossy(&m.bytes).into_owned())
            .collect()
    }

    /// Waits until `f` holds for the events (they follow the traffic by a
    /// moment: `Closed` goes out when the last body lets go).
    pub fn wait(&self, what: &str, f: impl Fn(&[TapEvent]) -> bool) {
        crate::wait_for(READ_DEADLINE, what, || f(&self.events()).then_some(()));
    }
}

// ---------------------------------------------------------------- the tap

/// A tap serving on 127.0.0.1 from a runtime of its own, until dropped.
pub struct RunningTap {
    pub addr: SocketAddr,
    pub stats: Arc<TapStats>,
    pub recorder: Arc<Recorder>,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl RunningTap {
    pub fn start(settings: TapSettings) -> RunningTap {
        let recorder = Arc::new(Recorder::default());
        RunningTap::start_with(settings, recorder.clone(), recorder)
    }

    /// With `tee` as the observer (`recorder` is kept for the test, and may
    /// be another than `tee`).
    pub fn start_with(
        settings: TapSettings,
        tee: Arc<dyn Tee>,
        recorder: Arc<Recorder>,
    ) -> RunningTap {
        let stats = Arc::new(TapStats::default());
        let tap = mcp_tap::Tap::new(settings, tee, stats.clone()).expect("tap settings");
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .expect("a runtime for the tap");
        let listener = runtime
            .block_on(tokio::net::TcpListener::bind("127.0.0.1:0"))
            .expect("bind the tap");
        let addr = listener.local_addr().expect("the tap's address");
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let thread = std::thread::spawn(move || {
            runtime.block_on(tap.serve(listener, async {
                let _ = stopped.await;
            }));
        });
        RunningTap {
            addr,
            stats,
            recorder,
            stop: Some(stop),
            thread: Some(thread),
        }
    }

    pub fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }
}

impl Drop for RunningTap {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

// ---------------------------------------------------------------- a client

/// The `Accept` an MCP client sends with every POST.
pub const MCP_ACCEPT: (&str, &str) = ("Accept", "application/json, text/event-stream");
/// The `Content-Type` of a JSON-RPC body.
pub const JSON_BODY: (&str, &str) = ("Content-Type", "application/json");

/// The tool names of a `tools/list` answer's JSON-RPC message, in order.
pub fn tool_names(message: &serde_json::Value) -> Vec<String> {
    message["result"]["tools"]
        .as_array()
        .expect("tools")
        .iter()
        .map(|t| t["name"].as_str().unwrap_or_default().to_string())
        .collect()
}

/// A kept-alive HTTP/1.1 connection, read by hand.
pub struct RawConn {
    reader: BufReader<TcpStream>,
    writer: TcpStream,
    host: String,
}

impl RawConn {
    pub fn connect(addr: SocketAddr) -> RawConn {
        let stream = TcpStream::connect(addr).unwrap_or_else(|e| panic!("connect {addr}: {e}"));
        stream
            .set_read_timeout(Some(READ_DEADLINE))
            .expect("a read timeout");
        let writer = stream.try_clone().expect("a second handle on the socket");
        RawConn {
            reader: BufReader::new(stream),
            writer,
            host: addr.to_string(),
        }
    }

    /// A connection whose receive buffer is as small as the kernel allows
    /// (set before connecting, so the window stays small): a client that
    /// does not read holds the peer's writes after a few KiB, not after
    /// the megabytes loopback buffers otherwise absorb.
    pub fn connect_small_window(addr: SocketAddr) -> RawConn {
        use socket2::{Domain, Socket, Type};
        let socket = Socket::new(Domain::IPV4, Type::STREAM, None).expect("a socket");
        socket.set_recv_buffer_size(1).expect("SO_RCVBUF");
        socket
            .connect(&addr.into())
            .unwrap_or_else(|e| panic!("connect {addr}: {e}"));
        let stream: TcpStream = socket.into();
        stream
            .set_read_timeout(Some(READ_DEADLINE))
            .expect("a read timeout");
        let writer = stream.try_clone().expect("a second handle on the socket");
        RawConn {
            reader: BufReader::with_capacity(1024, stream),
            writer,
            host: addr.to_string(),
        }
    }

    /// `initialize` at `/mcp` as a client named `name` (2025-11-25), then
    /// `notifications/initialized`: the session id the answer opened.
    pub fn open_session(&mut self, name: &str) -> String {
        let init = format!(
            r#"{{"jsonrpc":"2.0","id":1,"method":"initialize","params":{{"protocolVersion":"2025-11-25","capabilities":{{}},"clientInfo":{{"name":"{name}","version":"1.0"}}}}}}"#
        );
        let answer = self
            .send(
                "POST",
                "/mcp",
                &[MCP_ACCEPT, JSON_BODY],
                Some(init.as_bytes()),
            )
            .answer();
        assert_eq!(answer.status, 200, "{}", answer.text());
        let session = answer
            .header("mcp-session-id")
            .expect("a session")
            .to_string();
        let note = br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
        let headers = [MCP_ACCEPT, JSON_BODY, ("Mcp-Session-Id", session.as_str())];
        let noted = self.send("POST", "/mcp", &headers, Some(note)).answer();
        assert_eq!(noted.status, 202, "{}", noted.text());
        session
    }

    /// Write raw bytes (a request as a test wants it, however odd).
    pub fn send_raw(&mut self, bytes: &[u8]) {
        self.writer.write_all(bytes).expect("write to the peer");
    }

    /// A request with a body of known length (`None`: no body); its
    /// answer is read with [`RawConn::answer`] and kin.
    pub fn send(
        &mut self,
        method: &str,
        path: &str,
        headers: &[(&str, &str)],
        body: Option<&[u8]>,
    ) -> &mut Self {
        let mut head = format!("{method} {path} HTTP/1.1\r\nHost: {}\r\n", self.host);
        for (k, v) in headers {
            head.push_str(&format!("{k}: {v}\r\n"));
        }
        if let Some(body) = body {
            head.push_str(&format!("Content-Length: {}\r\n", body.len()));
        }
        head.push_str("\r\n");
        self.send_raw(head.as_bytes());
        if let Some(body) = body {
            self.send_raw(body);
        }
        self
    }

    /// The next answer, read to its end.
    pub fn answer(&mut self) -> RawResponse {
        let mut answer = self.head_answer();
        answer.body = self
            .body(&answer)
            .unwrap_or_else(|e| panic!("reading the body: {e}"));
        answer
    }

    /// The next answer, whose body may break: the body read until then
    /// and the error, if any.
    pub fn answer_maybe_cut(&mut self) -> (RawResponse, Option<String>) {
        let mut answer = self.head_answer();
        let mut body = Vec::new();
        let err = self.body_into(&answer, &mut body).err();
        answer.body = body;
        (answer, err)
    }

    /// The head of the next answer, its body still to read.
    fn head_answer(&mut self) -> RawResponse {
        let (status, headers) = self.head();
        RawResponse {
            status,
            headers,
            body: Vec::new(),
        }
    }

    /// Status and headers of the next answer.
    pub fn head(&mut self) -> (u16, HeaderList) {
        let status_line = self.line();
        let status = status_line
            .split_whitespace()
            .nth(1)
            .and_then(|s| s.parse().ok())
            .unwrap_or_else(|| panic!("bad status line {status_line:?}"));
        let mut headers = HeaderList::default();
        loop {
            let line = self.line();
            if line.is_empty() {
                return (status, headers);
            }
            headers.extend(crate::http::header_line(&line));
        }
    }

    /// The next chunk's data of a chunked body, as it comes (an empty
    /// vector at the end of the body).
    pub fn next_chunk(&mut self) -> Vec<u8> {
        let size_line = self.line();
        let size = usize::from_str_radix(size_line.split(';').next().unwrap_or("").trim(), 16)
            .unwrap_or_else(|_| panic!("bad chunk size {size_line:?}"));
        let mut data = vec![0; size];
        self.reader.read_exact(&mut data).expect("chunk data");
        let _ = self.line();
        data
    }

    fn body(&mut self, answer: &RawResponse) -> Result<Vec<u8>, String> {
        let mut body = Vec::new();
        self.body_into(answer, &mut body)?;
        Ok(body)
    }

    /// The next answer with its body written to `sink` as it is read (a
    /// body too large to keep): the answer (body empty) and the body's
    /// length.
    pub fn answer_into(&mut self, sink: &mut impl Write) -> (RawResponse, u64) {
        let answer = self.head_answer();
        let mut counted = Counted { sink, bytes: 0 };
        self.body_into(&answer, &mut counted)
            .unwrap_or_else(|e| panic!("reading the body: {e}"));
        let bytes = counted.bytes;
        (answer, bytes)
    }

    fn body_into(&mut self, answer: &RawResponse, body: &mut impl Write) -> Result<(), String> {
        let io = |e: std::io::Error| e.to_string();
        if answer.status == 204 || answer.status == 304 || (100..200).contains(&answer.status) {
            return Ok(());
        }
        if answer.header("transfer-encoding").is_some() {
            loop {
                let size_line = self.try_line()?;
                let size =
                    u64::from_str_radix(size_line.split(';').next().unwrap_or("").trim(), 16)
                        .map_err(|_| format!("bad chunk size {size_line:?}"))?;
                if size == 0 {
                    while !self.try_line()?.is_empty() {}
                    return Ok(());
                }
                let copied = std::io::copy(&mut (&mut self.reader).take(size), body).map_err(io)?;
                if copied < size {
                    return Err("a chunk cut short".into());
                }
                self.try_line()?;
            }
        }
        if let Some(length) = answer.header("content-length") {
            let length: u64 = length.parse().map_err(|_| "bad content-length")?;
            let copied = std::io::copy(&mut (&mut self.reader).take(length), body).map_err(io)?;
            if copied < length {
                return Err(format!("body cut at {copied} of {length} bytes"));
            }
            return Ok(());
        }
        std::io::copy(&mut self.reader, body).map(drop).map_err(io)
    }

    fn line(&mut self) -> String {
        self.try_line().unwrap_or_else(|e| panic!("{e}"))
    }

    fn try_line(&mut self) -> Result<String, String> {
        let mut line = String::new();
        match self.reader.read_line(&mut line) {
            Ok(0) => Err("the connection closed".into()),
            Ok(_) => Ok(line.trim_end_matches(['\r', '\n']).to_string()),
            Err(e) => Err(format!("read: {e}")),
        }
    }

    /// Whether the peer closed the connection (a read gives nothing).
    pub fn closed(&mut self) -> bool {
        let mut byte = [0u8; 1];
        matches!(self.reader.read(&mut byte), Ok(0) | Err(_))
    }
}

/// A writer that counts what passes to another.
struct Counted<'a, W> {
    sink: &'a mut W,
    bytes: u64,
}

impl<W: Write> Write for Counted<'_, W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let n = self.sink.write(buf)?;
        self.bytes += n as u64;
        Ok(n)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.sink.flush()
    }
}

// ---------------------------------------------------------------- upstream

/// One request as the scripted upstream read it.
#[derive(Debug, Clone)]
pub struct Seen {
    /// `METHOD TARGET HTTP/1.1`, as sent.
    pub request_line: String,
    pub headers: HeaderList,
    pub body: Vec<u8>,
}

impl Seen {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name)
    }
}

/// What the script does with a request: it writes to the connection as it
/// likes; `false` closes the connection afterwards.
pub type Script = dyn Fn(&Seen, &mut TcpStream) -> bool + Send + Sync;

/// An upstream on 127.0.0.1 whose answers a test writes byte for byte. It
/// reads requests (bodies by `Content-Length` or chunked) on kept-alive
/// connections, one thread each, and keeps every request and a count of
/// connections.
pub struct Scripted {
    pub addr: SocketAddr,
    pub seen: Arc<Mutex<Vec<Seen>>>,
    pub connections: Arc<AtomicUsize>,
    /// Connections whose client went away while the script ran or after.
    pub closed_by_peer: Arc<AtomicUsize>,
}

impl Scripted {
    pub fn start(
        script: impl Fn(&Seen, &mut TcpStream) -> bool + Send + Sync + 'static,
    ) -> Scripted {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind the scripted upstream");
        let addr = listener.local_addr().expect("its address");
        let seen = Arc::new(Mutex::new(Vec::new()));
        let connections = Arc::new(AtomicUsize::new(0));
        let closed_by_peer = Arc::new(AtomicUsize::new(0));
        let script: Arc<Script> = Arc::new(script);
        let (s, c, p) = (seen.clone(), connections.clone(), closed_by_peer.clone());
        std::thread::spawn(move || {
            for stream in listener.incoming().map_while(Result::ok) {
                c.fetch_add(1, Ordering::SeqCst);
                let (script, seen, peer) = (script.clone(), s.clone(), p.clone());
                std::thread::spawn(move || serve_scripted(stream, &*script, &seen, &peer));
            }
        });
        Scripted {
            addr,
            seen,
            connections,
            closed_by_peer,
        }
    }

    pub fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }

    pub fn seen(&self) -> Vec<Seen> {
        self.seen.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }
}

fn serve_scripted(stream: TcpStream, script: &Script, seen: &Mutex<Vec<Seen>>, peer: &AtomicUsize) {
    let Ok(mut writer) = stream.try_clone() else {
        return;
    };
    let mut reader = BufReader::new(stream);
    loop {
        let Some(request) = read_request(&mut reader) else {
            peer.fetch_add(1, Ordering::SeqCst);
            return;
        };
        seen.lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(request.clone());
        if !script(&request, &mut writer) {
            return;
        }
    }
}

fn read_request(reader: &mut BufReader<TcpStream>) -> Option<Seen> {
    let mut line = String::new();
    reader.read_line(&mut line).ok().filter(|n| *n > 0)?;
    let request_line = line.trim_end().to_string();
    let headers = HeaderList::read(reader)?;
    let mut seen = Seen {
        request_line,
        headers,
        body: Vec::new(),
    };
    if seen.header("transfer-encoding").is_some() {
        loop {
            let mut size = String::new();
            reader.read_line(&mut size).ok().filter(|n| *n > 0)?;
            let size = usize::from_str_radix(size.trim(), 16).ok()?;
            let mut data = vec![0; size];
            reader.read_exact(&mut data).ok()?;
            let mut crlf = String::new();
            reader.read_line(&mut crlf).ok()?;
            if size == 0 {
                break;
            }
            seen.body.extend_from_slice(&data);
        }
    } else if let Some(length) = seen.header("content-length").and_then(|v| v.parse().ok()) {
        let mut body = vec![0; length];
        reader.read_exact(&mut body).ok()?;
        seen.body = body;
    }
    Some(seen)
}

/// An answer head with these headers and a `Content-Length` for `body`,
/// then the body: what a plain upstream writes.
pub fn write_answer(out: &mut TcpStream, status: &str, headers: &[(&str, &str)], body: &[u8]) {
    let mut head = format!("HTTP/1.1 {status}\r\n");
    for (k, v) in headers {
        head.push_str(&format!("{k}: {v}\r\n"));
    }
    head.push_str(&format!("Content-Length: {}\r\n\r\n", body.len()));
    let _ = out.write_all(head.as_bytes());
    let _ = out.write_all(body);
}
