//! The four paginated list kinds and what identifies an item of each.

use serde::{Deserialize, Serialize};
use std::fmt;

/// A paginated MCP list method.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    Tools,
    Prompts,
    Resources,
    ResourceTemplates,
}

impl Kind {
    pub const ALL: [Kind; 4] = [
        Kind::Tools,
        Kind::Prompts,
        Kind::Resources,
        Kind::ResourceTemplates,
    ];

    /// The `kind` label value.
    pub fn label(self) -> &'static str {
        match self {
            Kind::Tools => "tools",
            Kind::Prompts => "prompts",
            Kind::Resources => "resources",
            Kind::ResourceTemplates => "resource_templates",
        }
    }

    /// JSON-RPC method that lists this kind.
    pub fn method(self) -> &'static str {
        match self {
            Kind::Tools => "tools/list",
            Kind::Prompts => "prompts/list",
            Kind::Resources => "resources/list",
            Kind::ResourceTemplates => "resources/templates/list",
        }
    }

    /// Field of the result that holds the page's items.
    pub fn array_field(self) -> &'static str {
        match self {
            Kind::Tools => "tools",
            Kind::Prompts => "prompts",
            Kind::Resources => "resources",
            Kind::ResourceTemplates => "resourceTemplates",
        }
    }

    /// Field of an item that identifies it within a listing.
    pub fn identity_key(self) -> &'static str {
        match self {
            Kind::Tools | Kind::Prompts => "name",
            Kind::Resources => "uri",
            Kind::ResourceTemplates => "uriTemplate",
        }
    }

    /// Server capability that advertises this kind.
    pub fn capability(self) -> &'static str {
        match self {
            Kind::Tools => "tools",
            Kind::Prompts => "prompts",
            Kind::Resources | Kind::ResourceTemplates => "resources",
        }
    }

    /// Notification a server sends when this kind's set changes.
    /// Templates share the resources notification.
    pub fn list_changed_method(self) -> &'static str {
        match self {
            Kind::Tools => "notifications/tools/list_changed",
            Kind::Prompts => "notifications/prompts/list_changed",
            Kind::Resources | Kind::ResourceTemplates => "notifications/resources/list_changed",
        }
    }

    pub fn from_label(label: &str) -> Option<Kind> {
        Kind::ALL.into_iter().find(|k| k.label() == label)
    }
}

impl fmt::Display for Kind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.label())
    }
}

impl std::str::FromStr for Kind {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Kind::from_label(s).ok_or_else(|| {
            format!("unknown kind {s:?} (expected tools, prompts, resources or resource_templates)")
        })
    }
}
