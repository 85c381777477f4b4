//! The tap: a transparent reverse proxy in front of one upstream MCP
//! endpoint (Streamable HTTP, legacy HTTP+SSE, or a stdio server it starts),
//! placed where clients already connect.
//!
//! What passes is forwarded byte for byte and as it arrives; the only bytes
//! changed are the legacy SSE `endpoint` URL (so clients keep talking
//! through the tap) and, opt-in, merged list answers. Whoever observes the
//! traffic gets bounded copies through a [`Tee`]: offering a copy never
//! blocks, and a copy refused is counted, never felt by the client.
//!
//! Layout: `server` (listener, client connections, TLS, bounds) →
//! `forward` (one request and its answer; the tap's own answers in
//! `answer`) → `relay` (a body passed as it arrives; copies taken by `copy`
//! from the messages `cut` finds; `legacy` rewrites a legacy stream's
//! `endpoint`). `http1` reads and writes heads and body framing, `peer`
//! holds a connection and what was read from it, `pool` the upstream
//! connections, `upstream` the one place the tap connects to,
//! `exchange_tee` what one exchange tells the observer and how it ended.
//! The events themselves, and who a client is (`event`, `identity`,
//! `apps`), are the contract with the observer (crates/tap-contract).

mod answer;
mod copy;
mod cut;
mod exchange_tee;
mod forward;
mod headers;
mod http1;
mod legacy;
mod locked;
mod merge;
mod peer;
mod pool;
mod relay;
mod server;
pub mod settings;
pub mod stats;
pub mod stdio;
mod upstream;

// What the tap hands its observer, and who a client is, live in the
// contract both depend on; named here as before.
pub use mcp_tap_contract::{apps, event, identity};

pub use event::{
    BodyFraming, CopyEnd, Cut, Direction, ExchangeEnd, ExchangeId, MergeFallback, MergeOutcome,
    NotObserved, RequestHead, RequestMethod, ResponseHead, TapEvent, Tee, UpstreamFailure,
};
pub use server::Tap;
pub use settings::{
    ListenerTls, MergeClients, MergeSettings, TapError, TapLimits, TapSettings, UpstreamTls,
};
pub use stats::{MergeCount, TapStats};
pub use stdio::{run_stdio, StdioTapSettings};
