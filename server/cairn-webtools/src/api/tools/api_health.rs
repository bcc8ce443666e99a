//! `api_health`: GET an endpoint and report its status, latency, content type and size, without
//! the body.

use std::collections::BTreeMap;
use std::time::Instant;

use cairn_toolkit::{CallContext, Category, Effect, JsonSchema, Paths, Tool};
use rmcp::model::CallToolResult;
use serde::Deserialize;

use crate::api::request::{self, ApiAuth, Outgoing, header_args};
use crate::api::{Api, answer};

/// The `api_health` tool.
pub struct ApiHealth;

/// Arguments of `api_health`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// An http or https URL.
    url: String,
    /// Request headers, sent as written (nothing in them is expanded).
    #[serde(default)]
    headers: BTreeMap<String, String>,
    auth: Option<ApiAuth>,
}

impl Tool for ApiHealth {
    type Host = Api;
    type Args = Args;
    const NAME: &'static str = "api_health";
    const TITLE: &'static str = "API health";
    const DESCRIPTION: &'static str = "Check an endpoint: GET it and report status, latency in milliseconds, content type and size, without the body.";
    const CATEGORY: Category = Category::Api;
    const EFFECT: Effect = Effect::Network;
    const AGENT_ONLY: bool = false;
    /// A GET: it only reads remote state.
    const READ_ONLY: bool = true;

    fn paths(_: &Args) -> Paths {
        Paths::none()
    }

    async fn call(api: &Api, a: Args, cx: CallContext) -> CallToolResult {
        answer(&cx, async {
            let started = Instant::now();
            let r = api
                .send(Outgoing {
                    url: a.url,
                    headers: header_args(a.headers),
                    auth: a.auth,
                    ..Outgoing::default()
                })
                .await?;
            let ms = started.elapsed().as_millis();
            let ct = request::content_type(&r);
            let verdict = if r.status.is_success() {
                "healthy"
            } else {
                "unhealthy"
            };
            let mut out = format!(
                "{} ({verdict}: {})\nURL: {}\nLatency: {ms} ms\nContent-Type: {}\nSize: {} bytes{}\n",
                r.status.as_u16(),
                r.status,
                r.final_url,
                if ct.is_empty() { "(none)" } else { &ct },
                r.body.len(),
                if r.truncated {
                    " (stopped at the size cap)"
                } else {
                    ""
                }
            );
            if r.redirects > 0 {
                out.push_str(&format!("Redirects followed: {}\n", r.redirects));
            }
            Ok(out)
        })
        .await
    }
}
