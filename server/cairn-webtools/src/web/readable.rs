//! `web_readable`: only the main text of an article or documentation page, in parts.

use cairn_toolkit::{CallContext, Category, Effect, Paths, Tool};
use rmcp::model::CallToolResult;

use super::args::PageArgs;
use super::content::readable_markdown;
use super::report::{content_type, fetch_report, is_html, is_text};
use super::{DEFAULT_MAX_LENGTH, WebTools, answer};
use cairn_web::Method;

/// The `web_readable` tool.
pub struct WebReadable;

impl Tool for WebReadable {
    type Host = WebTools;
    type Args = PageArgs;
    const NAME: &'static str = "web_readable";
    const TITLE: &'static str = "Readable text of a page";
    const DESCRIPTION: &'static str = "Fetch an article or documentation page and return only its main text as Markdown: navigation, headers, footers, sidebars and scripts are dropped, and the article, main element or largest block of text is kept. Prefer it to web_fetch for reading; long texts come in parts (call again with the start_index the result names).";
    const CATEGORY: Category = Category::Web;
    const EFFECT: Effect = Effect::Network;
    const AGENT_ONLY: bool = false;
    const READ_ONLY: bool = true;

    fn paths(_: &PageArgs) -> Paths {
        Paths::none()
    }

    async fn call(web: &WebTools, args: PageArgs, cx: CallContext) -> CallToolResult {
        answer(&cx, readable(web, args)).await
    }
}

async fn readable(web: &WebTools, args: PageArgs) -> Result<String, String> {
    let max = args.max_length.unwrap_or(DEFAULT_MAX_LENGTH).max(1);
    let r = web.get(&args.url, Method::GET).await?;
    let ct = content_type(&r);
    let body = String::from_utf8_lossy(&r.body);
    if !is_html(&ct, &r.body) {
        if is_text(&ct) {
            // Already text: nothing to strip.
            return Ok(fetch_report(&r, &ct, &body, args.start_index, max));
        }
        return Err(format!("{} is not a text page ({ct})", r.final_url));
    }
    let article = readable_markdown(&body);
    let mut content = String::new();
    if let Some(title) = &article.title {
        content.push_str(&format!("Title: {title}\n"));
    }
    content.push_str(&format!("Taken from: {}\n\n", article.source));
    content.push_str(&article.markdown);
    Ok(fetch_report(&r, &ct, &content, args.start_index, max))
}
