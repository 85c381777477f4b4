//! The contract between an MCP tap and whoever observes it: what the data
//! path hands over (`event`: each exchange's heads, its messages as bounded
//! copies, how they and the exchange ended, through a [`Tee`] that never
//! waits) and the one reading of who a client is (`identity`, with the
//! operator's app rules in `apps`), which the data path merges by and the
//! observer labels by.
//!
//! Plain data and pure functions: the tap (`mcp-tap`) depends on this, the
//! observer (`mcp-observer`) depends on this, and neither depends on the
//! other, so the observer stays free of the proxy's runtime and HTTP stack.

pub mod apps;
pub mod event;
pub mod identity;

pub use event::{
    BodyFraming, CopyEnd, Cut, Direction, ExchangeEnd, ExchangeId, MergeFallback, MergeOutcome,
    NotObserved, RequestHead, RequestMethod, ResponseHead, TapEvent, Tee, UpstreamFailure,
};
