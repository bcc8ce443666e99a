//! `web_feed`: the items of an RSS or Atom feed.

use cairn_toolkit::{CallContext, Category, Effect, Paths, Tool};
use rmcp::model::CallToolResult;

use super::args::UrlArgs;
use super::extract::MAX_FEED_ITEMS;
use super::report::header_lines;
use super::{WebTools, answer, parse_feed};
use cairn_web::Method;

/// The `web_feed` tool.
pub struct WebFeed;

impl Tool for WebFeed {
    type Host = WebTools;
    type Args = UrlArgs;
    const NAME: &'static str = "web_feed";
    const TITLE: &'static str = "Feed items";
    const DESCRIPTION: &'static str =
        "List the items of an RSS or Atom feed (title, link, date), at most 50.";
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
            let (title, items, more) = parse_feed(&String::from_utf8_lossy(&r.body))?;
            let mut out = header_lines(&r);
            if !title.is_empty() {
                out.push_str(&format!("Feed: {title}\n"));
            }
            out.push_str(&format!("{} items\n", items.len()));
            for it in items {
                out.push_str(&format!("- {}", it.title));
                if !it.date.is_empty() {
                    out.push_str(&format!(" ({})", it.date));
                }
                if !it.link.is_empty() {
                    out.push_str(&format!("\n  {}", it.link));
                }
                out.push('\n');
            }
            if more {
                out.push_str(&format!("(capped at {MAX_FEED_ITEMS} items)\n"));
            }
            Ok(out)
        })
        .await
    }
}
