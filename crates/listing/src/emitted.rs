//! Where an event happened: the line that called its `emit`, carried by
//! its log line as the field [`FIELD`], so a log line's `source` names the
//! place in the code that emitted the event rather than the event
//! catalogue's line that formats it.

use std::fmt;
use std::panic::Location;

/// The field a typed event's log line carries its place under; the logfmt
/// format shows it as `source`.
pub const FIELD: &str = "emitted_at";

/// The file and line an event was emitted from.
#[derive(Debug, Clone, Copy)]
pub struct EmittedAt(&'static Location<'static>);

impl EmittedAt {
    /// The caller of the function this is called in, when that function
    /// is `#[track_caller]` (an event's `emit`), else this call's place.
    #[track_caller]
    pub fn caller() -> EmittedAt {
        EmittedAt(Location::caller())
    }
}

impl fmt::Display for EmittedAt {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.0.file(), self.0.line())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[track_caller]
    fn emit() -> EmittedAt {
        EmittedAt::caller()
    }

    #[test]
    fn the_place_is_the_callers() {
        let line = line!() + 1;
        let at = emit();
        assert_eq!(at.to_string(), format!("{}:{line}", file!()));
    }
}
