//! Ports for tests that need one before a process can tell its own.

use socket2::{Domain, Socket, Type};
use std::net::{Ipv4Addr, SocketAddr, TcpListener};

/// A loopback port that refuses every connection for as long as this
/// value lives: a socket bound to it that never listens holds it, so no
/// other process can take it (unlike a port bound and let go, or a
/// well-known one assumed closed).
pub struct ClosedPort {
    _socket: Socket,
    port: u16,
}

impl ClosedPort {
    pub fn new() -> ClosedPort {
        let socket =
            Socket::new(Domain::IPV4, Type::STREAM, None).expect("a TCP socket for a closed port");
        let any_port = SocketAddr::from((Ipv4Addr::LOCALHOST, 0));
        socket
            .bind(&any_port.into())
            .expect("bind 127.0.0.1:0 for a closed port");
        let port = socket
            .local_addr()
            .ok()
            .and_then(|a| a.as_socket())
            .map(|a| a.port())
            .expect("the bound port");
        ClosedPort {
            _socket: socket,
            port,
        }
    }

    pub fn port(&self) -> u16 {
        self.port
    }

    /// `http://127.0.0.1:PORT` followed by `path`.
    pub fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}", self.port)
    }
}

impl Default for ClosedPort {
    fn default() -> Self {
        ClosedPort::new()
    }
}

/// A port that was free a moment ago (bound to 127.0.0.1:0, then let go),
/// for a process that must be told its port in advance. Another process
/// can take it first: callers retry with a new one when the bind fails.
pub fn free_port() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1:0");
    listener.local_addr().expect("local addr").port()
}

#[cfg(test)]
mod tests {
    use super::ClosedPort;

    #[test]
    fn a_closed_port_refuses_connections_while_held() {
        let closed = ClosedPort::new();
        let refused = std::net::TcpStream::connect(("127.0.0.1", closed.port()));
        assert!(refused.is_err(), "{refused:?}");
    }
}
