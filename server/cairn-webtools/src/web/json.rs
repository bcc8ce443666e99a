//! `web_json`: a JSON document pretty-printed, or the value at a JSON Pointer in it, in parts.

use cairn_toolkit::{CallContext, Category, Effect, JsonSchema, Paths, Tool};
use rmcp::model::CallToolResult;
use serde::Deserialize;
use serde_json::Value;

use super::data::select;
use super::report::{content_type, fetch_report};
use super::{DEFAULT_MAX_LENGTH, WebTools, answer};
use cairn_web::Method;

/// The `web_json` tool.
pub struct WebJson;

/// Arguments of `web_json`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// An http or https URL.
    url: String,
    /// A JSON Pointer (RFC 6901): empty for the whole document, else /key/index/... (~1 stands for / and ~0 for ~ inside a key).
    pointer: Option<String>,
    /// The character to start from (default 0); use the value a truncated result names.
    #[serde(default)]
    start_index: usize,
    /// At most this many characters (default 20000).
    #[schemars(range(min = 1))]
    max_length: Option<usize>,
}

impl Tool for WebJson {
    type Host = WebTools;
    type Args = Args;
    const NAME: &'static str = "web_json";
    const TITLE: &'static str = "JSON document";
    const DESCRIPTION: &'static str = "Fetch a JSON document (an API response, a package index) and show it pretty-printed, or only the value at a JSON Pointer such as /items/0/name; long output comes in parts (call again with the start_index the result names).";
    const CATEGORY: Category = Category::Web;
    const EFFECT: Effect = Effect::Network;
    const AGENT_ONLY: bool = false;
    const READ_ONLY: bool = true;

    fn paths(_: &Args) -> Paths {
        Paths::none()
    }

    async fn call(web: &WebTools, args: Args, cx: CallContext) -> CallToolResult {
        answer(&cx, json(web, args)).await
    }
}

async fn json(web: &WebTools, args: Args) -> Result<String, String> {
    let max = args.max_length.unwrap_or(DEFAULT_MAX_LENGTH).max(1);
    let r = web.get(&args.url, Method::GET).await?;
    let ct = content_type(&r);
    if !r.status.is_success() {
        let excerpt: String = String::from_utf8_lossy(&r.body).chars().take(300).collect();
        return Err(format!(
            "{} answered {}, not a JSON document: {excerpt}",
            r.final_url, r.status
        ));
    }
    if r.truncated {
        return Err(format!(
            "{} is longer than the web guard's size cap ({} bytes, web.max_bytes), so the JSON cannot be parsed; look for a smaller resource (paging or filter parameters of the API)",
            r.final_url,
            r.body.len()
        ));
    }
    let value: Value = serde_json::from_slice(&r.body).map_err(|e| {
        let what = if ct.is_empty() {
            "no content type".to_owned()
        } else {
            ct.clone()
        };
        format!("{} is not JSON ({what}): {e}", r.final_url)
    })?;
    let pointer = args.pointer.as_deref().unwrap_or("");
    let selected = select(&value, pointer)?;
    let pretty = serde_json::to_string_pretty(selected).unwrap_or_else(|_| selected.to_string());
    let mut report = fetch_report(&r, &ct, &pretty, args.start_index, max);
    if !pointer.is_empty() {
        // Say which value this is, right after the response's own lines.
        if let Some(at) = report.find("\n\n") {
            report.insert_str(at + 1, &format!("Pointer: {pointer}\n"));
        }
    }
    Ok(report)
}
