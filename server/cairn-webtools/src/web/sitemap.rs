//! `web_sitemap`: the URLs of a sitemap.xml, or the child sitemaps of a sitemap index.

use cairn_toolkit::{CallContext, Category, Effect, Paths, Tool};
use rmcp::model::CallToolResult;

use super::args::UrlArgs;
use super::extract::MAX_SITEMAP_URLS;
use super::report::header_lines;
use super::{WebTools, answer, parse_sitemap};
use cairn_web::Method;

/// The `web_sitemap` tool.
pub struct WebSitemap;

impl Tool for WebSitemap {
    type Host = WebTools;
    type Args = UrlArgs;
    const NAME: &'static str = "web_sitemap";
    const TITLE: &'static str = "Sitemap";
    const DESCRIPTION: &'static str =
        "List the URLs of a sitemap.xml (or the child sitemaps of a sitemap index), at most 500.";
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
            let (kind, urls, more) = parse_sitemap(&String::from_utf8_lossy(&r.body))?;
            let mut out = header_lines(&r);
            out.push_str(&format!("{kind}: {} entries\n", urls.len()));
            for u in urls {
                out.push_str(&format!("{u}\n"));
            }
            if more {
                out.push_str(&format!(
                    "(capped at {MAX_SITEMAP_URLS}; more are listed)\n"
                ));
            }
            Ok(out)
        })
        .await
    }
}
