//! `stripe_customers`: finds customers (by email, by name or email text, or a Stripe search
//! query), or shows one customer; read-only, and no card data.

use cairn_toolkit::reply::{error, text};
use cairn_toolkit::table::{Cell, Limits, Table};
use cairn_toolkit::{CallContext, Category, Effect, JsonSchema, Paths, Tool};
use rmcp::model::CallToolResult;
use serde::Deserialize;
use serde_json::Value;

use super::{MAX_ROWS, PUBLIC, SERVICE, list, money};
use crate::api::services::Services;
use crate::api::services::github::{bounded, s};
use crate::api::services::vercel::{id_segment, unix_when};
use cairn_web::Method;

/// The `stripe_customers` tool.
pub struct StripeCustomers;

/// Arguments of `stripe_customers`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// What to look for: an email address (exact match), text found in a name or email, or a
    /// Stripe search query (`email~"acme" AND metadata["plan"]:"pro"`). Without it, the newest
    /// customers.
    query: Option<String>,
    /// One customer's id (`cus_...`): show it in detail instead of listing.
    customer: Option<String>,
    /// How many customers to list (default 20, at most 100).
    limit: Option<u32>,
}

impl Tool for StripeCustomers {
    type Host = Services;
    type Args = Args;
    const NAME: &'static str = "stripe_customers";
    const TITLE: &'static str = "Stripe customers";
    const DESCRIPTION: &'static str = "Find Stripe customers by email, name or a Stripe search query, or show one customer (balance, currency, delinquency, metadata); read-only, no card data.";
    const CATEGORY: Category = Category::Api;
    const EFFECT: Effect = Effect::Network;
    const AGENT_ONLY: bool = false;
    const READ_ONLY: bool = true;

    fn paths(_: &Args) -> Paths {
        Paths::none()
    }

    async fn call(services: &Services, args: Args, cx: CallContext) -> CallToolResult {
        if let Some(id) = args.customer.as_deref() {
            return one(services, &cx, id).await;
        }
        let want = bounded(args.limit, 20, MAX_ROWS) as usize;
        let query = args
            .query
            .as_deref()
            .map(str::trim)
            .filter(|q| !q.is_empty());
        let (path, params, heading) = match query {
            None => ("v1/customers", vec![], "customers, newest first".to_owned()),
            // An address is matched exactly by the list's own filter (no search lag).
            Some(q) if q.contains('@') && !q.contains([' ', ':', '~', '"']) => (
                "v1/customers",
                vec![("email", q.to_owned())],
                format!("customers with email {q}"),
            ),
            Some(q) if q.contains(':') || q.contains('~') => (
                "v1/customers/search",
                vec![("query", q.to_owned())],
                format!("customers matching {q}"),
            ),
            Some(q) => {
                let quoted = q.replace('\\', "\\\\").replace('"', "\\\"");
                (
                    "v1/customers/search",
                    vec![("query", format!("name~\"{quoted}\" OR email~\"{quoted}\""))],
                    format!("customers whose name or email contains {q:?}"),
                )
            }
        };
        let listed = match list(services, &cx, path, &params, want, "the customers").await {
            Ok(r) => r,
            Err(e) => return error(e.to_string()),
        };
        let (rows, more) = (listed.rows, listed.more);
        if rows.is_empty() {
            return text(format!("{heading}: none"));
        }
        let table = Table {
            columns: ["id", "name", "email", "balance", "delinquent", "created"]
                .map(str::to_owned)
                .to_vec(),
            rows: rows
                .iter()
                .map(|c| {
                    [
                        s(c, "id").to_owned(),
                        or_dash(s(c, "name")),
                        or_dash(s(c, "email")),
                        money(c.get("balance"), s(c, "currency")),
                        c.get("delinquent")
                            .and_then(Value::as_bool)
                            .map_or("-".to_owned(), |d| if d { "yes" } else { "no" }.to_owned()),
                        unix_when(c.get("created"), false),
                    ]
                    .into_iter()
                    .map(Cell::Text)
                    .collect()
                })
                .collect(),
            more,
        };
        let hint = listed
            .stopped
            .unwrap_or_else(|| "narrow the query, or raise limit (at most 100)".to_owned());
        table.result_hinting(&heading, &Limits::default(), &hint)
    }
}

/// One customer in detail.
async fn one(services: &Services, cx: &CallContext, id: &str) -> CallToolResult {
    let segment = match id_segment("customer", id) {
        Ok(s) => s,
        Err(e) => return error(e),
    };
    let id = id.trim();
    let c = match services
        .call(
            cx,
            SERVICE,
            PUBLIC,
            Method::GET,
            &format!("v1/customers/{segment}"),
            &[],
            None,
            &format!("customer {id}"),
        )
        .await
    {
        Ok((_, json)) => json,
        Err(e) => return error(e.to_string()),
    };
    if c.get("deleted").and_then(Value::as_bool) == Some(true) {
        return text(format!("customer {id} was deleted"));
    }
    let mut out = format!(
        "customer {}: {} <{}>\ncreated {}; balance {}; delinquent: {}\n",
        s(&c, "id"),
        or_dash(s(&c, "name")),
        or_dash(s(&c, "email")),
        unix_when(c.get("created"), false),
        money(c.get("balance"), s(&c, "currency")),
        c.get("delinquent")
            .and_then(Value::as_bool)
            .map_or("-", |d| if d { "yes" } else { "no" }),
    );
    for (label, value) in [
        ("description", s(&c, "description")),
        ("phone", s(&c, "phone")),
        ("currency", s(&c, "currency")),
    ] {
        if !value.is_empty() {
            out.push_str(&format!("{label}: {value}\n"));
        }
    }
    if let Some(country) = c
        .get("address")
        .map(|a| s(a, "country"))
        .filter(|c| !c.is_empty())
    {
        out.push_str(&format!("country: {country}\n"));
    }
    // The default payment method by id only: its card details are not asked for.
    if let Some(pm) = c
        .get("invoice_settings")
        .and_then(|i| i.get("default_payment_method"))
        .and_then(|pm| pm.as_str().or_else(|| pm.get("id").and_then(Value::as_str)))
    {
        out.push_str(&format!("default payment method: {pm}\n"));
    }
    if let Some(meta) = c
        .get("metadata")
        .and_then(Value::as_object)
        .filter(|m| !m.is_empty())
    {
        out.push_str("metadata:\n");
        for (k, v) in meta.iter().take(50) {
            let v = v.as_str().map_or_else(|| v.to_string(), str::to_owned);
            out.push_str(&format!("- {k}: {}\n", cairn_toolkit::table::cut(&v, 200)));
        }
        if meta.len() > 50 {
            out.push_str(&format!("({} more keys not shown)\n", meta.len() - 50));
        }
    }
    text(out)
}

fn or_dash(text: &str) -> String {
    if text.is_empty() {
        "-".to_owned()
    } else {
        text.to_owned()
    }
}
