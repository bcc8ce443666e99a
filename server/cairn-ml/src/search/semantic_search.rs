//! `semantic_search`: where in the workspace something is done, found by meaning and by words.

use cairn_toolkit::reply::error;
use cairn_toolkit::{CallContext, Category, Effect, JsonSchema, Paths, Tool};
use rmcp::model::CallToolResult;
use serde::Deserialize;

use super::run::{self, DEFAULT_LIMIT, MAX_LIMIT, Query};
use crate::ml::Ml;

/// Characters of a query; a longer text is a snippet for `similar_code`.
const MAX_QUERY_CHARS: usize = 1_000;

/// The `semantic_search` tool.
pub struct SemanticSearch;

/// Arguments of `semantic_search`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// What to find, in words ("where do we retry failed uploads?") or names.
    query: String,
    /// Only files under this path (`src/net`), or matching this glob (`**/*.py`).
    #[serde(default)]
    path: Option<String>,
    /// Results to show (default 8, at most 50).
    #[serde(default)]
    limit: Option<usize>,
}

impl Tool for SemanticSearch {
    type Host = Ml;
    type Args = Args;
    const NAME: &'static str = "semantic_search";
    const TITLE: &'static str = "Semantic search of the workspace";
    const DESCRIPTION: &'static str = "Find where the workspace's code or text does something described in words (\"where do we retry failed uploads?\"), by local sentence embeddings and keyword scores over an index kept up to date: file, line range, similarity and the lines. Use grep for an exact string.";
    const CATEGORY: Category = Category::Ai;
    const EFFECT: Effect = Effect::Read;
    const AGENT_ONLY: bool = false;
    const NEEDS_WORKSPACE: bool = true;

    /// A walk: files the user may not read are never indexed or shown.
    fn paths(_: &Args) -> Paths {
        Paths::walks()
    }

    async fn call(ml: &Ml, args: Args, cx: CallContext) -> CallToolResult {
        let query = args.query.trim();
        if query.is_empty() {
            return error("`query` is empty: say what to find");
        }
        if query.chars().count() > MAX_QUERY_CHARS {
            return error(format!(
                "`query` is over {MAX_QUERY_CHARS} characters; to find code like a snippet, use similar_code"
            ));
        }
        let limit = args.limit.unwrap_or(DEFAULT_LIMIT);
        if !(1..=MAX_LIMIT).contains(&limit) {
            return error(format!("`limit` must be from 1 to {MAX_LIMIT}"));
        }
        let q = Query {
            text: query.to_owned(),
            filter: args.path,
            limit,
            exclude_snippet: false,
        };
        match run::search(ml, q, &cx).await {
            Ok(outcome) => run::render(&format!("\"{query}\""), outcome),
            Err(e) => error(e),
        }
    }
}
