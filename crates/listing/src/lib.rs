//! Walking a paginated listing to completion, whatever the server does.

pub mod cursor;
pub mod fingerprint;
pub mod kind;
pub mod report;
pub mod walk;

pub use kind::Kind;
pub use report::{CursorState, ErrorKind, Guard, ListingReport, Outcome, PageRecord};
pub use walk::{walk, PageError, PageResult, Pager, WalkLimits};
