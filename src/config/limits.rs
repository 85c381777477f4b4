//! Bounds on what we ask a server or a source: the one runtime shape of
//! every `limits:` block (global, targets, modules, discovery sources),
//! resolved once. docs/guards.md says what each bound stops.

use mcp_listing::WalkLimits;
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
    pub const DEFAULT: Limits = Limits {
        timeout: Duration::from_secs(60),
        page_timeout: Duration::from_secs(10),
        connect_timeout: Duration::from_secs(5),
        max_pages: 1000,
        max_items: 100_000,
        max_response_bytes: 16 * 1024 * 1024,
        invalid_cursor_restarts: 1,
    };

    /// The walker's view of these limits. `modern` = protocol 2026-07-28 or later.
    pub fn walk_limits(&self, modern: bool) -> WalkLimits {
        WalkLimits {
            max_pages: self.max_pages,
            max_items: self.max_items,
            invalid_cursor_restarts: self.invalid_cursor_restarts,
            // One budget for both reasons the result set can move under a walk.
            list_changed_restarts: self.invalid_cursor_restarts,
            session_restarts: 1,
            page_timeout: self.page_timeout,
            listing_timeout: self.timeout,
            modern,
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
