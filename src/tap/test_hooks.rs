//! Hooks for tests with real processes, compiled into debug builds only
//! (a release build has neither; `mod.rs` declares this module under
//! `debug_assertions`): `MCP_EXPORTER_TEST_OBSERVER_PANIC=PATH` makes a
//! tap's observer panic on each request to PATH that it reads, and
//! `MCP_EXPORTER_TEST_OBSERVER_WAIT_MS=N` sets the first wait before a
//! fresh observer (docs/reliability.md, "The tap's observer").

use mcp_tap::TapEvent;
use std::time::Duration;

pub(crate) fn panic_on(event: &TapEvent) {
    let TapEvent::Opened { head, .. } = event else {
        return;
    };
    let Ok(path) = std::env::var("MCP_EXPORTER_TEST_OBSERVER_PANIC") else {
        return;
    };
    if head.path.as_ref().map(|p| p.path()) == Some(path.as_str()) {
        panic!("test hook: the observer was asked to panic");
    }
}

pub(crate) fn first_wait() -> Option<Duration> {
    let ms = std::env::var("MCP_EXPORTER_TEST_OBSERVER_WAIT_MS").ok()?;
    ms.parse().ok().map(Duration::from_millis)
}
