//! The web tools, served in-process as a [`ToolHost`] (category `web`), every request through
//! the [`WebGuard`].
//!
//! Arguments are `deny_unknown_fields` structs; a failure, including a guard refusal (which
//! says what was refused and why), is an error result the model reads.
//!
//! This module holds the host, the shared helpers and the fetch-and-read tools; the others
//! live by theme: [`extract`] (parsing fetched pages and documents), [`content`] (readable text,
//! tables, find, outline, images), [`search`] (`web_search` and its providers), [`download`]
//! (`web_download` into the workspace), [`data`] (`web_json`, `web_check_links`,
//! `web_archive`).

use std::sync::Arc;

use cairn_agent::tools::{CallContext, Effect, ToolHost, ToolInfo};
use cairn_workspace::Workspace;
use futures::future::BoxFuture;
use rmcp::model::{CallToolResult, ContentBlock, JsonObject, Tool, ToolAnnotations};
use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value, json};

use crate::{Method, WebGuard, WebRequest, WebResponse};

pub mod content;
pub mod data;
pub mod download;
mod extract;
pub mod search;

pub use extract::{
    FeedItem, extract_links, extract_metadata, html_to_markdown, page, parse_feed, parse_sitemap,
    robots_allowed,
};
pub use search::{SearchProvider, SearchSettings};

/// The tool names, in the order listed (`web_download` only when there is a workspace).
pub const WEB_TOOL_NAMES: [&str; 18] = [
    "web_fetch",
    "web_fetch_raw",
    "web_head",
    "web_links",
    "web_metadata",
    "web_robots",
    "web_sitemap",
    "web_feed",
    "web_search",
    "web_readable",
    "web_tables",
    "web_find",
    "web_json",
    "web_check_links",
    "web_outline",
    "web_images",
    "web_archive",
    "web_download",
];

/// How many characters `web_fetch` returns by default.
pub const DEFAULT_MAX_LENGTH: usize = 20_000;
const MAX_SITEMAP_URLS: usize = 500;
const MAX_FEED_ITEMS: usize = 50;

/// The Wayback Machine's availability API, which `web_archive` asks by default.
pub const WAYBACK_AVAILABLE_URL: &str = "https://archive.org/wayback/available";

/// The web tools over one guard, on behalf of one user (for the per-user rate limit).
#[derive(Clone)]
pub struct WebTools {
    pub guard: Arc<WebGuard>,
    pub user: String,
    /// Where `web_download` writes; without one the tool is not offered.
    pub workspace: Option<Arc<Workspace>>,
    /// The provider `web_search` asks; without one it says what to configure.
    pub search: Option<SearchSettings>,
    /// The Wayback Machine availability endpoint (tests point it at a loopback stand-in).
    pub archive_endpoint: String,
    /// What takes the vault's secrets out of a download before it is written.
    pub redactor: Option<Arc<dyn cairn_agent::redact::Redact>>,
}

impl std::fmt::Debug for WebTools {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WebTools")
            .field("user", &self.user)
            .field("workspace", &self.workspace.as_ref().map(|w| w.roots()))
            .field("search", &self.search)
            .field("archive_endpoint", &self.archive_endpoint)
            .finish_non_exhaustive()
    }
}

impl WebTools {
    /// The tools over `guard` for `user`, with no workspace and no search provider.
    pub fn new(guard: Arc<WebGuard>, user: impl Into<String>) -> WebTools {
        WebTools {
            guard,
            user: user.into(),
            workspace: None,
            search: None,
            archive_endpoint: WAYBACK_AVAILABLE_URL.to_owned(),
            redactor: None,
        }
    }

    /// The same tools, taking secrets out of downloads with `redactor` before they are saved.
    pub fn with_redactor(mut self, redactor: Arc<dyn cairn_agent::redact::Redact>) -> WebTools {
        self.redactor = Some(redactor);
        self
    }

    /// The same tools, downloading into `workspace` (this offers `web_download`).
    pub fn with_workspace(mut self, workspace: Arc<Workspace>) -> WebTools {
        self.workspace = Some(workspace);
        self
    }

    /// The same tools, searching through `search` (`None`: no provider configured).
    pub fn with_search(mut self, search: Option<SearchSettings>) -> WebTools {
        self.search = search;
        self
    }

    /// The same tools, asking `endpoint` instead of the Wayback Machine's availability API.
    pub fn with_archive_endpoint(mut self, endpoint: impl Into<String>) -> WebTools {
        self.archive_endpoint = endpoint.into();
        self
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct FetchArgs {
    url: String,
    #[serde(default)]
    start_index: usize,
    max_length: Option<usize>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct UrlArgs {
    url: String,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct LinksArgs {
    url: String,
    #[serde(default)]
    same_host_only: bool,
}

pub(super) fn schema(properties: Value, required: &[&str]) -> JsonObject {
    let mut s = Map::new();
    s.insert("type".into(), json!("object"));
    s.insert("properties".into(), properties);
    s.insert("required".into(), json!(required));
    s.insert("additionalProperties".into(), json!(false));
    s
}

pub(super) fn tool(name: &'static str, description: &str, schema: JsonObject) -> Tool {
    let annotations = ToolAnnotations::new()
        .read_only(true)
        .destructive(false)
        .open_world(true);
    Tool::new(name, description.to_owned(), Arc::new(schema)).with_annotations(annotations)
}

pub(super) fn url_prop() -> Value {
    json!({"type": "string", "description": "An http or https URL."})
}

pub(super) fn paging_props() -> Value {
    json!({
        "url": url_prop(),
        "start_index": {"type": "integer", "minimum": 0, "description": "The character to start from (default 0); use the value a truncated result names."},
        "max_length": {"type": "integer", "minimum": 1, "description": "At most this many characters (default 20000)."}
    })
}

fn definitions() -> Vec<Tool> {
    let url_only = || schema(json!({"url": url_prop()}), &["url"]);
    vec![
        tool(
            "web_fetch",
            "Fetch a web page and return its content as Markdown (HTML is converted; other text as-is), with the final URL and status. Long pages come in parts: call again with the start_index the result names.",
            schema(paging_props(), &["url"]),
        ),
        tool(
            "web_fetch_raw",
            "Fetch a URL and return its body as text, unconverted (HTML source, JSON, plain text), in parts like web_fetch.",
            schema(paging_props(), &["url"]),
        ),
        tool(
            "web_head",
            "Show the status, final URL (after redirects) and response headers of a URL, without its body.",
            url_only(),
        ),
        tool(
            "web_links",
            "List the links of a web page as absolute URLs with their text, deduplicated.",
            schema(
                json!({"url": url_prop(), "same_host_only": {"type": "boolean", "description": "Only links to the page's own host (default false)."}}),
                &["url"],
            ),
        ),
        tool(
            "web_metadata",
            "Show a web page's metadata: title, description, canonical URL, OpenGraph and Twitter tags, language.",
            url_only(),
        ),
        tool(
            "web_robots",
            "Fetch a site's robots.txt and say whether the URL's path may be crawled by user-agent *.",
            url_only(),
        ),
        tool(
            "web_sitemap",
            "List the URLs of a sitemap.xml (or the child sitemaps of a sitemap index), at most 500.",
            url_only(),
        ),
        tool(
            "web_feed",
            "List the items of an RSS or Atom feed (title, link, date), at most 50.",
            url_only(),
        ),
        search::definition(),
        content::readable_definition(),
        content::tables_definition(),
        content::find_definition(),
        data::json_definition(),
        data::check_links_definition(),
        content::outline_definition(),
        content::images_definition(),
        data::archive_definition(),
    ]
}

pub(super) fn parse<T: DeserializeOwned>(
    tool: &str,
    args: Map<String, Value>,
) -> Result<T, String> {
    serde_json::from_value(Value::Object(args))
        .map_err(|e| format!("invalid arguments for {tool}: {e}"))
}

pub(super) fn text(t: impl Into<String>) -> CallToolResult {
    CallToolResult::success(vec![ContentBlock::text(t)])
}

pub(super) fn error(t: impl Into<String>) -> CallToolResult {
    CallToolResult::error(vec![ContentBlock::text(t)])
}

impl ToolHost for WebTools {
    fn list(&self) -> Vec<ToolInfo> {
        let mut tools: Vec<ToolInfo> = definitions()
            .into_iter()
            .map(|tool| ToolInfo {
                tool,
                effect: Effect::Network,
                category: "web".into(),
                agent_only: false,
                origin: None,
            })
            .collect();
        // Writing needs somewhere to write: without a workspace the tool is not offered at all.
        // It writes files, so it is `Write` (asked by default) and offered in agent mode only,
        // like the built-in writing tools.
        if self.workspace.is_some() {
            tools.push(ToolInfo {
                tool: download::definition(),
                effect: Effect::Write,
                category: "web".into(),
                agent_only: true,
                origin: None,
            });
        }
        tools
    }

    fn call(
        &self,
        name: &str,
        arguments: Map<String, Value>,
        ctx: CallContext,
    ) -> BoxFuture<'_, CallToolResult> {
        let name = name.to_owned();
        Box::pin(async move {
            let work = async {
                match name.as_str() {
                    // It reports its edit in `_meta`, so it builds its own result.
                    "web_download" => download::call(self, arguments).await,
                    _ => match self.dispatch(&name, arguments).await {
                        Ok(t) => text(t),
                        Err(message) => error(message),
                    },
                }
            };
            tokio::select! {
                r = work => r,
                () = ctx.cancel.cancelled() => error("cancelled"),
            }
        })
    }
}

impl WebTools {
    async fn get(&self, url: &str, method: Method) -> Result<WebResponse, String> {
        self.send(WebRequest::new(method, url))
            .await
            .map_err(|e| e.to_string())
    }

    /// `request` through the guard, on behalf of this tools' user.
    async fn send(&self, request: WebRequest) -> Result<WebResponse, crate::WebError> {
        self.guard.fetch(request.for_user(self.user.clone())).await
    }

    /// A page fetched for reading as HTML: its text, or an error when it is not text at all.
    async fn get_html(&self, url: &str) -> Result<(WebResponse, String), String> {
        let r = self.get(url, Method::GET).await?;
        let ct = content_type(&r);
        if !is_html(&ct, &r.body) && !ct.is_empty() && !ct.contains("xml") {
            return Err(format!(
                "{} is not an HTML page ({ct}); web_fetch shows other text",
                r.final_url
            ));
        }
        let html = String::from_utf8_lossy(&r.body).into_owned();
        Ok((r, html))
    }

    async fn dispatch(&self, name: &str, args: Map<String, Value>) -> Result<String, String> {
        match name {
            "web_fetch" | "web_fetch_raw" => {
                let a: FetchArgs = parse(name, args)?;
                let max = a.max_length.unwrap_or(DEFAULT_MAX_LENGTH).max(1);
                let r = self.get(&a.url, Method::GET).await?;
                let ct = content_type(&r);
                let body = if name == "web_fetch_raw" {
                    String::from_utf8_lossy(&r.body).into_owned()
                } else if is_html(&ct, &r.body) {
                    html_to_markdown(&String::from_utf8_lossy(&r.body))
                } else if is_text(&ct) {
                    String::from_utf8_lossy(&r.body).into_owned()
                } else {
                    return Err(format!(
                        "{} is not text ({ct}, {} bytes); web_fetch_raw shows it as text anyway",
                        r.final_url,
                        r.body.len()
                    ));
                };
                Ok(fetch_report(&r, &ct, &body, a.start_index, max))
            }
            "web_head" => {
                let a: UrlArgs = parse(name, args)?;
                let r = self.get(&a.url, Method::HEAD).await?;
                let mut out = header_lines(&r);
                for (k, v) in &r.headers {
                    out.push_str(&format!("{k}: {}\n", String::from_utf8_lossy(v.as_bytes())));
                }
                Ok(out)
            }
            "web_links" => {
                let a: LinksArgs = parse(name, args)?;
                let r = self.get(&a.url, Method::GET).await?;
                let links = extract_links(
                    &String::from_utf8_lossy(&r.body),
                    &r.final_url,
                    a.same_host_only,
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
            }
            "web_metadata" => {
                let a: UrlArgs = parse(name, args)?;
                let r = self.get(&a.url, Method::GET).await?;
                let mut out = header_lines(&r);
                for (k, v) in extract_metadata(&String::from_utf8_lossy(&r.body), &r.final_url) {
                    out.push_str(&format!("{k}: {v}\n"));
                }
                Ok(out)
            }
            "web_robots" => {
                let a: UrlArgs = parse(name, args)?;
                let target = self.guard.check_url(&a.url).map_err(|e| e.to_string())?;
                let mut robots = target.clone();
                robots.set_path("/robots.txt");
                robots.set_query(None);
                robots.set_fragment(None);
                let r = self.get(robots.as_str(), Method::GET).await?;
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
            "web_sitemap" => {
                let a: UrlArgs = parse(name, args)?;
                let r = self.get(&a.url, Method::GET).await?;
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
            }
            "web_feed" => {
                let a: UrlArgs = parse(name, args)?;
                let r = self.get(&a.url, Method::GET).await?;
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
            }
            "web_search" => search::call(self, args).await,
            "web_readable" => content::readable(self, args).await,
            "web_tables" => content::tables(self, args).await,
            "web_find" => content::find(self, args).await,
            "web_outline" => content::outline(self, args).await,
            "web_images" => content::images(self, args).await,
            "web_json" => data::json(self, args).await,
            "web_check_links" => data::check_links(self, args).await,
            "web_archive" => data::archive(self, args).await,
            other => Err(format!(
                "no web tool is named {other}; the web tools are {}",
                WEB_TOOL_NAMES.join(", ")
            )),
        }
    }
}

pub(super) fn content_type(r: &WebResponse) -> String {
    r.headers
        .get(crate::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_ascii_lowercase()
}

pub(super) fn is_html(ct: &str, body: &[u8]) -> bool {
    if ct.contains("html") {
        return true;
    }
    if !ct.is_empty() {
        return false;
    }
    let head = String::from_utf8_lossy(&body[..body.len().min(512)]).to_ascii_lowercase();
    let head = head.trim_start();
    head.starts_with("<!doctype html") || head.starts_with("<html")
}

pub(super) fn is_text(ct: &str) -> bool {
    ct.is_empty()
        || ct.starts_with("text/")
        || [
            "json",
            "xml",
            "javascript",
            "ecmascript",
            "yaml",
            "toml",
            "csv",
        ]
        .iter()
        .any(|t| ct.contains(t))
}

pub(super) fn header_lines(r: &WebResponse) -> String {
    let mut out = format!("URL: {}\nStatus: {}\n", r.final_url, r.status);
    if r.redirects > 0 {
        out.push_str(&format!("Redirects followed: {}\n", r.redirects));
    }
    if r.truncated {
        out.push_str("Note: the download stopped at the web guard's size cap; the rest of the page was not read.\n");
    }
    out
}

pub(super) fn fetch_report(
    r: &WebResponse,
    ct: &str,
    content: &str,
    start: usize,
    max: usize,
) -> String {
    let mut out = header_lines(r);
    if !ct.is_empty() {
        out.push_str(&format!("Content-Type: {ct}\n"));
    }
    out.push('\n');
    let (part, next) = page(content, start, max);
    if part.is_empty() && start > 0 {
        out.push_str(&format!(
            "(no content from start_index={start}: the content has {} characters)\n",
            content.chars().count()
        ));
        return out;
    }
    out.push_str(part);
    if let Some(n) = next {
        out.push_str(&format!(
            "\n\n[content truncated; call again with start_index={n}]"
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use url::Url;

    trait Must<T> {
        fn must(self) -> T;
    }

    impl<T, E: std::fmt::Display> Must<T> for Result<T, E> {
        fn must(self) -> T {
            match self {
                Ok(v) => v,
                Err(e) => panic!("{e}"),
            }
        }
    }

    #[test]
    fn fetch_report_says_how_to_continue() {
        let r = WebResponse {
            status: reqwest::StatusCode::OK,
            final_url: Url::parse("https://example.com/a").must(),
            headers: Default::default(),
            body: Vec::new(),
            truncated: true,
            redirects: 0,
        };
        let content = "x".repeat(30);
        let out = fetch_report(&r, "text/plain", &content, 0, 10);
        assert!(out.contains("URL: https://example.com/a"), "{out}");
        assert!(out.contains("call again with start_index=10"), "{out}");
        assert!(out.contains("size cap"), "{out}");
        let last = fetch_report(&r, "text/plain", &content, 20, 10);
        assert!(!last.contains("start_index="), "{last}");
    }

    #[test]
    fn tools_are_listed_as_network_web_tools() {
        let guard = Arc::new(WebGuard::new(crate::GuardConfig::default()).must());
        let web = WebTools::new(guard, "me");
        let tools = web.list();
        let names: Vec<&str> = tools.iter().map(|t| t.tool.name.as_ref()).collect();
        // Without a workspace there is nowhere to download to.
        assert_eq!(names, WEB_TOOL_NAMES[..17]);
        assert!(
            tools
                .iter()
                .all(|t| t.effect == Effect::Network && t.category == "web" && !t.agent_only)
        );
        let dir = tempfile::tempdir().must();
        let ws = Arc::new(Workspace::new(vec![dir.path().to_path_buf()]).must());
        let tools = web.with_workspace(ws).list();
        let names: Vec<&str> = tools.iter().map(|t| t.tool.name.as_ref()).collect();
        assert_eq!(names, WEB_TOOL_NAMES);
        let download = tools.iter().find(|t| t.tool.name == "web_download");
        assert!(download.is_some_and(|t| t.effect == Effect::Write && t.agent_only));
        for t in &tools {
            let schema = &t.tool.input_schema;
            assert_eq!(
                schema.get("additionalProperties"),
                Some(&json!(false)),
                "{}",
                t.tool.name
            );
            assert!(t.tool.description.as_deref().is_some_and(|d| d.len() > 40));
        }
    }

    #[tokio::test]
    async fn unknown_arguments_and_refusals_are_error_results() {
        let guard = Arc::new(WebGuard::new(crate::GuardConfig::default()).must());
        let tools = WebTools::new(guard, "me");
        let call = |name: &'static str, args: Value| {
            let tools = tools.clone();
            async move {
                let Value::Object(args) = args else {
                    unreachable!()
                };
                let ctx = CallContext {
                    session_id: String::new(),
                    run_id: String::new(),
                    call_id: String::new(),
                    cancel: tokio_util::sync::CancellationToken::new(),
                };
                tools.call(name, args, ctx).await
            }
        };
        let bad = call(
            "web_fetch",
            json!({"url": "https://e.test/", "method": "POST"}),
        )
        .await;
        assert_eq!(bad.is_error, Some(true));
        assert!(format!("{:?}", bad.content).contains("unknown field"));
        let refused = call("web_fetch", json!({"url": "http://127.0.0.1:9/"})).await;
        assert_eq!(refused.is_error, Some(true));
        let shown = format!("{:?}", refused.content);
        assert!(
            shown.contains("refused") && shown.contains("loopback"),
            "{shown}"
        );
    }
}
