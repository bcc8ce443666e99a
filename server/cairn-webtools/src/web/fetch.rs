//! `web_fetch`: a page as Markdown (other text as it is), in parts.

use cairn_toolkit::{CallContext, Category, Effect, Paths, Tool};
use rmcp::model::CallToolResult;

use super::args::PageArgs;
use super::report::{content_type, fetch_report, is_html, is_text};
use super::{DEFAULT_MAX_LENGTH, WebTools, answer, html_to_markdown};
use cairn_web::Method;

/// The `web_fetch` tool.
pub struct WebFetch;

impl Tool for WebFetch {
    type Host = WebTools;
    type Args = PageArgs;
    const NAME: &'static str = "web_fetch";
    const TITLE: &'static str = "Fetch a web page";
    const DESCRIPTION: &'static str = "Fetch a web page and return its content as Markdown (HTML is converted; other text as-is), with the final URL and status. Long pages come in parts: call again with the start_index the result names.";
    const CATEGORY: Category = Category::Web;
    const EFFECT: Effect = Effect::Network;
    const AGENT_ONLY: bool = false;
    const READ_ONLY: bool = true;

    fn paths(_: &PageArgs) -> Paths {
        Paths::none()
    }

    async fn call(web: &WebTools, args: PageArgs, cx: CallContext) -> CallToolResult {
        answer(&cx, fetch(web, args, false)).await
    }
}

/// The page at `args.url` as the model reads it: converted to Markdown, or `raw` as it came.
pub(super) async fn fetch(web: &WebTools, args: PageArgs, raw: bool) -> Result<String, String> {
    let max = args.max_length.unwrap_or(DEFAULT_MAX_LENGTH).max(1);
    let r = web.get(&args.url, Method::GET).await?;
    let ct = content_type(&r);
    let body = if raw {
        String::from_utf8_lossy(&r.body).into_owned()
    } else if is_html(&ct, &r.body) {
        html_to_markdown(&String::from_utf8_lossy(&r.body))
    } else if is_text(&ct) {
        String::from_utf8_lossy(&r.body).into_owned()
    } else {
        return Err(format!(
            "{} is not text ({ct}, {} bytes); web_fetch_raw shows it as text anyway",
            r.final_url,
            r.body.len()
        ));
    };
    Ok(fetch_report(&r, &ct, &body, args.start_index, max))
}
