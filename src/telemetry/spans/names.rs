//! Attribute keys. The MCP/network/rpc ones follow the OpenTelemetry MCP
//! semantic conventions; `mcp.pagination.*`, `mcp.poll.*`, `mcp.listing.*`
//! and `mcp.target` are ours (documented in docs/tracing.md).

// Semantic conventions.
pub const MCP_METHOD_NAME: &str = "mcp.method.name";
pub const MCP_PROTOCOL_VERSION: &str = "mcp.protocol.version";
pub const MCP_SESSION_ID: &str = "mcp.session.id";
pub const JSONRPC_REQUEST_ID: &str = "jsonrpc.request.id";
pub const NETWORK_TRANSPORT: &str = "network.transport";
pub const NETWORK_PROTOCOL_NAME: &str = "network.protocol.name";
pub const SERVER_ADDRESS: &str = "server.address";
pub const SERVER_PORT: &str = "server.port";
pub const ERROR_TYPE: &str = "error.type";
pub const RPC_RESPONSE_STATUS_CODE: &str = "rpc.response.status_code";
pub const HTTP_RESPONSE_STATUS_CODE: &str = "http.response.status_code";

// The poll.
pub const MCP_TARGET: &str = "mcp.target";
pub const MCP_TRANSPORT: &str = "mcp.transport";
pub const MCP_SERVER_NAME: &str = "mcp.server.name";
pub const MCP_SERVER_VERSION: &str = "mcp.server.version";
pub const MCP_POLL_OUTCOME: &str = "mcp.poll.outcome";
pub const MCP_POLL_LISTINGS: &str = "mcp.poll.listings";
pub const MCP_POLL_TIME_TO_READY: &str = "mcp.poll.time_to_ready_seconds";

// A listing.
pub const MCP_LISTING_KIND: &str = "mcp.listing.kind";
pub const PAGINATION_OUTCOME: &str = "mcp.pagination.outcome";
pub const PAGINATION_REASON: &str = "mcp.pagination.reason";
pub const PAGINATION_PAGES: &str = "mcp.pagination.pages";
pub const PAGINATION_REQUESTS: &str = "mcp.pagination.requests";
pub const PAGINATION_RAW_ITEMS: &str = "mcp.pagination.raw_items";
pub const PAGINATION_UNIQUE_ITEMS: &str = "mcp.pagination.unique_items";
pub const PAGINATION_DUPLICATE_ITEMS: &str = "mcp.pagination.duplicate_items";
pub const PAGINATION_INVALID_ITEMS: &str = "mcp.pagination.invalid_items";
pub const PAGINATION_INVALID_CURSOR_ERRORS: &str = "mcp.pagination.invalid_cursor_errors";
pub const PAGINATION_RESTARTS: &str = "mcp.pagination.restarts";
pub const PAGINATION_LIST_CHANGED: &str = "mcp.pagination.list_changed_notifications";
pub const PAGINATION_TTL_MS: &str = "mcp.pagination.ttl_ms";
pub const PAGINATION_CACHE_SCOPE: &str = "mcp.pagination.cache_scope";
pub const PAGINATION_ADDED_ITEMS: &str = "mcp.pagination.added_items";
pub const PAGINATION_REMOVED_ITEMS: &str = "mcp.pagination.removed_items";
pub const PAGINATION_SILENT_SHRINK: &str = "mcp.pagination.silent_shrink";

// Listing events.
pub const PAGINATION_RESTART_REASON: &str = "mcp.pagination.restart.reason";
pub const PAGINATION_GUARD: &str = "mcp.pagination.guard";
pub const PAGINATION_ITEM_COUNT: &str = "mcp.pagination.item_count";
pub const PAGINATION_ITEM_NAMES: &str = "mcp.pagination.item_names";
pub const PAGINATION_ITEM_NAMES_OMITTED: &str = "mcp.pagination.item_names_omitted";

// A page.
pub const PAGINATION_PAGE_INDEX: &str = "mcp.pagination.page_index";
pub const PAGINATION_ATTEMPT: &str = "mcp.pagination.attempt";
pub const PAGINATION_ITEMS: &str = "mcp.pagination.items";
pub const PAGINATION_NEW_ITEMS: &str = "mcp.pagination.new_items";
pub const PAGINATION_RESPONSE_BYTES: &str = "mcp.pagination.response_bytes";
pub const PAGINATION_CURSOR_SENT: &str = "mcp.pagination.cursor_sent";
pub const PAGINATION_CURSOR_PRESENT: &str = "mcp.pagination.cursor_present";
pub const PAGINATION_NEXT_CURSOR: &str = "mcp.pagination.next_cursor";
pub const PAGINATION_CURSOR_HASH: &str = "mcp.pagination.cursor_hash";
pub const PAGINATION_SENT_CURSOR_HASH: &str = "mcp.pagination.sent_cursor_hash";
pub const PAGINATION_ERROR: &str = "mcp.pagination.error";

// A client listing seen by a tap.
pub const MCP_TAP: &str = "mcp.tap";
/// The route (the upstream endpoint: a gateway's server) the listing was for.
pub const MCP_TAP_ROUTE: &str = "mcp.tap.route";
pub const MCP_CLIENT_NAME: &str = "mcp.client.name";
pub const MCP_CLIENT_VERSION: &str = "mcp.client.version";
pub const MCP_CLIENT_IDENTITY_SOURCE: &str = "mcp.client.identity_source";
pub const MCP_CLIENT_SESSION: &str = "mcp.client.session";
pub const MCP_CLIENT_ITEMS_MISSED: &str = "mcp.client.items_missed";
pub const MCP_CLIENT_MERGED: &str = "mcp.client.merged";
