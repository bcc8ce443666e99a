//! `web_outline`: the heading outline of a page, with each heading's anchor.

use cairn_toolkit::{CallContext, Category, Effect, Paths, Tool};
use rmcp::model::CallToolResult;

use super::args::UrlArgs;
use super::content::{MAX_HEADINGS, extract_outline};
use super::report::header_lines;
use super::{WebTools, answer};

/// The `web_outline` tool.
pub struct WebOutline;

impl Tool for WebOutline {
    type Host = WebTools;
    type Args = UrlArgs;
    const NAME: &'static str = "web_outline";
    const TITLE: &'static str = "Page outline";
    const DESCRIPTION: &'static str = "Show the heading outline of a web page (h1 to h6, indented by level) with a link to each heading's anchor when it has an id; use it to see how a long page is organised before reading a part.";
    const CATEGORY: Category = Category::Web;
    const EFFECT: Effect = Effect::Network;
    const AGENT_ONLY: bool = false;
    const READ_ONLY: bool = true;

    fn paths(_: &UrlArgs) -> Paths {
        Paths::none()
    }

    async fn call(web: &WebTools, args: UrlArgs, cx: CallContext) -> CallToolResult {
        answer(&cx, outline(web, args)).await
    }
}

async fn outline(web: &WebTools, args: UrlArgs) -> Result<String, String> {
    let (r, html) = web.get_html(&args.url).await?;
    let headings = extract_outline(&html);
    let mut out = header_lines(&r);
    if headings.is_empty() {
        out.push_str("The page has no headings (h1 to h6).\n");
        return Ok(out);
    }
    out.push_str(&format!("{} headings\n\n", headings.len()));
    let mut page_url = r.final_url.clone();
    page_url.set_fragment(None);
    for h in headings.iter().take(MAX_HEADINGS) {
        let indent = "  ".repeat(h.level.saturating_sub(1));
        let text = if h.text.is_empty() {
            "(empty)"
        } else {
            &h.text
        };
        out.push_str(&format!("{indent}- h{} {text}", h.level));
        if let Some(id) = &h.id {
            let mut anchor = page_url.clone();
            anchor.set_fragment(Some(id));
            out.push_str(&format!(" — {anchor}"));
        }
        out.push('\n');
    }
    if headings.len() > MAX_HEADINGS {
        out.push_str(&format!("(capped at {MAX_HEADINGS} headings)\n"));
    }
    Ok(out)
}
