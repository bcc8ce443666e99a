//! `web_head`: a URL's status, final URL and response headers, without its body.

use cairn_toolkit::{CallContext, Category, Effect, Paths, Tool};
use rmcp::model::CallToolResult;

use super::args::UrlArgs;
use super::report::header_lines;
use super::{WebTools, answer};
use cairn_web::Method;

/// The `web_head` tool.
pub struct WebHead;

impl Tool for WebHead {
    type Host = WebTools;
    type Args = UrlArgs;
    const NAME: &'static str = "web_head";
    const TITLE: &'static str = "Response headers";
    const DESCRIPTION: &'static str = "Show the status, final URL (after redirects) and response headers of a URL, without its body.";
    const CATEGORY: Category = Category::Web;
    const EFFECT: Effect = Effect::Network;
    const AGENT_ONLY: bool = false;
    const READ_ONLY: bool = true;

    fn paths(_: &UrlArgs) -> Paths {
        Paths::none()
    }

    async fn call(web: &WebTools, args: UrlArgs, cx: CallContext) -> CallToolResult {
        answer(&cx, async {
            let r = web.get(&args.url, Method::HEAD).await?;
            let mut out = header_lines(&r);
            for (k, v) in &r.headers {
                out.push_str(&format!("{k}: {}\n", String::from_utf8_lossy(v.as_bytes())));
            }
            Ok(out)
        })
        .await
    }
}
