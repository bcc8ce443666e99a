//! The tool seam: a host lists tools and calls them. The MCP hub and the built-in tool servers
//! implement [`ToolHost`]; the agent only routes calls through policy to it.

use futures::future::BoxFuture;
use rmcp::model::{CallToolResult, Tool};
use serde::{Deserialize, Serialize};
use tokio_util::sync::CancellationToken;

/// What a tool does to the world; the approval policy keys its defaults on this.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Effect {
    /// Reads and nothing else: allowed by default.
    Read,
    /// Changes files or other state: asks by default.
    Write,
    /// Runs code: asks by default.
    Execute,
    /// Reaches the network: asks by default.
    Network,
}

impl Effect {
    /// The lower-case name used in configuration (`policy.effects.write`).
    pub fn as_str(self) -> &'static str {
        match self {
            Effect::Read => "read",
            Effect::Write => "write",
            Effect::Execute => "execute",
            Effect::Network => "network",
        }
    }
}

/// The categories of the built-in catalog, in the order the product lists them; every built-in
/// tool has exactly one. External tools are not in one (their category is `mcp:<server>`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Category {
    /// Code execution (sandboxes).
    Code,
    /// File operations.
    File,
    /// The web.
    Web,
    /// Databases.
    Database,
    /// API integrations.
    Api,
    /// DevOps.
    Devops,
    /// Data analysis.
    Data,
    /// Communication.
    Communication,
    /// Version control.
    Git,
    /// Cloud services.
    Cloud,
    /// AI and machine learning.
    Ai,
    /// System utilities.
    System,
}

impl Category {
    /// Every category, in the product's order.
    pub const ALL: [Category; 12] = [
        Category::Code,
        Category::File,
        Category::Web,
        Category::Database,
        Category::Api,
        Category::Devops,
        Category::Data,
        Category::Communication,
        Category::Git,
        Category::Cloud,
        Category::Ai,
        Category::System,
    ];

    /// The name used in configuration (`policy.categories.file`) and on the wire.
    pub fn as_str(self) -> &'static str {
        match self {
            Category::Code => "code",
            Category::File => "file",
            Category::Web => "web",
            Category::Database => "database",
            Category::Api => "api",
            Category::Devops => "devops",
            Category::Data => "data",
            Category::Communication => "communication",
            Category::Git => "git",
            Category::Cloud => "cloud",
            Category::Ai => "ai",
            Category::System => "system",
        }
    }

    /// What people call it.
    pub fn label(self) -> &'static str {
        match self {
            Category::Code => "code execution",
            Category::File => "file operations",
            Category::Web => "web",
            Category::Database => "database",
            Category::Api => "API integrations",
            Category::Devops => "DevOps",
            Category::Data => "data analysis",
            Category::Communication => "communication",
            Category::Git => "version control",
            Category::Cloud => "cloud services",
            Category::Ai => "AI/ML",
            Category::System => "system utilities",
        }
    }

    /// How many tools the product promises in this category (260 in all).
    pub fn target(self) -> usize {
        match self {
            Category::Code => 15,
            Category::File => 22,
            Category::Web => 18,
            Category::Database => 12,
            Category::Api => 45,
            Category::Devops => 28,
            Category::Data => 20,
            Category::Communication => 15,
            Category::Git => 18,
            Category::Cloud => 35,
            Category::Ai => 22,
            Category::System => 30,
        }
    }

    /// The category named `name` (as [`Category::as_str`] spells it).
    pub fn parse(name: &str) -> Option<Category> {
        Category::ALL.into_iter().find(|c| c.as_str() == name)
    }
}

/// A tool with what the agent needs to know beyond its MCP definition.
#[derive(Debug, Clone)]
pub struct ToolInfo {
    pub tool: Tool,
    pub effect: Effect,
    /// The category (`file`, `web`, ...) for per-category policy.
    pub category: String,
    /// Editing tools are offered only in agent mode.
    pub agent_only: bool,
    /// Which server's which tool carries the name, where a host knows it (the MCP hub). Session
    /// grants are held for this, and the call runs only if the name still belongs to it, so an
    /// approval can never pass to another tool that later carries the same name.
    pub origin: Option<ToolOrigin>,
}

/// The identity of a tool behind its public name: the server and the tool's own name there.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ToolOrigin {
    pub server: String,
    pub tool: String,
}

/// Context of one call: who asked, and a token that fires when the run is cancelled.
#[derive(Debug, Clone)]
pub struct CallContext {
    /// The chat session the run belongs to (state that lasts between turns, such as a Python
    /// session, is keyed by it).
    pub session_id: String,
    pub run_id: String,
    pub call_id: String,
    pub cancel: CancellationToken,
}

// The `_meta` a built-in tool's result carries for the agent, owned here as typed values: the
// tools write them with `attach_*` and the agent reads them with `*_of`; the keys never leave
// this module. (What the hub sends built-in servers with a call lives in `cairn-mcp`'s `meta`.)

/// `_meta` key under which a tool reports the edits it made, so the agent can tell the editor.
/// The value is a list of [`EditReport`].
const EDITS_META_KEY: &str = "cairn/edits";

/// One edit a tool made or tried to make.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct EditReport {
    /// `file://` URI of the edited file.
    pub uri: String,
    pub applied: bool,
    /// Why the edit was rejected, when it was.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// `_meta` key under which a built-in tool reports the protected paths (the deny list: secrets,
/// code that runs) that stopped a call. The value is a list of [`ProtectedPath`]. The agent asks
/// the user about exactly those paths and, if approved, runs the call once more.
const PROTECTED_META_KEY: &str = "cairn/protectedPaths";

fn attach(mut result: CallToolResult, key: &str, value: serde_json::Value) -> CallToolResult {
    result
        .meta
        .get_or_insert_with(Default::default)
        .insert(key.to_owned(), value);
    result
}

fn read_meta<T: serde::de::DeserializeOwned + Default>(result: &CallToolResult, key: &str) -> T {
    result
        .meta
        .as_ref()
        .and_then(|m| m.get(key))
        .and_then(|v| serde_json::from_value(v.clone()).ok())
        .unwrap_or_default()
}

/// `_meta` key under which a built-in tool reports the tokens it spent on a model request of its
/// own (summarise, translate, ...); the agent counts them in the turn's usage. The value is a
/// [`crate::model::Usage`].
const USAGE_META_KEY: &str = "cairn/usage";

/// The `_meta` keys only built-in tools may set: the hub drops them from external servers'
/// results, so no server can claim edits, protected paths or usage.
pub fn is_reserved_meta_key(key: &str) -> bool {
    key.starts_with("cairn/")
}

/// `result`, reporting the tokens its own model request used.
pub fn attach_usage(result: CallToolResult, usage: crate::model::Usage) -> CallToolResult {
    let value = serde_json::to_value(usage).unwrap_or_default();
    attach(result, USAGE_META_KEY, value)
}

/// The tokens a result reports its tool spent on the model (none when it reports none).
pub fn usage_of(result: &CallToolResult) -> crate::model::Usage {
    read_meta(result, USAGE_META_KEY)
}

/// `result`, reporting the edits a tool made or tried to make.
pub fn attach_edits(result: CallToolResult, reports: &[EditReport]) -> CallToolResult {
    let value = serde_json::to_value(reports).unwrap_or_default();
    attach(result, EDITS_META_KEY, value)
}

/// The edits a result reports (none when it reports none or they do not parse).
pub fn edits_of(result: &CallToolResult) -> Vec<EditReport> {
    read_meta(result, EDITS_META_KEY)
}

/// `result`, naming the protected paths that stopped the call.
pub fn attach_protected(result: CallToolResult, paths: &[ProtectedPath]) -> CallToolResult {
    let value = serde_json::to_value(paths).unwrap_or_default();
    attach(result, PROTECTED_META_KEY, value)
}

/// The protected paths a refusal names (none when it names none).
pub fn protected_of(result: &CallToolResult) -> Vec<ProtectedPath> {
    read_meta(result, PROTECTED_META_KEY)
}

/// A path a call needs that only an approval of that very path lets through.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ProtectedPath {
    /// The path as the model named it (relative to the workspace root).
    pub path: String,
    /// The canonical path an approval is held for.
    pub key: String,
    /// `read` or `write`.
    pub operation: String,
    /// Why it is protected.
    pub why: String,
}

/// Holds approvals of protected paths while one call runs again (the workspace implements it).
pub trait PathApprovals: Send + Sync {
    fn hold(&self, paths: &[ProtectedPath]);
    fn release(&self, paths: &[ProtectedPath]);
}

/// A set of tools that can be called.
pub trait ToolHost: Send + Sync {
    /// The tools on offer now.
    fn list(&self) -> Vec<ToolInfo>;
    /// Call one tool. Failures are results with `is_error`, never panics: the model reads them.
    fn call(
        &self,
        name: &str,
        arguments: serde_json::Map<String, serde_json::Value>,
        ctx: CallContext,
    ) -> BoxFuture<'_, CallToolResult>;

    /// Calls the tool `info` describes (as listed), refusing if its name now belongs to another
    /// tool than `info.origin`. Hosts whose names never move need not override it.
    fn call_tool(
        &self,
        info: &ToolInfo,
        arguments: serde_json::Map<String, serde_json::Value>,
        ctx: CallContext,
    ) -> BoxFuture<'_, CallToolResult> {
        self.call(info.tool.name.as_ref(), arguments, ctx)
    }

    /// Why a name that is not listed cannot be used, when the host knows (two tools claim it).
    fn unavailable(&self, _name: &str) -> Option<String> {
        None
    }
}

/// Several hosts as one: `list` concatenates, `call` goes to the first host that lists the name.
pub struct Chain(pub Vec<std::sync::Arc<dyn ToolHost>>);

impl Chain {
    /// The first host that lists `name`.
    fn host_for(&self, name: &str) -> Option<&std::sync::Arc<dyn ToolHost>> {
        self.0
            .iter()
            .find(|h| h.list().iter().any(|t| t.tool.name == name))
    }
}

impl ToolHost for Chain {
    fn list(&self) -> Vec<ToolInfo> {
        self.0.iter().flat_map(|h| h.list()).collect()
    }

    fn call(
        &self,
        name: &str,
        arguments: serde_json::Map<String, serde_json::Value>,
        ctx: CallContext,
    ) -> BoxFuture<'_, CallToolResult> {
        match self.host_for(name) {
            Some(h) => h.call(name, arguments, ctx),
            None => {
                let message = self
                    .unavailable(name)
                    .unwrap_or_else(|| format!("unknown tool `{name}`"));
                Box::pin(async move {
                    CallToolResult::error(vec![rmcp::model::ContentBlock::text(message)])
                })
            }
        }
    }

    fn call_tool(
        &self,
        info: &ToolInfo,
        arguments: serde_json::Map<String, serde_json::Value>,
        ctx: CallContext,
    ) -> BoxFuture<'_, CallToolResult> {
        match self.host_for(&info.tool.name) {
            Some(h) => h.call_tool(info, arguments, ctx),
            None => self.call(&info.tool.name, arguments, ctx),
        }
    }

    fn unavailable(&self, name: &str) -> Option<String> {
        self.0.iter().find_map(|h| h.unavailable(name))
    }
}

/// Some of a host's tools: what a sub-agent given a narrower tool set sees. A name outside the
/// set is neither listed nor callable.
pub struct Only {
    pub inner: std::sync::Arc<dyn ToolHost>,
    pub names: std::collections::BTreeSet<String>,
}

impl ToolHost for Only {
    fn list(&self) -> Vec<ToolInfo> {
        self.inner
            .list()
            .into_iter()
            .filter(|t| self.names.contains(t.tool.name.as_ref()))
            .collect()
    }

    fn call(
        &self,
        name: &str,
        arguments: serde_json::Map<String, serde_json::Value>,
        ctx: CallContext,
    ) -> BoxFuture<'_, CallToolResult> {
        if !self.names.contains(name) {
            let message = format!("`{name}` is not among the tools this task was given");
            return Box::pin(async move {
                CallToolResult::error(vec![rmcp::model::ContentBlock::text(message)])
            });
        }
        self.inner.call(name, arguments, ctx)
    }

    fn call_tool(
        &self,
        info: &ToolInfo,
        arguments: serde_json::Map<String, serde_json::Value>,
        ctx: CallContext,
    ) -> BoxFuture<'_, CallToolResult> {
        if !self.names.contains(info.tool.name.as_ref()) {
            return self.call(&info.tool.name, arguments, ctx);
        }
        self.inner.call_tool(info, arguments, ctx)
    }

    fn unavailable(&self, name: &str) -> Option<String> {
        if self.names.contains(name) {
            self.inner.unavailable(name)
        } else {
            Some(format!(
                "`{name}` is not among the tools this task was given"
            ))
        }
    }
}
