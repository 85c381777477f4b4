//! The MCP wire client: JSON-RPC framing, transports, version negotiation
//! and the session. Knows nothing of listings, metrics or schedules.

pub mod jsonrpc;
pub mod secrets;
pub mod session;
pub mod transport;
