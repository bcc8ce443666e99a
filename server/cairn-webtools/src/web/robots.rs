//! `web_robots`: a site's robots.txt, and whether a URL's path may be crawled by user-agent `*`.

use cairn_toolkit::{CallContext, Category, Effect, Paths, Tool};
use rmcp::model::CallToolResult;

use super::args::UrlArgs;
use super::report::header_lines;
use super::{DEFAULT_MAX_LENGTH, WebTools, answer, page, robots_allowed};
use cairn_web::Method;

/// The `web_robots` tool.
pub struct WebRobots;

impl Tool for WebRobots {
    type Host = WebTools;
    type Args = UrlArgs;
    const NAME: &'static str = "web_robots";
    const TITLE: &'static str = "robots.txt check";
    const DESCRIPTION: &'static str =
        "Fetch a site's robots.txt and say whether the URL's path may be crawled by user-agent *.";
    const CATEGORY: Category = Category::Web;
    const EFFECT: Effect = Effect::Network;
    const AGENT_ONLY: bool = false;
    const READ_ONLY: bool = true;

    fn paths(_: &UrlArgs) -> Paths {
        Paths::none()
    }

    async fn call(web: &WebTools, args: UrlArgs, cx: CallContext) -> CallToolResult {
        answer(&cx, robots(web, args)).await
    }
}

async fn robots(web: &WebTools, args: UrlArgs) -> Result<String, String> {
    let target = web.guard.check_url(&args.url).map_err(|e| e.to_string())?;
    let mut robots = target.clone();
    robots.set_path("/robots.txt");
    robots.set_query(None);
    robots.set_fragment(None);
    let r = web.get(robots.as_str(), Method::GET).await?;
    let path = match target.query() {
        Some(q) => format!("{}?{q}", target.path()),
        None => target.path().to_owned(),
    };
    let mut out = header_lines(&r);
    if r.status.as_u16() >= 400 && r.status.as_u16() < 500 {
        out.push_str(&format!(
            "no robots.txt ({}): {path} is allowed for user-agent *\n",
            r.status
        ));
        return Ok(out);
    }
    let body = String::from_utf8_lossy(&r.body);
    let verdict = if robots_allowed(&body, &path) {
        "allowed"
    } else {
        "disallowed"
    };
    out.push_str(&format!(
        "{path} is {verdict} for user-agent *\n\n--- robots.txt ---\n"
    ));
    let (page, next) = page(&body, 0, DEFAULT_MAX_LENGTH);
    out.push_str(page);
    if next.is_some() {
        out.push_str("\n[robots.txt truncated]\n");
    }
    Ok(out)
}
