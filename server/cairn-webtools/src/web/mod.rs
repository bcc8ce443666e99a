//! The web tools, a tool set (category `web`) over one [`WebTools`] host, every request through
//! the [`WebGuard`].
//!
//! Each tool is one type in its own file ([`WEB_TOOLS`] lists them); the kit parses the
//! arguments against the tool's `Args` before it runs. A failure, including a guard refusal
//! (which says what was refused and why), is an error result the model reads.
//!
//! Shared code lives by theme: [`args`] (the URL and paging arguments several tools take),
//! `report` (how a response is shown), [`extract`] (parsing fetched pages and documents),
//! [`content`] (readable text, tables, find, outline, images), [`data`] (JSON Pointer, link
//! status, archive dates); [`search`] holds `web_search` and its providers, [`download`]
//! `web_download` into the workspace.

use std::future::Future;
use std::sync::Arc;

use cairn_toolkit::reply::{error, from_text};
use cairn_toolkit::{CallContext, Entry, ToolSet};
use cairn_workspace::Workspace;
use rmcp::model::CallToolResult;

use cairn_web::{Method, WebGuard, WebRequest, WebResponse};

mod archive;
pub mod args;
mod check_links;
pub mod content;
pub mod data;
pub mod download;
mod extract;
mod feed;
mod fetch;
mod fetch_raw;
mod find;
mod head;
mod images;
mod json;
mod links;
mod metadata;
mod outline;
mod readable;
mod report;
mod robots;
pub mod search;
mod settings;
mod sitemap;
mod tables;

pub use extract::{
    FeedItem, extract_links, extract_metadata, html_to_markdown, page, parse_feed, parse_sitemap,
    robots_allowed,
};
pub use settings::{SearchProvider, SearchSettings};

/// The web tools, in the order listed. `web_download` is last: without a workspace it is left
/// out ([`WebTools::tools`]).
pub const WEB_TOOLS: &[Entry<WebTools>] = &[
    Entry::of::<fetch::WebFetch>(),
    Entry::of::<fetch_raw::WebFetchRaw>(),
    Entry::of::<head::WebHead>(),
    Entry::of::<links::WebLinks>(),
    Entry::of::<metadata::WebMetadata>(),
    Entry::of::<robots::WebRobots>(),
    Entry::of::<sitemap::WebSitemap>(),
    Entry::of::<feed::WebFeed>(),
    Entry::of::<search::WebSearch>(),
    Entry::of::<readable::WebReadable>(),
    Entry::of::<tables::WebTables>(),
    Entry::of::<find::WebFind>(),
    Entry::of::<json::WebJson>(),
    Entry::of::<check_links::WebCheckLinks>(),
    Entry::of::<outline::WebOutline>(),
    Entry::of::<images::WebImages>(),
    Entry::of::<archive::WebArchive>(),
    Entry::of::<download::WebDownload>(),
];

/// How many characters `web_fetch` returns by default.
pub const DEFAULT_MAX_LENGTH: usize = 20_000;

/// The Wayback Machine's availability API, which `web_archive` asks by default.
pub const WAYBACK_AVAILABLE_URL: &str = "https://archive.org/wayback/available";

/// What the web tools share: one guard, on behalf of one user (for the per-user rate limit),
/// and the settings some tools need. Build it with the `with_*` methods, then take the tool set
/// with [`WebTools::tools`].
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

impl cairn_toolkit::Host for WebTools {
    fn workspace(&self) -> Option<&Arc<Workspace>> {
        self.workspace.as_ref()
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

    /// The tool set over this host: [`WEB_TOOLS`] (without a workspace, `web_download` is not
    /// offered: it needs somewhere to write).
    pub fn tools(self) -> ToolSet<WebTools> {
        ToolSet::new(self, WEB_TOOLS)
    }

    async fn get(&self, url: &str, method: Method) -> Result<WebResponse, String> {
        self.send(WebRequest::new(method, url))
            .await
            .map_err(|e| e.to_string())
    }

    /// `request` through the guard, on behalf of this tools' user.
    async fn send(&self, request: WebRequest) -> Result<WebResponse, cairn_web::WebError> {
        self.guard.fetch(request.for_user(self.user.clone())).await
    }

    /// A page fetched for reading as HTML: its text, or an error when it is not text at all.
    async fn get_html(&self, url: &str) -> Result<(WebResponse, String), String> {
        let r = self.get(url, Method::GET).await?;
        let ct = report::content_type(&r);
        if !report::is_html(&ct, &r.body) && !ct.is_empty() && !ct.contains("xml") {
            return Err(format!(
                "{} is not an HTML page ({ct}); web_fetch shows other text",
                r.final_url
            ));
        }
        let html = String::from_utf8_lossy(&r.body).into_owned();
        Ok((r, html))
    }
}

/// `work`'s result, unless the run is cancelled first: a slow server must not hold a cancelled
/// run (the kit adds no cancellation of its own).
async fn cancellable(
    cx: &CallContext,
    work: impl Future<Output = CallToolResult>,
) -> CallToolResult {
    tokio::select! {
        r = work => r,
        () = cx.cancel.cancelled() => error("cancelled"),
    }
}

/// `work`'s text, or its error, unless the run is cancelled first.
async fn answer(
    cx: &CallContext,
    work: impl Future<Output = Result<String, String>>,
) -> CallToolResult {
    cancellable(cx, async { from_text(work.await) }).await
}

#[cfg(test)]
mod tests {
    use cairn_agent::tools::{Effect, ToolHost};
    use serde_json::{Value, json};

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
    fn tools_are_listed_as_network_web_tools() {
        let guard = Arc::new(WebGuard::new(cairn_web::GuardConfig::default()).must());
        let web = WebTools::new(guard, "me");
        let all: Vec<&str> = WEB_TOOLS.iter().map(Entry::name).collect();
        let tools = web.clone().tools().list();
        let names: Vec<&str> = tools.iter().map(|t| t.tool.name.as_ref()).collect();
        // Without a workspace there is nowhere to download to.
        assert_eq!(names, all[..all.len() - 1]);
        assert!(!names.contains(&"web_download"));
        assert!(tools.iter().all(|t| t.effect == Effect::Network
            && t.category == "web"
            && !t.agent_only
            && t.tool.annotations.as_ref().is_some_and(|a| {
                a.read_only_hint == Some(true)
                    && a.destructive_hint == Some(false)
                    && a.open_world_hint == Some(true)
            })));
        let dir = tempfile::tempdir().must();
        let ws = Arc::new(Workspace::new(vec![dir.path().to_path_buf()]).must());
        let tools = web.with_workspace(ws).tools().list();
        let names: Vec<&str> = tools.iter().map(|t| t.tool.name.as_ref()).collect();
        assert_eq!(names, all);
        // It writes files, so it is `Write` (asked by default) and offered in agent mode only,
        // like the built-in writing tools.
        let download = tools.iter().find(|t| t.tool.name == "web_download");
        assert!(download.is_some_and(|t| t.effect == Effect::Write
            && t.agent_only
            && t.category == "web"
            && t.tool.annotations.as_ref().is_some_and(|a| {
                a.read_only_hint == Some(false)
                    && a.destructive_hint == Some(true)
                    && a.open_world_hint == Some(true)
            })));
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
        let guard = Arc::new(WebGuard::new(cairn_web::GuardConfig::default()).must());
        let tools = WebTools::new(guard, "me").tools();
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
        let mistyped = call("web_fetch", json!({"url": 5})).await;
        assert_eq!(mistyped.is_error, Some(true));
        let shown = format!("{:?}", mistyped.content);
        assert!(
            shown.contains("invalid argument `url` for web_fetch"),
            "{shown}"
        );
        // Without a workspace there is no web_download to call.
        let nowhere = call(
            "web_download",
            json!({"url": "https://e.test/f", "path": "f"}),
        )
        .await;
        assert_eq!(nowhere.is_error, Some(true));
        let refused = call("web_fetch", json!({"url": "http://127.0.0.1:9/"})).await;
        assert_eq!(refused.is_error, Some(true));
        let shown = format!("{:?}", refused.content);
        assert!(
            shown.contains("refused") && shown.contains("loopback"),
            "{shown}"
        );
    }

    #[tokio::test]
    async fn a_cancelled_run_stops_the_call() {
        // A server that takes the connection and never answers.
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.must();
        let url = format!("http://{}/slow", listener.local_addr().must());
        let config = cairn_web::GuardConfig {
            allow_loopback: true,
            ..cairn_web::GuardConfig::default()
        };
        let guard = Arc::new(WebGuard::new(config).must());
        let tools = WebTools::new(guard, "me").tools();
        let cancel = tokio_util::sync::CancellationToken::new();
        let ctx = CallContext {
            session_id: String::new(),
            run_id: String::new(),
            call_id: String::new(),
            cancel: cancel.clone(),
        };
        tokio::spawn(async move {
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
            cancel.cancel();
        });
        let Value::Object(args) = json!({"url": url}) else {
            unreachable!()
        };
        let r = tools.call("web_fetch", args, ctx).await;
        assert_eq!(r.is_error, Some(true));
        assert!(format!("{:?}", r.content).contains("cancelled"));
        drop(listener);
    }
}
