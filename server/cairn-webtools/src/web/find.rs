//! `web_find`: a piece of text in a page, each match with the text around it and its position.

use cairn_toolkit::{CallContext, Category, Effect, JsonSchema, Paths, Tool};
use rmcp::model::CallToolResult;
use serde::Deserialize;

use super::content::{
    DEFAULT_FIND_CONTEXT, DEFAULT_FIND_MATCHES, MAX_FIND_CONTEXT, MAX_FIND_MATCHES, find_text,
};
use super::report::{content_type, header_lines, is_html, is_text};
use super::{WebTools, answer, html_to_markdown};
use cairn_web::Method;

/// The `web_find` tool.
pub struct WebFind;

/// Arguments of `web_find`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// An http or https URL.
    url: String,
    /// The text to look for (case is ignored).
    #[schemars(length(min = 1))]
    text: String,
    /// Characters shown before and after each match (default 80).
    #[schemars(range(max = MAX_FIND_CONTEXT))]
    context: Option<usize>,
    /// At most this many matches (default 20).
    #[schemars(range(min = 1, max = MAX_FIND_MATCHES))]
    max_matches: Option<usize>,
}

impl Tool for WebFind {
    type Host = WebTools;
    type Args = Args;
    const NAME: &'static str = "web_find";
    const TITLE: &'static str = "Find text in a page";
    const DESCRIPTION: &'static str = "Find a piece of text in a web page (case-insensitive, plain text, not a regular expression) and show each match with the text around it and its position, which web_fetch's start_index accepts to read on from there.";
    const CATEGORY: Category = Category::Web;
    const EFFECT: Effect = Effect::Network;
    const AGENT_ONLY: bool = false;
    const READ_ONLY: bool = true;

    fn paths(_: &Args) -> Paths {
        Paths::none()
    }

    async fn call(web: &WebTools, args: Args, cx: CallContext) -> CallToolResult {
        answer(&cx, find(web, args)).await
    }
}

async fn find(web: &WebTools, args: Args) -> Result<String, String> {
    if args.text.trim().is_empty() {
        return Err("web_find needs non-empty text to look for".into());
    }
    let context = args
        .context
        .unwrap_or(DEFAULT_FIND_CONTEXT)
        .min(MAX_FIND_CONTEXT);
    let max = args
        .max_matches
        .unwrap_or(DEFAULT_FIND_MATCHES)
        .clamp(1, MAX_FIND_MATCHES);
    let r = web.get(&args.url, Method::GET).await?;
    let ct = content_type(&r);
    let body = String::from_utf8_lossy(&r.body);
    // The same text web_fetch shows, so a match's position is a start_index there.
    let content = if is_html(&ct, &r.body) {
        html_to_markdown(&body)
    } else if is_text(&ct) {
        body.into_owned()
    } else {
        return Err(format!("{} is not text ({ct})", r.final_url));
    };
    let (found, total) = find_text(&content, &args.text, context, max);
    let mut out = header_lines(&r);
    if total == 0 {
        out.push_str(&format!(
            "{:?} does not occur in the page's text.\n",
            args.text
        ));
        return Ok(out);
    }
    out.push_str(&format!("{total} matches for {:?}", args.text));
    if total > found.len() {
        out.push_str(&format!(" (the first {} shown)", found.len()));
    }
    out.push_str("; positions are web_fetch start_index values\n");
    for (i, m) in found.iter().enumerate() {
        out.push_str(&format!(
            "\n{}. at {}: …{}**{}**{}…\n",
            i + 1,
            m.position,
            m.before,
            m.matched,
            m.after
        ));
    }
    Ok(out)
}
