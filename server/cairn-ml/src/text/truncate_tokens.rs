//! `truncate_tokens`: a text or file cut to at most so many tokens of a named model's
//! tokenizer, at a token boundary.

use cairn_toolkit::reply::{error, text};
use cairn_toolkit::{CallContext, Category, Effect, JsonSchema, Paths, Tool};
use rmcp::model::CallToolResult;
use serde::Deserialize;

use super::{source, tokenizer};
use crate::ml::Ml;

/// The largest `max_tokens`: the kept text is the reply.
const MAX_TOKENS: usize = 100_000;

/// The `truncate_tokens` tool.
pub struct TruncateTokens;

/// Arguments of `truncate_tokens`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// The text to cut, or give `path`.
    text: Option<String>,
    /// A workspace file whose text to cut (the file is not changed).
    path: Option<String>,
    /// Keep at most this many tokens (special tokens not counted), 1 to 100000.
    max_tokens: usize,
    /// Whose tokenizer: "local" (the local embedding model, the default), a Hugging Face repo id whose tokenizer.json is in the local cache, an OpenAI model name such as "gpt-4o" (exact), or a Claude model name (approximate).
    model: Option<String>,
}

impl Tool for TruncateTokens {
    type Host = Ml;
    type Args = Args;
    const NAME: &'static str = "truncate_tokens";
    const TITLE: &'static str = "Truncate to tokens";
    const DESCRIPTION: &'static str = "Cut a text or workspace file's text to at most N tokens of a model's tokenizer (local embedding model, cached Hugging Face tokenizer, OpenAI exact, Claude approximate), returning the kept prefix.";
    const CATEGORY: Category = Category::Ai;
    const EFFECT: Effect = Effect::Read;
    const AGENT_ONLY: bool = false;

    fn paths(args: &Args) -> Paths {
        Paths::none().and_read_opt(args.path.as_deref())
    }

    async fn call(ml: &Ml, args: Args, _: CallContext) -> CallToolResult {
        if args.max_tokens == 0 || args.max_tokens > MAX_TOKENS {
            return error(format!(
                "max_tokens must be 1 to {MAX_TOKENS} (got {})",
                args.max_tokens
            ));
        }
        let input = match source::load(ml, args.text, args.path, "text", "path").await {
            Ok(i) => i,
            Err(e) => return error(e),
        };
        let counter = match tokenizer::resolve(ml, args.model).await {
            Ok(c) => c,
            Err(e) => return error(e),
        };
        let max = args.max_tokens;
        let notes = source::notes([&input]);
        let cut = tokio::task::spawn_blocking(move || {
            let total = counter.count(&input.text)?;
            if total <= max {
                return Ok(format!(
                    "The text has {total} tokens for {}, within {max}: nothing to cut.",
                    counter.label()
                ));
            }
            let kept = counter.truncate(&input.text, max)?;
            let n = counter.count(&kept)?;
            Ok::<_, String>(format!(
                "Kept {n} of {total} tokens for {} ({} of {} characters). The kept text:\n\n{kept}",
                counter.label(),
                kept.chars().count(),
                input.text.chars().count()
            ))
        })
        .await;
        match cut {
            Ok(Ok(t)) => text(t + &notes),
            Ok(Err(e)) => error(e),
            Err(e) => error(format!("truncate_tokens failed: {e}")),
        }
    }
}
