//! How many tokens a request takes and how many fit, per provider: OpenAI's models count with
//! their own BPE encoding (exact for the text; a few tokens per message for the framing), Claude
//! at about 3.5 characters a token (its tokenizer is not published), anything else by the
//! agent's estimate.

use cairn_agent::model::{Message, ModelRequest};
use tiktoken_rs::CoreBPE;
use tiktoken_rs::tokenizer::Tokenizer;

use crate::kind::ProviderKind;

/// Claude's context window (all current models).
const CLAUDE_WINDOW: u64 = 200_000;
/// Characters per token assumed for Claude, from Anthropic's documentation.
const CLAUDE_CHARS_PER_TOKEN: f64 = 3.5;
/// Tokens of framing per message (role, separators), as OpenAI's cookbook counts them.
const PER_MESSAGE: u64 = 4;

/// The OpenAI encoding of a model, if it is one tiktoken knows.
fn encoding(model: &str) -> Option<&'static CoreBPE> {
    Some(
        match tiktoken_rs::tokenizer::get_tokenizer(&model.to_lowercase())? {
            Tokenizer::O200kBase => tiktoken_rs::o200k_base_singleton(),
            Tokenizer::O200kHarmony => tiktoken_rs::o200k_harmony_singleton(),
            Tokenizer::Cl100kBase => tiktoken_rs::cl100k_base_singleton(),
            Tokenizer::P50kBase => tiktoken_rs::p50k_base_singleton(),
            Tokenizer::P50kEdit => tiktoken_rs::p50k_edit_singleton(),
            Tokenizer::R50kBase | Tokenizer::Gpt2 => tiktoken_rs::r50k_base_singleton(),
        },
    )
}

fn is_claude(model: &str) -> bool {
    model.to_lowercase().contains("claude")
}

/// The window of a model known by name; `None` for a model cairn does not know.
pub(crate) fn known_window(model: &str) -> Option<u64> {
    if is_claude(model) {
        return Some(CLAUDE_WINDOW);
    }
    encoding(model)?;
    Some(tiktoken_rs::model::get_context_size(&model.to_lowercase()) as u64)
}

/// The text of a request, piece by piece, as the tokenizer sees it.
fn pieces(request: &ModelRequest) -> impl Iterator<Item = String> + '_ {
    let messages = request.messages.iter().flat_map(|m| match m {
        Message::User { text, .. } => vec![text.clone()],
        Message::Assistant { text, tool_calls } => std::iter::once(text.clone())
            .chain(
                tool_calls
                    .iter()
                    .map(|c| format!("{}{}", c.name, c.arguments)),
            )
            .collect(),
        Message::Tool { content, .. } => vec![content.clone()],
    });
    let tools = request
        .tools
        .iter()
        .map(|t| format!("{}{}{}", t.name, t.description, t.input_schema));
    std::iter::once(request.system.clone())
        .chain(messages)
        .chain(tools)
}

/// The tokens of `request` for `model` served by `kind`.
pub(crate) fn count(kind: ProviderKind, model: &str, request: &ModelRequest) -> u64 {
    let framing = PER_MESSAGE * (request.messages.len() as u64 + 1);
    if let Some(bpe) = encoding(model) {
        return framing
            + pieces(request)
                .map(|p| bpe.encode_ordinary(&p).len() as u64)
                .sum::<u64>();
    }
    if kind.wire().serves_claude() || is_claude(model) {
        let chars: usize = pieces(request).map(|p| p.chars().count()).sum();
        return framing + (chars as f64 / CLAUDE_CHARS_PER_TOKEN).ceil() as u64;
    }
    cairn_agent::compact::estimate_tokens(request)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(text: &str) -> ModelRequest {
        ModelRequest {
            system: String::new(),
            messages: vec![Message::User {
                text: text.into(),
                images: Vec::new(),
            }],
            tools: Vec::new(),
        }
    }

    #[test]
    fn openai_models_count_exactly_and_know_their_window() {
        // "hello world" is two tokens in o200k_base; framing is 4 per message plus 4.
        assert_eq!(
            count(
                ProviderKind::OpenAiCompatible,
                "gpt-4o",
                &request("hello world")
            ),
            2 + 8
        );
        assert_eq!(known_window("gpt-4o-mini"), Some(128_000));
        assert_eq!(known_window("claude-sonnet-4-5"), Some(200_000));
        assert_eq!(known_window("my-own-model"), None);
        // Claude: 35 characters are 10 tokens.
        assert_eq!(
            count(
                ProviderKind::Anthropic,
                "claude-x",
                &request(&"a".repeat(35))
            ),
            10 + 8
        );
    }
}
