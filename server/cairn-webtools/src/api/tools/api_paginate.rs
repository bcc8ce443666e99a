//! `api_paginate`: GET every page of a paginated JSON API (Link headers, a next URL or a cursor
//! in the body) and return the items of all pages as one array.

use std::collections::BTreeMap;

use cairn_toolkit::{CallContext, Category, Effect, JsonSchema, Paths, Tool};
use rmcp::model::CallToolResult;
use serde::Deserialize;
use serde_json::{Map, Value};
use url::Url;

use crate::api::request::{self, ApiAuth, Outgoing, header_args, select, status_block};
use crate::api::{Api, MAX_PAGES, answer, next_link};
use cairn_web::Method;

/// The `api_paginate` tool.
pub struct ApiPaginate;

/// Arguments of `api_paginate`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// An http or https URL.
    url: String,
    /// Query parameters of the first request.
    #[serde(default)]
    query: Map<String, Value>,
    /// Request headers, sent as written (nothing in them is expanded).
    #[serde(default)]
    headers: BTreeMap<String, String>,
    auth: Option<ApiAuth>,
    /// JSON Pointer to the items array in each page (default: the page is the array).
    #[serde(default)]
    items_pointer: String,
    /// JSON Pointer to the next page's URL, or its cursor when cursor_param is set. Without it the Link header is followed.
    next_pointer: Option<String>,
    /// The query parameter that takes the cursor found at next_pointer.
    cursor_param: Option<String>,
    /// Pages to fetch at most (default 5, at most 10).
    #[schemars(range(min = 1, max = MAX_PAGES))]
    max_pages: Option<usize>,
    /// The character of the body to start from (default 0); use the value a truncated result names.
    #[serde(default)]
    start_index: usize,
    /// At most this many characters of body (default 20000).
    #[schemars(range(min = 1))]
    max_length: Option<usize>,
}

impl Tool for ApiPaginate {
    type Host = Api;
    type Args = Args;
    const NAME: &'static str = "api_paginate";
    const TITLE: &'static str = "Paginate API";
    const DESCRIPTION: &'static str = "GET every page of a paginated JSON API (at most 10 pages), following Link rel=next headers or a next-page URL or cursor in the body, and return the items of all pages as one array.";
    const CATEGORY: Category = Category::Api;
    const EFFECT: Effect = Effect::Network;
    const AGENT_ONLY: bool = false;
    /// GETs only: it only reads remote state.
    const READ_ONLY: bool = true;

    fn paths(_: &Args) -> Paths {
        Paths::none()
    }

    async fn call(api: &Api, a: Args, cx: CallContext) -> CallToolResult {
        answer(&cx, paginate(api, a)).await
    }
}

async fn paginate(api: &Api, a: Args) -> Result<String, String> {
    let max_pages = a.max_pages.unwrap_or(5).clamp(1, MAX_PAGES);
    if a.cursor_param.is_some() && a.next_pointer.is_none() {
        return Err("cursor_param needs next_pointer (where the cursor is in each page)".into());
    }
    let mut url = Url::parse(&a.url).map_err(|e| format!("invalid URL {:?}: {e}", a.url))?;
    request::append_query(&mut url, &a.query);
    let first = url.clone();
    let mut seen = vec![url.to_string()];
    let mut items: Vec<Value> = Vec::new();
    let mut pages = 0;
    let mut stop = String::from("no next page");
    let given_headers = header_args(a.headers);
    loop {
        let mut headers = given_headers.clone();
        headers
            .entry("Accept")
            .or_insert_with(|| Value::from("application/json"));
        let r = api
            .send(Outgoing {
                url: url.to_string(),
                headers,
                auth: a.auth.clone(),
                ..Outgoing::default()
            })
            .await
            .map_err(|e| format!("page {}: {e}", pages + 1))?;
        pages += 1;
        if !r.status.is_success() {
            let head = status_block(&Method::GET, &r);
            return Err(format!(
                "page {pages} answered {}; {} items from earlier pages are not shown\n{head}",
                r.status,
                items.len()
            ));
        }
        let doc: Value = serde_json::from_slice(&r.body)
            .map_err(|e| format!("page {pages} ({url}) is not JSON: {e}"))?;
        let page_items = select(&doc, &a.items_pointer)
            .map_err(|e| format!("page {pages}: {e}"))?
            .as_array()
            .ok_or_else(|| {
                format!(
                    "page {pages}: the value at items_pointer {:?} is not an array",
                    a.items_pointer
                )
            })?;
        let empty = page_items.is_empty();
        items.extend(page_items.iter().cloned());
        let next: Option<Url> = match &a.next_pointer {
            Some(pointer) => match doc.pointer(pointer).filter(|v| !v.is_null()) {
                Some(Value::String(s)) if s.is_empty() => None,
                Some(v) => Some(match &a.cursor_param {
                    Some(param) => {
                        let mut next = first.clone();
                        let kept: Vec<(String, String)> = next
                            .query_pairs()
                            .filter(|(k, _)| k != param)
                            .map(|(k, v)| (k.into_owned(), v.into_owned()))
                            .collect();
                        next.query_pairs_mut()
                            .clear()
                            .extend_pairs(kept)
                            .append_pair(param, &request::scalar(v));
                        next
                    }
                    None => url
                        .join(&request::scalar(v))
                        .map_err(|e| format!("page {pages}: the next URL is invalid: {e}"))?,
                }),
                None => None,
            },
            None => next_link(&r, &url),
        };
        let Some(next) = next else { break };
        if empty {
            stop = "an empty page".into();
            break;
        }
        if seen.contains(&next.to_string()) {
            stop = format!("the next page {next} was already fetched");
            break;
        }
        if pages >= max_pages {
            stop = format!("max_pages ({max_pages}) reached; more pages follow at {next}");
            break;
        }
        seen.push(next.to_string());
        url = next;
    }
    let mut out = format!(
        "GET {first}\nPages fetched: {pages} (stopped: {stop})\nItems: {}\n\n",
        items.len()
    );
    let pretty = serde_json::to_string_pretty(&Value::Array(items)).unwrap_or_default();
    out.push_str(&request::paged(&pretty, a.start_index, a.max_length));
    Ok(out)
}
