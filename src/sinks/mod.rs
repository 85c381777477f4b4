//! Where a finished poll goes: one fan-out (`fanout.rs`) in a fixed order —
//! baseline diff, metrics, spans, status store — called by the scheduler and
//! by `/probe` alike. The status store (`status.rs`) lives here, beside the
//! other sinks; `probe_answer.rs` renders a `/probe` answer through the same
//! fan-out; `conformance.rs` keeps serve-mode conformance runs (their own
//! schedule, not a poll); `level_watch.rs` logs a target's verdict level
//! when it changes. No sink calls back into the poll, the walker or a transport.

pub mod conformance;
pub mod fanout;
pub mod level_watch;
pub mod probe_answer;
pub mod status;
pub mod trend;
pub mod verdict;

pub use fanout::{Fanout, Sinks};
pub use status::{PollSummary, StatusStore, TargetDescription, TargetStatus};
