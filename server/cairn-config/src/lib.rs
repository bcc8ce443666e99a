//! cairn's one configuration model.
//!
//! Configuration comes in layers, lowest precedence first: built-in defaults, the user's file
//! (`$XDG_CONFIG_HOME/cairn/config.toml`), the workspace's `.cairn/config.toml`, the editor's
//! settings (`initializationOptions.config`, `workspace/didChangeConfiguration`), and the
//! environment (`CAIRN_<SECTION>__<KEY>`, plus `CAIRN_MODEL`). Every layer is validated on its
//! own, so an unknown key is reported with the layer it came from.
//!
//! Architecture invariant: a workspace file cannot redirect credentials (provider URL, kind or
//! key variable) nor loosen the approval policy, because opening a repository must not be enough
//! to exfiltrate a key or auto-approve writes.

pub mod access;
mod layers;
mod mcp_import;
mod model;
mod schema;
pub mod trust;

pub use layers::{
    ConfigError, Layer, LayerSource, Layers, WORKSPACE_FORBIDDEN, default_user_config_path,
};
pub use mcp_import::{
    ImportError, ImportWarning, McpImport, McpJsonFormat, check_conflicts, detect_format, expand,
    expand_server, import_file, import_str, render_servers_toml,
};
pub use model::DbConfig;
pub use model::MlConfig;
pub use model::{
    AccessConfig, AgentConfig, Config, Decision, EffectPolicy, EngineConfig, LogConfig, McpConfig,
    McpOAuthConfig, McpServerConfig, McpTransport, OAuthGrant, PolicyConfig, ProviderConfig,
    ProviderKind, SandboxConfig, SearchProvider, SelectionConfig, SessionsConfig, SystemConfig,
    WebConfig, WebSearchConfig, WorkspaceDelivery,
};
pub use model::{ApiAuthConfig, ApiAuthScheme, ApiConfig, ApiServiceConfig, OpenApiSpecConfig};
pub use model::{
    CalDavConfig, CloudAccountConfig, CloudKind, CommsConfig, EmailConfig, MatrixConfig,
    SlackConfig, TwilioConfig, WebhookConfig, WebhookKind,
};
pub use model::{HookConfig, HookStageConfig};
pub use schema::{json_schema, vscode_configuration};
