//! The web tools against loopback HTTP servers, asserting what the model reads.
//!
//! Each stand-in server is hand-written HTTP/1.1 on 127.0.0.1 that records every request
//! (method, path, headers, body), so a test can check what arrived (the API key header, the
//! POST body) and that nothing arrived when the tool refused first. The guard runs with
//! `allow_loopback`, the switch it offers for exactly this, and no rate limits unless a test
//! is about them.

use std::collections::HashMap;
use std::path::Path;
use std::sync::{Arc, Mutex};

use cairn_agent::run::result_text;
use cairn_agent::tools::{edits_of, protected_of};
use cairn_web::{CredentialRefusal, Credentials, GuardConfig, WebGuard};
use cairn_webtools::web::{SearchProvider, SearchSettings, WebTools};
use cairn_workspace::{AccessRules, ExactApprovals, Workspace};
use rmcp::model::CallToolResult;
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

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

/// One request as the server saw it; header names in lower case.
#[derive(Debug, Clone)]
struct Seen {
    method: String,
    path: String,
    headers: HashMap<String, String>,
    body: Vec<u8>,
}

/// What the server answers.
struct Answer {
    status: u16,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
}

fn answer(status: u16, content_type: &str, body: impl Into<Vec<u8>>) -> Answer {
    Answer {
        status,
        headers: vec![("Content-Type".into(), content_type.into())],
        body: body.into(),
    }
}

fn html(body: &str) -> Answer {
    answer(200, "text/html; charset=utf-8", body)
}

fn json_answer(value: Value) -> Answer {
    answer(200, "application/json", value.to_string())
}

struct Server {
    base: String,
    seen: Arc<Mutex<Vec<Seen>>>,
}

impl Server {
    async fn start(respond: impl Fn(&Seen) -> Answer + Send + Sync + 'static) -> Server {
        let listener = TcpListener::bind("127.0.0.1:0").await.must();
        let base = format!("http://{}", listener.local_addr().must());
        let seen = Arc::new(Mutex::new(Vec::new()));
        let (log, respond) = (seen.clone(), Arc::new(respond));
        tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                let (log, respond) = (log.clone(), respond.clone());
                tokio::spawn(async move {
                    let _ = serve(stream, &log, &*respond).await;
                });
            }
        });
        Server { base, seen }
    }

    fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    fn seen(&self) -> Vec<Seen> {
        self.seen.lock().map(|s| s.clone()).unwrap_or_default()
    }
}

async fn serve(
    mut stream: TcpStream,
    log: &Mutex<Vec<Seen>>,
    respond: &(dyn Fn(&Seen) -> Answer + Send + Sync),
) -> std::io::Result<()> {
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        if stream.read(&mut byte).await? == 0 {
            return Ok(());
        }
        head.push(byte[0]);
    }
    let head = String::from_utf8_lossy(&head).into_owned();
    let mut lines = head.lines();
    let mut first = lines.next().unwrap_or_default().split_whitespace();
    let method = first.next().unwrap_or_default().to_owned();
    let path = first.next().unwrap_or("/").to_owned();
    let headers: HashMap<String, String> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_owned()))
        .collect();
    let length = headers
        .get("content-length")
        .and_then(|v| v.parse::<usize>().ok())
        .unwrap_or(0);
    let mut body = vec![0u8; length];
    stream.read_exact(&mut body).await?;
    let request = Seen {
        method,
        path,
        headers,
        body,
    };
    let reply = respond(&request);
    if let Ok(mut log) = log.lock() {
        log.push(request.clone());
    }
    let mut out = format!(
        "HTTP/1.1 {} X\r\nContent-Length: {}\r\nConnection: close\r\n",
        reply.status,
        reply.body.len()
    );
    for (k, v) in &reply.headers {
        out.push_str(&format!("{k}: {v}\r\n"));
    }
    out.push_str("\r\n");
    stream.write_all(out.as_bytes()).await?;
    if request.method != "HEAD" {
        stream.write_all(&reply.body).await?;
    }
    stream.shutdown().await
}

/// Secrets by name: (name, value, the one host it is bound to).
struct Bound(Vec<(&'static str, &'static str, &'static str)>);

impl Credentials for Bound {
    fn for_host(&self, name: &str, host: &str) -> Result<cairn_vault::Secret, CredentialRefusal> {
        match self.0.iter().find(|(n, _, _)| *n == name) {
            Some((_, value, bound)) if *bound == host => {
                Ok(cairn_vault::Secret::new((*value).to_owned()))
            }
            Some((_, _, bound)) => Err(CredentialRefusal {
                reason: format!("it is bound to {bound}"),
            }),
            None => Err(CredentialRefusal {
                reason: "no such secret".into(),
            }),
        }
    }
}

fn loopback() -> GuardConfig {
    GuardConfig {
        allow_loopback: true,
        per_user_per_minute: 0,
        per_host_per_minute: 0,
        ..GuardConfig::default()
    }
}

fn tools_with(config: GuardConfig, secrets: Bound) -> WebTools {
    let guard = WebGuard::new(config)
        .must()
        .with_credentials(Arc::new(secrets));
    WebTools::new(Arc::new(guard), "tester")
}

fn tools() -> WebTools {
    tools_with(loopback(), Bound(vec![]))
}

/// `name` called through the tool set of `tools`, as the agent calls it.
async fn call(tools: &WebTools, name: &str, args: Value) -> CallToolResult {
    cairn_test_support::tools::call(&tools.clone().tools(), name, args)
        .await
        .result
}

/// The text of a successful result (panics, showing it, on an error result).
async fn ok(tools: &WebTools, name: &str, args: Value) -> String {
    let r = call(tools, name, args).await;
    let shown = result_text(&r);
    assert_ne!(r.is_error, Some(true), "{name} failed: {shown}");
    shown
}

/// The text of an error result (panics, showing it, on success).
async fn failed(tools: &WebTools, name: &str, args: Value) -> String {
    let r = call(tools, name, args).await;
    let shown = result_text(&r);
    assert_eq!(r.is_error, Some(true), "{name} should have failed: {shown}");
    shown
}

fn searxng_results() -> Value {
    json!({"query": "cairn", "results": [
        {"title": "Cairn - Wikipedia", "url": "https://en.wikipedia.org/wiki/Cairn", "content": "A cairn is a human-made pile of stones."},
        {"title": "Building cairns", "url": "https://example.org/build", "content": "How to stack stones."},
        {"title": "Third", "url": "https://example.org/3", "content": "three"}
    ]})
}

#[tokio::test]
async fn search_searxng_lists_numbered_results() {
    let server = Server::start(|_| json_answer(searxng_results())).await;
    let tools = tools().with_search(Some(SearchSettings {
        provider: SearchProvider::Searxng,
        url: Some(server.url("/searx/")),
        secret: None,
    }));
    let out = ok(
        &tools,
        "web_search",
        json!({"query": "cairn stones", "count": 2}),
    )
    .await;
    assert!(
        out.starts_with("Search results for \"cairn stones\" (SearXNG, 2):"),
        "{out}"
    );
    assert!(
        out.contains("\n1. Cairn - Wikipedia\n   https://en.wikipedia.org/wiki/Cairn\n   A cairn is a human-made pile of stones.\n"),
        "{out}"
    );
    assert!(out.contains("\n2. Building cairns\n"), "{out}");
    assert!(!out.contains("Third"), "{out}");
    let seen = server.seen();
    assert_eq!(seen.len(), 1);
    assert_eq!(seen[0].method, "GET");
    assert_eq!(seen[0].path, "/searx/search?q=cairn+stones&format=json");
    assert!(!seen[0].headers.contains_key("authorization"));
}

#[tokio::test]
async fn search_brave_sends_the_key_only_to_the_host_it_is_bound_to() {
    let server = Server::start(|_| {
        json_answer(json!({"type": "search", "web": {"results": [
            {"title": "<strong>Cairn</strong> trail", "url": "https://trail.test/", "description": "Follow the <strong>cairns</strong> &amp; markers"}
        ]}}))
    })
    .await;
    let settings = SearchSettings {
        provider: SearchProvider::Brave,
        url: Some(server.url("/res/v1/web/search")),
        secret: Some("brave".into()),
    };
    // Bound to the stand-in's host: the header arrives with the key.
    let bound_here = tools_with(
        loopback(),
        Bound(vec![("brave", "sk-brave-123", "127.0.0.1")]),
    )
    .with_search(Some(settings.clone()));
    let out = ok(&bound_here, "web_search", json!({"query": "cairn"})).await;
    assert!(
        out.contains("1. Cairn trail\n   https://trail.test/\n   Follow the cairns & markers"),
        "{out}"
    );
    assert!(!out.contains("sk-brave-123"), "{out}");
    let seen = server.seen();
    assert_eq!(seen.len(), 1);
    assert_eq!(seen[0].path, "/res/v1/web/search?q=cairn&count=10");
    assert_eq!(
        seen[0]
            .headers
            .get("x-subscription-token")
            .map(String::as_str),
        Some("sk-brave-123")
    );
    // Bound to Brave's real host only: refused before anything is sent to the stand-in.
    let bound_elsewhere = tools_with(
        loopback(),
        Bound(vec![("brave", "sk-brave-123", "api.search.brave.com")]),
    )
    .with_search(Some(settings));
    let message = failed(&bound_elsewhere, "web_search", json!({"query": "cairn"})).await;
    assert!(
        message.contains("secret `brave` may not be sent to 127.0.0.1")
            && message.contains("bound to api.search.brave.com"),
        "{message}"
    );
    assert_eq!(
        server.seen().len(),
        1,
        "the refused search reached the server"
    );
}

#[tokio::test]
async fn search_tavily_posts_json_with_a_bearer_key() {
    let server = Server::start(|req| {
        let ok = req.method == "POST"
            && req.headers.get("authorization").map(String::as_str) == Some("Bearer tvly-key")
            && req.headers.get("content-type").map(String::as_str) == Some("application/json");
        if ok {
            json_answer(json!({"query": "q", "results": [
                {"title": "Tavily hit", "url": "https://t.test/1", "content": "found it", "score": 0.9}
            ]}))
        } else {
            answer(401, "application/json", r#"{"detail":"Unauthorized"}"#)
        }
    })
    .await;
    let tools = tools_with(loopback(), Bound(vec![("tavily", "tvly-key", "127.0.0.1")]))
        .with_search(Some(SearchSettings {
            provider: SearchProvider::Tavily,
            url: Some(server.url("/search")),
            secret: Some("tavily".into()),
        }));
    let out = ok(
        &tools,
        "web_search",
        json!({"query": "stone markers", "count": 3}),
    )
    .await;
    assert!(
        out.contains("1. Tavily hit\n   https://t.test/1\n   found it"),
        "{out}"
    );
    let seen = server.seen();
    let body: Value = serde_json::from_slice(&seen[0].body).must();
    assert_eq!(body, json!({"query": "stone markers", "max_results": 3}));
}

#[tokio::test]
async fn search_errors_say_what_to_configure() {
    let none = failed(&tools(), "web_search", json!({"query": "cairn"})).await;
    assert!(
        none.contains("no search provider configured")
            && none.contains("[web.search]")
            && none.contains("provider = \"searxng\"")
            && none.contains("docs/configuration.md"),
        "{none}"
    );
    let keyless = tools().with_search(Some(SearchSettings {
        provider: SearchProvider::Brave,
        url: None,
        secret: None,
    }));
    let message = failed(&keyless, "web_search", json!({"query": "cairn"})).await;
    assert!(
        message.contains("set web.search.secret")
            && message.contains("--host api.search.brave.com"),
        "{message}"
    );
    let urlless = tools().with_search(Some(SearchSettings {
        provider: SearchProvider::Searxng,
        url: None,
        secret: None,
    }));
    let message = failed(&urlless, "web_search", json!({"query": "cairn"})).await;
    assert!(message.contains("needs web.search.url"), "{message}");
    let bad = failed(
        &tools(),
        "web_search",
        json!({"query": "x", "secret": "brave"}),
    )
    .await;
    assert!(bad.contains("unknown field `secret`"), "{bad}");
}

#[tokio::test]
async fn search_provider_refusal_names_the_key_to_check() {
    let server = Server::start(|_| answer(401, "application/json", r#"{"error":"bad key"}"#)).await;
    let tools = tools_with(loopback(), Bound(vec![("brave", "wrong", "127.0.0.1")])).with_search(
        Some(SearchSettings {
            provider: SearchProvider::Brave,
            url: Some(server.url("/s")),
            secret: Some("brave".into()),
        }),
    );
    let message = failed(&tools, "web_search", json!({"query": "cairn"})).await;
    assert!(
        message.contains("Brave Search answered 401")
            && message.contains("check the API key in the vault secret `brave`"),
        "{message}"
    );
}

/// A workspace on a temp dir, with the default access rules (the deny list applies).
fn workspace(dir: &Path) -> Arc<Workspace> {
    let ws = Workspace::new(vec![dir.to_path_buf()]).must().with_access(
        |_| AccessRules::new("tester", None, None),
        ExactApprovals::new(),
    );
    Arc::new(ws)
}

#[tokio::test]
async fn download_writes_the_file_and_reports_the_edit() {
    let payload: Vec<u8> = (0..=255u8).cycle().take(5000).collect();
    let body = payload.clone();
    let server =
        Server::start(move |_| answer(200, "application/octet-stream", body.clone())).await;
    let dir = tempfile::tempdir().must();
    let tools = tools().with_workspace(workspace(dir.path()));
    let r = call(
        &tools,
        "web_download",
        json!({"url": server.url("/logo.bin"), "path": "assets/img/logo.bin"}),
    )
    .await;
    let shown = result_text(&r);
    assert_ne!(r.is_error, Some(true), "{shown}");
    assert!(
        shown.starts_with("saved assets/img/logo.bin (5000 bytes, application/octet-stream) from http://127.0.0.1:"),
        "{shown}"
    );
    assert_eq!(
        std::fs::read(dir.path().join("assets/img/logo.bin")).must(),
        payload
    );
    let edits = serde_json::to_value(edits_of(&r)).must();
    assert_eq!(edits[0]["applied"], true, "{edits}");
    assert!(
        edits[0]["uri"]
            .as_str()
            .is_some_and(|u| u.ends_with("assets/img/logo.bin")),
        "{edits}"
    );
}

#[tokio::test]
async fn download_refuses_escapes_and_existing_files_and_asks_about_protected_paths() {
    let server = Server::start(|_| answer(200, "text/plain", "new content")).await;
    let dir = tempfile::tempdir().must();
    let root = dir.path().join("ws");
    std::fs::create_dir_all(root.join(".git")).must();
    std::fs::write(root.join(".git/config"), "[core]\n").must();
    std::fs::write(root.join("notes.txt"), "old content").must();
    let tools = tools().with_workspace(workspace(&root));
    let url = server.url("/file.txt");

    let escape = failed(&tools, "web_download", json!({"url": url, "path": "../x"})).await;
    assert!(escape.contains("outside the workspace"), "{escape}");
    assert!(!dir.path().join("x").exists());

    // A protected path is refused before the tool runs, naming it, so the agent asks the user
    // about that exact path.
    let git = call(
        &tools,
        "web_download",
        json!({"url": url, "path": ".git/config", "overwrite": true}),
    )
    .await;
    assert_eq!(git.is_error, Some(true));
    let shown = result_text(&git);
    assert!(
        shown.contains("refused to write `.git/config`: it is protected"),
        "{shown}"
    );
    let asked = protected_of(&git);
    assert_eq!(asked.len(), 1, "{asked:?}");
    assert_eq!(
        (asked[0].path.as_str(), asked[0].operation.as_str()),
        (".git/config", "write")
    );
    assert_eq!(
        std::fs::read_to_string(root.join(".git/config")).must(),
        "[core]\n"
    );

    let exists = failed(
        &tools,
        "web_download",
        json!({"url": url, "path": "notes.txt"}),
    )
    .await;
    assert!(
        exists.contains("notes.txt already exists; pass overwrite: true to replace it"),
        "{exists}"
    );
    assert_eq!(
        std::fs::read_to_string(root.join("notes.txt")).must(),
        "old content"
    );
    assert!(server.seen().is_empty(), "a refused download was fetched");

    let replaced = ok(
        &tools,
        "web_download",
        json!({"url": url, "path": "notes.txt", "overwrite": true}),
    )
    .await;
    assert!(
        replaced.starts_with("replaced notes.txt (11 bytes"),
        "{replaced}"
    );
    assert_eq!(
        std::fs::read_to_string(root.join("notes.txt")).must(),
        "new content"
    );

    // With the user's approval of that exact path held (as the agent holds it for the call it
    // asked about), the download goes through.
    let approvals = ExactApprovals::new();
    let canonical = std::fs::canonicalize(root.join(".git/config")).must();
    approvals.hold(&canonical, cairn_workspace::Operation::Write);
    let held = Workspace::new(vec![root.clone()])
        .must()
        .with_access(|_| AccessRules::new("tester", None, None), approvals);
    let approved = ok(
        &tools.clone().with_workspace(Arc::new(held)),
        "web_download",
        json!({"url": url, "path": ".git/config", "overwrite": true}),
    )
    .await;
    assert!(
        approved.starts_with("replaced .git/config (11 bytes"),
        "{approved}"
    );
    assert_eq!(
        std::fs::read_to_string(root.join(".git/config")).must(),
        "new content"
    );
}

#[tokio::test]
async fn download_over_the_size_cap_or_with_an_error_status_saves_nothing() {
    let server = Server::start(|req| {
        if req.path == "/big" {
            answer(200, "application/zip", vec![b'z'; 1024 * 1024 + 200_000])
        } else {
            answer(404, "text/html", "<h1>Not Found</h1>")
        }
    })
    .await;
    let dir = tempfile::tempdir().must();
    let tools = tools().with_workspace(workspace(dir.path()));
    let big = failed(
        &tools,
        "web_download",
        json!({"url": server.url("/big"), "path": "big.zip"}),
    )
    .await;
    assert!(
        big.contains("nothing was saved to big.zip")
            && big.contains("larger than the web size cap of 1048576 bytes"),
        "{big}"
    );
    assert!(!dir.path().join("big.zip").exists());
    let missing = failed(
        &tools,
        "web_download",
        json!({"url": server.url("/gone"), "path": "gone.html"}),
    )
    .await;
    assert!(missing.contains("answered 404 Not Found"), "{missing}");
    assert!(!dir.path().join("gone.html").exists());
}

const ARTICLE: &str = r##"<!doctype html><html><head><title>Cairn guide</title></head><body>
<nav><a href="/">Home</a> | Site menu</nav>
<header>Trail Society banner</header>
<main>
<article>
<h1 id="top">Cairn guide</h1>
<p>Cairns mark the trail where paths are faint. Look for the next cairn before leaving one.</p>
<h2 id="building">Building</h2>
<p>Never build new cairns on marked trails.</p>
<h3><a name="rules"></a>Rules</h3>
<table><caption>Trail heights</caption>
<tr><th>Trail</th><th>Height (m)</th></tr>
<tr><td>North ridge</td><td>1345</td></tr>
<tr><td>South col</td><td>980</td></tr>
</table>
<img src="/img/cairn.jpg" alt="A tall cairn" width="640" height="480">
<img src="../img/cairn.jpg"><img src="https://cdn.test/map.png" alt="Map">
<aside>Buy our stone kits</aside>
</article>
</main>
<footer>Copyright Trail Society</footer>
</body></html>"##;

#[tokio::test]
async fn page_tools_read_the_parts_of_an_article() {
    let server = Server::start(|_| html(ARTICLE)).await;
    let tools = tools();
    let url = server.url("/guide/");

    let readable = ok(&tools, "web_readable", json!({"url": url})).await;
    assert!(readable.contains("Title: Cairn guide"), "{readable}");
    assert!(readable.contains("# Cairn guide"), "{readable}");
    assert!(readable.contains("Look for the next cairn"), "{readable}");
    for furniture in [
        "Site menu",
        "Trail Society banner",
        "stone kits",
        "Copyright",
    ] {
        assert!(!readable.contains(furniture), "{furniture}: {readable}");
    }
    let parted = ok(
        &tools,
        "web_readable",
        json!({"url": url, "max_length": 40}),
    )
    .await;
    assert!(
        parted.contains("[content truncated; call again with start_index=40]"),
        "{parted}"
    );

    let tables = ok(&tools, "web_tables", json!({"url": url})).await;
    assert!(tables.contains("1 tables\n"), "{tables}");
    assert!(
        tables.contains("## Table 1: Trail heights (3 rows × 2 columns)"),
        "{tables}"
    );
    assert!(
        tables.contains(
            "| Trail | Height (m) |\n| --- | --- |\n| North ridge | 1345 |\n| South col | 980 |"
        ),
        "{tables}"
    );
    let no_such = failed(&tools, "web_tables", json!({"url": url, "table": 2})).await;
    assert!(
        no_such.contains("has 1 tables; there is no table 2"),
        "{no_such}"
    );

    let found = ok(
        &tools,
        "web_find",
        json!({"url": url, "text": "CAIRNS", "context": 10}),
    )
    .await;
    assert!(found.contains("2 matches for \"CAIRNS\""), "{found}");
    assert!(found.contains("**Cairns** mark the"), "{found}");
    let absent = ok(&tools, "web_find", json!({"url": url, "text": "volcano"})).await;
    assert!(absent.contains("\"volcano\" does not occur"), "{absent}");

    let outline = ok(&tools, "web_outline", json!({"url": url})).await;
    assert!(
        outline.contains(&format!("- h1 Cairn guide — {url}#top\n")),
        "{outline}"
    );
    assert!(
        outline.contains(&format!("  - h2 Building — {url}#building\n")),
        "{outline}"
    );
    assert!(
        outline.contains(&format!("    - h3 Rules — {url}#rules\n")),
        "{outline}"
    );

    let images = ok(&tools, "web_images", json!({"url": url})).await;
    assert!(images.contains("2 images\n"), "{images}");
    assert!(
        images.contains(&format!(
            "- {}/img/cairn.jpg (640×480)\n  alt: A tall cairn\n",
            server.base
        )),
        "{images}"
    );
    assert!(
        images.contains("- https://cdn.test/map.png\n  alt: Map\n"),
        "{images}"
    );
}

#[tokio::test]
async fn json_is_pretty_printed_and_pointers_select_or_explain_a_miss() {
    let server = Server::start(|_| {
        json_answer(json!({"name": "cairn", "releases": [{"version": "0.1.0"}, {"version": "0.2.0", "yanked": false}]}))
    })
    .await;
    let tools = tools();
    let url = server.url("/api/crate");
    let whole = ok(&tools, "web_json", json!({"url": url})).await;
    assert!(whole.contains("\"name\": \"cairn\",\n"), "{whole}");
    let one = ok(
        &tools,
        "web_json",
        json!({"url": url, "pointer": "/releases/1/version"}),
    )
    .await;
    assert!(one.contains("Pointer: /releases/1/version\n"), "{one}");
    assert!(one.trim_end().ends_with("\"0.2.0\""), "{one}");
    let miss = failed(
        &tools,
        "web_json",
        json!({"url": url, "pointer": "/releases/7/version"}),
    )
    .await;
    assert_eq!(
        miss,
        "no value at /releases/7/version: /releases is an array of 2 items, and \"7\" is not an index in it (0 to 1)"
    );
    let key_miss = failed(&tools, "web_json", json!({"url": url, "pointer": "/nme"})).await;
    assert!(
        key_miss.contains("its keys are: name, releases"),
        "{key_miss}"
    );
    let page = Server::start(|_| html("<p>not json</p>")).await;
    let not_json = failed(&tools, "web_json", json!({"url": page.url("/")})).await;
    assert!(
        not_json.contains("is not JSON (text/html; charset=utf-8)"),
        "{not_json}"
    );
}

#[tokio::test]
async fn check_links_reports_each_url_and_falls_back_to_get() {
    let server = Server::start(|req| match (req.method.as_str(), req.path.as_str()) {
        (_, "/ok") => html("fine"),
        (_, "/moved") => Answer {
            status: 301,
            headers: vec![("Location".into(), "/ok".into())],
            body: Vec::new(),
        },
        ("HEAD", "/no-head") => answer(405, "text/plain", ""),
        ("GET", "/no-head") => html("served by GET"),
        _ => answer(404, "text/plain", "missing"),
    })
    .await;
    let tools = tools();
    let urls = [
        server.url("/ok"),
        server.url("/missing"),
        server.url("/moved"),
        server.url("/no-head"),
        "ftp://example.com/".to_owned(),
    ];
    let out = ok(&tools, "web_check_links", json!({"urls": urls})).await;
    assert!(out.starts_with("Checked 4 of 5 URLs"), "{out}");
    assert!(
        out.contains(&format!("1. {}: 200 OK (ok)\n", urls[0])),
        "{out}"
    );
    assert!(
        out.contains(&format!("2. {}: 404 Not Found (broken)\n", urls[1])),
        "{out}"
    );
    assert!(
        out.contains(&format!(
            "3. {}: 200 OK (ok), final URL {} after 1 redirects\n",
            urls[2], urls[0]
        )),
        "{out}"
    );
    assert!(
        out.contains(&format!(
            "4. {}: 200 OK (ok) (by GET; HEAD was refused)\n",
            urls[3]
        )),
        "{out}"
    );
    assert!(
        out.contains("5. ftp://example.com/: error: refused"),
        "{out}"
    );
    let too_many = failed(
        &tools,
        "web_check_links",
        json!({"urls": vec![urls[0].clone(); 11]}),
    )
    .await;
    assert!(too_many.contains("at most 10 URLs"), "{too_many}");
}

#[tokio::test]
async fn check_links_stops_when_the_rate_limit_refuses() {
    let server = Server::start(|_| html("fine")).await;
    let tools = tools_with(
        GuardConfig {
            per_user_per_minute: 2,
            ..loopback()
        },
        Bound(vec![]),
    );
    let urls: Vec<String> = (1..=4).map(|i| server.url(&format!("/p{i}"))).collect();
    let out = ok(&tools, "web_check_links", json!({"urls": urls})).await;
    assert!(out.starts_with("Checked 2 of 4 URLs"), "{out}");
    assert!(
        out.contains(&format!("2. {}: 200 OK (ok)\n", urls[1])),
        "{out}"
    );
    assert!(
        out.contains("Stopped: rate limit for user tester reached: try again in"),
        "{out}"
    );
    assert!(
        out.contains(&format!("Not checked (2): {}, {}\n", urls[2], urls[3])),
        "{out}"
    );
    assert_eq!(server.seen().len(), 2);
}

#[tokio::test]
async fn archive_finds_the_closest_snapshot() {
    let server = Server::start(|req| {
        if req.path.contains("gone.test") {
            json_answer(json!({"url": "gone.test", "archived_snapshots": {}}))
        } else {
            json_answer(
                json!({"url": "example.com", "archived_snapshots": {"closest": {
                "status": "200", "available": true,
                "url": "http://web.archive.org/web/20190315000000/https://example.com/",
                "timestamp": "20190315000000"}}}),
            )
        }
    })
    .await;
    let tools = tools().with_archive_endpoint(server.url("/wayback/available"));
    let out = ok(
        &tools,
        "web_archive",
        json!({"url": "https://example.com/", "timestamp": "2019"}),
    )
    .await;
    assert!(
        out.contains("URL: http://web.archive.org/web/20190315000000/https://example.com/\n"),
        "{out}"
    );
    assert!(out.contains("Taken: 2019-03-15 00:00:00 UTC\n"), "{out}");
    assert!(out.contains("(the one closest to 2019 asked for)"), "{out}");
    assert_eq!(
        server.seen()[0].path,
        "/wayback/available?url=https%3A%2F%2Fexample.com%2F&timestamp=2019"
    );
    let none = ok(
        &tools,
        "web_archive",
        json!({"url": "https://gone.test/page"}),
    )
    .await;
    assert!(
        none.contains("has no snapshot of https://gone.test/page"),
        "{none}"
    );
    let bad = failed(
        &tools,
        "web_archive",
        json!({"url": "https://example.com/", "timestamp": "March"}),
    )
    .await;
    assert!(bad.contains("must be YYYYMMDDhhmmss"), "{bad}");
}
