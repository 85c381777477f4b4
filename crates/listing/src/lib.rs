//! Walking a paginated listing to completion, whatever the server does; and
//! the vocabulary every layer above shares (kinds, outcomes, guards, errors,
//! protocol versions, transports), each one type with its labels derived once;
//! and the one `text/event-stream` parser (`sse_parser`), which the wire,
//! the tap and its observer all read events with.

pub mod cursor;
pub mod emitted;
pub mod failure;
pub mod fingerprint;
pub mod kind;
pub mod labelled;
pub mod report;
pub mod retry_after;
pub mod schema_shape;
#[cfg(any(test, feature = "testing"))]
pub mod scripted;
pub mod shape;
pub mod shown_json;
pub mod sse_parser;
pub mod text;
pub mod trace;
pub mod transport;
pub mod version;
pub mod walk;

pub use emitted::EmittedAt;
pub use failure::ExchangeFailure;
pub use kind::Kind;
pub use labelled::UnknownLabel;
pub use report::{
    page_number, CursorState, EndReason, ErrorKind, Guard, ListingReport, Outcome, PageRecord,
};
pub use shape::PageShape;
pub use trace::{SpanId, TraceContext, TraceId};
pub use transport::{HttpMode, TransportKind};
pub use version::{Era, ProtocolVersion};
pub use walk::{walk, PageError, PageResult, Pager, WalkLimits};
