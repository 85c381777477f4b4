//! HTTP/1.1 as the tap needs it, and no more: heads read once and kept as
//! the bytes that came, body framing (lengths, chunked, until close), and
//! heads written back with the hop-by-hop lines dropped. A proxy's own
//! reading of the protocol, so what it forwards is what it received and
//! what it holds while a connection is quiet is nothing.

pub(crate) mod emit;
pub(crate) mod framing;
pub(crate) mod head;
