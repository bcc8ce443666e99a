//! `web_links`: the links of a page, absolute and deduplicated.

use cairn_toolkit::{CallContext, Category, Effect, JsonSchema, Paths, Tool};
use rmcp::model::CallToolResult;
use serde::Deserialize;

use super::report::header_lines;
use super::{WebTools, answer, extract_links};
use cairn_web::Method;

/// The `web_links` tool.
pub struct WebLinks;

/// Arguments of `web_links`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// An http or https URL.
    url: String,
    /// Only links to the page's own host (default false).
    #[serde(default)]
    same_host_only: bool,
}

impl Tool for WebLinks {
    type Host = WebTools;
    type Args = Args;
    const NAME: &'static str = "web_links";
    const TITLE: &'static str = "Page links";
    const DESCRIPTION: &'static str =
        "List the links of a web page as absolute URLs with their text, deduplicated.";
    const CATEGORY: Category = Category::Web;
    const EFFECT: Effect = Effect::Network;
    const AGENT_ONLY: bool = false;
    const READ_ONLY: bool = true;

    fn paths(_: &Args) -> Paths {
        Paths::none()
    }

    async fn call(web: &WebTools, args: Args, cx: CallContext) -> CallToolResult {
        answer(&cx, async {
            let r = web.get(&args.url, Method::GET).await?;
            let links = extract_links(
                &String::from_utf8_lossy(&r.body),
                &r.final_url,
                args.same_host_only,
            );
            let mut out = header_lines(&r);
            out.push_str(&format!("{} links\n", links.len()));
            for (url, label) in links {
                if label.is_empty() {
                    out.push_str(&format!("- {url}\n"));
                } else {
                    out.push_str(&format!("- [{label}]({url})\n"));
                }
            }
            Ok(out)
        })
        .await
    }
}
