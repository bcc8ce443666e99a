//! `api_options`: send an OPTIONS request and report the allowed methods and CORS headers.

use std::collections::BTreeMap;

use cairn_toolkit::{CallContext, Category, Effect, JsonSchema, Paths, Tool};
use rmcp::model::CallToolResult;
use serde::Deserialize;

use crate::api::request::{ApiAuth, Outgoing, header_args, status_block};
use crate::api::{Api, answer};
use cairn_web::Method;

/// The `api_options` tool.
pub struct ApiOptions;

/// Arguments of `api_options`.
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

impl Tool for ApiOptions {
    type Host = Api;
    type Args = Args;
    const NAME: &'static str = "api_options";
    const TITLE: &'static str = "API options";
    const DESCRIPTION: &'static str = "Send an OPTIONS request and report which methods the endpoint allows (Allow) and its CORS headers.";
    const CATEGORY: Category = Category::Api;
    const EFFECT: Effect = Effect::Network;
    const AGENT_ONLY: bool = false;
    /// An OPTIONS request: it only reads remote state.
    const READ_ONLY: bool = true;

    fn paths(_: &Args) -> Paths {
        Paths::none()
    }

    async fn call(api: &Api, a: Args, cx: CallContext) -> CallToolResult {
        answer(&cx, async {
            let r = api
                .send(Outgoing {
                    method: Some("OPTIONS".into()),
                    url: a.url,
                    headers: header_args(a.headers),
                    auth: a.auth,
                    ..Outgoing::default()
                })
                .await?;
            let mut out = status_block(&Method::OPTIONS, &r);
            if !r.headers.contains_key(cairn_web::header::ALLOW) {
                out.push_str("(no Allow header in the answer)\n");
            }
            Ok(out)
        })
        .await
    }
}
