//! The AI/ML tools (category `ai`), one type per file, served in-process as the [`ToolSet`]
//! [`ml_tools`] builds from [`ML_TOOLS`].
//!
//! Local first: text metrics, language detection and keywords need nothing but their
//! arguments and workspace files (`text/`); similarity, clustering, near-duplicates, zero-shot
//! labels and small classifiers use the local sentence embedder cairn already has for tool
//! selection (`embed/`), loaded once from the hf-hub cache at its pinned revision, on a
//! blocking thread. Nothing here reaches the network, except the model-hub tools (`hub/`):
//! they read the Hugging Face Hub through the web guard, and OCR runs Tesseract in a sandbox
//! container.

mod embed;
mod hub;
mod provider;
mod search;
mod text;

use std::sync::{Arc, OnceLock};

use cairn_agent::model::SharedModel;
use cairn_agent::redact::Redact;
use cairn_select::embed::{Embedder, ModelSpec};
use cairn_toolkit::{Entry, ToolSet};
use cairn_workspace::Workspace;

pub use hub::HubSettings;

/// What the AI/ML tools share: the workspace, and the embedder, loaded on first use.
pub struct Ml {
    workspace: Option<Arc<Workspace>>,
    spec: ModelSpec,
    embedder: OnceLock<Result<Arc<Embedder>, String>>,
    /// The agent's model, for the tools that ask it (`provider/`).
    model: SharedModel,
    /// What the provider-backed tools send passes it, as everything bound for the model does.
    redactor: Option<Arc<dyn Redact>>,
    /// The sandbox service OCR runs in; without it `ocr_image` says so.
    sandbox: Option<Arc<cairn_sandbox::Sandbox>>,
    /// The web guard the hub tools send through; without it (web tools off) they refuse.
    guard: Option<Arc<cairn_web::WebGuard>>,
    /// Where the hub tools look (`[ml]`).
    hub: HubSettings,
    /// The semantic index: where it is kept on disk, and the index once loaded (`search/`).
    search: search::SearchState,
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
            search: search::SearchState::default(),
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

/// The AI/ML tools, in the order listed.
pub const ML_TOOLS: &[Entry<Ml>] = &[
    // text (text/)
    Entry::of::<text::edit_distance::EditDistance>(),
    Entry::of::<text::bleu_score::BleuScore>(),
    Entry::of::<text::rouge_score::RougeScore>(),
    Entry::of::<text::detect_language::DetectLanguage>(),
    Entry::of::<text::extract_keywords::ExtractKeywords>(),
    Entry::of::<text::count_tokens::CountTokens>(),
    Entry::of::<text::truncate_tokens::TruncateTokens>(),
    // -- end of text
    // embeddings (embed/)
    Entry::of::<embed::similarity::TextSimilarity>(),
    Entry::of::<embed::cluster::ClusterTexts>(),
    Entry::of::<embed::duplicates::FindNearDuplicates>(),
    Entry::of::<embed::zero_shot::ClassifyZeroShot>(),
    Entry::of::<embed::train::TrainTextClassifier>(),
    Entry::of::<embed::apply::ClassifyTexts>(),
    // -- end of embed
    // semantic search over the workspace (search/)
    Entry::of::<search::semantic_search::SemanticSearch>(),
    Entry::of::<search::similar_code::SimilarCode>(),
    // -- end of search
    // through the agent's model (provider/)
    Entry::of::<provider::summarize_text::SummarizeText>(),
    Entry::of::<provider::translate_text::TranslateText>(),
    Entry::of::<provider::extract_structured::ExtractStructured>(),
    Entry::of::<provider::describe_image::DescribeImage>(),
    // -- end of provider
    // OCR and model hubs (hub/)
    Entry::of::<hub::ocr::OcrImage>(),
    Entry::of::<hub::search::HfSearch>(),
    Entry::of::<hub::model_card::HfModelCard>(),
    Entry::of::<hub::dataset_preview::HfDatasetPreview>(),
    // -- end of hub
];

/// The AI/ML tools over `host`.
pub fn ml_tools(host: Ml) -> ToolSet<Ml> {
    ToolSet::new(host, ML_TOOLS)
}
