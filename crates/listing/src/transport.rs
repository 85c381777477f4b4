//! How a client speaks to a server: the transport a session used, and the
//! choice a user makes for an HTTP target.

crate::labelled_enum! {
    /// The transport a session spoke over: the `transport` label value.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
    pub enum TransportKind as "transport" {
        Stdio => "stdio",
        StreamableHttp => "streamable_http",
        /// The legacy HTTP+SSE transport (2024-11-05).
        Sse => "sse",
    }
}

impl TransportKind {
    pub fn is_stdio(self) -> bool {
        self == TransportKind::Stdio
    }
}

crate::labelled_enum! {
    /// How an HTTP target is spoken to: the config's `transport:` and
    /// `probe --transport`.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
    pub enum HttpMode as "transport" {
        /// Streamable HTTP, falling back to legacy HTTP+SSE when the server
        /// rejects the POST (as the spec describes).
        #[default]
        Auto => "auto",
        StreamableHttp => "streamable-http",
        Sse => "sse",
    }
}

impl HttpMode {
    /// The transport a session in this mode opens first (`Auto` may still
    /// fall back to SSE during the handshake).
    pub fn first_transport(self) -> TransportKind {
        match self {
            HttpMode::Auto | HttpMode::StreamableHttp => TransportKind::StreamableHttp,
            HttpMode::Sse => TransportKind::Sse,
        }
    }
}
