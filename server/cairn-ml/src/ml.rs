//! [`Ml`], what every AI/ML tool shares: the workspace, the embedder (loaded on first use), the
//! agent's model, the redactor, the sandbox, the web guard, the hub settings and the semantic
//! index.
//!
//! Its own file, apart from `lib.rs`, so that the tools can import it without importing the
//! list of tools, which imports them.

use std::sync::{Arc, OnceLock};

use cairn_agent::model::SharedModel;
use cairn_agent::redact::Redact;
use cairn_select::embed::{Embedder, ModelSpec};
use cairn_workspace::Workspace;

use crate::hub::settings::HubSettings;
use crate::search::SearchState;

/// What the AI/ML tools share: the workspace, and the embedder, loaded on first use.
pub struct Ml {
    pub(crate) workspace: Option<Arc<Workspace>>,
    pub(crate) spec: ModelSpec,
    pub(crate) embedder: OnceLock<Result<Arc<Embedder>, String>>,
    /// The agent's model, for the tools that ask it (`provider/`).
    pub(crate) model: SharedModel,
    /// What the provider-backed tools send passes it, as everything bound for the model does.
    pub(crate) redactor: Option<Arc<dyn Redact>>,
    /// The sandbox service OCR runs in; without it `ocr_image` says so.
    pub(crate) sandbox: Option<Arc<cairn_sandbox::Sandbox>>,
    /// The web guard the hub tools send through; without it (web tools off) they refuse.
    pub(crate) guard: Option<Arc<cairn_web::WebGuard>>,
    /// Where the hub tools look (`[ml]`).
    pub(crate) hub: HubSettings,
    /// The semantic index: where it is kept on disk, and the index once loaded (`search/`).
    pub(crate) search: SearchState,
}

impl std::fmt::Debug for Ml {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Ml").finish_non_exhaustive()
    }
}

impl cairn_toolkit::Host for Ml {
    fn workspace(&self) -> Option<&Arc<Workspace>> {
        self.workspace.as_ref()
    }
}

impl Ml {
    /// The tools' host: `spec` names the embedding model (`[selection] model` and `revision`).
    pub fn new(workspace: Option<Arc<Workspace>>, spec: ModelSpec) -> Ml {
        Ml {
            workspace,
            spec,
            embedder: OnceLock::new(),
            model: SharedModel::default(),
            redactor: None,
            sandbox: None,
            guard: None,
            hub: HubSettings::default(),
            search: SearchState::default(),
        }
    }

    /// The agent's redactor, applied to what the provider-backed tools send the model.
    pub fn with_redactor(mut self, redactor: Arc<dyn Redact>) -> Ml {
        self.redactor = Some(redactor);
        self
    }

    /// The sandbox service `ocr_image` runs Tesseract in.
    pub fn with_sandbox(mut self, sandbox: Arc<cairn_sandbox::Sandbox>) -> Ml {
        self.sandbox = Some(sandbox);
        self
    }

    /// The web guard the hub tools send through (`None`: the web tools are off).
    pub fn with_guard(mut self, guard: Option<Arc<cairn_web::WebGuard>>) -> Ml {
        self.guard = guard;
        self
    }

    /// Where the hub tools look, and the vault secret for the hub's token.
    pub fn with_hub(mut self, hub: HubSettings) -> Ml {
        self.hub = hub;
        self
    }

    /// The model the provider-backed tools ask (the agent's: the front sets it).
    pub fn with_model(mut self, model: SharedModel) -> Ml {
        self.model = model;
        self
    }

    /// Where the semantic index is kept: a directory under the user's cache (one subdirectory
    /// per workspace is made in it), never inside the workspace. Without it the index lives
    /// in memory only.
    pub fn with_index_dir(mut self, dir: std::path::PathBuf) -> Ml {
        self.search.dir = Some(dir);
        self
    }

    /// The embedder, loaded the first time (on a blocking thread: it reads and maps the
    /// model's files); a model that cannot be loaded is an error that says why and how to
    /// get it, every time it is asked for.
    pub(crate) async fn embedder(&self) -> Result<Arc<Embedder>, String> {
        if let Some(loaded) = self.embedder.get() {
            return loaded.clone();
        }
        let spec = self.spec.clone();
        let loaded = tokio::task::spawn_blocking(move || Embedder::load(spec))
            .await
            .map_err(|e| format!("loading the embedding model: {e}"))
            .and_then(|r| {
                r.map(Arc::new).map_err(|e| {
                    format!("the embedding model is not available: {e} (`cairn doctor` says how to get it)")
                })
            });
        self.embedder.get_or_init(|| loaded).clone()
    }
}
