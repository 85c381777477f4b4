//! Fuzz targets of mcp-exporter; the entry points live in `harness.rs` so
//! the stable test suite can replay the corpora through the same code.

mod harness;

pub use harness::{
    config_text, jsonrpc_message, sse_body, state_file, walk_pages, ConfigText, Message, SseRead,
    StateFile,
};
