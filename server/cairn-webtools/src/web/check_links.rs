//! `web_check_links`: the status of several URLs, stopping at the rate limit.

use cairn_toolkit::{CallContext, Category, Effect, JsonSchema, Paths, Tool};
use rmcp::model::CallToolResult;
use serde::Deserialize;

use super::data::{MAX_LINKS, status_line};
use super::{WebTools, answer};
use cairn_web::{Method, WebError, WebRequest};

/// The `web_check_links` tool.
pub struct WebCheckLinks;

/// Arguments of `web_check_links`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// The http or https URLs to check (at most 10).
    #[schemars(length(min = 1, max = MAX_LINKS))]
    urls: Vec<String>,
}

impl Tool for WebCheckLinks {
    type Host = WebTools;
    type Args = Args;
    const NAME: &'static str = "web_check_links";
    const TITLE: &'static str = "Check links";
    const DESCRIPTION: &'static str = "Check up to 10 URLs and report for each its status, final URL after redirects, or the error (HEAD, falling back to GET where the server refuses HEAD). Each request counts against the web rate limit (10 a minute by default): when the limit refuses one, checking stops and the rest are listed as not checked.";
    const CATEGORY: Category = Category::Web;
    const EFFECT: Effect = Effect::Network;
    const AGENT_ONLY: bool = false;
    const READ_ONLY: bool = true;

    fn paths(_: &Args) -> Paths {
        Paths::none()
    }

    async fn call(web: &WebTools, args: Args, cx: CallContext) -> CallToolResult {
        answer(&cx, check_links(web, args)).await
    }
}

async fn check_links(web: &WebTools, args: Args) -> Result<String, String> {
    if args.urls.is_empty() {
        return Err("web_check_links needs at least one URL".into());
    }
    if args.urls.len() > MAX_LINKS {
        return Err(format!(
            "web_check_links checks at most {MAX_LINKS} URLs a call; {} were given: split them",
            args.urls.len()
        ));
    }
    let mut out = String::new();
    let mut ok = 0;
    for (i, url) in args.urls.iter().enumerate() {
        match check_one(web, url).await {
            Ok(line) => {
                ok += 1;
                out.push_str(&format!("{}. {url}: {line}\n", i + 1));
            }
            Err(e) if matches!(e.root(), WebError::RateLimited { .. }) => {
                let left = &args.urls[i..];
                out.push_str(&format!(
                    "\nStopped: {e}.\nNot checked ({}): {}\n",
                    left.len(),
                    left.join(", ")
                ));
                break;
            }
            Err(e) => out.push_str(&format!("{}. {url}: error: {e}\n", i + 1)),
        }
    }
    Ok(format!(
        "Checked {ok} of {} URLs (each request counts against the web rate limit)\n\n{out}",
        args.urls.len()
    ))
}

/// Status line for `url`: HEAD, or GET when the server will not answer HEAD properly.
async fn check_one(web: &WebTools, url: &str) -> Result<String, WebError> {
    let head = web.send(WebRequest::new(Method::HEAD, url)).await?;
    // Servers that do not implement HEAD answer 405 or 501, and some 400 or 403; a GET then
    // says what a browser would see.
    let (r, how) = if matches!(head.status.as_u16(), 400 | 403 | 405 | 501) {
        let get = web.send(WebRequest::get(url)).await?;
        (get, " (by GET; HEAD was refused)")
    } else {
        (head, "")
    };
    Ok(status_line(&r, how))
}
