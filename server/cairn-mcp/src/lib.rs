//! cairn's MCP hub: rmcp clients to many servers (stdio, streamable HTTP, legacy SSE, and
//! built-in servers in this process), their supervision, and one catalog of their tools under
//! public names, served to the agent as a [`cairn_agent::tools::ToolHost`]. Any built-in tool
//! set becomes such an in-process server through [`ToolServer`].
//!
//! Invariant: this is the only crate that starts MCP server processes, and a child never
//! inherits cairn's environment or writes to cairn's stdout.

pub mod delegate;
mod error;
mod http;
mod hub;
mod ids;
pub mod in_process;
pub mod meta;
pub mod names;
pub mod oauth;
pub mod pinning;
pub mod resources;
pub mod review;
pub mod slash;
mod sse;
mod stdio;

pub use delegate::{ClientDelegate, Elicited, SamplingRequest, schema_defaults};
pub use error::McpError;
pub use http::{ConfiguredHeaders, HeaderSource};
pub use hub::{
    Hub, HubEvent, HubOptions, ServerState, ServerStatus, ServerTool, ToolMeta, TransportKind,
};
pub use in_process::ToolServer;
pub use meta::CallMeta;
pub use oauth::{
    AuthorizationPrompt, MemoryTokenStore, OAuthError, OAuthOptions, StoredGrant, TokenStore,
};
pub use resources::{READ_RESOURCE, ResourceTool, ServerPrompt, ServerResource};
pub use review::{Review, ReviewReason, Reviewer};
pub use slash::{SlashCommand, SlashError};
pub use sse::SseError;
