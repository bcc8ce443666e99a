//! `web_search`: a web search through the provider the user configured (`[web.search]`):
//! a SearXNG instance, the Brave Search API or Tavily.
//!
//! The API key is a vault secret the user named in their config; the request carries a
//! [`CredentialUse`] naming it, and the guard attaches the value itself, only for a host the
//! secret is bound to. The model neither sees the key nor can name a secret: the arguments
//! are the query and a count.

use cairn_toolkit::{CallContext, Category, Effect, JsonSchema, Paths, Tool};
use rmcp::model::CallToolResult;
use serde::Deserialize;
use serde_json::{Value, json};
use url::Url;

use super::settings::{SearchProvider, SearchSettings};
use super::{WebTools, answer, extract::collapse};
use cairn_web::{CredentialUse, Method, Placement, WebRequest, WebResponse, header};

/// The Brave Search API's web search endpoint.
pub const BRAVE_ENDPOINT: &str = "https://api.search.brave.com/res/v1/web/search";
/// Tavily's search endpoint.
pub const TAVILY_ENDPOINT: &str = "https://api.tavily.com/search";

/// Results returned when the model does not say.
const DEFAULT_COUNT: usize = 10;
/// The most results one call returns.
const MAX_COUNT: usize = 20;
/// A snippet longer than this is cut, so twenty results stay readable.
const MAX_SNIPPET_CHARS: usize = 400;

/// What `web_search` says when no provider is configured: what to set, and where.
pub const NOT_CONFIGURED: &str = "web_search has no search provider configured. Set one in your user config (~/.config/cairn/config.toml; a workspace's .cairn/config.toml cannot): [web.search] provider = \"searxng\" with url = \"https://your.searxng.instance\", or provider = \"brave\" or \"tavily\" with secret = \"NAME\", the name of a vault secret holding the API key (cairn vault set NAME --host api.search.brave.com or api.tavily.com). See docs/configuration.md, section [web.search]. Until then, web_fetch can read a search engine's result page.";

/// The `web_search` tool.
pub struct WebSearch;

/// Arguments of `web_search`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// What to search for, as you would type it into a search engine.
    query: String,
    /// How many results (default 10, at most 20).
    #[schemars(range(min = 1, max = MAX_COUNT))]
    count: Option<usize>,
}

impl Tool for WebSearch {
    type Host = WebTools;
    type Args = Args;
    const NAME: &'static str = "web_search";
    const TITLE: &'static str = "Web search";
    const DESCRIPTION: &'static str = "Search the web through the configured search provider (SearXNG, Brave Search or Tavily) and list the results: numbered title, URL and snippet. Use it to find pages; then read one with web_fetch or web_readable.";
    const CATEGORY: Category = Category::Web;
    const EFFECT: Effect = Effect::Network;
    const AGENT_ONLY: bool = false;
    const READ_ONLY: bool = true;

    fn paths(_: &Args) -> Paths {
        Paths::none()
    }

    async fn call(web: &WebTools, args: Args, cx: CallContext) -> CallToolResult {
        answer(&cx, search(web, args)).await
    }
}

/// One search result.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SearchHit {
    pub title: String,
    pub url: String,
    pub snippet: String,
}

async fn search(web: &WebTools, args: Args) -> Result<String, String> {
    let query = args.query.trim();
    if query.is_empty() {
        return Err("web_search needs a non-empty query".into());
    }
    let count = args.count.unwrap_or(DEFAULT_COUNT).clamp(1, MAX_COUNT);
    let Some(settings) = &web.search else {
        return Err(NOT_CONFIGURED.into());
    };
    let provider = settings.provider;
    let request = request_for(settings, query, count)?;
    let response = web
        .send(request)
        .await
        .map_err(|e| format!("web_search ({}): {e}", provider.label()))?;
    let hits = read_response(settings, &response)?;
    Ok(render(provider, query, &hits, count))
}

/// The request for `query` to the configured provider, with its credential (if any) named.
fn request_for(settings: &SearchSettings, query: &str, count: usize) -> Result<WebRequest, String> {
    let provider = settings.provider;
    let needs_key = |host: &str| {
        format!(
            "web_search: {} needs an API key: set web.search.secret in your user config to the name of a vault secret holding it (cairn vault set NAME --host {host})",
            provider.label()
        )
    };
    let endpoint = |default: &str| -> Result<Url, String> {
        let text = settings.url.as_deref().unwrap_or(default);
        Url::parse(text).map_err(|e| {
            format!("web_search: web.search.url {text:?} is not a usable URL ({e}); fix it in your user config")
        })
    };
    let mut request = match provider {
        SearchProvider::Searxng => {
            let Some(base) = settings.url.as_deref() else {
                return Err("web_search: provider \"searxng\" needs web.search.url, the address of a SearXNG instance (https://searx.example.org), in your user config".into());
            };
            let mut url = endpoint(base)?;
            let path = format!("{}/search", url.path().trim_end_matches('/'));
            url.set_path(&path);
            url.query_pairs_mut()
                .append_pair("q", query)
                .append_pair("format", "json");
            let mut request = WebRequest::get(url.as_str());
            // An instance behind authentication takes the secret as a bearer token.
            if let Some(secret) = &settings.secret {
                request = request.with_credential(CredentialUse::bearer(secret.clone()));
            }
            request
        }
        SearchProvider::Brave => {
            let secret = settings
                .secret
                .clone()
                .ok_or_else(|| needs_key("api.search.brave.com"))?;
            let mut url = endpoint(BRAVE_ENDPOINT)?;
            url.query_pairs_mut()
                .append_pair("q", query)
                .append_pair("count", &count.to_string());
            WebRequest::get(url.as_str()).with_credential(CredentialUse {
                secret,
                placement: Placement::Header("X-Subscription-Token".into()),
            })
        }
        SearchProvider::Tavily => {
            let secret = settings
                .secret
                .clone()
                .ok_or_else(|| needs_key("api.tavily.com"))?;
            let url = endpoint(TAVILY_ENDPOINT)?;
            let body = json!({"query": query, "max_results": count});
            let mut request = WebRequest::new(Method::POST, url.as_str())
                .with_credential(CredentialUse::bearer(secret));
            request.body = Some(body.to_string().into_bytes());
            request.headers.insert(
                header::CONTENT_TYPE,
                header::HeaderValue::from_static("application/json"),
            );
            request
        }
    };
    request.headers.insert(
        header::ACCEPT,
        header::HeaderValue::from_static("application/json"),
    );
    Ok(request)
}

/// The hits in a provider's answer, or an error saying what went wrong and what to check.
fn read_response(settings: &SearchSettings, r: &WebResponse) -> Result<Vec<SearchHit>, String> {
    let provider = settings.provider;
    let label = provider.label();
    if !r.status.is_success() {
        let body = String::from_utf8_lossy(&r.body);
        let excerpt: String = collapse(&body).chars().take(300).collect();
        let hint = match (r.status.as_u16(), provider) {
            (401 | 403, SearchProvider::Searxng) => {
                " (the instance may not allow format=json: its settings.yml must list json under search.formats)".to_owned()
            }
            (401 | 403, _) => format!(
                " (check the API key in the vault secret `{}`)",
                settings.secret.as_deref().unwrap_or_default()
            ),
            (429, _) => " (the provider's rate limit or quota was reached; try again later)".into(),
            _ => String::new(),
        };
        return Err(format!(
            "web_search: {label} answered {}{hint}: {excerpt}",
            r.status
        ));
    }
    if r.truncated {
        return Err(format!(
            "web_search: {label}'s answer was longer than the web guard's size cap (web.max_bytes) and cannot be read"
        ));
    }
    let value: Value = serde_json::from_slice(&r.body).map_err(|e| {
        format!(
            "web_search: {label} did not answer with JSON ({e}); is {} the right endpoint?",
            r.final_url
        )
    })?;
    parse_hits(provider, &value)
}

/// The results of a provider's JSON answer.
pub fn parse_hits(provider: SearchProvider, value: &Value) -> Result<Vec<SearchHit>, String> {
    let (list, snippet_key) = match provider {
        SearchProvider::Searxng | SearchProvider::Tavily => (value.get("results"), "content"),
        SearchProvider::Brave => (
            value.get("web").and_then(|w| w.get("results")),
            "description",
        ),
    };
    let Some(list) = list else {
        // Brave leaves `web` out when nothing matched.
        if provider == SearchProvider::Brave && value.get("type").is_some() {
            return Ok(Vec::new());
        }
        return Err(format!(
            "web_search: {}'s answer has no results list; it may not be a {} endpoint",
            provider.label(),
            provider.config_name()
        ));
    };
    let Some(list) = list.as_array() else {
        return Err(format!(
            "web_search: {}'s results are not a list",
            provider.label()
        ));
    };
    let field = |item: &Value, key: &str| {
        item.get(key)
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned()
    };
    Ok(list
        .iter()
        .filter_map(|item| {
            let url = field(item, "url");
            if url.is_empty() {
                return None;
            }
            let mut title = field(item, "title");
            let mut snippet = field(item, snippet_key);
            // Brave marks the matched words with <strong> and escapes entities.
            if provider == SearchProvider::Brave {
                title = strip_tags(&title);
                snippet = strip_tags(&snippet);
            }
            Some(SearchHit {
                title: collapse(&title),
                url,
                snippet: collapse(&snippet),
            })
        })
        .collect())
}

fn strip_tags(s: &str) -> String {
    scraper::Html::parse_fragment(s)
        .root_element()
        .text()
        .collect()
}

fn render(provider: SearchProvider, query: &str, hits: &[SearchHit], count: usize) -> String {
    let shown = hits.len().min(count);
    if shown == 0 {
        return format!(
            "No results for {query:?} ({}). Try other words.\n",
            provider.label()
        );
    }
    let mut out = format!(
        "Search results for {query:?} ({}, {shown}):\n",
        provider.label()
    );
    for (i, hit) in hits.iter().take(count).enumerate() {
        let title = if hit.title.is_empty() {
            "(no title)"
        } else {
            &hit.title
        };
        out.push_str(&format!("\n{}. {title}\n   {}\n", i + 1, hit.url));
        if !hit.snippet.is_empty() {
            let mut snippet: String = hit.snippet.chars().take(MAX_SNIPPET_CHARS).collect();
            if hit.snippet.chars().count() > MAX_SNIPPET_CHARS {
                snippet.push('…');
            }
            out.push_str(&format!("   {snippet}\n"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_provider_answer_parses() {
        let searx = json!({"results": [{"title": "A", "url": "https://a.test/", "content": "about a"}, {"title": "no url"}]});
        assert_eq!(
            parse_hits(SearchProvider::Searxng, &searx),
            Ok(vec![SearchHit {
                title: "A".into(),
                url: "https://a.test/".into(),
                snippet: "about a".into()
            }])
        );
        let brave = json!({"type": "search", "web": {"results": [{"title": "<strong>Rust</strong> &amp; co", "url": "https://b.test/", "description": "the <strong>rust</strong> book"}]}});
        let hits = parse_hits(SearchProvider::Brave, &brave);
        assert_eq!(
            hits.as_ref()
                .map(|h| (h[0].title.as_str(), h[0].snippet.as_str())),
            Ok(("Rust & co", "the rust book"))
        );
        assert_eq!(
            parse_hits(SearchProvider::Brave, &json!({"type": "search"})),
            Ok(vec![])
        );
        let tavily = json!({"results": [{"title": "T", "url": "https://t.test/", "content": "c", "score": 0.9}]});
        assert_eq!(
            parse_hits(SearchProvider::Tavily, &tavily).map(|h| h.len()),
            Ok(1)
        );
        assert!(
            parse_hits(SearchProvider::Tavily, &json!({"x": 1}))
                .is_err_and(|e| e.contains("no results list"))
        );
    }

    #[test]
    fn results_are_numbered_and_capped() {
        let hits: Vec<SearchHit> = (1..=5)
            .map(|i| SearchHit {
                title: format!("T{i}"),
                url: format!("https://e.test/{i}"),
                snippet: "s".repeat(500),
            })
            .collect();
        let out = render(SearchProvider::Searxng, "q", &hits, 3);
        assert!(
            out.starts_with("Search results for \"q\" (SearXNG, 3):"),
            "{out}"
        );
        assert!(out.contains("\n3. T3\n   https://e.test/3\n"), "{out}");
        assert!(!out.contains("T4"), "{out}");
        assert!(out.contains('…'), "{out}");
        assert!(render(SearchProvider::Brave, "q", &[], 3).starts_with("No results"));
    }
}
