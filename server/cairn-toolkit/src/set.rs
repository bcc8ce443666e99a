//! Tool sets: a list of [`Entry::of`] lines over one [`Host`], from which the names, the catalog
//! entries and the dispatch are derived, and the one pipeline every call takes.

use std::sync::Arc;

use cairn_agent::tools::{CallContext, Effect, ToolHost, ToolInfo};
use cairn_workspace::checkpoint::{Turn, in_turn};
use futures::future::BoxFuture;
use rmcp::model::{CallToolResult, ContentBlock, ToolAnnotations};
use serde_json::{Map, Value};

use crate::host::Host;
use crate::reply::{error, parse_args};
use crate::schema::input_schema;
use crate::tool::Tool;

type CallFn<H> =
    for<'a> fn(&'a H, Map<String, Value>, CallContext) -> BoxFuture<'a, CallToolResult>;

/// One line of a tool set: a [`Tool`] type, erased.
pub struct Entry<H> {
    name: &'static str,
    needs_workspace: bool,
    info: fn() -> ToolInfo,
    call: CallFn<H>,
}

impl<H: Host> Entry<H> {
    /// The entry for tool `T`.
    pub const fn of<T: Tool<Host = H>>() -> Entry<H> {
        Entry {
            name: T::NAME,
            needs_workspace: T::NEEDS_WORKSPACE,
            info: info::<T>,
            call: run::<T>,
        }
    }

    /// The tool's name.
    pub fn name(&self) -> &'static str {
        self.name
    }

    /// The tool's catalog entry: its MCP definition (schema derived from its arguments) and
    /// what the agent needs beyond it.
    pub fn info(&self) -> ToolInfo {
        (self.info)()
    }
}

fn info<T: Tool>() -> ToolInfo {
    let read_only = T::READ_ONLY;
    let annotations = ToolAnnotations::with_title(T::TITLE)
        .read_only(read_only)
        .destructive(T::DESTRUCTIVE)
        .idempotent(read_only)
        .open_world(T::OPEN_WORLD);
    let tool = rmcp::model::Tool::new(T::NAME, T::DESCRIPTION, Arc::new(input_schema::<T::Args>()))
        .with_annotations(annotations);
    ToolInfo {
        tool,
        effect: T::EFFECT,
        category: T::CATEGORY.as_str().to_owned(),
        agent_only: T::AGENT_ONLY,
        origin: None,
    }
}

/// Every call: parse the arguments (a bad field is named and nothing runs), refuse protected
/// paths the call declares without an approval (naming them for the agent), then run in the
/// call's turn, so the files it changes are checkpointed for a rewind (what could not be kept
/// is said at the end of the result).
fn run<'a, T: Tool>(
    host: &'a T::Host,
    arguments: Map<String, Value>,
    cx: CallContext,
) -> BoxFuture<'a, CallToolResult> {
    Box::pin(async move {
        tracing::debug!(tool = T::NAME, call_id = %cx.call_id, "built-in tool call");
        let args: T::Args = match parse_args(T::NAME, arguments) {
            Ok(args) => args,
            Err(refusal) => return refusal,
        };
        let paths = T::paths(&args);
        if !paths.is_empty() {
            let Some(ws) = host.workspace() else {
                return error(format!(
                    "{} works on workspace files, and no workspace is open",
                    T::NAME
                ));
            };
            // Resolving and checking paths touches the file system: off the executor.
            match cairn_workspace::off_thread(ws, move |ws| paths.refusal(ws)).await {
                Ok(Some(refusal)) => return refusal,
                Ok(None) => {}
                Err(e) => return error(e),
            }
        }
        let turn = Turn::new(cx.session_id.clone(), cx.run_id.clone());
        let call = in_turn(turn.clone(), T::call(host, args, cx));
        let mut result = if T::EFFECT == Effect::Write {
            host.around_write(Box::pin(call)).await
        } else {
            call.await
        };
        for note in turn.take_notes() {
            result.content.push(ContentBlock::text(note));
        }
        result
    })
}

/// The tools of one set over their shared state; a [`ToolHost`] (and so an MCP server, through
/// `cairn-mcp`'s in-process server).
pub struct ToolSet<H: Host> {
    host: Arc<H>,
    /// The entries offered (those that need a workspace only when there is one), decided once.
    entries: Arc<Vec<&'static Entry<H>>>,
    infos: Arc<Vec<ToolInfo>>,
}

impl<H: Host> Clone for ToolSet<H> {
    fn clone(&self) -> Self {
        ToolSet {
            host: self.host.clone(),
            entries: self.entries.clone(),
            infos: self.infos.clone(),
        }
    }
}

impl<H: Host> std::fmt::Debug for ToolSet<H> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToolSet")
            .field("tools", &self.names().collect::<Vec<_>>())
            .finish_non_exhaustive()
    }
}

impl<H: Host> ToolSet<H> {
    /// The tools of `entries`, sharing `host`; without a workspace, those that need one are
    /// left out.
    pub fn new(host: H, entries: &'static [Entry<H>]) -> ToolSet<H> {
        let has_workspace = host.workspace().is_some();
        let entries: Vec<&'static Entry<H>> = entries
            .iter()
            .filter(|e| has_workspace || !e.needs_workspace)
            .collect();
        let infos = entries.iter().map(|e| e.info()).collect();
        ToolSet {
            host: Arc::new(host),
            entries: Arc::new(entries),
            infos: Arc::new(infos),
        }
    }

    /// The shared state.
    pub fn host(&self) -> &H {
        &self.host
    }

    /// The names of the tools offered, in the order listed.
    pub fn names(&self) -> impl Iterator<Item = &'static str> + '_ {
        self.entries.iter().map(|e| e.name)
    }
}

impl<H: Host> ToolHost for ToolSet<H> {
    fn list(&self) -> Vec<ToolInfo> {
        self.infos.as_ref().clone()
    }

    fn call(
        &self,
        name: &str,
        arguments: Map<String, Value>,
        ctx: CallContext,
    ) -> BoxFuture<'_, CallToolResult> {
        match self.entries.iter().find(|e| e.name == name) {
            Some(entry) => (entry.call)(&self.host, arguments, ctx),
            None => {
                let known = self.names().collect::<Vec<_>>().join(", ");
                let message = format!("unknown tool `{name}`; the tools here are {known}");
                Box::pin(async move { error(message) })
            }
        }
    }
}
