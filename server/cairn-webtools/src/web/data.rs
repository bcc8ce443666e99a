//! Reading data rather than pages, for `web_json` (one value of a JSON document by JSON
//! Pointer), `web_check_links` (a status line) and `web_archive` (a snapshot's date): pure
//! functions over what was fetched through the guard.

use serde_json::Value;

use cairn_web::WebResponse;

/// The most URLs one `web_check_links` call checks.
pub(super) const MAX_LINKS: usize = 10;
/// Keys of an object listed when a pointer misses in it.
const MAX_KEYS_SHOWN: usize = 30;

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

/// How `r` answered a link check: its status, a verdict, `how` it was asked, and where it ended.
pub(super) fn status_line(r: &WebResponse, how: &str) -> String {
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

/// `20240102030405` as `2024-01-02 03:04:05 UTC`; anything else as it is.
pub(super) fn readable_timestamp(ts: &str) -> String {
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
    use serde_json::json;

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
