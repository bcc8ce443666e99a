//! The one paginated-list read the integrations share: a [`Paging`] says how a service pages
//! (numbered pages, an item offset, a token or a next-page header the answer gives, Stripe's
//! `starting_after`) and [`list`] asks page after page through [`Services::call`] (so through
//! the guard, with the service's credential) until the tool's limit, the service's last page
//! or the tool's page budget. A tool that shows one page at a time asks for one page and says
//! where the next starts; no service writes a paging loop of its own.

use cairn_agent::tools::CallContext;
use cairn_web::{Method, WebResponse};
use serde_json::Value;

use super::{ServiceError, Services};

/// How a service pages one list.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Paging {
    /// Where a page's items are in the answer.
    pub(crate) items: Items,
    /// The page-size parameter, if the list takes one.
    pub(crate) size: Option<Size>,
    /// How the next page is asked for.
    pub(crate) next: Next,
}

/// Where a page's items are.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Items {
    /// The array at a JSON Pointer (`""`: the answer itself); nothing when it is not an array.
    At(&'static str),
    /// The answer as an array, or one object as one item (descriptions that answer a list with
    /// a single object).
    ArrayOrObject,
}

/// The page-size parameter and the largest page the service gives.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Size {
    pub(crate) param: &'static str,
    pub(crate) max: usize,
}

/// How the next page is asked for, and when there is one.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Next {
    /// Numbered pages (from 1) in `param`, each of the size's `max`, while `more` says so.
    Page { param: &'static str, more: More },
    /// An item offset (from 0) in `param`, while `more` says so.
    Offset { param: &'static str, more: More },
    /// A token (a string or a number) the answer gives at a JSON Pointer, sent back as
    /// `param`; `last`, when given, points to a flag that says this page is the last anyway.
    Token {
        at: &'static str,
        param: &'static str,
        last: Option<&'static str>,
    },
    /// The next page's number in a response header (GitLab's `X-Next-Page`), sent as `param`.
    Header {
        name: &'static str,
        param: &'static str,
    },
    /// Stripe's lists: while `has_more`, a search's `next_page` token as `page`, else
    /// `starting_after` the last item's `id`.
    StartingAfter,
}

/// When a counted page ([`Next::Page`], [`Next::Offset`]) has a next one.
#[derive(Debug, Clone, Copy)]
pub(crate) enum More {
    /// A page as long as the size asked for may not be the last.
    FullPage,
    /// The total at a JSON Pointer is beyond what the pages so far cover (numbered pages: the
    /// pages times their size; offsets: the offset and the items read); without a total, a
    /// next link at `or_link` (when given) says there is more.
    Total {
        at: &'static str,
        or_link: Option<&'static str>,
    },
    /// A next link (a non-empty string) at a JSON Pointer.
    Link(&'static str),
}

/// The list to read: which service, which path, the first page's query (the paging
/// parameters among them, in the order the service is sent them).
pub(crate) struct List<'a> {
    /// The service's name in `[api.services]`.
    pub(crate) service: &'a str,
    /// Its public base address.
    pub(crate) public: &'a str,
    /// Its name in the messages the model reads (`Stripe`).
    pub(crate) label: &'a str,
    /// `GET`, or the method of a list asked with a body (`POST` and its JSON).
    pub(crate) method: Method,
    pub(crate) path: &'a str,
    pub(crate) query: Vec<(&'a str, String)>,
    pub(crate) body: Option<&'a Value>,
    /// The thing asked for, for a 404.
    pub(crate) what: &'a str,
}

/// What the pages read.
pub(crate) struct Listed {
    /// The items, at most the limit asked for.
    pub(crate) items: Vec<Value>,
    /// Where the next page starts (its parameter and value), when the service says there is
    /// one.
    pub(crate) next: Option<(&'static str, String)>,
    /// Whether items of the last page read were left out for the limit.
    pub(crate) cut: bool,
    /// Why the reading stopped with more to read (a sentence for the model), when it stopped
    /// for a cursor that did not move or for the page budget rather than the limit.
    pub(crate) stopped: Option<String>,
    /// The last page's answer (totals, warnings).
    pub(crate) last: Value,
}

/// Reads `list` page by page, as `paging` says, until `limit` items, the last page, or
/// `max_pages` pages (at least one).
pub(crate) async fn list(
    services: &Services,
    cx: &CallContext,
    list: &List<'_>,
    paging: &Paging,
    limit: usize,
    max_pages: usize,
) -> Result<Listed, ServiceError> {
    let mut items: Vec<Value> = Vec::new();
    let mut at: Option<(&'static str, String)> = None;
    let mut pages = 0;
    loop {
        let mut query = list.query.clone();
        if let Some(size) = paging.size {
            let value = match paging.next {
                // Numbered pages only line up when every page has the same size.
                Next::Page { .. } => size.max,
                _ => limit.saturating_sub(items.len()).min(size.max),
            };
            set(&mut query, size.param, value.to_string());
        }
        if let Some((param, value)) = &at {
            set(&mut query, param, value.clone());
        }
        let (response, json) = services
            .call(
                cx,
                list.service,
                list.public,
                list.method.clone(),
                list.path,
                &query,
                list.body,
                list.what,
            )
            .await?;
        pages += 1;
        // A page longer than what is still wanted is cut first, so the next offset counts
        // only the items kept.
        let mut page = items_of(&json, paging.items);
        let room = limit.saturating_sub(items.len());
        let cut = page.len() > room;
        page.truncate(room);
        let next = next_of(paging, &query, &response, &json, &page);
        let empty = page.is_empty();
        items.extend(page);
        let done = |items: Vec<Value>, next, cut, stopped| Listed {
            items,
            next,
            cut,
            stopped,
            last: json.clone(),
        };
        if items.len() >= limit {
            return Ok(done(items, next, cut, None));
        }
        let Some(next) = next else {
            return Ok(done(items, None, false, None));
        };
        if max_pages > 1 {
            if empty {
                return Ok(done(items, None, false, None));
            }
            // A cursor that does not move would ask the same page forever.
            if next.1.is_empty() || at.as_ref() == Some(&next) {
                let stopped = format!(
                    "{} said there were more but gave no new page to ask for",
                    list.label
                );
                return Ok(done(items, Some(next), false, Some(stopped)));
            }
        }
        if pages >= max_pages.max(1) {
            let stopped = (max_pages > 1).then(|| {
                format!(
                    "{} still said there were more after {max_pages} pages; narrow the query",
                    list.label
                )
            });
            return Ok(done(items, Some(next), false, stopped));
        }
        at = Some(next);
    }
}

/// `key=value` in `query`: in place when `key` is there, else added at the end.
fn set<'a>(query: &mut Vec<(&'a str, String)>, key: &'a str, value: String) {
    match query.iter_mut().find(|(k, _)| *k == key) {
        Some(pair) => pair.1 = value,
        None => query.push((key, value)),
    }
}

/// The items of one answer.
fn items_of(json: &Value, items: Items) -> Vec<Value> {
    match items {
        Items::At(pointer) => json
            .pointer(pointer)
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default(),
        Items::ArrayOrObject => match json {
            Value::Array(a) => a.clone(),
            Value::Object(_) => vec![json.clone()],
            _ => Vec::new(),
        },
    }
}

/// The value of `key` in `query`, as a number.
fn number_in(query: &[(&str, String)], key: &str) -> Option<u64> {
    query
        .iter()
        .find(|(k, _)| *k == key)
        .and_then(|(_, v)| v.trim().parse().ok())
}

/// Where the page after this one starts, if there is one.
fn next_of(
    paging: &Paging,
    query: &[(&str, String)],
    response: &WebResponse,
    json: &Value,
    page: &[Value],
) -> Option<(&'static str, String)> {
    let size = paging
        .size
        .and_then(|s| number_in(query, s.param))
        .unwrap_or(0);
    let more = |more: More, covered: u64| match more {
        More::FullPage => size > 0 && page.len() as u64 >= size,
        More::Total { at, or_link } => match json.pointer(at).and_then(Value::as_u64) {
            Some(total) => covered < total,
            None => or_link.is_some_and(|l| json.pointer(l).is_some()),
        },
        More::Link(at) => json
            .pointer(at)
            .and_then(Value::as_str)
            .is_some_and(|l| !l.is_empty()),
    };
    match paging.next {
        Next::Page { param, more: rule } => {
            let current = number_in(query, param).unwrap_or(1).max(1);
            more(rule, current.saturating_mul(size))
                .then(|| (param, current.saturating_add(1).to_string()))
        }
        Next::Offset { param, more: rule } => {
            let next = number_in(query, param).unwrap_or(0) + page.len() as u64;
            more(rule, next).then(|| (param, next.to_string()))
        }
        Next::Token { at, param, last } => {
            if last.is_some_and(|l| json.pointer(l).and_then(Value::as_bool) == Some(true)) {
                return None;
            }
            let token = match json.pointer(at)? {
                Value::String(s) => s.clone(),
                Value::Number(n) if n.is_u64() => n.to_string(),
                _ => return None,
            };
            (!token.is_empty()).then_some((param, token))
        }
        Next::Header { name, param } => response
            .headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(str::trim)
            .filter(|v| !v.is_empty())
            .map(|v| (param, v.to_owned())),
        Next::StartingAfter => {
            if json.get("has_more").and_then(Value::as_bool) != Some(true) {
                return None;
            }
            Some(match json.get("next_page").and_then(Value::as_str) {
                Some(token) => ("page", token.to_owned()),
                None => (
                    "starting_after",
                    page.last()
                        .and_then(|d| d.get("id"))
                        .and_then(Value::as_str)
                        .unwrap_or("")
                        .to_owned(),
                ),
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn response(headers: &[(&'static str, &str)]) -> WebResponse {
        let mut map = cairn_web::header::HeaderMap::new();
        for (k, v) in headers {
            if let Ok(v) = cairn_web::header::HeaderValue::from_str(v) {
                map.insert(*k, v);
            }
        }
        WebResponse {
            status: cairn_web::StatusCode::OK,
            final_url: url::Url::parse("https://api.test/").unwrap_or_else(|e| panic!("{e}")),
            headers: map,
            body: Vec::new(),
            truncated: false,
            redirects: 0,
        }
    }

    fn paging(next: Next) -> Paging {
        Paging {
            items: Items::At(""),
            size: Some(Size {
                param: "per_page",
                max: 2,
            }),
            next,
        }
    }

    #[test]
    fn counted_pages_go_on_while_the_rule_says_so() {
        let r = response(&[]);
        let full = vec![Value::Null, Value::Null];
        let q = vec![("per_page", "2".to_owned()), ("page", "3".to_owned())];
        let p = paging(Next::Page {
            param: "page",
            more: More::FullPage,
        });
        assert_eq!(
            next_of(&p, &q, &r, &Value::Null, &full),
            Some(("page", "4".to_owned()))
        );
        assert_eq!(next_of(&p, &q, &r, &Value::Null, &full[..1]), None);
        let total = Next::Offset {
            param: "offset",
            more: More::Total {
                at: "/total",
                or_link: Some("/next"),
            },
        };
        let q = vec![("offset", "4".to_owned())];
        let json = serde_json::json!({"total": 7});
        assert_eq!(
            next_of(&paging(total), &q, &r, &json, &full),
            Some(("offset", "6".to_owned()))
        );
        let json = serde_json::json!({"total": 6});
        assert_eq!(next_of(&paging(total), &q, &r, &json, &full), None);
        let json = serde_json::json!({"next": "x"});
        assert!(next_of(&paging(total), &q, &r, &json, &full).is_some());
    }

    #[test]
    fn tokens_headers_and_starting_after_come_from_the_answer() {
        let token = paging(Next::Token {
            at: "/next",
            param: "cursor",
            last: Some("/isLast"),
        });
        let r = response(&[("x-next-page", "5")]);
        let json = serde_json::json!({"next": "abc"});
        assert_eq!(
            next_of(&token, &[], &r, &json, &[]),
            Some(("cursor", "abc".to_owned()))
        );
        let json = serde_json::json!({"next": "abc", "isLast": true});
        assert_eq!(next_of(&token, &[], &r, &json, &[]), None);
        let header = paging(Next::Header {
            name: "x-next-page",
            param: "page",
        });
        assert_eq!(
            next_of(&header, &[], &r, &Value::Null, &[]),
            Some(("page", "5".to_owned()))
        );
        let stripe = paging(Next::StartingAfter);
        let page = vec![serde_json::json!({"id": "cus_1"})];
        let json = serde_json::json!({"has_more": true});
        assert_eq!(
            next_of(&stripe, &[], &r, &json, &page),
            Some(("starting_after", "cus_1".to_owned()))
        );
        let json = serde_json::json!({"has_more": true, "next_page": "tok"});
        assert_eq!(
            next_of(&stripe, &[], &r, &json, &page),
            Some(("page", "tok".to_owned()))
        );
    }

    #[test]
    fn a_parameter_is_set_in_place_or_added() {
        let mut q = vec![("a", "1".to_owned()), ("page", "1".to_owned())];
        set(&mut q, "page", "2".to_owned());
        set(&mut q, "limit", "9".to_owned());
        assert_eq!(
            q,
            vec![
                ("a", "1".to_owned()),
                ("page", "2".to_owned()),
                ("limit", "9".to_owned())
            ]
        );
    }
}
