//! `stripe_payments`: recent payment intents or charges (of one customer, or of the account)
//! with amount, status and why a failed one failed; cards as brand and last four only.

use cairn_toolkit::reply::{error, text};
use cairn_toolkit::table::{Cell, Limits, Table};
use cairn_toolkit::{CallContext, Category, Effect, JsonSchema, Paths, Tool};
use rmcp::model::CallToolResult;
use serde::Deserialize;
use serde_json::Value;

use super::{MAX_ROWS, card, list, money};
use crate::api::services::Services;
use crate::api::services::github::{bounded, s};
use crate::api::services::vercel::unix_when;

/// The `stripe_payments` tool.
pub struct StripePayments;

/// Which Stripe objects to list.
#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    PaymentIntents,
    Charges,
}

/// Arguments of `stripe_payments`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// The customer's id (`cus_...`); without it, the account's recent payments.
    customer: Option<String>,
    /// `payment_intents` (default: one per payment, with its last error) or `charges` (each
    /// attempt, with the card network's outcome).
    kind: Option<Kind>,
    /// Show only the failed ones (of those read).
    failed_only: Option<bool>,
    /// How many to read, newest first (default 20, at most 100).
    limit: Option<u32>,
}

impl Tool for StripePayments {
    type Host = Services;
    type Args = Args;
    const NAME: &'static str = "stripe_payments";
    const TITLE: &'static str = "Stripe payments";
    const DESCRIPTION: &'static str = "List a Stripe customer's (or the account's) recent payment intents or charges with amount, status and the failure reason of failed ones; read-only.";
    const CATEGORY: Category = Category::Api;
    const EFFECT: Effect = Effect::Network;
    const AGENT_ONLY: bool = false;
    const READ_ONLY: bool = true;

    fn paths(_: &Args) -> Paths {
        Paths::none()
    }

    async fn call(services: &Services, args: Args, cx: CallContext) -> CallToolResult {
        let want = bounded(args.limit, 20, MAX_ROWS) as usize;
        let kind = args.kind.unwrap_or(Kind::PaymentIntents);
        let (path, noun) = match kind {
            Kind::PaymentIntents => ("v1/payment_intents", "payment intents"),
            Kind::Charges => ("v1/charges", "charges"),
        };
        let customer = args
            .customer
            .as_deref()
            .map(str::trim)
            .filter(|c| !c.is_empty());
        let mut query = Vec::new();
        if let Some(c) = customer {
            query.push(("customer", c.to_owned()));
        }
        let what = match customer {
            Some(c) => format!("customer {c}"),
            None => format!("the {noun}"),
        };
        let listed = match list(services, &cx, path, &query, want, &what).await {
            Ok(r) => r,
            Err(e) => return error(e.to_string()),
        };
        let (rows, more) = (listed.rows, listed.more);
        let failed_only = args.failed_only == Some(true);
        let mut heading = match customer {
            Some(c) => format!("{noun} of customer {c}, newest first"),
            None => format!("{noun}, newest first"),
        };
        let read = rows.len();
        let shown: Vec<&Value> = rows
            .iter()
            .filter(|p| !failed_only || failed(p, kind))
            .collect();
        if failed_only {
            heading.push_str(&format!(", failed only ({} of {read} read)", shown.len()));
        }
        if shown.is_empty() {
            return text(format!("{heading}: none"));
        }
        let table = Table {
            columns: [
                "id",
                "amount",
                "status",
                "created",
                "card",
                "failure",
                "description",
            ]
            .map(str::to_owned)
            .to_vec(),
            rows: shown.iter().map(|p| row(p, kind)).collect(),
            more,
        };
        let hint = listed
            .stopped
            .unwrap_or_else(|| "raise limit (at most 100)".to_owned());
        table.result_hinting(&heading, &Limits::default(), &hint)
    }
}

/// Whether a payment intent or charge failed (or, for an intent, its last attempt did).
fn failed(p: &Value, kind: Kind) -> bool {
    match kind {
        Kind::PaymentIntents => {
            p.get("last_payment_error").is_some_and(Value::is_object)
                || s(p, "status") == "requires_payment_method"
        }
        Kind::Charges => s(p, "status") == "failed",
    }
}

fn row(p: &Value, kind: Kind) -> Vec<Cell> {
    let currency = s(p, "currency");
    let (status, card_text, failure) = match kind {
        Kind::PaymentIntents => {
            let err = p.get("last_payment_error").filter(|e| e.is_object());
            let card_text = err
                .and_then(|e| e.get("payment_method"))
                .and_then(|m| m.get("card"))
                .map(|c| card(Some(c)))
                .unwrap_or_default();
            let failure =
                err.map(|e| reason(&[s(e, "code"), s(e, "decline_code")], s(e, "message")));
            (
                s(p, "status").to_owned(),
                card_text,
                failure.unwrap_or_default(),
            )
        }
        Kind::Charges => {
            let mut status = s(p, "status").to_owned();
            if p.get("refunded").and_then(Value::as_bool) == Some(true) {
                status.push_str(" (refunded)");
            } else if p.get("disputed").and_then(Value::as_bool) == Some(true) {
                status.push_str(" (disputed)");
            }
            let card_text = card(p.get("payment_method_details").and_then(|d| d.get("card")));
            let outcome = p.get("outcome").unwrap_or(&Value::Null);
            let failure = if s(p, "failure_code").is_empty() && s(p, "failure_message").is_empty() {
                // A declined outcome says why even without a failure code.
                match s(outcome, "type") {
                    "issuer_declined" | "blocked" | "invalid" => {
                        reason(&[s(outcome, "reason")], s(outcome, "seller_message"))
                    }
                    _ => String::new(),
                }
            } else {
                reason(
                    &[s(p, "failure_code"), s(outcome, "reason")],
                    s(p, "failure_message"),
                )
            };
            (status, card_text, failure)
        }
    };
    [
        s(p, "id").to_owned(),
        money(p.get("amount"), currency),
        status,
        unix_when(p.get("created"), false),
        card_text,
        failure,
        cairn_toolkit::table::cut(s(p, "description"), 80),
    ]
    .into_iter()
    .map(Cell::Text)
    .collect()
}

/// Codes (distinct, non-empty) and a message as `code / decline_code: message`.
fn reason(codes: &[&str], message: &str) -> String {
    let mut seen: Vec<&str> = Vec::new();
    for c in codes {
        if !c.is_empty() && !seen.contains(c) {
            seen.push(c);
        }
    }
    match (seen.join(" / "), message.trim()) {
        (c, "") => c,
        (c, m) if c.is_empty() => cairn_toolkit::table::cut(m, 160),
        (c, m) => format!("{c}: {}", cairn_toolkit::table::cut(m, 160)),
    }
}
