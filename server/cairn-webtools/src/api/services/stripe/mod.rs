//! Stripe (`stripe`, `https://api.stripe.com`, a restricted or secret key as `Bearer`): customers
//! and their payments, read-only. Card details never go further than a brand and last four
//! digits: the tools ask for nothing expanded and show nothing else of a card.

pub mod customers;
pub mod payments;

use cairn_agent::tools::CallContext;
use cairn_web::Method;
use serde_json::Value;

use crate::api::services::github::s;
use crate::api::services::paging::{self, Items, List, Next, Paging, Size};
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

/// How Stripe's lists (`{data, has_more}`) page: by `starting_after`, or a search's
/// `next_page`, at most [`MAX_ROWS`] a page.
const PAGING: Paging = Paging {
    items: Items::At("/data"),
    size: Some(Size {
        param: "limit",
        max: MAX_ROWS as usize,
    }),
    next: Next::StartingAfter,
};

/// Rows of a Stripe list at `path`, following `has_more` until `want` rows or [`MAX_PAGES`]
/// pages.
pub(crate) async fn list(
    services: &Services,
    cx: &CallContext,
    path: &str,
    query: &[(&str, String)],
    want: usize,
    what: &str,
) -> Result<Listed, ServiceError> {
    let from = List {
        service: SERVICE,
        public: PUBLIC,
        label: "Stripe",
        method: Method::GET,
        path,
        query: query.to_vec(),
        body: None,
        what,
    };
    let listed = paging::list(services, cx, &from, &PAGING, want, MAX_PAGES).await?;
    Ok(Listed {
        more: listed.next.is_some(),
        rows: listed.items,
        stopped: listed.stopped,
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
