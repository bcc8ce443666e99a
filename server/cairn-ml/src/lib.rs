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
mod ml;
mod provider;
mod search;
mod text;

use cairn_toolkit::{Entry, ToolSet};

pub use hub::settings::HubSettings;
pub use ml::Ml;

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
