//! The web tools, served in-process as a [`ToolHost`] (category `web`), every request through
//! the [`WebGuard`].
//!
//! Arguments are `deny_unknown_fields` structs; a failure, including a guard refusal (which
//! says what was refused and why), is an error result the model reads.

use std::collections::HashSet;
use std::sync::Arc;

use cairn_agent::tools::{CallContext, Effect, ToolHost, ToolInfo};
use futures::future::BoxFuture;
use rmcp::model::{CallToolResult, ContentBlock, JsonObject, Tool, ToolAnnotations};
use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value, json};
use url::Url;

use crate::{Method, WebGuard, WebRequest, WebResponse};

/// The tool names, in the order listed.
pub const WEB_TOOL_NAMES: [&str; 8] = [
    "web_fetch",
    "web_fetch_raw",
    "web_head",
    "web_links",
    "web_metadata",
    "web_robots",
    "web_sitemap",
    "web_feed",
];

/// How many characters `web_fetch` returns by default.
pub const DEFAULT_MAX_LENGTH: usize = 20_000;
const MAX_SITEMAP_URLS: usize = 500;
const MAX_FEED_ITEMS: usize = 50;

/// The web tools over one guard, on behalf of one user (for the per-user rate limit).
#[derive(Clone)]
pub struct WebTools {
    pub guard: Arc<WebGuard>,
    pub user: String,
}

impl std::fmt::Debug for WebTools {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WebTools")
            .field("user", &self.user)
            .finish_non_exhaustive()
    }
}

impl WebTools {
    pub fn new(guard: Arc<WebGuard>, user: impl Into<String>) -> WebTools {
        WebTools {
            guard,
            user: user.into(),
        }
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

fn schema(properties: Value, required: &[&str]) -> JsonObject {
    let mut s = Map::new();
    s.insert("type".into(), json!("object"));
    s.insert("properties".into(), properties);
    s.insert("required".into(), json!(required));
    s.insert("additionalProperties".into(), json!(false));
    s
}

fn tool(name: &'static str, description: &str, schema: JsonObject) -> Tool {
    let annotations = ToolAnnotations::new()
        .read_only(true)
        .destructive(false)
        .open_world(true);
    Tool::new(name, description.to_owned(), Arc::new(schema)).with_annotations(annotations)
}

fn url_prop() -> Value {
    json!({"type": "string", "description": "An http or https URL."})
}

fn paging_props() -> Value {
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
    ]
}

fn parse<T: DeserializeOwned>(tool: &str, args: Map<String, Value>) -> Result<T, String> {
    serde_json::from_value(Value::Object(args))
        .map_err(|e| format!("invalid arguments for {tool}: {e}"))
}

fn text(t: impl Into<String>) -> CallToolResult {
    CallToolResult::success(vec![ContentBlock::text(t)])
}

fn error(t: impl Into<String>) -> CallToolResult {
    CallToolResult::error(vec![ContentBlock::text(t)])
}

impl ToolHost for WebTools {
    fn list(&self) -> Vec<ToolInfo> {
        definitions()
            .into_iter()
            .map(|tool| ToolInfo {
                tool,
                effect: Effect::Network,
                category: "web".into(),
                agent_only: false,
            })
            .collect()
    }

    fn call(
        &self,
        name: &str,
        arguments: Map<String, Value>,
        ctx: CallContext,
    ) -> BoxFuture<'_, CallToolResult> {
        let name = name.to_owned();
        Box::pin(async move {
            let work = self.dispatch(&name, arguments);
            tokio::select! {
                r = work => match r {
                    Ok(t) => text(t),
                    Err(message) => error(message),
                },
                () = ctx.cancel.cancelled() => error("cancelled"),
            }
        })
    }
}

impl WebTools {
    async fn get(&self, url: &str, method: Method) -> Result<WebResponse, String> {
        let request = WebRequest::new(method, url).for_user(self.user.clone());
        self.guard.fetch(request).await.map_err(|e| e.to_string())
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
            other => Err(format!("no web tool is named {other}")),
        }
    }
}

fn content_type(r: &WebResponse) -> String {
    r.headers
        .get(crate::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_ascii_lowercase()
}

fn is_html(ct: &str, body: &[u8]) -> bool {
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

fn is_text(ct: &str) -> bool {
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

fn header_lines(r: &WebResponse) -> String {
    let mut out = format!("URL: {}\nStatus: {}\n", r.final_url, r.status);
    if r.redirects > 0 {
        out.push_str(&format!("Redirects followed: {}\n", r.redirects));
    }
    if r.truncated {
        out.push_str("Note: the download stopped at the web guard's size cap; the rest of the page was not read.\n");
    }
    out
}

fn fetch_report(r: &WebResponse, ct: &str, content: &str, start: usize, max: usize) -> String {
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

/// Converts HTML to Markdown (scripts, styles and the like dropped).
pub fn html_to_markdown(html: &str) -> String {
    let converter = htmd::HtmlToMarkdown::builder()
        .skip_tags(vec![
            "script", "style", "noscript", "template", "iframe", "svg", "head",
        ])
        .build();
    converter.convert(html).unwrap_or_else(|_| html.to_owned())
}

/// The characters `start..start+max` of `content`, and where the next part starts if any is left.
pub fn page(content: &str, start: usize, max: usize) -> (&str, Option<usize>) {
    let mut indices = content.char_indices().map(|(i, _)| i).skip(start);
    let Some(from) = indices.next() else {
        return ("", None);
    };
    let mut indices = content[from..]
        .char_indices()
        .map(|(i, _)| from + i)
        .skip(max);
    match indices.next() {
        Some(to) => (&content[from..to], Some(start + max)),
        None => (&content[from..], None),
    }
}

fn collapse(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The page's links as absolute http(s) URLs (fragment dropped), with their text, first
/// occurrence kept.
pub fn extract_links(html: &str, base: &Url, same_host_only: bool) -> Vec<(String, String)> {
    let doc = scraper::Html::parse_document(html);
    let base = base_url(&doc, base);
    let Ok(sel) = scraper::Selector::parse("a[href], area[href]") else {
        return Vec::new();
    };
    let mut seen = HashSet::new();
    let mut out = Vec::new();
    for el in doc.select(&sel) {
        let Some(href) = el.value().attr("href") else {
            continue;
        };
        let Ok(mut url) = base.join(href.trim()) else {
            continue;
        };
        if !matches!(url.scheme(), "http" | "https") {
            continue;
        }
        if same_host_only && url.host_str() != base.host_str() {
            continue;
        }
        url.set_fragment(None);
        let key = url.to_string();
        if seen.insert(key.clone()) {
            let mut label = collapse(&el.text().collect::<String>());
            if label.is_empty() {
                label = el.value().attr("title").map(collapse).unwrap_or_default();
            }
            out.push((key, label));
        }
    }
    out
}

fn base_url(doc: &scraper::Html, fallback: &Url) -> Url {
    scraper::Selector::parse("base[href]")
        .ok()
        .and_then(|s| doc.select(&s).next())
        .and_then(|b| b.value().attr("href"))
        .and_then(|h| fallback.join(h).ok())
        .unwrap_or_else(|| fallback.clone())
}

/// Title, description, canonical, OpenGraph and Twitter tags, and language, as (name, value).
pub fn extract_metadata(html: &str, page: &Url) -> Vec<(String, String)> {
    let doc = scraper::Html::parse_document(html);
    let mut out = Vec::new();
    let select = |css: &str| scraper::Selector::parse(css).ok();
    if let Some(s) = select("title")
        && let Some(t) = doc.select(&s).next()
    {
        out.push(("title".into(), collapse(&t.text().collect::<String>())));
    }
    if let Some(s) = select("html[lang]")
        && let Some(l) = doc.select(&s).next().and_then(|e| e.value().attr("lang"))
    {
        out.push(("lang".into(), l.trim().to_owned()));
    }
    if let Some(s) = select("link[rel][href]") {
        for l in doc.select(&s) {
            let rel = l.value().attr("rel").unwrap_or("").to_ascii_lowercase();
            if rel.split_whitespace().any(|r| r == "canonical")
                && let Some(h) = l.value().attr("href")
            {
                let abs = base_url(&doc, page)
                    .join(h.trim())
                    .map_or_else(|_| h.to_owned(), |u| u.to_string());
                out.push(("canonical".into(), abs));
            }
        }
    }
    if let Some(s) = select("meta[content]") {
        for m in doc.select(&s) {
            let key = m
                .value()
                .attr("property")
                .or_else(|| m.value().attr("name"))
                .unwrap_or("")
                .to_ascii_lowercase();
            let content = collapse(m.value().attr("content").unwrap_or(""));
            if key == "description" || key.starts_with("og:") || key.starts_with("twitter:") {
                out.push((key, content));
            }
        }
    }
    out
}

/// Whether `path` may be crawled by user-agent `*` under `robots` (the `*` group; the longest
/// matching Allow or Disallow wins, Allow on a tie; `*` and a final `$` are understood).
pub fn robots_allowed(robots: &str, path: &str) -> bool {
    let mut rules: Vec<(bool, String)> = Vec::new();
    let mut in_star = false;
    let mut agents_open = false;
    for line in robots.lines() {
        let line = line.split('#').next().unwrap_or("").trim();
        let Some((key, value)) = line.split_once(':') else {
            continue;
        };
        let key = key.trim().to_ascii_lowercase();
        let value = value.trim();
        match key.as_str() {
            "user-agent" => {
                if !agents_open {
                    in_star = false;
                    agents_open = true;
                }
                if value == "*" {
                    in_star = true;
                }
            }
            "allow" | "disallow" => {
                agents_open = false;
                if in_star && !value.is_empty() {
                    rules.push((key == "allow", value.to_owned()));
                }
            }
            _ => {}
        }
    }
    let mut best: Option<(usize, bool)> = None;
    for (allow, pattern) in &rules {
        if robots_match(pattern, path) {
            let len = pattern.len();
            best = match best {
                Some((l, a)) if l > len || (l == len && a) => Some((l, a)),
                _ => Some((len, *allow)),
            };
        }
    }
    best.is_none_or(|(_, allow)| allow)
}

fn robots_match(pattern: &str, path: &str) -> bool {
    let (pattern, anchored) = match pattern.strip_suffix('$') {
        Some(p) => (p, true),
        None => (pattern, false),
    };
    fn go(p: &[u8], s: &[u8], anchored: bool) -> bool {
        match p.split_first() {
            None => !anchored || s.is_empty(),
            Some((b'*', rest)) => (0..=s.len()).any(|i| go(rest, &s[i..], anchored)),
            Some((c, rest)) => s.first() == Some(c) && go(rest, &s[1..], anchored),
        }
    }
    go(pattern.as_bytes(), path.as_bytes(), anchored)
}

fn xml_error(e: roxmltree::Error) -> String {
    format!("not well-formed XML: {e}")
}

/// A sitemap's kind (`urlset` or `sitemap index`), its `loc`s (at most 500), and whether more
/// were left out.
pub fn parse_sitemap(xml: &str) -> Result<(&'static str, Vec<String>, bool), String> {
    let doc = roxmltree::Document::parse(xml).map_err(xml_error)?;
    let root = doc.root_element();
    let (kind, entry) = match root.tag_name().name() {
        "urlset" => ("urlset", "url"),
        "sitemapindex" => ("sitemap index (child sitemaps)", "sitemap"),
        other => return Err(format!("not a sitemap: the root element is <{other}>")),
    };
    let locs: Vec<String> = root
        .children()
        .filter(|n| n.tag_name().name() == entry)
        .filter_map(|n| n.children().find(|c| c.tag_name().name() == "loc"))
        .filter_map(|l| l.text().map(|t| t.trim().to_owned()))
        .filter(|t| !t.is_empty())
        .collect();
    let more = locs.len() > MAX_SITEMAP_URLS;
    Ok((
        kind,
        locs.into_iter().take(MAX_SITEMAP_URLS).collect(),
        more,
    ))
}

/// One feed item.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FeedItem {
    pub title: String,
    pub link: String,
    pub date: String,
}

/// An RSS (0.9x, 1.0, 2.0) or Atom feed's title and items (at most 50), and whether more were
/// left out.
pub fn parse_feed(xml: &str) -> Result<(String, Vec<FeedItem>, bool), String> {
    let doc = roxmltree::Document::parse(xml).map_err(xml_error)?;
    let root = doc.root_element();
    let atom = match root.tag_name().name() {
        "feed" => true,
        "rss" | "RDF" => false,
        other => {
            return Err(format!(
                "not an RSS or Atom feed: the root element is <{other}>"
            ));
        }
    };
    let child_text = |n: roxmltree::Node, name: &str| {
        n.children()
            .find(|c| c.tag_name().name() == name)
            .map(|c| {
                collapse(
                    &c.descendants()
                        .filter(|d| d.is_text())
                        .filter_map(|d| d.text())
                        .collect::<String>(),
                )
            })
            .unwrap_or_default()
    };
    let title_holder = if atom {
        Some(root)
    } else {
        root.descendants()
            .find(|n| n.tag_name().name() == "channel")
    };
    let title = title_holder
        .map(|n| child_text(n, "title"))
        .unwrap_or_default();
    let entry = if atom { "entry" } else { "item" };
    let mut items = Vec::new();
    for n in root.descendants().filter(|n| n.tag_name().name() == entry) {
        let link = if atom {
            n.children()
                .filter(|c| c.tag_name().name() == "link")
                .find(|c| c.attribute("rel").is_none_or(|r| r == "alternate"))
                .and_then(|c| c.attribute("href"))
                .unwrap_or("")
                .to_owned()
        } else {
            child_text(n, "link")
        };
        let date = ["pubDate", "updated", "published", "date"]
            .iter()
            .map(|d| child_text(n, d))
            .find(|d| !d.is_empty())
            .unwrap_or_default();
        items.push(FeedItem {
            title: child_text(n, "title"),
            link,
            date,
        });
    }
    let more = items.len() > MAX_FEED_ITEMS;
    items.truncate(MAX_FEED_ITEMS);
    Ok((title, items, more))
}

#[cfg(test)]
mod tests {
    use super::*;

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
    fn html_becomes_markdown_without_scripts() {
        let md = html_to_markdown(
            "<html><head><title>T</title><script>evil()</script></head><body><h1>Hello</h1><p>A <a href=\"/x\">link</a>.</p></body></html>",
        );
        assert!(md.contains("# Hello"), "{md}");
        assert!(md.contains("[link](/x)"), "{md}");
        assert!(!md.contains("evil"), "{md}");
    }

    #[test]
    fn paging_counts_characters_and_names_the_next_start() {
        let s = "héllo wörld";
        assert_eq!(page(s, 0, 5), ("héllo", Some(5)));
        assert_eq!(page(s, 5, 100), (" wörld", None));
        assert_eq!(page(s, 6, 5), ("wörld", None));
        assert_eq!(page(s, 50, 5), ("", None));
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
    fn links_are_resolved_deduplicated_and_filtered() {
        let base = Url::parse("https://example.com/dir/page.html").must();
        let html = r#"<a href="other.html">Other
            page</a><a href="/root#frag">Root</a><a href="/root">again</a>
            <a href="https://elsewhere.test/x">Far</a><a href="mailto:a@b.c">mail</a>
            <a href="javascript:void(0)">js</a>"#;
        let links = extract_links(html, &base, false);
        assert_eq!(
            links,
            vec![
                (
                    "https://example.com/dir/other.html".to_owned(),
                    "Other page".to_owned()
                ),
                ("https://example.com/root".to_owned(), "Root".to_owned()),
                ("https://elsewhere.test/x".to_owned(), "Far".to_owned()),
            ]
        );
        assert_eq!(extract_links(html, &base, true).len(), 2);
        let with_base = r#"<base href="https://cdn.test/sub/"><a href="f">F</a>"#;
        assert_eq!(
            extract_links(with_base, &base, false)[0].0,
            "https://cdn.test/sub/f"
        );
    }

    #[test]
    fn metadata_is_collected() {
        let base = Url::parse("https://example.com/a/").must();
        let html = r#"<html lang="en"><head><title> My  page </title>
            <meta name="description" content="About it">
            <link rel="canonical" href="/canon">
            <meta property="og:title" content="OG title">
            <meta name="twitter:card" content="summary"></head></html>"#;
        let m = extract_metadata(html, &base);
        let get = |k: &str| m.iter().find(|(a, _)| a == k).map(|(_, v)| v.as_str());
        assert_eq!(get("title"), Some("My page"));
        assert_eq!(get("lang"), Some("en"));
        assert_eq!(get("description"), Some("About it"));
        assert_eq!(get("canonical"), Some("https://example.com/canon"));
        assert_eq!(get("og:title"), Some("OG title"));
        assert_eq!(get("twitter:card"), Some("summary"));
    }

    #[test]
    fn robots_longest_match_wins() {
        let robots = "User-agent: googlebot\nDisallow: /\n\nUser-agent: other\nUser-agent: *\nDisallow: /private\nAllow: /private/open\nDisallow: /*.pdf$\nDisallow:\n";
        assert!(robots_allowed(robots, "/"));
        assert!(robots_allowed(robots, "/public/x"));
        assert!(!robots_allowed(robots, "/private/x"));
        assert!(robots_allowed(robots, "/private/open/y"));
        assert!(!robots_allowed(robots, "/docs/a.pdf"));
        assert!(robots_allowed(robots, "/docs/a.pdf?x"));
        assert!(robots_allowed("", "/anything"));
        assert!(!robots_allowed("User-agent: *\nDisallow: /\n", "/a"));
        assert!(robots_allowed("User-agent: bot\nDisallow: /\n", "/a"));
    }

    #[test]
    fn sitemaps_and_indexes_parse() {
        let set = r#"<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
            <url><loc> https://example.com/a </loc></url><url><loc>https://example.com/b</loc></url></urlset>"#;
        let (kind, urls, more) = parse_sitemap(set).must();
        assert_eq!(kind, "urlset");
        assert_eq!(urls, vec!["https://example.com/a", "https://example.com/b"]);
        assert!(!more);
        let index = r#"<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><sitemap><loc>https://example.com/s1.xml</loc></sitemap></sitemapindex>"#;
        let (kind, urls, _) = parse_sitemap(index).must();
        assert!(kind.starts_with("sitemap index"));
        assert_eq!(urls, vec!["https://example.com/s1.xml"]);
        let many: String = (0..600)
            .map(|i| format!("<url><loc>https://e.test/{i}</loc></url>"))
            .collect();
        let (_, urls, more) = parse_sitemap(&format!("<urlset>{many}</urlset>")).must();
        assert_eq!(urls.len(), 500);
        assert!(more);
        assert!(parse_sitemap("<html/>").is_err());
        assert!(parse_sitemap("<urlset>").is_err());
    }

    #[test]
    fn rss_and_atom_feeds_parse() {
        let rss = r#"<rss version="2.0"><channel><title>News</title>
            <item><title>One</title><link>https://e.test/1</link><pubDate>Mon, 01 Jan 2024 00:00:00 GMT</pubDate></item>
            <item><title>Two</title><link>https://e.test/2</link></item></channel></rss>"#;
        let (title, items, more) = parse_feed(rss).must();
        assert_eq!(title, "News");
        assert_eq!(items.len(), 2);
        assert_eq!(items[0].link, "https://e.test/1");
        assert_eq!(items[0].date, "Mon, 01 Jan 2024 00:00:00 GMT");
        assert!(!more);
        let atom = r#"<feed xmlns="http://www.w3.org/2005/Atom"><title>Blog</title>
            <entry><title>Post</title><link rel="self" href="https://e.test/self"/><link href="https://e.test/post"/><updated>2024-01-02T00:00:00Z</updated></entry></feed>"#;
        let (title, items, _) = parse_feed(atom).must();
        assert_eq!(title, "Blog");
        assert_eq!(
            items,
            vec![FeedItem {
                title: "Post".into(),
                link: "https://e.test/post".into(),
                date: "2024-01-02T00:00:00Z".into()
            }]
        );
        assert!(parse_feed("<html/>").is_err());
    }

    #[test]
    fn tools_are_listed_as_network_web_tools() {
        let guard = Arc::new(WebGuard::new(crate::GuardConfig::default()).must());
        let tools = WebTools::new(guard, "me").list();
        let names: Vec<&str> = tools.iter().map(|t| t.tool.name.as_ref()).collect();
        assert_eq!(names, WEB_TOOL_NAMES);
        assert!(
            tools
                .iter()
                .all(|t| t.effect == Effect::Network && t.category == "web" && !t.agent_only)
        );
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
