//! `api_form_post`: POST form fields as application/x-www-form-urlencoded.

use std::collections::BTreeMap;

use cairn_toolkit::{CallContext, Category, Effect, JsonSchema, Paths, Tool};
use rmcp::model::CallToolResult;
use serde::Deserialize;
use serde_json::{Map, Value};

use crate::api::curl::urlencode;
use crate::api::request::{self, ApiAuth, Outgoing, header_args};
use crate::api::{Api, answer};

/// The `api_form_post` tool.
pub struct ApiFormPost;

/// Arguments of `api_form_post`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// An http or https URL.
    url: String,
    /// Form fields by name.
    fields: Map<String, Value>,
    /// Request headers, sent as written (nothing in them is expanded).
    #[serde(default)]
    headers: BTreeMap<String, String>,
    auth: Option<ApiAuth>,
    /// The character of the body to start from (default 0); use the value a truncated result names.
    #[serde(default)]
    start_index: usize,
    /// At most this many characters of body (default 20000).
    #[schemars(range(min = 1))]
    max_length: Option<usize>,
}

impl Tool for ApiFormPost {
    type Host = Api;
    type Args = Args;
    const NAME: &'static str = "api_form_post";
    const TITLE: &'static str = "Form post";
    const DESCRIPTION: &'static str = "POST form fields as application/x-www-form-urlencoded (arrays repeat the field) and return the answer.";
    const CATEGORY: Category = Category::Api;
    const EFFECT: Effect = Effect::Network;
    const AGENT_ONLY: bool = false;
    /// A form post may change or delete remote state.
    const DESTRUCTIVE: bool = true;

    fn paths(_: &Args) -> Paths {
        Paths::none()
    }

    async fn call(api: &Api, a: Args, cx: CallContext) -> CallToolResult {
        answer(&cx, async {
            let encoded: Vec<String> = a
                .fields
                .iter()
                .flat_map(|(k, v)| {
                    request::scalar_list(v)
                        .into_iter()
                        .map(move |s| format!("{}={}", urlencode(k), urlencode(&s)))
                })
                .collect();
            let out = Outgoing {
                method: Some("POST".into()),
                url: a.url,
                headers: header_args(a.headers),
                body: Some((
                    encoded.join("&").into_bytes(),
                    "application/x-www-form-urlencoded".into(),
                )),
                auth: a.auth,
            };
            api.run(out, a.start_index, a.max_length).await
        })
        .await
    }
}
