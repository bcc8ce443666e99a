//! `count_tokens`: how many tokens a text or file is for a named model's tokenizer.

use cairn_toolkit::reply::{error, text};
use cairn_toolkit::{CallContext, Category, Effect, JsonSchema, Paths, Tool};
use rmcp::model::CallToolResult;
use serde::Deserialize;

use super::{source, tokenizer};
use crate::ml::Ml;

/// The `count_tokens` tool.
pub struct CountTokens;

/// Arguments of `count_tokens`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// The text to count, or give `path`.
    text: Option<String>,
    /// A workspace file whose text to count.
    path: Option<String>,
    /// Whose tokenizer: "local" (the local embedding model, the default), a Hugging Face repo id whose tokenizer.json is in the local cache, an OpenAI model name such as "gpt-4o" or "gpt-4" (exact), or a Claude model name (an approximate count).
    model: Option<String>,
}

impl Tool for CountTokens {
    type Host = Ml;
    type Args = Args;
    const NAME: &'static str = "count_tokens";
    const TITLE: &'static str = "Count tokens";
    const DESCRIPTION: &'static str = "Count the tokens of a text or workspace file for a model's tokenizer: the local embedding model, a Hugging Face tokenizer in the local cache, OpenAI models (exact), or Claude (approximate).";
    const CATEGORY: Category = Category::Ai;
    const EFFECT: Effect = Effect::Read;
    const AGENT_ONLY: bool = false;

    fn paths(args: &Args) -> Paths {
        Paths::none().and_read_opt(args.path.as_deref())
    }

    async fn call(ml: &Ml, args: Args, _: CallContext) -> CallToolResult {
        let input = match source::load(ml, args.text, args.path, "text", "path").await {
            Ok(i) => i,
            Err(e) => return error(e),
        };
        let counter = match tokenizer::resolve(ml, args.model).await {
            Ok(c) => c,
            Err(e) => return error(e),
        };
        let notes = source::notes([&input]);
        let counted = tokio::task::spawn_blocking(move || {
            let n = counter.count(&input.text)?;
            let specials = counter.specials(&input.text)?;
            let mut out = format!(
                "{n} tokens for {}\n({} characters, {} words)",
                counter.label(),
                input.text.chars().count(),
                input.text.split_whitespace().count()
            );
            if let Some(s) = specials.filter(|&s| s > 0) {
                out.push_str(&format!(
                    "\nThe model adds {s} special tokens around one input: {} in all.",
                    n + s
                ));
            }
            Ok::<_, String>(out)
        })
        .await;
        match counted {
            Ok(Ok(t)) => text(t + &notes),
            Ok(Err(e)) => error(e),
            Err(e) => error(format!("count_tokens failed: {e}")),
        }
    }
}
