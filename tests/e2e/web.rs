//! The web tools through the real binary: `web_fetch` of a page on a loopback server returns
//! Markdown when `web.allow_loopback` is on, is refused by the guard without it (and no
//! connection is made), and a scripted chat's `web_fetch` puts the page into the next request;
//! a chat's `web_search` asks the configured SearXNG stand-in and the model reads the results;
//! an agent chat's `web_download` lands the file in the workspace.

use std::process::Output;

use cairn_test_support::{Format, Reply};
use serde_json::{Value, json};

use crate::support::{HttpStub, Sandbox, StubReply, text};

const PAGE: &str = "<!doctype html><html><head><title>Trail notes</title>\
<script>tracker()</script></head><body><h1>Cairn trail</h1>\
<p>Follow the <a href=\"/next\">stone markers</a> north.</p></body></html>";

/// A loopback HTTP server answering every request with [`PAGE`]; counts the connections.
fn page_server() -> (String, HttpStub) {
    let stub = HttpStub::start(|_| {
        StubReply::Status(
            200,
            vec!["content-type: text/html; charset=utf-8".into()],
            PAGE.to_string(),
        )
    });
    (stub.url("/trail"), stub)
}

/// A loopback server answering every request with `body` (`content_type`).
fn stand_in(content_type: &'static str, body: String) -> (String, HttpStub) {
    let stub = HttpStub::start(move |_| {
        StubReply::Status(
            200,
            vec![format!("content-type: {content_type}")],
            body.clone(),
        )
    });
    (stub.url(""), stub)
}

fn fetch_call(sb: &Sandbox, url: &str, env: &[(&str, &str)]) -> (Output, Value) {
    let ws = sb.ws();
    let args = json!({"url": url}).to_string();
    let out = sb.run(
        &[
            "tools",
            "call",
            "web_fetch",
            "--args",
            &args,
            "--json",
            "--yes",
            "-w",
            ws.to_str().unwrap(),
        ],
        env,
    );
    let result: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {} {}", text(&out.stdout), text(&out.stderr)));
    (out, result)
}

#[test]
fn web_fetch_returns_markdown_when_loopback_is_allowed() {
    let sb = Sandbox::new(Format::OpenAi, vec![]);
    let (url, hits) = page_server();
    let (out, result) = fetch_call(&sb, &url, &[("CAIRN_WEB__ALLOW_LOOPBACK", "true")]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_ne!(result["isError"], true, "{result}");
    let body = result["content"][0]["text"].as_str().unwrap();
    assert!(body.contains("# Cairn trail"), "{body}");
    assert!(body.contains("[stone markers](/next)"), "{body}");
    assert!(body.contains(&format!("URL: {url}")), "{body}");
    assert!(body.contains("Status: 200 OK"), "{body}");
    assert!(!body.contains("tracker"), "{body}");
    assert_eq!(hits.connections(), 1);
}

#[test]
fn web_fetch_of_loopback_is_refused_by_default_and_nothing_connects() {
    let sb = Sandbox::new(Format::OpenAi, vec![]);
    let (url, hits) = page_server();
    let (out, result) = fetch_call(&sb, &url, &[]);
    assert!(!out.status.success());
    assert_eq!(result["isError"], true, "{result}");
    let message = result["content"][0]["text"].as_str().unwrap();
    assert!(
        message.starts_with("refused ") && message.contains("a loopback address"),
        "{message}"
    );
    assert_eq!(hits.connections(), 0);
}

#[test]
fn chat_web_fetch_puts_the_page_into_the_next_request() {
    let (url, hits) = page_server();
    let sb = Sandbox::new(
        Format::OpenAi,
        vec![
            Reply::tool_call("web_fetch", json!({"url": url})),
            Reply::text("The trail goes north."),
        ],
    );
    let ws = sb.ws();
    let out = sb.run(
        &[
            "chat",
            "-w",
            ws.to_str().unwrap(),
            "--yes",
            "read the trail notes page",
        ],
        &[("CAIRN_WEB__ALLOW_LOOPBACK", "true")],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout).trim(), "The trail goes north.");
    assert_eq!(hits.connections(), 1);
    let requests = sb.model.requests();
    let last = requests.last().unwrap().body.to_string();
    assert!(last.contains("Cairn trail"), "{last}");
    assert!(last.contains("stone markers"), "{last}");
}

#[test]
fn chat_web_search_asks_the_searxng_stand_in_and_the_model_reads_the_results() {
    let results = json!({"query": "cairn trail", "results": [
        {"title": "Cairn Trail Guide", "url": "https://trails.example/cairn", "content": "Stone markers lead north over the ridge."},
        {"title": "Building cairns", "url": "https://stones.example/build", "content": "Stack flat stones."}
    ]});
    let (base, seen) = stand_in("application/json", results.to_string());
    let sb = Sandbox::new(
        Format::OpenAi,
        vec![
            Reply::tool_call("web_search", json!({"query": "cairn trail", "count": 5})),
            Reply::text("The guide says the markers lead north."),
        ],
    );
    let ws = sb.ws();
    let out = sb.run(
        &[
            "chat",
            "-w",
            ws.to_str().unwrap(),
            "--yes",
            "search the web for the cairn trail",
        ],
        &[
            ("CAIRN_WEB__ALLOW_LOOPBACK", "true"),
            ("CAIRN_WEB__SEARCH__PROVIDER", "searxng"),
            ("CAIRN_WEB__SEARCH__URL", &base),
        ],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(
        text(&out.stdout).trim(),
        "The guide says the markers lead north."
    );
    let request_lines: Vec<String> = seen
        .heads()
        .iter()
        .map(|h| h.lines().next().unwrap_or_default().to_owned())
        .collect();
    assert_eq!(
        request_lines,
        vec!["GET /search?q=cairn+trail&format=json HTTP/1.1".to_owned()]
    );
    let requests = sb.model.requests();
    let last = requests.last().unwrap().body.to_string();
    assert!(
        last.contains("1. Cairn Trail Guide\\n   https://trails.example/cairn\\n   Stone markers lead north over the ridge."),
        "{last}"
    );
    assert!(last.contains("2. Building cairns"), "{last}");
}

#[test]
fn agent_chat_web_download_saves_the_file_in_the_workspace() {
    let map = "N 57.1 W 3.6: cairn\nN 57.2 W 3.7: cairn\n".to_owned();
    let (base, seen) = stand_in("text/plain", map.clone());
    let url = format!("{base}/maps/trail.txt");
    let sb = Sandbox::new(
        Format::OpenAi,
        vec![
            Reply::tool_call(
                "web_download",
                json!({"url": url, "path": "maps/trail.txt"}),
            ),
            Reply::text("Saved the trail map."),
        ],
    );
    let ws = sb.ws();
    let out = sb.run(
        &[
            "chat",
            "-w",
            ws.to_str().unwrap(),
            "--agent",
            "--yes",
            "download the trail map into maps/trail.txt",
        ],
        &[("CAIRN_WEB__ALLOW_LOOPBACK", "true")],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout).trim(), "Saved the trail map.");
    assert_eq!(sb.read("maps/trail.txt"), map);
    assert_eq!(seen.heads().len(), 1);
    let requests = sb.model.requests();
    let last = requests.last().unwrap().body.to_string();
    assert!(
        last.contains(&format!(
            "saved maps/trail.txt ({} bytes, text/plain) from {url}",
            map.len()
        )),
        "{last}"
    );
}
