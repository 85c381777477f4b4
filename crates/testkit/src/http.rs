//! Blocking HTTP for tests that talk to a process on loopback.

use std::time::Duration;

/// A bound on one request (a hang, not a measurement).
const REQUEST_DEADLINE: Duration = Duration::from_secs(60);

/// GET `url`: the status and the body.
pub fn http_get(url: &str) -> (u16, String) {
    request(reqwest::Method::GET, url)
}

/// GET `url` with an `Accept` header: the status and the body.
pub fn http_get_accepting(url: &str, accept: &str) -> (u16, String) {
    send(reqwest::Method::GET, url, Some(accept))
}

/// POST `url` with an empty body: the status and the body.
pub fn http_post(url: &str) -> (u16, String) {
    request(reqwest::Method::POST, url)
}

/// GET `url`, which must answer 200: the body.
pub fn http_get_ok(url: &str) -> String {
    let (status, body) = http_get(url);
    assert_eq!(status, 200, "GET {url}: {body}");
    body
}

fn request(method: reqwest::Method, url: &str) -> (u16, String) {
    send(method, url, None)
}

fn send(method: reqwest::Method, url: &str, accept: Option<&str>) -> (u16, String) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a current-thread runtime");
    rt.block_on(async {
        let mut request = reqwest::Client::new()
            .request(method.clone(), url)
            .timeout(REQUEST_DEADLINE);
        if let Some(accept) = accept {
            request = request.header(reqwest::header::ACCEPT, accept);
        }
        let resp = request
            .send()
            .await
            .unwrap_or_else(|e| panic!("{method} {url}: {e}"));
        let status = resp.status().as_u16();
        (status, resp.text().await.unwrap_or_default())
    })
}

/// A message's headers as the readers here keep them: names lower-cased,
/// values trimmed, in the order sent.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct HeaderList(Vec<(String, String)>);

impl HeaderList {
    /// The value of the header `name` (lower-case).
    pub fn get(&self, name: &str) -> Option<&str> {
        self.0
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }

    /// The header lines up to the empty line that ends a head; `None` when
    /// the stream ends (or fails) first.
    pub fn read(reader: &mut impl std::io::BufRead) -> Option<HeaderList> {
        let mut headers = HeaderList::default();
        loop {
            let mut line = String::new();
            reader.read_line(&mut line).ok().filter(|n| *n > 0)?;
            let line = line.trim_end();
            if line.is_empty() {
                return Some(headers);
            }
            headers.0.extend(header_line(line));
        }
    }
}

impl std::ops::Deref for HeaderList {
    type Target = [(String, String)];
    fn deref(&self) -> &Self::Target {
        &self.0
    }
}

impl FromIterator<(String, String)> for HeaderList {
    fn from_iter<I: IntoIterator<Item = (String, String)>>(lines: I) -> HeaderList {
        HeaderList(lines.into_iter().collect())
    }
}

impl Extend<(String, String)> for HeaderList {
    fn extend<I: IntoIterator<Item = (String, String)>>(&mut self, lines: I) {
        self.0.extend(lines);
    }
}

/// One header line as the readers here keep it: the name lower-cased, the
/// value trimmed (`None`: not a header line).
pub fn header_line(line: &str) -> Option<(String, String)> {
    let (k, v) = line.split_once(':')?;
    Some((k.trim().to_ascii_lowercase(), v.trim().to_string()))
}

/// An answer as read off the wire by [`raw_get`] or the tap's test client
/// (`tap::RawConn`): the head as sent, the body with at most its transfer
/// coding undone (raw_get asks HTTP/1.0, so nothing is undone there).
#[derive(Debug, Clone, PartialEq)]
pub struct RawResponse {
    pub status: u16,
    pub headers: HeaderList,
    pub body: Vec<u8>,
}

impl RawResponse {
    /// The JSON-RPC message the answer carries: its body, or in an event
    /// stream the last event's data.
    pub fn message(&self) -> serde_json::Value {
        let text = self.text();
        let json = if self.header("content-type") == Some("text/event-stream") {
            text.lines()
                .filter_map(|l| l.strip_prefix("data: "))
                .rfind(|d| !d.is_empty())
                .unwrap_or_default()
                .to_string()
        } else {
            text
        };
        serde_json::from_str(&json).unwrap_or_else(|e| panic!("{e}: {json}"))
    }

    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name)
    }

    /// The end-to-end headers: without the hop-by-hop ones and `Date`
    /// (two answers given at different times may differ in it).
    pub fn end_to_end_headers(&self) -> Vec<(String, String)> {
        const HOP: [&str; 8] = [
            "connection",
            "keep-alive",
            "te",
            "trailer",
            "transfer-encoding",
            "upgrade",
            "proxy-connection",
            "date",
        ];
        self.headers
            .iter()
            .filter(|(k, _)| !HOP.contains(&k.as_str()))
            .cloned()
            .collect()
    }

    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }
}

/// One HTTP/1.0 GET to `address` (`127.0.0.1:PORT`) with extra request
/// headers, read to the end: HTTP/1.0, so the body is never chunked, and
/// nothing is decoded or followed. Err names what failed (connect, send,
/// read or parse), for callers that poll until a server is up.
pub fn raw_get(address: &str, path: &str, headers: &[(&str, &str)]) -> Result<RawResponse, String> {
    use std::io::{Read, Write};
    let mut stream =
        std::net::TcpStream::connect(address).map_err(|e| format!("connect {address}: {e}"))?;
    stream
        .set_read_timeout(Some(REQUEST_DEADLINE))
        .map_err(|e| e.to_string())?;
    let mut request = format!("GET {path} HTTP/1.0\r\nHost: {address}\r\n");
    for (k, v) in headers {
        request.push_str(&format!("{k}: {v}\r\n"));
    }
    request.push_str("\r\n");
    stream
        .write_all(request.as_bytes())
        .map_err(|e| format!("send to {address}: {e}"))?;
    let mut raw = Vec::new();
    stream
        .read_to_end(&mut raw)
        .map_err(|e| format!("read from {address}: {e}"))?;
    let split = raw
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .ok_or_else(|| format!("no end of headers in the answer from {address}"))?;
    let head = String::from_utf8_lossy(&raw[..split]).into_owned();
    let mut lines = head.lines();
    let status = lines
        .next()
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| format!("bad status line from {address}: {head}"))?;
    let headers = lines.filter_map(header_line).collect();
    Ok(RawResponse {
        status,
        headers,
        body: raw[split + 4..].to_vec(),
    })
}
