//! `graphql_schema`: introspect a GraphQL endpoint and summarise its schema.

use std::collections::BTreeMap;

use cairn_toolkit::{CallContext, Category, Effect, JsonSchema, Paths, Tool};
use rmcp::model::CallToolResult;
use serde::Deserialize;
use serde_json::Value;

use crate::api::request::{ApiAuth, header_args, status_block};
use crate::api::{Api, answer, graphql, summarise_schema};
use cairn_web::Method;

/// The `graphql_schema` tool.
pub struct GraphqlSchema;

/// Arguments of `graphql_schema`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// An http or https URL.
    endpoint: String,
    /// Other types shown at most (default 100).
    max_types: Option<usize>,
    /// Request headers, sent as written (nothing in them is expanded).
    #[serde(default)]
    headers: BTreeMap<String, String>,
    auth: Option<ApiAuth>,
}

impl Tool for GraphqlSchema {
    type Host = Api;
    type Args = Args;
    const NAME: &'static str = "graphql_schema";
    const TITLE: &'static str = "GraphQL schema";
    const DESCRIPTION: &'static str = "Introspect a GraphQL endpoint and summarise its schema: query, mutation and subscription fields with their arguments, and the other types.";
    const CATEGORY: Category = Category::Api;
    const EFFECT: Effect = Effect::Network;
    const AGENT_ONLY: bool = false;
    /// An introspection query: it only reads remote state.
    const READ_ONLY: bool = true;

    fn paths(_: &Args) -> Paths {
        Paths::none()
    }

    async fn call(api: &Api, a: Args, cx: CallContext) -> CallToolResult {
        answer(&cx, async {
            let r = api
                .graphql(
                    &a.endpoint,
                    header_args(a.headers),
                    a.auth,
                    &graphql::introspection_body(),
                )
                .await?;
            let head = status_block(&Method::POST, &r);
            let doc: Value = serde_json::from_slice(&r.body)
                .map_err(|e| format!("{head}\nthe answer is not JSON: {e}"))?;
            let summary = summarise_schema(&doc, a.max_types.unwrap_or(100))
                .map_err(|e| format!("{head}\n{e}"))?;
            Ok(format!("{head}\n{summary}"))
        })
        .await
    }
}
