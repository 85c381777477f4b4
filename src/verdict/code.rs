//! The stable reason codes. docs/verdict.md lists the same codes in the
//! same order; keep the two in step.

mcp_listing::labelled_enum! {
    /// Reason codes. The declaration order is the order reasons of the same
    /// level are shown in.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
    pub enum Code as "reason code" {
        /// down: connect or handshake failed, nothing could be listed.
        SessionFailed => "session_failed",
        /// down: a listing ended in an error (timeout, invalid_cursor, ...).
        ListingFailed => "listing_failed",
        /// down: a pagination guard stopped a listing (cursor_cycle, ...).
        ListingAborted => "listing_aborted",
        /// degraded: items of a reference target missing from this one (first:
        /// it names what clients lack).
        ReferenceMissing => "reference_missing",
        /// degraded: with `protocols:`, items listed under another protocol
        /// version are missing under this one (clients of that era lack them).
        ProtocolCatalogueDiffers => "protocol_catalogue_differs",
        /// degraded: with `protocols:`, a session opened at a non-primary
        /// version but its listing did not complete.
        ProtocolListingFailed => "protocol_listing_failed",
        /// degraded: fewer unique items than the `expect:` minimum.
        BelowExpected => "below_expected",
        /// degraded: a complete listing with 0 items while the server
        /// advertises the capability (what merging gateways answer when they
        /// silently drop an origin).
        EmptyButAdvertised => "empty_but_advertised",
        /// degraded, event: fewer items without list_changed, within the window.
        SilentShrink => "silent_shrink",
        /// degraded: the same identity key on more than one page.
        DuplicateItems => "duplicate_items",
        /// degraded: items without their identity key were left out.
        ItemsWithoutKey => "items_without_key",
        /// degraded: the server rejected a cursor it had issued (-32602) and
        /// the listing only completed after starting over.
        InvalidCursorRestarts => "invalid_cursor_restarts",
        /// degraded: a garbage cursor was not answered with -32602.
        GarbageCursorAccepted => "garbage_cursor_accepted",
        /// degraded: a page of a complete listing took longer than
        /// `expect: {page_latency:}`.
        SlowPages => "slow_pages",
        /// degraded: a MUST rule failed in the target's latest serve-mode
        /// conformance run (`conformance:` in the config).
        ConformanceFailed => "conformance_failed",
        /// down, client behind a tap: most of its recent listings stopped
        /// before the last page (its users see a prefix).
        ClientReadsPrefix => "client_reads_prefix",
        /// degraded, client: some of its recent listings stopped before the
        /// last page.
        ClientAbandonsListings => "client_abandons_listings",
        /// degraded, client: it asked for page 1 again before finishing.
        ClientRestarts => "client_restarts",
        /// degraded, client: the upstream answered its cursors with -32602.
        ClientInvalidCursors => "client_invalid_cursors",
        /// degraded, client: it sent cursors from another session or ones
        /// the tap never handed out.
        ClientForeignCursors => "client_foreign_cursors",
        /// degraded, client: its listings ended in other errors.
        ClientListingsFailed => "client_listings_failed",
    }
}
