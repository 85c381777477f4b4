//! The tap: a transparent reverse proxy in front of one upstream MCP
//! endpoint (Streamable HTTP, legacy HTTP+SSE, or a stdio server it starts),
//! placed where clients already connect.
//!
//! What passes is forwarded byte for byte and as it arrives; the only bytes
//! changed are the legacy SSE `endpoint` URL (so clients keep talking
//! through the tap) and, opt-in, merged list answers. Whoever observes the
//! traffic gets bounded copies through a [`Tee`]: offering a copy never
//! blocks, and a copy refused is counted, never felt by the client.

pub mod event;
pub mod stats;

pub use event::{
    BodyFraming, CopyEnd, Direction, ExchangeEnd, ExchangeId, NotObserved, RequestHead,
    RequestMethod, ResponseHead, TapEvent, Tee, UpstreamFailure,
};
pub use stats::TapStats;
