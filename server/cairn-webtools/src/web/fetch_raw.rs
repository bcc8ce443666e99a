//! `web_fetch_raw`: a URL's body as text, unconverted, in parts.

use cairn_toolkit::{CallContext, Category, Effect, Paths, Tool};
use rmcp::model::CallToolResult;

use super::args::PageArgs;
use super::fetch::fetch;
use super::{WebTools, answer};

/// The `web_fetch_raw` tool.
pub struct WebFetchRaw;

impl Tool for WebFetchRaw {
    type Host = WebTools;
    type Args = PageArgs;
    const NAME: &'static str = "web_fetch_raw";
    const TITLE: &'static str = "Fetch a URL as raw text";
    const DESCRIPTION: &'static str = "Fetch a URL and return its body as text, unconverted (HTML source, JSON, plain text), in parts like web_fetch.";
    const CATEGORY: Category = Category::Web;
    const EFFECT: Effect = Effect::Network;
    const AGENT_ONLY: bool = false;
    const READ_ONLY: bool = true;

    fn paths(_: &PageArgs) -> Paths {
        Paths::none()
    }

    async fn call(web: &WebTools, args: PageArgs, cx: CallContext) -> CallToolResult {
        answer(&cx, fetch(web, args, true)).await
    }
}
