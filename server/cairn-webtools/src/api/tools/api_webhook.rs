//! `api_webhook`: POST a JSON payload to a webhook and report whether it was delivered.

use std::collections::BTreeMap;

use cairn_toolkit::{CallContext, Category, Effect, JsonSchema, Paths, Tool};
use rmcp::model::CallToolResult;
use serde::Deserialize;
use serde_json::Value;

use crate::api::request::{self, ApiAuth, Outgoing, body_of, header_args, status_block};
use crate::api::{Api, answer};
use cairn_web::Method;

/// The `api_webhook` tool.
pub struct ApiWebhook;

/// Arguments of `api_webhook`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// An http or https URL.
    url: String,
    /// The JSON to send, e.g. {"text": "..."} for Slack or {"content": "..."} for Discord.
    payload: Value,
    /// Request headers, sent as written (nothing in them is expanded).
    #[serde(default)]
    headers: BTreeMap<String, String>,
    auth: Option<ApiAuth>,
}

impl Tool for ApiWebhook {
    type Host = Api;
    type Args = Args;
    const NAME: &'static str = "api_webhook";
    const TITLE: &'static str = "Webhook";
    const DESCRIPTION: &'static str = "POST a JSON payload to a webhook (Slack, Discord, Teams, or any) and report the status and the short answer.";
    const CATEGORY: Category = Category::Api;
    const EFFECT: Effect = Effect::Network;
    const AGENT_ONLY: bool = false;
    // It posts a message but deletes nothing: neither read-only nor destructive (the defaults).

    fn paths(_: &Args) -> Paths {
        Paths::none()
    }

    async fn call(api: &Api, a: Args, cx: CallContext) -> CallToolResult {
        answer(&cx, async {
            let r = api
                .send(Outgoing {
                    method: Some("POST".into()),
                    url: a.url,
                    headers: header_args(a.headers),
                    body: body_of(Some(&a.payload), None, None)?,
                    auth: a.auth,
                })
                .await?;
            let mut out = status_block(&Method::POST, &r);
            let answer = request::body_text(&r);
            if !answer.is_empty() {
                out.push('\n');
                out.extend(answer.chars().take(2000));
            }
            if r.status.is_success() {
                Ok(format!("Delivered.\n{out}"))
            } else {
                Err(format!("The webhook refused the payload.\n{out}"))
            }
        })
        .await
    }
}
