//! The tap's observer: from the copies a tap hands over ([`mcp_tap::TapEvent`])
//! to what each client did with a paginated catalogue.
//!
//! Like the walker, this is logic over plain data: events in (each with its
//! time), facts out. Per session it keeps the cursors it saw handed out (as
//! digests) and each client listing in progress; a listing ends
//! `complete`, `abandoned`, `restarted` or `failed`.
