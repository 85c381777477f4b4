//! Bounds on what we ask a server or a source: the one runtime shape of
//! every `limits:` block (global, targets, modules, discovery sources),
//! resolved once. docs/guards.md says what each bound stops.

use mcp_listing::WalkLimits;
use mcp_wire::transport::TransportLimits;
use std::time::Duration;

/// Bounds on one listing (or one source's answer or walk).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Whole listing of one kind, restarts included.
    pub timeout: Duration,
    pub page_timeout: Duration,
    pub connect_timeout: Duration,
    pub max_pages: u32,
    pub max_items: u64,
    pub max_response_bytes: u64,
    pub invalid_cursor_restarts: u32,
}

impl Limits {
    /// Where neither `global:` nor a target or module says otherwise;
    /// docs/configuration.md quotes these.
    /// The walk's own bounds are the walker's defaults, declared once
    /// (`WalkLimits::DEFAULT`); the response cap and connect timeout the
    /// wire's (`TransportLimits::DEFAULT`).
    pub const DEFAULT: Limits = Limits {
        timeout: WalkLimits::DEFAULT.listing_timeout,
        page_timeout: WalkLimits::DEFAULT.page_timeout,
        connect_timeout: TransportLimits::DEFAULT.connect_timeout,
        max_pages: WalkLimits::DEFAULT.max_pages,
        max_items: WalkLimits::DEFAULT.max_items,
        max_response_bytes: TransportLimits::DEFAULT.max_response_bytes,
        invalid_cursor_restarts: WalkLimits::DEFAULT.invalid_cursor_restarts,
    };

    /// The walker's view of these limits: the one way from a resolved
    /// `limits:` block to a walk's bounds (the protocol era is the walk's
    /// own argument, not a bound).
    pub fn walk_limits(&self) -> WalkLimits {
        WalkLimits {
            max_pages: self.max_pages,
            max_items: self.max_items,
            invalid_cursor_restarts: self.invalid_cursor_restarts,
            // One budget for both reasons the result set can move under a walk.
            list_changed_restarts: self.invalid_cursor_restarts,
            session_restarts: 1,
            page_timeout: self.page_timeout,
            listing_timeout: self.timeout,
        }
    }
}

impl Limits {
    /// The transports' view of these limits, with how much of a stdio
    /// child's stderr to keep.
    pub fn transport_limits(&self, stderr_tail_bytes: usize) -> TransportLimits {
        TransportLimits {
            max_response_bytes: self.max_response_bytes,
            connect_timeout: self.connect_timeout,
            stderr_tail_bytes,
        }
    }
}

/// A key of a `limits:` block, for saying which apply where.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LimitKey {
    Timeout,
    PageTimeout,
    ConnectTimeout,
    MaxPages,
    MaxItems,
    MaxResponseBytes,
    InvalidCursorRestarts,
}

impl LimitKey {
    pub const ALL: [LimitKey; 7] = [
        LimitKey::Timeout,
        LimitKey::PageTimeout,
        LimitKey::ConnectTimeout,
        LimitKey::MaxPages,
        LimitKey::MaxItems,
        LimitKey::MaxResponseBytes,
        LimitKey::InvalidCursorRestarts,
    ];

    /// The key as the configuration writes it.
    pub fn key(self) -> &'static str {
        match self {
            LimitKey::Timeout => "timeout",
            LimitKey::PageTimeout => "page_timeout",
            LimitKey::ConnectTimeout => "connect_timeout",
            LimitKey::MaxPages => "max_pages",
            LimitKey::MaxItems => "max_items",
            LimitKey::MaxResponseBytes => "max_response_bytes",
            LimitKey::InvalidCursorRestarts => "invalid_cursor_restarts",
        }
    }
}
