//! Stripe (`stripe`, `https://api.stripe.com`, a restricted or secret key as `Bearer`): customers
//! and their payments, read-only. Card details never go further than a brand and last four
//! digits: the tools ask for nothing expanded and show nothing else of a card.

pub mod customers;
pub mod payments;

use cairn_agent::tools::CallContext;
use serde_json::Value;

use crate::Method;
use crate::api::services::github::s;
use crate::api::services::{ServiceError, Services};

/// The service's name in `[api.services]`.
pub(crate) const SERVICE: &str = "stripe";
/// Stripe's API.
pub(crate) const PUBLIC: &str = "https://api.stripe.com";
/// The most rows a list shows (Stripe's largest page).
pub(crate) const MAX_ROWS: u32 = 100;
/// The most pages one list follows: a service that always says `has_more` is not followed on.
pub(crate) const MAX_PAGES: usize = 10;

/// What a list read: the rows, whether Stripe has more, and why paging stopped early (a
/// sentence for the model) when it did.
pub(crate) struct Listed {
    pub(crate) rows: Vec<Value>,
    pub(crate) more: bool,
    pub(crate) stopped: Option<String>,
}

/// Rows of a Stripe list (`{data, has_more}`) at `path`, following `has_more` (by
/// `starting_after`, or a search's `next_page`) until `want` rows or [`MAX_PAGES`] pages.
pub(crate) async fn list(
    services: &Services,
    cx: &CallContext,
    path: &str,
    query: &[(&str, String)],
    want: usize,
    what: &str,
) -> Result<Listed, ServiceError> {
    let mut rows: Vec<Value> = Vec::new();
    let mut cursor: Option<(&str, String)> = None;
    for _ in 0..MAX_PAGES {
        let mut q = query.to_vec();
        q.push((
            "limit",
            (want - rows.len()).min(MAX_ROWS as usize).to_string(),
        ));
        if let Some(c) = cursor.clone() {
            q.push(c);
        }
        let (_, json) = services
            .call(cx, SERVICE, PUBLIC, Method::GET, path, &q, None, what)
            .await?;
        let data = json
            .get("data")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        let has_more = json.get("has_more").and_then(Value::as_bool) == Some(true);
        let last = data
            .last()
            .map(|d| s(d, "id").to_owned())
            .unwrap_or_default();
        let empty = data.is_empty();
        rows.extend(data);
        if rows.len() >= want {
            rows.truncate(want);
            return Ok(Listed {
                rows,
                more: has_more,
                stopped: None,
            });
        }
        if !has_more || empty {
            return Ok(Listed {
                rows,
                more: false,
                stopped: None,
            });
        }
        // A search pages by its `next_page` token, a list by the last id seen; a cursor that
        // does not move would ask the same page forever.
        let next = match json.get("next_page").and_then(Value::as_str) {
            Some(page) => ("page", page.to_owned()),
            None => ("starting_after", last),
        };
        if next.1.is_empty() || cursor.as_ref() == Some(&next) {
            return Ok(Listed {
                rows,
                more: true,
                stopped: Some(
                    "Stripe said there were more but gave no new page to ask for".to_owned(),
                ),
            });
        }
        cursor = Some(next);
    }
    Ok(Listed {
        rows,
        more: true,
        stopped: Some(format!(
            "Stripe still said there were more after {MAX_PAGES} pages; narrow the query"
        )),
    })
}

/// An amount in the currency's smallest unit written out: `1234, "usd"` is `12.34 USD`.
pub(crate) fn money(amount: Option<&Value>, currency: &str) -> String {
    let Some(amount) = amount.and_then(Value::as_i64) else {
        return "-".to_owned();
    };
    let code = currency.to_ascii_uppercase();
    // Stripe's zero- and three-decimal currencies; all others have two decimals.
    let decimals = match currency.to_ascii_lowercase().as_str() {
        "bif" | "clp" | "djf" | "gnf" | "jpy" | "kmf" | "krw" | "mga" | "pyg" | "rwf" | "ugx"
        | "vnd" | "vuv" | "xaf" | "xof" | "xpf" => 0,
        "bhd" | "jod" | "kwd" | "omr" | "tnd" => 3,
        _ => 2,
    };
    if decimals == 0 {
        return format!("{amount} {code}").trim().to_owned();
    }
    let unit = 10i64.pow(decimals);
    let sign = if amount < 0 { "-" } else { "" };
    let abs = amount.unsigned_abs();
    let unit = unit.unsigned_abs();
    format!(
        "{sign}{}.{:0width$} {code}",
        abs / unit,
        abs % unit,
        width = decimals as usize
    )
    .trim()
    .to_owned()
}

/// A card as `visa ****4242` (brand and last four only), from an object with `brand` and
/// `last4`; empty when there is none.
pub(crate) fn card(card: Option<&Value>) -> String {
    let Some(card) = card else {
        return String::new();
    };
    match (s(card, "brand"), s(card, "last4")) {
        ("", "") => String::new(),
        (brand, last4) => format!("{brand} ****{last4}").trim().to_owned(),
    }
}
