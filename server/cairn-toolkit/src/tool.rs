//! The [`Tool`] trait: everything about one built-in tool in one type.

use std::future::Future;

use cairn_agent::tools::{CallContext, Category, Effect};
use rmcp::model::CallToolResult;
use schemars::JsonSchema;
use serde::de::DeserializeOwned;

use crate::host::Host;
use crate::paths::Paths;

/// One built-in tool: everything about it, in one place.
///
/// ```text
/// pub struct Stat;
///
/// impl Tool for Stat {
///     type Host = FileTools;
///     type Args = StatArgs;
///     const NAME: &'static str = "stat";
///     ...
///     fn paths(args: &StatArgs) -> Paths { Paths::read(&args.path) }
///     async fn call(host: &FileTools, args: StatArgs, cx: CallContext) -> CallToolResult { ... }
/// }
/// ```
/// `ARCHITECTURE.md` ("Adding a tool") shows a complete one from the tree.
pub trait Tool: 'static {
    /// The state the tool's set shares (a workspace, the web guard, the sandbox service).
    type Host: Host;
    /// The arguments: `Deserialize + JsonSchema` with `#[serde(deny_unknown_fields)]`; each
    /// field's doc comment is its description in the schema the model sees.
    type Args: DeserializeOwned + JsonSchema + Send + 'static;

    /// The name the model calls it by (`[a-z0-9_]`, unique among the built-in tools).
    const NAME: &'static str;
    /// A short title for people (annotations, menus).
    const TITLE: &'static str;
    /// One or two sentences for the model: what it does and when to use it.
    const DESCRIPTION: &'static str;
    /// Its one category.
    const CATEGORY: Category;
    /// What it does to the world; the approval policy keys its defaults on this.
    const EFFECT: Effect;
    /// Offered to the model only in agent mode (every tool that changes files or state).
    const AGENT_ONLY: bool;
    /// Whether it only reads, changing nothing anywhere (an annotation for clients; idempotent
    /// too). By default, the [`Effect::Read`] tools; a network tool that only fetches (a GET)
    /// says so here, since its effect stays [`Effect::Network`].
    const READ_ONLY: bool = matches!(Self::EFFECT, Effect::Read);
    /// Offered only when the set has a workspace (a tool that only makes sense with one, such as
    /// saving a download into it). Others are offered always and say so if called without.
    const NEEDS_WORKSPACE: bool = false;
    /// Whether it may destroy or overwrite something (an annotation for clients). By default,
    /// tools that write or run code.
    const DESTRUCTIVE: bool = matches!(Self::EFFECT, Effect::Write | Effect::Execute);
    /// Whether it reaches beyond the machine (an annotation for clients). By default, the
    /// network tools.
    const OPEN_WORLD: bool = matches!(Self::EFFECT, Effect::Network);

    /// The workspace paths whose contents a call reads or writes. Those the user's rules
    /// protect (secrets, files that run code) are refused before [`Tool::call`] runs, naming
    /// them, so the agent can ask about exactly those paths. Tools that touch no workspace file
    /// return [`Paths::none`]; tools that only walk directories return [`Paths::walks`] (the
    /// walk skips what may not be read); tools that only look at names or metadata return
    /// [`Paths::metadata`].
    fn paths(args: &Self::Args) -> Paths;

    /// Runs the call. Failures are error results the model can read, never panics.
    fn call(
        host: &Self::Host,
        args: Self::Args,
        cx: CallContext,
    ) -> impl Future<Output = CallToolResult> + Send;
}
