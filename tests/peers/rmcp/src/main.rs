//! An rmcp MCP server that paginates all four list kinds, for
//! mcp-exporter's interop tests.
//!
//!   paginating-rmcp                stdio
//!   paginating-rmcp http [PORT]    Streamable HTTP on 127.0.0.1:PORT/mcp (PORT from
//!                                  argv, else $PORT, else 0 = any free port); prints
//!                                  "listening on http://127.0.0.1:PORT" to stderr.
//!
//! Catalogue (identical to the TypeScript and Python peers so the tests share one table):
//!   tools              tool_00 .. tool_22                       23 items, 5 per page
//!   prompts            prompt_0 .. prompt_6                      7 items, 3 per page
//!   resources          test://paginating/resource/00 .. /11     12 items, 5 per page
//!   resource templates test://paginating/template/0/{id} .. /3/  4 items, 3 per page
//! Cursors are opaque (base64url of "<kind>:<offset>"); anything else is -32602.

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine as _;
use rmcp::model::{
    ErrorData, Implementation, ListPromptsResult, ListResourceTemplatesResult, ListResourcesResult,
    ListToolsResult, PaginatedRequestParams, Prompt, Resource, ResourceTemplate,
    ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::RequestContext;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::{RoleServer, ServerHandler, ServiceExt};
use std::sync::Arc;

/// One list kind: its wire name (used in cursors), page size and items.
struct Listing<T> {
    kind: &'static str,
    page_size: usize,
    items: Vec<T>,
}

impl<T: Clone> Listing<T> {
    /// The page a request's cursor points at, and the cursor of the next one.
    fn page(
        &self,
        request: Option<PaginatedRequestParams>,
    ) -> Result<(Vec<T>, Option<String>), ErrorData> {
        let offset = match request.and_then(|r| r.cursor) {
            None => 0,
            Some(cursor) => self.decode(&cursor)?,
        };
        let end = (offset + self.page_size).min(self.items.len());
        let next = (end < self.items.len())
            .then(|| URL_SAFE_NO_PAD.encode(format!("{}:{end}", self.kind)));
        Ok((self.items[offset..end].to_vec(), next))
    }

    /// -32602 for anything this server did not hand out for this kind.
    fn decode(&self, cursor: &str) -> Result<usize, ErrorData> {
        let offset = URL_SAFE_NO_PAD
            .decode(cursor)
            .ok()
            .and_then(|bytes| String::from_utf8(bytes).ok())
            .and_then(|text| {
                let (kind, offset) = text.split_once(':')?;
                (kind == self.kind).then_some(())?;
                offset.parse::<usize>().ok()
            })
            .filter(|&o| o > 0 && o < self.items.len() && o % self.page_size == 0);
        offset.ok_or_else(|| ErrorData::invalid_params(format!("Invalid cursor: {cursor:?}"), None))
    }
}

struct Paginating {
    tools: Listing<Tool>,
    prompts: Listing<Prompt>,
    resources: Listing<Resource>,
    templates: Listing<ResourceTemplate>,
}

impl Paginating {
    fn new() -> Self {
        let schema = Arc::new(serde_json::Map::from_iter([(
            "type".to_string(),
            serde_json::json!("object"),
        )]));
        Paginating {
            tools: Listing {
                kind: "tools",
                page_size: 5,
                items: (0..23)
                    .map(|i| {
                        Tool::new(
                            format!("tool_{i:02}"),
                            format!("Paginated test tool {i}"),
                            schema.clone(),
                        )
                    })
                    .collect(),
            },
            prompts: Listing {
                kind: "prompts",
                page_size: 3,
                items: (0..7)
                    .map(|i| {
                        Prompt::new(
                            format!("prompt_{i}"),
                            Some(format!("Paginated test prompt {i}")),
                            None,
                        )
                    })
                    .collect(),
            },
            resources: Listing {
                kind: "resources",
                page_size: 5,
                items: (0..12)
                    .map(|i| {
                        Resource::new(
                            format!("test://paginating/resource/{i:02}"),
                            format!("resource_{i:02}"),
                        )
                    })
                    .collect(),
            },
            templates: Listing {
                kind: "resourceTemplates",
                page_size: 3,
                items: (0..4)
                    .map(|i| {
                        ResourceTemplate::new(
                            format!("test://paginating/template/{i}/{{id}}"),
                            format!("template_{i}"),
                        )
                    })
                    .collect(),
            },
        }
    }
}

impl ServerHandler for Paginating {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(
            ServerCapabilities::builder()
                .enable_tools()
                .enable_prompts()
                .enable_resources()
                .build(),
        )
        .with_server_info(Implementation::new("paginating-rmcp", "1.0.0"))
    }

    async fn list_tools(
        &self,
        request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let (items, next) = self.tools.page(request)?;
        let mut result = ListToolsResult::with_all_items(items);
        result.next_cursor = next;
        Ok(result)
    }

    async fn list_prompts(
        &self,
        request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, ErrorData> {
        let (items, next) = self.prompts.page(request)?;
        let mut result = ListPromptsResult::with_all_items(items);
        result.next_cursor = next;
        Ok(result)
    }

    async fn list_resources(
        &self,
        request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        let (items, next) = self.resources.page(request)?;
        let mut result = ListResourcesResult::with_all_items(items);
        result.next_cursor = next;
        Ok(result)
    }

    async fn list_resource_templates(
        &self,
        request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, ErrorData> {
        let (items, next) = self.templates.page(request)?;
        let mut result = ListResourceTemplatesResult::with_all_items(items);
        result.next_cursor = next;
        Ok(result)
    }
}

async fn serve_stdio() -> Result<(), Box<dyn std::error::Error>> {
    let running = Paginating::new().serve(rmcp::transport::stdio()).await?;
    running.waiting().await?;
    Ok(())
}

async fn serve_http(port: u16) -> Result<(), Box<dyn std::error::Error>> {
    let service = StreamableHttpService::new(
        || Ok(Paginating::new()),
        Arc::new(LocalSessionManager::default()),
        StreamableHttpServerConfig::default(),
    );
    let app = axum::Router::new().nest_service("/mcp", service);
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", port)).await?;
    eprintln!("listening on http://{}", listener.local_addr()?);
    axum::serve(listener, app)
        .with_graceful_shutdown(async {
            let _ = tokio::signal::ctrl_c().await;
        })
        .await?;
    Ok(())
}

#[tokio::main]
async fn main() -> std::process::ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = match args.first().map(String::as_str) {
        None | Some("stdio") => serve_stdio().await,
        Some("http") => {
            let raw = args
                .get(1)
                .cloned()
                .or_else(|| std::env::var("PORT").ok())
                .unwrap_or_else(|| "0".into());
            match raw.parse::<u16>() {
                Ok(port) => serve_http(port).await,
                Err(_) => {
                    eprintln!("invalid port: {raw}");
                    return std::process::ExitCode::from(2);
                }
            }
        }
        Some(_) => {
            eprintln!("usage: paginating-rmcp [stdio | http [PORT]]");
            return std::process::ExitCode::from(2);
        }
    };
    match result {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("paginating-rmcp: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}
