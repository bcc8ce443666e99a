//! Tools over data rather than pages: `web_json` (a JSON document, or one value in it by JSON
//! Pointer), `web_check_links` (the status of several URLs) and `web_archive` (the closest
//! Wayback Machine snapshot of a URL).

use rmcp::model::Tool;
use serde::Deserialize;
use serde_json::{Map, Value, json};
use url::Url;

use super::{
    DEFAULT_MAX_LENGTH, WebTools, content_type, fetch_report, parse, schema, tool, url_prop,
};
use crate::{Method, WebError, WebRequest, WebResponse};

/// The most URLs one `web_check_links` call checks.
const MAX_LINKS: usize = 10;
/// Keys of an object listed when a pointer misses in it.
const MAX_KEYS_SHOWN: usize = 30;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct JsonArgs {
    url: String,
    pointer: Option<String>,
    #[serde(default)]
    start_index: usize,
    max_length: Option<usize>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct CheckArgs {
    urls: Vec<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ArchiveArgs {
    url: String,
    timestamp: Option<String>,
}

pub(super) fn json_definition() -> Tool {
    tool(
        "web_json",
        "Fetch a JSON document (an API response, a package index) and show it pretty-printed, or only the value at a JSON Pointer such as /items/0/name; long output comes in parts (call again with the start_index the result names).",
        schema(
            json!({
                "url": url_prop(),
                "pointer": {"type": "string", "description": "A JSON Pointer (RFC 6901): empty for the whole document, else /key/index/... (~1 stands for / and ~0 for ~ inside a key)."},
                "start_index": {"type": "integer", "minimum": 0, "description": "The character to start from (default 0); use the value a truncated result names."},
                "max_length": {"type": "integer", "minimum": 1, "description": "At most this many characters (default 20000)."}
            }),
            &["url"],
        ),
    )
}

pub(super) fn check_links_definition() -> Tool {
    tool(
        "web_check_links",
        "Check up to 10 URLs and report for each its status, final URL after redirects, or the error (HEAD, falling back to GET where the server refuses HEAD). Each request counts against the web rate limit (10 a minute by default): when the limit refuses one, checking stops and the rest are listed as not checked.",
        schema(
            json!({
                "urls": {"type": "array", "items": {"type": "string"}, "minItems": 1, "maxItems": MAX_LINKS, "description": "The http or https URLs to check (at most 10)."}
            }),
            &["urls"],
        ),
    )
}

pub(super) fn archive_definition() -> Tool {
    tool(
        "web_archive",
        "Find the Internet Archive Wayback Machine snapshot of a URL closest to a date (default: the latest), with its archive URL and time; use it for pages that are gone or changed, then read the snapshot with web_fetch.",
        schema(
            json!({
                "url": url_prop(),
                "timestamp": {"type": "string", "pattern": "^[0-9]{1,14}$", "description": "The wanted date as YYYYMMDDhhmmss or a prefix of it (2019, 20190315); default the latest snapshot."}
            }),
            &["url"],
        ),
    )
}

pub(super) async fn json(tools: &WebTools, args: Map<String, Value>) -> Result<String, String> {
    let a: JsonArgs = parse("web_json", args)?;
    let max = a.max_length.unwrap_or(DEFAULT_MAX_LENGTH).max(1);
    let r = tools.get(&a.url, Method::GET).await?;
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
    let pointer = a.pointer.as_deref().unwrap_or("");
    let selected = select(&value, pointer)?;
    let pretty = serde_json::to_string_pretty(selected).unwrap_or_else(|_| selected.to_string());
    let mut report = fetch_report(&r, &ct, &pretty, a.start_index, max);
    if !pointer.is_empty() {
        // Say which value this is, right after the response's own lines.
        if let Some(at) = report.find("\n\n") {
            report.insert_str(at + 1, &format!("Pointer: {pointer}\n"));
        }
    }
    Ok(report)
}

/// The value at JSON Pointer `pointer` (RFC 6901), or an error saying where it stopped and what
/// is there instead.
pub fn select<'a>(value: &'a Value, pointer: &str) -> Result<&'a Value, String> {
    if pointer.is_empty() {
        return Ok(value);
    }
    let Some(rest) = pointer.strip_prefix('/') else {
        return Err(format!(
            "{pointer:?} is not a JSON Pointer: it must be empty or start with / (e.g. /items/0/name)"
        ));
    };
    let mut current = value;
    let mut reached = String::new();
    for raw in rest.split('/') {
        let token = raw.replace("~1", "/").replace("~0", "~");
        let next = match current {
            Value::Object(map) => map.get(&token),
            // RFC 6901: array indices are decimal without leading zeros.
            Value::Array(items) if token == "0" || !token.starts_with('0') => {
                token.parse::<usize>().ok().and_then(|i| items.get(i))
            }
            _ => None,
        };
        match next {
            Some(v) => {
                reached.push('/');
                reached.push_str(raw);
                current = v;
            }
            None => return Err(miss(pointer, &reached, current, &token)),
        }
    }
    Ok(current)
}

fn miss(pointer: &str, reached: &str, at: &Value, token: &str) -> String {
    let here = if reached.is_empty() {
        "the document root".to_owned()
    } else {
        reached.to_owned()
    };
    match at {
        Value::Object(map) => {
            let keys: Vec<&str> = map
                .keys()
                .take(MAX_KEYS_SHOWN)
                .map(String::as_str)
                .collect();
            let more = if map.len() > MAX_KEYS_SHOWN {
                ", ..."
            } else {
                ""
            };
            format!(
                "no value at {pointer}: {here} is an object without the key {token:?}; its keys are: {}{more}",
                keys.join(", ")
            )
        }
        Value::Array(items) => format!(
            "no value at {pointer}: {here} is an array of {} items, and {token:?} is not an index in it (0 to {})",
            items.len(),
            items.len().saturating_sub(1)
        ),
        other => format!(
            "no value at {pointer}: {here} is {}, which has no members",
            kind(other)
        ),
    }
}

fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

pub(super) async fn check_links(
    tools: &WebTools,
    args: Map<String, Value>,
) -> Result<String, String> {
    let a: CheckArgs = parse("web_check_links", args)?;
    if a.urls.is_empty() {
        return Err("web_check_links needs at least one URL".into());
    }
    if a.urls.len() > MAX_LINKS {
        return Err(format!(
            "web_check_links checks at most {MAX_LINKS} URLs a call; {} were given: split them",
            a.urls.len()
        ));
    }
    let mut out = String::new();
    let mut ok = 0;
    for (i, url) in a.urls.iter().enumerate() {
        match check_one(tools, url).await {
            Ok(line) => {
                ok += 1;
                out.push_str(&format!("{}. {url}: {line}\n", i + 1));
            }
            Err(e) if matches!(e.root(), WebError::RateLimited { .. }) => {
                let left = &a.urls[i..];
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
        a.urls.len()
    ))
}

/// Status line for `url`: HEAD, or GET when the server will not answer HEAD properly.
async fn check_one(tools: &WebTools, url: &str) -> Result<String, WebError> {
    let head = tools.send(WebRequest::new(Method::HEAD, url)).await?;
    // Servers that do not implement HEAD answer 405 or 501, and some 400 or 403; a GET then
    // says what a browser would see.
    let (r, how) = if matches!(head.status.as_u16(), 400 | 403 | 405 | 501) {
        let get = tools.send(WebRequest::get(url)).await?;
        (get, " (by GET; HEAD was refused)")
    } else {
        (head, "")
    };
    Ok(status_line(&r, how))
}

fn status_line(r: &WebResponse, how: &str) -> String {
    let verdict = if r.status.is_success() {
        "ok"
    } else if r.status.is_client_error() || r.status.is_server_error() {
        "broken"
    } else {
        "unusual"
    };
    let mut line = format!("{} ({verdict}){how}", r.status);
    if r.redirects > 0 {
        line.push_str(&format!(
            ", final URL {} after {} redirects",
            r.final_url, r.redirects
        ));
    }
    line
}

pub(super) async fn archive(tools: &WebTools, args: Map<String, Value>) -> Result<String, String> {
    let a: ArchiveArgs = parse("web_archive", args)?;
    let target = Url::parse(a.url.trim())
        .ok()
        .filter(|u| matches!(u.scheme(), "http" | "https"))
        .ok_or_else(|| format!("{:?} is not an http or https URL", a.url))?;
    if let Some(ts) = &a.timestamp
        && (ts.is_empty() || ts.len() > 14 || !ts.bytes().all(|b| b.is_ascii_digit()))
    {
        return Err(format!(
            "timestamp {ts:?} must be YYYYMMDDhhmmss or a prefix of it (digits only, e.g. 2019 or 20190315)"
        ));
    }
    let mut endpoint = Url::parse(&tools.archive_endpoint).map_err(|e| {
        format!(
            "the Wayback Machine endpoint {:?} is not a URL: {e}",
            tools.archive_endpoint
        )
    })?;
    endpoint
        .query_pairs_mut()
        .append_pair("url", target.as_str());
    if let Some(ts) = &a.timestamp {
        endpoint.query_pairs_mut().append_pair("timestamp", ts);
    }
    let r = tools.get(endpoint.as_str(), Method::GET).await?;
    if !r.status.is_success() {
        return Err(format!(
            "the Wayback Machine answered {} for {target}; try again later",
            r.status
        ));
    }
    let value: Value = serde_json::from_slice(&r.body)
        .map_err(|e| format!("the Wayback Machine's answer is not JSON: {e}"))?;
    let wanted = a.timestamp.as_deref().map_or_else(
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

/// `20240102030405` as `2024-01-02 03:04:05 UTC`; anything else as it is.
fn readable_timestamp(ts: &str) -> String {
    if ts.len() != 14 || !ts.bytes().all(|b| b.is_ascii_digit()) {
        return ts.to_owned();
    }
    let part = |a: usize, b: usize| ts.get(a..b).unwrap_or_default();
    format!(
        "{}-{}-{} {}:{}:{} UTC",
        part(0, 4),
        part(4, 6),
        part(6, 8),
        part(8, 10),
        part(10, 12),
        part(12, 14)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pointers_select_and_misses_say_what_is_there() {
        let doc = json!({"a": [{"b": 1}, {"c/d": 2, "e~f": 3}], "s": "x"});
        assert_eq!(select(&doc, ""), Ok(&doc));
        assert_eq!(select(&doc, "/a/0/b"), Ok(&json!(1)));
        assert_eq!(select(&doc, "/a/1/c~1d"), Ok(&json!(2)));
        assert_eq!(select(&doc, "/a/1/e~0f"), Ok(&json!(3)));
        assert_eq!(
            select(&doc, "/a/5"),
            Err("no value at /a/5: /a is an array of 2 items, and \"5\" is not an index in it (0 to 1)".into())
        );
        assert!(select(&doc, "/a/01").is_err());
        assert_eq!(
            select(&doc, "/zz"),
            Err("no value at /zz: the document root is an object without the key \"zz\"; its keys are: a, s".into())
        );
        assert_eq!(
            select(&doc, "/s/x"),
            Err("no value at /s/x: /s is a string, which has no members".into())
        );
        assert!(select(&doc, "a").is_err_and(|e| e.contains("start with /")));
    }

    #[test]
    fn timestamps_read_as_dates() {
        assert_eq!(
            readable_timestamp("20240102030405"),
            "2024-01-02 03:04:05 UTC"
        );
        assert_eq!(readable_timestamp("2024"), "2024");
    }
}
