//! `similar_code`: the places in the workspace most like a given snippet (copies, near-copies,
//! the same idea written again), the snippet's own place left out.

use cairn_toolkit::reply::error;
use cairn_toolkit::{CallContext, Category, Effect, JsonSchema, Paths, Tool};
use rmcp::model::CallToolResult;
use serde::Deserialize;

use super::run::{self, DEFAULT_LIMIT, MAX_LIMIT, Query};
use crate::ml::Ml;

/// Characters of a snippet: more than the embedder reads (256 tokens), less than a file.
const MAX_SNIPPET_CHARS: usize = 8_000;

/// The `similar_code` tool.
pub struct SimilarCode;

/// Arguments of `similar_code`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// The code (or text) to find the like of; where it stands itself is left out.
    snippet: String,
    /// Only files under this path (`src`), or matching this glob (`**/*.rs`).
    #[serde(default)]
    path: Option<String>,
    /// Results to show (default 8, at most 50).
    #[serde(default)]
    limit: Option<usize>,
}

impl Tool for SimilarCode {
    type Host = Ml;
    type Args = Args;
    const NAME: &'static str = "similar_code";
    const TITLE: &'static str = "Find similar code";
    const DESCRIPTION: &'static str = "Find the places in the workspace most similar to a code snippet (copies, near-copies, the same logic written again), by local embeddings and shared identifiers; the snippet's own place is left out. Use it before refactoring duplicated code.";
    const CATEGORY: Category = Category::Ai;
    const EFFECT: Effect = Effect::Read;
    const AGENT_ONLY: bool = false;
    const NEEDS_WORKSPACE: bool = true;

    /// A walk: files the user may not read are never indexed or shown.
    fn paths(_: &Args) -> Paths {
        Paths::walks()
    }

    async fn call(ml: &Ml, args: Args, cx: CallContext) -> CallToolResult {
        if args.snippet.trim().is_empty() {
            return error("`snippet` is empty: give the code to find the like of");
        }
        if args.snippet.chars().count() > MAX_SNIPPET_CHARS {
            return error(format!(
                "`snippet` is over {MAX_SNIPPET_CHARS} characters; give one function or block"
            ));
        }
        let limit = args.limit.unwrap_or(DEFAULT_LIMIT);
        if !(1..=MAX_LIMIT).contains(&limit) {
            return error(format!("`limit` must be from 1 to {MAX_LIMIT}"));
        }
        let q = Query {
            text: args.snippet,
            filter: args.path,
            limit,
            exclude_snippet: true,
        };
        match run::search(ml, q, &cx).await {
            Ok(outcome) => run::render("Code like the snippet", outcome),
            Err(e) => error(e),
        }
    }
}
