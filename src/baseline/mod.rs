//! The last complete listing per target and kind: diffed against each new
//! complete listing (added, removed, silent shrink) and persisted so shrink
//! detection survives a restart.

mod compare;
mod diff;
mod names;
mod store;

pub use compare::{compare, PolledTarget, ReferenceUnion};
pub use diff::{diff, missing_from, KindDiff};
pub use names::NameList;
pub use store::{
    parse_state_file, BaselineError, BaselineKey, BaselinePrints, BaselineStore, PendingWrite,
    MAX_STATE_FILE_BYTES,
};
