//! The stable reason codes. docs/verdict.md lists the same codes in the
//! same order; keep the two in step.

use serde::Serialize;

/// Reason codes. The declaration order is the order reasons of the same
/// level are shown in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Code {
    /// down: connect or handshake failed, nothing could be listed.
    SessionFailed,
    /// down: a listing ended in an error (timeout, invalid_cursor, ...).
    ListingFailed,
    /// down: a pagination guard stopped a listing (cursor_cycle, ...).
    ListingAborted,
    /// degraded: items of a reference target missing from this one (first:
    /// it names what clients lack).
    ReferenceMissing,
    /// degraded: with `protocols:`, items listed under another protocol
    /// version are missing under this one (clients of that era lack them).
    ProtocolCatalogueDiffers,
    /// degraded: with `protocols:`, a session opened at a non-primary
    /// version but its listing did not complete.
    ProtocolListingFailed,
    /// degraded: fewer unique items than the `expect:` minimum.
    BelowExpected,
    /// degraded: a complete listing with 0 items while the server
    /// advertises the capability (what merging gateways answer when they
    /// silently drop an origin).
    EmptyButAdvertised,
    /// degraded, event: fewer items without list_changed, within the window.
    SilentShrink,
    /// degraded: the same identity key on more than one page.
    DuplicateItems,
    /// degraded: items without their identity key were left out.
    ItemsWithoutKey,
    /// degraded: the server rejected a cursor it had issued (-32602) and
    /// the listing only completed after starting over.
    InvalidCursorRestarts,
    /// degraded: a garbage cursor was not answered with -32602.
    GarbageCursorAccepted,
    /// degraded: a MUST rule failed in the target's latest serve-mode
    /// conformance run (`conformance:` in the config).
    ConformanceFailed,
}

impl Code {
    pub fn label(self) -> &'static str {
        match self {
            Code::SessionFailed => "session_failed",
            Code::ListingFailed => "listing_failed",
            Code::ListingAborted => "listing_aborted",
            Code::BelowExpected => "below_expected",
            Code::ReferenceMissing => "reference_missing",
            Code::ProtocolCatalogueDiffers => "protocol_catalogue_differs",
            Code::ProtocolListingFailed => "protocol_listing_failed",
            Code::EmptyButAdvertised => "empty_but_advertised",
            Code::SilentShrink => "silent_shrink",
            Code::DuplicateItems => "duplicate_items",
            Code::ItemsWithoutKey => "items_without_key",
            Code::InvalidCursorRestarts => "invalid_cursor_restarts",
            Code::GarbageCursorAccepted => "garbage_cursor_accepted",
            Code::ConformanceFailed => "conformance_failed",
        }
    }

    pub const ALL: [Code; 14] = [
        Code::SessionFailed,
        Code::ListingFailed,
        Code::ListingAborted,
        Code::ReferenceMissing,
        Code::ProtocolCatalogueDiffers,
        Code::ProtocolListingFailed,
        Code::BelowExpected,
        Code::EmptyButAdvertised,
        Code::SilentShrink,
        Code::DuplicateItems,
        Code::ItemsWithoutKey,
        Code::InvalidCursorRestarts,
        Code::GarbageCursorAccepted,
        Code::ConformanceFailed,
    ];
}

impl std::fmt::Display for Code {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.label())
    }
}
