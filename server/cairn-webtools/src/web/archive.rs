//! `web_archive`: the Wayback Machine snapshot of a URL closest to a date.

use cairn_toolkit::{CallContext, Category, Effect, JsonSchema, Paths, Tool};
use rmcp::model::CallToolResult;
use serde::Deserialize;
use serde_json::Value;
use url::Url;

use super::data::readable_timestamp;
use super::{WebTools, answer};
use cairn_web::Method;

/// The `web_archive` tool.
pub struct WebArchive;

/// Arguments of `web_archive`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// An http or https URL.
    url: String,
    /// The wanted date as YYYYMMDDhhmmss or a prefix of it (2019, 20190315); default the latest snapshot.
    #[schemars(regex(pattern = r"^[0-9]{1,14}$"))]
    timestamp: Option<String>,
}

impl Tool for WebArchive {
    type Host = WebTools;
    type Args = Args;
    const NAME: &'static str = "web_archive";
    const TITLE: &'static str = "Wayback Machine snapshot";
    const DESCRIPTION: &'static str = "Find the Internet Archive Wayback Machine snapshot of a URL closest to a date (default: the latest), with its archive URL and time; use it for pages that are gone or changed, then read the snapshot with web_fetch.";
    const CATEGORY: Category = Category::Web;
    const EFFECT: Effect = Effect::Network;
    const AGENT_ONLY: bool = false;
    const READ_ONLY: bool = true;

    fn paths(_: &Args) -> Paths {
        Paths::none()
    }

    async fn call(web: &WebTools, args: Args, cx: CallContext) -> CallToolResult {
        answer(&cx, archive(web, args)).await
    }
}

async fn archive(web: &WebTools, args: Args) -> Result<String, String> {
    let target = Url::parse(args.url.trim())
        .ok()
        .filter(|u| matches!(u.scheme(), "http" | "https"))
        .ok_or_else(|| format!("{:?} is not an http or https URL", args.url))?;
    if let Some(ts) = &args.timestamp
        && (ts.is_empty() || ts.len() > 14 || !ts.bytes().all(|b| b.is_ascii_digit()))
    {
        return Err(format!(
            "timestamp {ts:?} must be YYYYMMDDhhmmss or a prefix of it (digits only, e.g. 2019 or 20190315)"
        ));
    }
    let mut endpoint = Url::parse(&web.archive_endpoint).map_err(|e| {
        format!(
            "the Wayback Machine endpoint {:?} is not a URL: {e}",
            web.archive_endpoint
        )
    })?;
    endpoint
        .query_pairs_mut()
        .append_pair("url", target.as_str());
    if let Some(ts) = &args.timestamp {
        endpoint.query_pairs_mut().append_pair("timestamp", ts);
    }
    let r = web.get(endpoint.as_str(), Method::GET).await?;
    if !r.status.is_success() {
        return Err(format!(
            "the Wayback Machine answered {} for {target}; try again later",
            r.status
        ));
    }
    let value: Value = serde_json::from_slice(&r.body)
        .map_err(|e| format!("the Wayback Machine's answer is not JSON: {e}"))?;
    let wanted = args.timestamp.as_deref().map_or_else(
        || "the latest".to_owned(),
        |t| format!("the one closest to {t}"),
    );
    let closest = value
        .pointer("/archived_snapshots/closest")
        .filter(|c| c.get("available").and_then(Value::as_bool) != Some(false));
    let Some(closest) = closest else {
        return Ok(format!(
            "The Wayback Machine has no snapshot of {target} (asked for {wanted}).\n"
        ));
    };
    let field = |k: &str| closest.get(k).and_then(Value::as_str).unwrap_or_default();
    let mut out = format!("Snapshot of {target} ({wanted} asked for):\n");
    out.push_str(&format!("URL: {}\n", field("url")));
    out.push_str(&format!(
        "Taken: {}\n",
        readable_timestamp(field("timestamp"))
    ));
    if !field("status").is_empty() {
        out.push_str(&format!("Status when archived: {}\n", field("status")));
    }
    out.push_str("Read it with web_fetch or web_readable.\n");
    Ok(out)
}
