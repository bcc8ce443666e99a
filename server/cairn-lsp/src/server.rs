//! The `LanguageServer` implementation: it routes each request and notification to its handler
//! in `handlers/`, and registers the `cairn/` requests and notifications under the names
//! `protocol` defines.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use cairn_config::Layers;
use serde_json::Value;
use tower_lsp_server::jsonrpc::{Error, Result};
use tower_lsp_server::ls_types::notification::Notification;
use tower_lsp_server::ls_types::request::Request;
use tower_lsp_server::ls_types::*;
use tower_lsp_server::{Client, LanguageServer, LspService, Server};

use crate::factory::AgentFactory;
use crate::handlers;
use crate::panic::CatchPanic;
use crate::protocol::{
    CancelRequest, ChatRequest, CheckpointsRequest, CompactRequest, ContextRequest,
    DiagnosticsNotification, DiagnosticsParams, McpPromptsRequest, McpResourcesRequest,
    RewindRequest, SessionsRequest, ToolsRequest,
};
use crate::state::State;

/// What the server starts with: configuration layers read before the editor connects.
pub struct ServeOptions {
    pub layers: Layers,
    pub factory: Arc<dyn AgentFactory>,
    /// Registers `cairn/debug/panic`, a handler that panics, for the robustness tests.
    pub test_faults: bool,
}

/// The server.
pub(crate) struct Backend {
    pub state: Arc<State>,
    test_faults: bool,
}

/// A method on `Backend` per `cairn/` request, typed by the request's definition, so a handler
/// cannot drift from the params and result `protocol` declares.
macro_rules! cairn_requests {
    ($($name:ident: $request:ty => |$state:ident, $params:ident| $body:expr;)*) => {
        impl Backend {
            $(
                async fn $name(
                    &self,
                    $params: <$request as Request>::Params,
                ) -> Result<<$request as Request>::Result> {
                    let $state = &self.state;
                    $body.await
                }
            )*
        }
    };
}

cairn_requests! {
    chat: ChatRequest => |state, params| handlers::chat::handle(state, params);
    cancel: CancelRequest => |state, params| handlers::cancel::handle(&state.runs, params);
    sessions: SessionsRequest => |state, params| {
        handlers::sessions::handle(state.factory.sessions_dir(&state.config()), params)
    };
    tools: ToolsRequest => |state, params| handlers::tools::handle(state, params);
    context: ContextRequest => |state, params| handlers::context::handle(state, params);
    compact: CompactRequest => |state, params| handlers::compact::handle(state, params);
    checkpoints: CheckpointsRequest => |state, params| {
        handlers::rewind::checkpoints(state, params)
    };
    rewind: RewindRequest => |state, params| handlers::rewind::rewind(state, params);
    mcp_resources: McpResourcesRequest => |state, params| {
        handlers::mcp_resources::handle(state.factory.as_ref(), params)
    };
    mcp_prompts: McpPromptsRequest => |state, params| {
        handlers::mcp_prompts::handle(state.factory.as_ref(), params)
    };
}

impl Backend {
    async fn diagnostics(&self, params: DiagnosticsParams) {
        handlers::diagnostics::handle(&self.state.diagnostics, params);
    }

    async fn debug_panic(&self, _params: Option<Value>) -> Result<Value> {
        if self.test_faults {
            panic!("injected fault");
        }
        Err(Error::method_not_found())
    }
}

impl LanguageServer for Backend {
    async fn initialize(&self, params: InitializeParams) -> Result<InitializeResult> {
        handlers::initialize::handle(&self.state, params).await
    }

    async fn initialized(&self, _: InitializedParams) {
        handlers::initialized::handle(&self.state).await;
    }

    async fn shutdown(&self) -> Result<()> {
        self.state.cancel_all();
        Ok(())
    }

    async fn did_open(&self, params: DidOpenTextDocumentParams) {
        handlers::did_open::handle(&self.state.documents, params);
    }

    async fn did_change(&self, params: DidChangeTextDocumentParams) {
        handlers::did_change::handle(&self.state.documents, self.state.encoding(), params);
    }

    async fn did_close(&self, params: DidCloseTextDocumentParams) {
        handlers::did_close::handle(&self.state.documents, params);
    }

    async fn did_change_configuration(&self, params: DidChangeConfigurationParams) {
        handlers::did_change_configuration::handle(&self.state, params).await;
    }

    async fn did_change_workspace_folders(&self, params: DidChangeWorkspaceFoldersParams) {
        handlers::did_change_workspace_folders::handle(&self.state, params).await;
    }

    async fn code_action(&self, params: CodeActionParams) -> Result<Option<CodeActionResponse>> {
        handlers::code_action::handle(&self.state.approvals, params)
    }

    async fn execute_command(&self, params: ExecuteCommandParams) -> Result<Option<Value>> {
        handlers::execute_command::handle(&self.state, params).await
    }
}

/// Serves LSP on stdin/stdout until the editor says `exit`, closes stdin, or dies.
pub async fn serve(options: ServeOptions) {
    let ServeOptions {
        layers,
        factory,
        test_faults,
    } = options;
    let initial = layers.resolve().unwrap_or_default();
    let mut builder = LspService::build(|client: Client| Backend {
        state: Arc::new(State {
            client,
            documents: Arc::default(),
            encoding: Arc::default(),
            diagnostics: Arc::default(),
            roots: Mutex::default(),
            layers: Mutex::new(layers.clone()),
            config: Mutex::new(initial.clone()),
            extensions: Mutex::default(),
            factory: factory.clone(),
            agent: Mutex::default(),
            runs: Mutex::default(),
            sessions: Mutex::default(),
            approvals: Arc::default(),
            startup_warnings: Mutex::default(),
            hides_command_errors: Default::default(),
        }),
        test_faults,
    })
    .custom_method(ChatRequest::METHOD, Backend::chat)
    .custom_method(CancelRequest::METHOD, Backend::cancel)
    .custom_method(SessionsRequest::METHOD, Backend::sessions)
    .custom_method(ToolsRequest::METHOD, Backend::tools)
    .custom_method(ContextRequest::METHOD, Backend::context)
    .custom_method(CompactRequest::METHOD, Backend::compact)
    .custom_method(CheckpointsRequest::METHOD, Backend::checkpoints)
    .custom_method(RewindRequest::METHOD, Backend::rewind)
    .custom_method(McpResourcesRequest::METHOD, Backend::mcp_resources)
    .custom_method(McpPromptsRequest::METHOD, Backend::mcp_prompts)
    .custom_method(DiagnosticsNotification::METHOD, Backend::diagnostics);
    if test_faults {
        builder = builder.custom_method("cairn/debug/panic", Backend::debug_panic);
    }
    let (service, socket) = builder.finish();
    let state = service.inner().state.clone();
    let framing = crate::transport::frame(
        tokio::io::stdin(),
        tokio::io::stdout(),
        crate::transport::MAX_FRAME,
    );
    Server::new(framing.server_input, framing.server_output, socket)
        .serve(CatchPanic(service))
        .await;
    state.stop().await;
    // Let the last replies reach the editor.
    let _ = tokio::time::timeout(Duration::from_millis(500), framing.writer).await;
}
