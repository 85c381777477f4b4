//! The four paginated list kinds and what identifies an item of each.

crate::labelled_enum! {
    /// A paginated MCP list method; the label is the `kind` label value.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
    pub enum Kind as "kind" {
        Tools => "tools",
        Prompts => "prompts",
        Resources => "resources",
        ResourceTemplates => "resource_templates",
    }
}

impl Kind {
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
}
