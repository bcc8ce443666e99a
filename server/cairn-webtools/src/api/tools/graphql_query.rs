//! `graphql_query`: run a GraphQL query or mutation and return its data, GraphQL errors first.

use std::collections::BTreeMap;

use cairn_toolkit::{CallContext, Category, Effect, JsonSchema, Paths, Tool};
use rmcp::model::CallToolResult;
use serde::Deserialize;
use serde_json::{Map, Value};

use crate::api::request::{self, ApiAuth, header_args, status_block};
use crate::api::{Api, answer, graphql, is_mutation};
use cairn_web::Method;

/// The `graphql_query` tool.
pub struct GraphqlQuery;

/// Arguments of `graphql_query`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// An http or https URL.
    endpoint: String,
    /// The GraphQL document.
    query: String,
    /// Variables of the operation.
    variables: Option<Map<String, Value>>,
    /// Which operation of the document to run.
    operation_name: Option<String>,
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

impl Tool for GraphqlQuery {
    type Host = Api;
    type Args = Args;
    const NAME: &'static str = "graphql_query";
    const TITLE: &'static str = "GraphQL query";
    const DESCRIPTION: &'static str = "Run a GraphQL query or mutation (POST with query, variables, operationName) and return its data; GraphQL errors are listed first.";
    const CATEGORY: Category = Category::Api;
    const EFFECT: Effect = Effect::Network;
    const AGENT_ONLY: bool = false;
    /// A mutation may change or delete remote state.
    const DESTRUCTIVE: bool = true;

    fn paths(_: &Args) -> Paths {
        Paths::none()
    }

    async fn call(api: &Api, a: Args, cx: CallContext) -> CallToolResult {
        answer(&cx, async {
            let variables = a.variables.map(Value::Object);
            let body =
                graphql::request_body(&a.query, variables.as_ref(), a.operation_name.as_deref());
            let r = api
                .graphql(&a.endpoint, header_args(a.headers), a.auth, &body)
                .await?;
            let mut out = status_block(&Method::POST, &r);
            if is_mutation(&a.query) {
                out.push_str("Operation: mutation (it may have changed data)\n");
            }
            let doc: Value = serde_json::from_slice(&r.body).map_err(|_| {
                format!(
                    "{out}\nthe answer is not JSON:\n{}",
                    String::from_utf8_lossy(&r.body)
                        .chars()
                        .take(2000)
                        .collect::<String>()
                )
            })?;
            let errors = graphql::error_lines(&doc);
            let data = doc.get("data").filter(|d| !d.is_null());
            if !errors.is_empty() {
                out.push_str(&format!(
                    "\nGraphQL errors ({}):\n{}\n",
                    errors.len(),
                    errors.join("\n")
                ));
            }
            let Some(data) = data else {
                if errors.is_empty() {
                    out.push_str("\nThe answer has no data.\n");
                }
                return Err(out);
            };
            out.push_str("\nData:\n");
            let pretty = serde_json::to_string_pretty(data).unwrap_or_default();
            out.push_str(&request::paged(&pretty, a.start_index, a.max_length));
            Ok(out)
        })
        .await
    }
}
