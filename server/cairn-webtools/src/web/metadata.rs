//! `web_metadata`: a page's title, description, canonical URL, OpenGraph and Twitter tags.

use cairn_toolkit::{CallContext, Category, Effect, Paths, Tool};
use rmcp::model::CallToolResult;

use super::args::UrlArgs;
use super::report::header_lines;
use super::{WebTools, answer, extract_metadata};
use cairn_web::Method;

/// The `web_metadata` tool.
pub struct WebMetadata;

impl Tool for WebMetadata {
    type Host = WebTools;
    type Args = UrlArgs;
    const NAME: &'static str = "web_metadata";
    const TITLE: &'static str = "Page metadata";
    const DESCRIPTION: &'static str = "Show a web page's metadata: title, description, canonical URL, OpenGraph and Twitter tags, language.";
    const CATEGORY: Category = Category::Web;
    const EFFECT: Effect = Effect::Network;
    const AGENT_ONLY: bool = false;
    const READ_ONLY: bool = true;

    fn paths(_: &UrlArgs) -> Paths {
        Paths::none()
    }

    async fn call(web: &WebTools, args: UrlArgs, cx: CallContext) -> CallToolResult {
        answer(&cx, async {
            let r = web.get(&args.url, Method::GET).await?;
            let mut out = header_lines(&r);
            for (k, v) in extract_metadata(&String::from_utf8_lossy(&r.body), &r.final_url) {
                out.push_str(&format!("{k}: {v}\n"));
            }
            Ok(out)
        })
        .await
    }
}
