//! The stdio tap's own stdin (the client's lines), read on a thread of its
//! own that nothing waits for.
//!
//! `tokio::io::stdin()` reads on the runtime's blocking pool, and the
//! runtime waits for that read when it shuts down: a client that keeps its
//! end open would keep the tap running after its server exited (an MCP host
//! waiting for the tap to end would hang). Reading fd 0 non-blocking
//! instead would set `O_NONBLOCK` on an open file description the client
//! may share with other processes (a terminal, its own stdin), and does
//! not work for a regular file. A plain thread blocked in `read(2)` ends
//! with the process.

use crate::telemetry::events::StdinThreadRefused;
use bytes::Bytes;
use std::io::Read;
use std::pin::Pin;
use std::task::{Context, Poll};
use tokio::io::{AsyncRead, ReadBuf};
use tokio::sync::mpsc;

/// Bytes asked for per read.
const READ_SIZE: usize = 64 * 1024;
/// Reads read ahead of the tap, at most (the thread then waits).
const AHEAD: usize = 4;

/// Our stdin as an `AsyncRead`, read by a detached thread; tokio's when
/// the thread cannot start.
pub fn client_stdin() -> Pin<Box<dyn AsyncRead + Send>> {
    let (tx, rx) = mpsc::channel(AHEAD);
    let started = std::thread::Builder::new()
        .name("tap-stdin".into())
        .spawn(move || read_stdin(&tx));
    match started {
        Ok(_detached) => Box::pin(ChannelReader {
            chunks: rx,
            current: Bytes::new(),
        }),
        Err(error) => {
            StdinThreadRefused { error: &error }.emit();
            Box::pin(tokio::io::stdin())
        }
    }
}

/// Until the end of stdin, a failed read, or the tap no longer reading.
fn read_stdin(tx: &mpsc::Sender<Bytes>) {
    let mut stdin = std::io::stdin().lock();
    loop {
        let mut buf = vec![0; READ_SIZE];
        match stdin.read(&mut buf) {
            Ok(0) => return,
            Ok(n) => {
                buf.truncate(n);
                if tx.blocking_send(Bytes::from(buf)).is_err() {
                    return;
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(_) => return,
        }
    }
}

/// Chunks from a channel as a byte stream; the channel's end is its end.
struct ChannelReader {
    chunks: mpsc::Receiver<Bytes>,
    /// What is left of the chunk being read.
    current: Bytes,
}

impl AsyncRead for ChannelReader {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        if self.current.is_empty() {
            match self.chunks.poll_recv(cx) {
                Poll::Ready(Some(chunk)) => self.current = chunk,
                Poll::Ready(None) => return Poll::Ready(Ok(())),
                Poll::Pending => return Poll::Pending,
            }
        }
        let n = self.current.len().min(buf.remaining());
        buf.put_slice(&self.current.split_to(n));
        Poll::Ready(Ok(()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::AsyncReadExt;

    #[tokio::test]
    async fn chunks_read_in_order_and_the_end_is_the_channels() {
        let (tx, rx) = mpsc::channel(AHEAD);
        let mut reader = ChannelReader {
            chunks: rx,
            current: Bytes::new(),
        };
        let writer = std::thread::spawn(move || {
            for chunk in [&b"{\"a\":1}\n{"[..], b"\"b\":2}\n", &[b'x'; 100_000]] {
                tx.blocking_send(Bytes::copy_from_slice(chunk)).unwrap();
            }
        });
        let mut got = Vec::new();
        reader.read_to_end(&mut got).await.unwrap();
        writer.join().unwrap();
        assert_eq!(&got[..16], b"{\"a\":1}\n{\"b\":2}\n");
        assert_eq!(got.len(), 16 + 100_000);
    }
}
