//! The API tools (category `api`), served in-process as [`ApiTools`] (`cairn-api`): REST,
//! JSON, pagination, GraphQL, OpenAPI, webhooks, forms, JSON-RPC, SOAP, health checks, JWT
//! decoding and curl commands, plus one tool per operation of the OpenAPI specs the user
//! configured.
//!
//! Every request goes through the [`WebGuard`]. Authentication is only by vault secret name
//! (`auth: {"secret": "github"}`): the guard attaches the value for hosts the secret is bound
//! to, refuses the request before connecting when it is not bound to the host, and the model
//! never sees it. Text like `{{vault.github}}` in a URL, header or body is sent verbatim.
//! `Authorization` and `Cookie` headers the model writes are allowed: they are its own text
//! (nothing is expanded into them), and the guard drops them on a redirect to another origin.

mod curl;
mod graphql;
mod jwt;
mod openapi;
mod request;

use std::sync::Arc;
use std::time::Instant;

use cairn_agent::tools::{CallContext, Effect, ToolHost, ToolInfo};
use cairn_workspace::Workspace;
use futures::future::BoxFuture;
use rmcp::model::{CallToolResult, ContentBlock, JsonObject, Tool, ToolAnnotations};
use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value, json};
use url::Url;

pub use curl::{CurlRequest, parse_curl, shell_words};
pub use graphql::{is_mutation, summarise_schema};
pub use jwt::{decode_report as jwt_report, utc};
pub use openapi::{Operation, Spec, build_call, parse_spec, sanitise};
pub use request::{ApiAuth, AuthScheme};

use crate::{Method, WebGuard, WebRequest, WebResponse};
use request::{Outgoing, body_of, report, select, status_block, target_url};

/// The fixed tools, in the order listed (configured OpenAPI operations follow).
pub const API_TOOL_NAMES: [&str; 15] = [
    "api_request",
    "api_get_json",
    "api_paginate",
    "graphql_query",
    "graphql_schema",
    "openapi_operations",
    "openapi_call",
    "api_webhook",
    "api_form_post",
    "api_json_rpc",
    "api_health",
    "api_options",
    "api_jwt_decode",
    "api_from_curl",
    "api_soap",
];

/// The most pages `api_paginate` follows.
pub const MAX_PAGES: usize = 10;
/// The longest tool name MCP allows.
const MAX_TOOL_NAME: usize = 64;

/// An OpenAPI spec the user configured (`[[api.openapi]]`): each operation becomes a tool
/// `<name>_<operationId>`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OpenApiSource {
    pub name: String,
    /// A workspace path or an http(s) URL.
    pub spec: String,
    pub base_url: Option<String>,
    pub auth: Option<ApiAuth>,
}

/// One configured operation offered as a tool.
#[derive(Debug, Clone)]
struct OperationTool {
    tool: Tool,
    operation: openapi::Operation,
    base: String,
    auth: Option<ApiAuth>,
}

/// The API tools over one guard, on behalf of one user.
#[derive(Clone)]
pub struct ApiTools {
    guard: Arc<WebGuard>,
    user: String,
    workspace: Option<Arc<Workspace>>,
    /// Whether the fixed tools ([`API_TOOL_NAMES`]) are offered; off for the host that serves
    /// only the configured operations.
    fixed: bool,
    operations: Arc<Vec<OperationTool>>,
    problems: Arc<Vec<String>>,
}

impl std::fmt::Debug for ApiTools {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ApiTools")
            .field("user", &self.user)
            .field("operations", &self.operations.len())
            .field("problems", &self.problems)
            .finish_non_exhaustive()
    }
}

impl ApiTools {
    pub fn new(guard: Arc<WebGuard>, user: impl Into<String>) -> ApiTools {
        ApiTools {
            guard,
            user: user.into(),
            workspace: None,
            fixed: true,
            operations: Arc::new(Vec::new()),
            problems: Arc::new(Vec::new()),
        }
    }

    /// The same tools reading spec paths inside `workspace` (never the file system directly).
    pub fn with_workspace(mut self, workspace: Arc<Workspace>) -> ApiTools {
        self.workspace = Some(workspace);
        self
    }

    /// Only the configured operations, without the fixed tools: the binary serves those as a
    /// second server, added once the specs have loaded, so a slow spec never delays the rest.
    pub fn only_operations(mut self) -> ApiTools {
        self.fixed = false;
        self
    }

    /// The same tools with each operation of `sources` as a tool. A spec that cannot be loaded
    /// or an operation whose name would clash is logged and listed in [`ApiTools::problems`];
    /// the rest load.
    pub async fn with_openapi(mut self, sources: &[OpenApiSource]) -> ApiTools {
        let mut tools: Vec<OperationTool> = Vec::new();
        let mut problems: Vec<String> = Vec::new();
        for source in sources {
            match self.load_source(source, &mut tools).await {
                Ok(skipped) => problems.extend(skipped),
                Err(e) => problems.push(format!("api.openapi `{}`: {e}", source.name)),
            }
        }
        for p in &problems {
            tracing::warn!("{p}");
        }
        self.operations = Arc::new(tools);
        self.problems = Arc::new(problems);
        self
    }

    /// What went wrong loading the configured specs.
    pub fn problems(&self) -> &[String] {
        &self.problems
    }

    async fn load_source(
        &self,
        source: &OpenApiSource,
        tools: &mut Vec<OperationTool>,
    ) -> Result<Vec<String>, String> {
        let prefix = sanitise(&source.name);
        if prefix.is_empty() {
            return Err("the name must have letters or digits".into());
        }
        if let Some(auth) = &source.auth {
            auth.credential()?;
        }
        let spec = self.load_spec(&source.spec, source.auth.as_ref()).await?;
        let base = spec.base(source.base_url.as_deref())?;
        let mut skipped = Vec::new();
        for op in &spec.operations {
            let mut name = format!("{prefix}_{}", sanitise(&op.id));
            if name.len() > MAX_TOOL_NAME {
                name.truncate(MAX_TOOL_NAME);
            }
            if API_TOOL_NAMES.contains(&name.as_str()) || tools.iter().any(|t| t.tool.name == name)
            {
                skipped.push(format!(
                    "api.openapi `{}`: operation {} left out: the tool name {name} is taken",
                    source.name, op.id
                ));
                continue;
            }
            let mut description = format!("{} {} ({} API)", op.method, op.path, source.name);
            for text in [&op.summary, &op.description] {
                if !text.is_empty() {
                    description.push_str(". ");
                    description.extend(text.chars().take(800));
                }
            }
            let annotations = ToolAnnotations::new()
                .read_only(op.read_only())
                .destructive(matches!(op.method.as_str(), "DELETE" | "PUT" | "PATCH"))
                .idempotent(!matches!(op.method.as_str(), "POST" | "PATCH"))
                .open_world(true);
            let mut schema = spec.input_schema(op);
            // Paging of long answers, under names the operation does not use itself.
            if let Some(Value::Object(properties)) = schema.get_mut("properties")
                && let Value::Object(paging) = paging()
            {
                for (key, value) in paging {
                    properties.entry(key).or_insert(value);
                }
            }
            let tool = Tool::new(name, description, Arc::new(schema)).with_annotations(annotations);
            tools.push(OperationTool {
                tool,
                operation: op.clone(),
                base: base.clone(),
                auth: source.auth.clone(),
            });
        }
        Ok(skipped)
    }

    /// A spec from a URL (through the guard, with `auth` if given) or a workspace path.
    async fn load_spec(&self, spec: &str, auth: Option<&ApiAuth>) -> Result<Spec, String> {
        if spec.starts_with("http://") || spec.starts_with("https://") {
            let mut out = Outgoing {
                url: spec.to_owned(),
                ..Outgoing::default()
            };
            out.auth = auth.cloned();
            let r = self.send(out).await?;
            if !r.status.is_success() {
                return Err(format!("fetching the spec {spec} answered {}", r.status));
            }
            if r.truncated {
                return Err(format!(
                    "the spec {spec} is larger than the web guard's size cap"
                ));
            }
            return parse_spec(&String::from_utf8_lossy(&r.body), Some(&r.final_url));
        }
        let Some(ws) = self.workspace.clone() else {
            return Err(format!(
                "{spec} is not an http(s) URL and no workspace is open to read it from"
            ));
        };
        let requested = spec.to_owned();
        let text = tokio::task::spawn_blocking(move || {
            let path = ws.resolve(&requested).map_err(|e| e.to_string())?;
            ws.read_text(&path)
                .map(|(text, _)| text)
                .map_err(|e| e.to_string())
        })
        .await
        .map_err(|e| format!("reading {spec} failed: {e}"))??;
        parse_spec(&text, None)
    }

    async fn send(&self, out: Outgoing) -> Result<WebResponse, String> {
        let request = out.build(&self.user)?;
        self.fetch(request).await
    }

    async fn fetch(&self, request: WebRequest) -> Result<WebResponse, String> {
        self.guard.fetch(request).await.map_err(|e| e.to_string())
    }
}

// ---- arguments ----

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RequestArgs {
    method: Option<String>,
    url: Option<String>,
    base_url: Option<String>,
    path: Option<String>,
    #[serde(default)]
    query: Map<String, Value>,
    #[serde(default)]
    headers: Map<String, Value>,
    json: Option<Value>,
    body: Option<String>,
    content_type: Option<String>,
    auth: Option<ApiAuth>,
    #[serde(default)]
    start_index: usize,
    max_length: Option<usize>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct GetJsonArgs {
    url: Option<String>,
    base_url: Option<String>,
    path: Option<String>,
    #[serde(default)]
    query: Map<String, Value>,
    #[serde(default)]
    headers: Map<String, Value>,
    auth: Option<ApiAuth>,
    #[serde(default)]
    pointer: String,
    #[serde(default)]
    start_index: usize,
    max_length: Option<usize>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct PaginateArgs {
    url: String,
    #[serde(default)]
    query: Map<String, Value>,
    #[serde(default)]
    headers: Map<String, Value>,
    auth: Option<ApiAuth>,
    #[serde(default)]
    items_pointer: String,
    next_pointer: Option<String>,
    cursor_param: Option<String>,
    max_pages: Option<usize>,
    #[serde(default)]
    start_index: usize,
    max_length: Option<usize>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct GraphqlArgs {
    endpoint: String,
    query: String,
    variables: Option<Value>,
    operation_name: Option<String>,
    #[serde(default)]
    headers: Map<String, Value>,
    auth: Option<ApiAuth>,
    #[serde(default)]
    start_index: usize,
    max_length: Option<usize>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct SchemaArgs {
    endpoint: String,
    #[serde(default)]
    headers: Map<String, Value>,
    auth: Option<ApiAuth>,
    max_types: Option<usize>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct OperationsArgs {
    spec: String,
    auth: Option<ApiAuth>,
    filter: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct OpenapiCallArgs {
    spec: String,
    operation_id: String,
    #[serde(default)]
    params: Map<String, Value>,
    body: Option<Value>,
    base_url: Option<String>,
    #[serde(default)]
    headers: Map<String, Value>,
    auth: Option<ApiAuth>,
    #[serde(default)]
    start_index: usize,
    max_length: Option<usize>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct WebhookArgs {
    url: String,
    payload: Value,
    #[serde(default)]
    headers: Map<String, Value>,
    auth: Option<ApiAuth>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct FormArgs {
    url: String,
    fields: Map<String, Value>,
    #[serde(default)]
    headers: Map<String, Value>,
    auth: Option<ApiAuth>,
    #[serde(default)]
    start_index: usize,
    max_length: Option<usize>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct JsonRpcArgs {
    url: String,
    method: String,
    params: Option<Value>,
    id: Option<Value>,
    #[serde(default)]
    headers: Map<String, Value>,
    auth: Option<ApiAuth>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ProbeArgs {
    url: String,
    #[serde(default)]
    headers: Map<String, Value>,
    auth: Option<ApiAuth>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct JwtArgs {
    token: String,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct CurlArgs {
    command: String,
    auth: Option<ApiAuth>,
    #[serde(default)]
    dry_run: bool,
    #[serde(default)]
    start_index: usize,
    max_length: Option<usize>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct SoapArgs {
    url: String,
    envelope: Option<String>,
    body: Option<String>,
    soap_action: Option<String>,
    #[serde(default)]
    version: Option<String>,
    #[serde(default)]
    headers: Map<String, Value>,
    auth: Option<ApiAuth>,
    #[serde(default)]
    start_index: usize,
    max_length: Option<usize>,
}

// ---- definitions ----

fn schema(properties: Value, required: &[&str]) -> JsonObject {
    let mut s = Map::new();
    s.insert("type".into(), json!("object"));
    s.insert("properties".into(), properties);
    s.insert("required".into(), json!(required));
    s.insert("additionalProperties".into(), json!(false));
    s
}

/// How a tool may affect the world, for its annotations.
#[derive(Clone, Copy)]
enum Reach {
    /// Only reads remote state.
    Reads,
    /// May change remote state, including deleting.
    Changes,
    /// Sends something (a message) but deletes nothing.
    Posts,
    /// No network at all.
    Local,
}

fn tool(name: &'static str, description: &str, reach: Reach, schema: JsonObject) -> Tool {
    let annotations = match reach {
        Reach::Reads => ToolAnnotations::new()
            .read_only(true)
            .destructive(false)
            .open_world(true),
        Reach::Changes => ToolAnnotations::new()
            .read_only(false)
            .destructive(true)
            .idempotent(false)
            .open_world(true),
        Reach::Posts => ToolAnnotations::new()
            .read_only(false)
            .destructive(false)
            .idempotent(false)
            .open_world(true),
        Reach::Local => ToolAnnotations::new()
            .read_only(true)
            .destructive(false)
            .open_world(false),
    };
    Tool::new(name, description.to_owned(), Arc::new(schema)).with_annotations(annotations)
}

fn paging() -> Value {
    json!({
        "start_index": {"type": "integer", "minimum": 0, "description": "The character of the body to start from (default 0); use the value a truncated result names."},
        "max_length": {"type": "integer", "minimum": 1, "description": "At most this many characters of body (default 20000)."}
    })
}

fn merge(mut a: Value, b: Value) -> Value {
    if let (Value::Object(a), Value::Object(b)) = (&mut a, b) {
        a.extend(b);
    }
    a
}

fn common() -> Value {
    json!({
        "headers": {"type": "object", "additionalProperties": {"type": "string"}, "description": "Request headers, sent as written (nothing in them is expanded)."},
        "auth": request::auth_schema(),
    })
}

fn definitions() -> Vec<Tool> {
    let url = json!({"type": "string", "description": "An http or https URL."});
    let target = json!({
        "url": url,
        "base_url": {"type": "string", "description": "Instead of url: the API's base URL, joined with path."},
        "path": {"type": "string", "description": "With base_url: the path, e.g. /repos/o/r."},
        "query": {"type": "object", "description": "Query parameters (arrays repeat the key)."},
    });
    vec![
        tool(
            "api_request",
            "Call a REST API: any method, URL (or base_url + path), query, headers, a JSON or text body, and auth by vault secret name. Returns the status, useful headers and the body (JSON pretty-printed), in parts for long bodies.",
            Reach::Changes,
            schema(
                merge(
                    merge(target.clone(), common()),
                    merge(
                        json!({
                            "method": {"type": "string", "enum": ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"], "description": "Default GET."},
                            "json": {"description": "A JSON body (sets Content-Type: application/json)."},
                            "body": {"type": "string", "description": "A text body instead of json."},
                            "content_type": {"type": "string", "description": "The body's content type, when not JSON or plain text."},
                        }),
                        paging(),
                    ),
                ),
                &[],
            ),
        ),
        tool(
            "api_get_json",
            "GET a JSON API resource and return it pretty-printed, or only the part at a JSON Pointer (e.g. /data/0/name).",
            Reach::Reads,
            schema(
                merge(
                    merge(target.clone(), common()),
                    merge(
                        json!({"pointer": {"type": "string", "description": "RFC 6901 JSON Pointer to select (default: the whole document)."}}),
                        paging(),
                    ),
                ),
                &[],
            ),
        ),
        tool(
            "api_paginate",
            "GET every page of a paginated JSON API (at most 10 pages), following Link rel=next headers or a next-page URL or cursor in the body, and return the items of all pages as one array.",
            Reach::Reads,
            schema(
                merge(
                    merge(
                        json!({"url": url, "query": {"type": "object", "description": "Query parameters of the first request."}}),
                        common(),
                    ),
                    merge(
                        json!({
                            "items_pointer": {"type": "string", "description": "JSON Pointer to the items array in each page (default: the page is the array)."},
                            "next_pointer": {"type": "string", "description": "JSON Pointer to the next page's URL, or its cursor when cursor_param is set. Without it the Link header is followed."},
                            "cursor_param": {"type": "string", "description": "The query parameter that takes the cursor found at next_pointer."},
                            "max_pages": {"type": "integer", "minimum": 1, "maximum": MAX_PAGES, "description": "Pages to fetch at most (default 5, at most 10)."},
                        }),
                        paging(),
                    ),
                ),
                &["url"],
            ),
        ),
        tool(
            "graphql_query",
            "Run a GraphQL query or mutation (POST with query, variables, operationName) and return its data; GraphQL errors are listed first.",
            Reach::Changes,
            schema(
                merge(
                    merge(
                        json!({
                            "endpoint": url,
                            "query": {"type": "string", "description": "The GraphQL document."},
                            "variables": {"type": "object", "description": "Variables of the operation."},
                            "operation_name": {"type": "string", "description": "Which operation of the document to run."},
                        }),
                        common(),
                    ),
                    paging(),
                ),
                &["endpoint", "query"],
            ),
        ),
        tool(
            "graphql_schema",
            "Introspect a GraphQL endpoint and summarise its schema: query, mutation and subscription fields with their arguments, and the other types.",
            Reach::Reads,
            schema(
                merge(
                    json!({"endpoint": url, "max_types": {"type": "integer", "minimum": 0, "description": "Other types shown at most (default 100)."}}),
                    common(),
                ),
                &["endpoint"],
            ),
        ),
        tool(
            "openapi_operations",
            "List the operations of an OpenAPI 3.x or Swagger 2.0 spec (JSON or YAML), from a workspace file or a URL: operationId, method, path, summary and parameters.",
            Reach::Reads,
            schema(
                json!({
                    "spec": {"type": "string", "description": "A workspace path or an http(s) URL of the spec."},
                    "filter": {"type": "string", "description": "Only operations whose id, path or summary contain this."},
                    "auth": request::auth_schema(),
                }),
                &["spec"],
            ),
        ),
        tool(
            "openapi_call",
            "Call one operation of an OpenAPI spec by operationId: path, query and header parameters by name (required ones checked) and a body; the URL comes from the spec's servers or base_url.",
            Reach::Changes,
            schema(
                merge(
                    merge(
                        json!({
                            "spec": {"type": "string", "description": "A workspace path or an http(s) URL of the spec."},
                            "operation_id": {"type": "string"},
                            "params": {"type": "object", "description": "Parameters by name (path, query, header, cookie)."},
                            "body": {"description": "The request body (JSON, or an object of form fields)."},
                            "base_url": {"type": "string", "description": "The server to call instead of the spec's."},
                        }),
                        common(),
                    ),
                    paging(),
                ),
                &["spec", "operation_id"],
            ),
        ),
        tool(
            "api_webhook",
            "POST a JSON payload to a webhook (Slack, Discord, Teams, or any) and report the status and the short answer.",
            Reach::Posts,
            schema(
                merge(
                    json!({"url": url, "payload": {"description": "The JSON to send, e.g. {\"text\": \"...\"} for Slack or {\"content\": \"...\"} for Discord."}}),
                    common(),
                ),
                &["url", "payload"],
            ),
        ),
        tool(
            "api_form_post",
            "POST form fields as application/x-www-form-urlencoded (arrays repeat the field) and return the answer.",
            Reach::Changes,
            schema(
                merge(
                    merge(
                        json!({"url": url, "fields": {"type": "object", "description": "Form fields by name."}}),
                        common(),
                    ),
                    paging(),
                ),
                &["url", "fields"],
            ),
        ),
        tool(
            "api_json_rpc",
            "Call a JSON-RPC 2.0 method over HTTP and return its result, or its error object (code, message, data).",
            Reach::Changes,
            schema(
                merge(
                    json!({
                        "url": url,
                        "method": {"type": "string", "description": "The JSON-RPC method."},
                        "params": {"description": "Positional (array) or named (object) parameters."},
                        "id": {"description": "The request id (default 1)."},
                    }),
                    common(),
                ),
                &["url", "method"],
            ),
        ),
        tool(
            "api_health",
            "Check an endpoint: GET it and report status, latency in milliseconds, content type and size, without the body.",
            Reach::Reads,
            schema(merge(json!({"url": url}), common()), &["url"]),
        ),
        tool(
            "api_options",
            "Send an OPTIONS request and report which methods the endpoint allows (Allow) and its CORS headers.",
            Reach::Reads,
            schema(merge(json!({"url": url}), common()), &["url"]),
        ),
        tool(
            "api_jwt_decode",
            "Decode a JWT (given as text) without verifying it: header, claims, and exp/iat/nbf as dates. No network.",
            Reach::Local,
            schema(
                json!({"token": {"type": "string", "description": "The token (header.claims.signature); a leading 'Bearer ' is dropped."}}),
                &["token"],
            ),
        ),
        tool(
            "api_from_curl",
            "Run a curl command line as an API request (-X, -H, -d/--data/--data-raw/--data-urlencode/--json, -G, -I, -A, -b, the URL) and show the parsed request first. -u is refused: use auth with a vault secret instead.",
            Reach::Changes,
            schema(
                merge(
                    json!({
                        "command": {"type": "string", "description": "The curl command, e.g. curl -X POST https://api.example.com/x -H 'Accept: application/json' -d '{\"a\":1}'."},
                        "auth": request::auth_schema(),
                        "dry_run": {"type": "boolean", "description": "Only show the parsed request (default false)."},
                    }),
                    paging(),
                ),
                &["command"],
            ),
        ),
        tool(
            "api_soap",
            "POST a SOAP 1.1 or 1.2 envelope (or a body to wrap in one) with its SOAPAction and return the XML answer; a SOAP Fault is reported as an error.",
            Reach::Changes,
            schema(
                merge(
                    merge(
                        json!({
                            "url": url,
                            "envelope": {"type": "string", "description": "The whole SOAP envelope (XML)."},
                            "body": {"type": "string", "description": "Instead of envelope: the XML inside soap:Body."},
                            "soap_action": {"type": "string", "description": "The SOAPAction."},
                            "version": {"type": "string", "enum": ["1.1", "1.2"], "description": "Default 1.1."},
                        }),
                        common(),
                    ),
                    paging(),
                ),
                &["url"],
            ),
        ),
    ]
}

fn parse<T: DeserializeOwned>(tool: &str, args: Map<String, Value>) -> Result<T, String> {
    serde_json::from_value(Value::Object(args))
        .map_err(|e| format!("invalid arguments for {tool}: {e}"))
}

impl ToolHost for ApiTools {
    fn list(&self) -> Vec<ToolInfo> {
        let info = |tool: Tool| ToolInfo {
            effect: if tool.name == "api_jwt_decode" {
                Effect::Read
            } else {
                Effect::Network
            },
            tool,
            category: "api".into(),
            agent_only: false,
            origin: None,
        };
        let fixed = if self.fixed {
            definitions()
        } else {
            Vec::new()
        };
        fixed
            .into_iter()
            .chain(self.operations.iter().map(|o| o.tool.clone()))
            .map(info)
            .collect()
    }

    fn call(
        &self,
        name: &str,
        arguments: Map<String, Value>,
        ctx: CallContext,
    ) -> BoxFuture<'_, CallToolResult> {
        let name = name.to_owned();
        Box::pin(async move {
            tokio::select! {
                r = self.dispatch(&name, arguments) => match r {
                    Ok(t) => CallToolResult::success(vec![ContentBlock::text(t)]),
                    Err(message) => CallToolResult::error(vec![ContentBlock::text(message)]),
                },
                () = ctx.cancel.cancelled() => CallToolResult::error(vec![ContentBlock::text("cancelled")]),
            }
        })
    }
}

impl ApiTools {
    async fn dispatch(&self, name: &str, args: Map<String, Value>) -> Result<String, String> {
        if !self.fixed && API_TOOL_NAMES.contains(&name) {
            return Err(format!("{name} is not served here"));
        }
        match name {
            "api_request" => {
                let a: RequestArgs = parse(name, args)?;
                let url = target_url(
                    a.url.as_deref(),
                    a.base_url.as_deref(),
                    a.path.as_deref(),
                    &a.query,
                )?;
                let out = Outgoing {
                    method: a.method,
                    url,
                    headers: a.headers,
                    body: body_of(
                        a.json.as_ref(),
                        a.body.as_deref(),
                        a.content_type.as_deref(),
                    )?,
                    auth: a.auth,
                };
                self.run(out, a.start_index, a.max_length).await
            }
            "api_get_json" => {
                let a: GetJsonArgs = parse(name, args)?;
                let url = target_url(
                    a.url.as_deref(),
                    a.base_url.as_deref(),
                    a.path.as_deref(),
                    &a.query,
                )?;
                let mut headers = a.headers;
                headers
                    .entry("Accept")
                    .or_insert_with(|| Value::from("application/json"));
                let r = self
                    .send(Outgoing {
                        url,
                        headers,
                        auth: a.auth,
                        ..Outgoing::default()
                    })
                    .await?;
                let mut out = status_block(&Method::GET, &r);
                let doc: Value = serde_json::from_slice(&r.body).map_err(|e| {
                    format!(
                        "{out}\nthe body is not JSON ({e}); it starts: {}",
                        String::from_utf8_lossy(&r.body)
                            .chars()
                            .take(300)
                            .collect::<String>()
                    )
                })?;
                let chosen = select(&doc, &a.pointer).map_err(|e| format!("{out}\n{e}"))?;
                if !a.pointer.is_empty() {
                    out.push_str(&format!("JSON Pointer: {}\n", a.pointer));
                }
                out.push('\n');
                let pretty = serde_json::to_string_pretty(chosen).unwrap_or_default();
                out.push_str(&request::paged(&pretty, a.start_index, a.max_length));
                Ok(out)
            }
            "api_paginate" => self.paginate(parse(name, args)?).await,
            "graphql_query" => {
                let a: GraphqlArgs = parse(name, args)?;
                let body = graphql::request_body(
                    &a.query,
                    a.variables.as_ref(),
                    a.operation_name.as_deref(),
                );
                let r = self.graphql(&a.endpoint, a.headers, a.auth, &body).await?;
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
            }
            "graphql_schema" => {
                let a: SchemaArgs = parse(name, args)?;
                let r = self
                    .graphql(
                        &a.endpoint,
                        a.headers,
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
            }
            "openapi_operations" => {
                let a: OperationsArgs = parse(name, args)?;
                let spec = self.load_spec(&a.spec, a.auth.as_ref()).await?;
                Ok(spec.listing(a.filter.as_deref()))
            }
            "openapi_call" => {
                let a: OpenapiCallArgs = parse(name, args)?;
                let spec = self.load_spec(&a.spec, a.auth.as_ref()).await?;
                let op = spec.operation(&a.operation_id)?;
                let base = spec.base(a.base_url.as_deref())?;
                let built = build_call(op, &base, &a.params, a.body.as_ref())?;
                self.run_built(built, a.headers, a.auth, a.start_index, a.max_length)
                    .await
            }
            "api_webhook" => {
                let a: WebhookArgs = parse(name, args)?;
                let r = self
                    .send(Outgoing {
                        method: Some("POST".into()),
                        url: a.url,
                        headers: a.headers,
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
            }
            "api_form_post" => {
                let a: FormArgs = parse(name, args)?;
                let encoded: Vec<String> = a
                    .fields
                    .iter()
                    .flat_map(|(k, v)| {
                        request::scalar_list(v)
                            .into_iter()
                            .map(move |s| format!("{}={}", curl::urlencode(k), curl::urlencode(&s)))
                    })
                    .collect();
                let out = Outgoing {
                    method: Some("POST".into()),
                    url: a.url,
                    headers: a.headers,
                    body: Some((
                        encoded.join("&").into_bytes(),
                        "application/x-www-form-urlencoded".into(),
                    )),
                    auth: a.auth,
                };
                self.run(out, a.start_index, a.max_length).await
            }
            "api_json_rpc" => {
                let a: JsonRpcArgs = parse(name, args)?;
                let mut call = Map::new();
                call.insert("jsonrpc".into(), json!("2.0"));
                call.insert("method".into(), Value::from(a.method));
                if let Some(p) = a.params {
                    if !p.is_array() && !p.is_object() {
                        return Err("params must be an array or an object (JSON-RPC 2.0)".into());
                    }
                    call.insert("params".into(), p);
                }
                call.insert("id".into(), a.id.unwrap_or(json!(1)));
                let r = self
                    .send(Outgoing {
                        method: Some("POST".into()),
                        url: a.url,
                        headers: a.headers,
                        body: body_of(Some(&Value::Object(call)), None, None)?,
                        auth: a.auth,
                    })
                    .await?;
                let head = status_block(&Method::POST, &r);
                let doc: Value = serde_json::from_slice(&r.body).map_err(|_| {
                    format!(
                        "{head}\nthe answer is not JSON-RPC:\n{}",
                        String::from_utf8_lossy(&r.body)
                            .chars()
                            .take(2000)
                            .collect::<String>()
                    )
                })?;
                if let Some(error) = doc.get("error").filter(|e| !e.is_null()) {
                    return Err(format!(
                        "{head}\nJSON-RPC error:\n{}",
                        serde_json::to_string_pretty(error).unwrap_or_default()
                    ));
                }
                match doc.get("result") {
                    Some(result) => Ok(format!(
                        "{head}\nResult:\n{}",
                        serde_json::to_string_pretty(result).unwrap_or_default()
                    )),
                    None => Err(format!(
                        "{head}\nthe answer has neither result nor error:\n{}",
                        serde_json::to_string_pretty(&doc).unwrap_or_default()
                    )),
                }
            }
            "api_health" => {
                let a: ProbeArgs = parse(name, args)?;
                let started = Instant::now();
                let r = self
                    .send(Outgoing {
                        url: a.url,
                        headers: a.headers,
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
            }
            "api_options" => {
                let a: ProbeArgs = parse(name, args)?;
                let r = self
                    .send(Outgoing {
                        method: Some("OPTIONS".into()),
                        url: a.url,
                        headers: a.headers,
                        auth: a.auth,
                        ..Outgoing::default()
                    })
                    .await?;
                let mut out = status_block(&Method::OPTIONS, &r);
                if !r.headers.contains_key(reqwest::header::ALLOW) {
                    out.push_str("(no Allow header in the answer)\n");
                }
                Ok(out)
            }
            "api_jwt_decode" => {
                let a: JwtArgs = parse(name, args)?;
                jwt::decode_report(&a.token, jwt::now())
            }
            "api_from_curl" => {
                let a: CurlArgs = parse(name, args)?;
                let parsed = parse_curl(&a.command)?;
                let mut out = format!("Parsed request:\n{}", parsed.describe());
                if a.dry_run {
                    return Ok(out);
                }
                let outgoing = Outgoing {
                    method: Some(parsed.method.clone()),
                    url: parsed.url.clone(),
                    headers: parsed.header_object(),
                    body: parsed
                        .body
                        .clone()
                        .map(|b| (b.into_bytes(), "application/x-www-form-urlencoded".into())),
                    auth: a.auth,
                };
                match self.run(outgoing, a.start_index, a.max_length).await {
                    Ok(answer) => {
                        out.push('\n');
                        out.push_str(&answer);
                        Ok(out)
                    }
                    Err(e) => Err(format!("{out}\n{e}")),
                }
            }
            "api_soap" => self.soap(parse(name, args)?).await,
            other => match self.operations.iter().find(|o| o.tool.name == other) {
                Some(op) => self.call_operation(op, args).await,
                None => Err(format!("no API tool is named {other}")),
            },
        }
    }

    /// Sends and reports (status block and paged body).
    async fn run(&self, out: Outgoing, start: usize, max: Option<usize>) -> Result<String, String> {
        let request = out.build(&self.user)?;
        let method = request.method.clone();
        let r = self.fetch(request).await?;
        Ok(report(&method, &r, start, max))
    }

    async fn run_built(
        &self,
        built: openapi::BuiltCall,
        extra_headers: Map<String, Value>,
        auth: Option<ApiAuth>,
        start: usize,
        max: Option<usize>,
    ) -> Result<String, String> {
        let mut headers = built.headers;
        headers.extend(extra_headers);
        let out = Outgoing {
            method: Some(built.method),
            url: built.url,
            headers,
            body: built.body,
            auth,
        };
        self.run(out, start, max).await
    }

    async fn call_operation(
        &self,
        op: &OperationTool,
        mut args: Map<String, Value>,
    ) -> Result<String, String> {
        let body = args.remove(openapi::body_key(&op.operation));
        let own = |key: &str| op.operation.params.iter().any(|p| p.name == key);
        let mut paging = |key: &str| {
            if own(key) {
                return Ok(None);
            }
            match args.remove(key) {
                None => Ok(None),
                Some(v) => v
                    .as_u64()
                    .and_then(|n| usize::try_from(n).ok())
                    .map(Some)
                    .ok_or_else(|| format!("{key} must be a non-negative integer")),
            }
        };
        let start = paging("start_index")?.unwrap_or(0);
        let max = paging("max_length")?;
        let built = build_call(&op.operation, &op.base, &args, body.as_ref())?;
        self.run_built(built, Map::new(), op.auth.clone(), start, max)
            .await
    }

    async fn graphql(
        &self,
        endpoint: &str,
        mut headers: Map<String, Value>,
        auth: Option<ApiAuth>,
        body: &Value,
    ) -> Result<WebResponse, String> {
        headers
            .entry("Accept")
            .or_insert_with(|| Value::from("application/json"));
        self.send(Outgoing {
            method: Some("POST".into()),
            url: endpoint.to_owned(),
            headers,
            body: body_of(Some(body), None, None)?,
            auth,
        })
        .await
    }

    async fn paginate(&self, a: PaginateArgs) -> Result<String, String> {
        let max_pages = a.max_pages.unwrap_or(5).clamp(1, MAX_PAGES);
        if a.cursor_param.is_some() && a.next_pointer.is_none() {
            return Err(
                "cursor_param needs next_pointer (where the cursor is in each page)".into(),
            );
        }
        let mut url = Url::parse(&a.url).map_err(|e| format!("invalid URL {:?}: {e}", a.url))?;
        request::append_query(&mut url, &a.query);
        let first = url.clone();
        let mut seen = vec![url.to_string()];
        let mut items: Vec<Value> = Vec::new();
        let mut pages = 0;
        let mut stop = String::from("no next page");
        loop {
            let mut headers = a.headers.clone();
            headers
                .entry("Accept")
                .or_insert_with(|| Value::from("application/json"));
            let r = self
                .send(Outgoing {
                    url: url.to_string(),
                    headers,
                    auth: a.auth.clone(),
                    ..Outgoing::default()
                })
                .await
                .map_err(|e| format!("page {}: {e}", pages + 1))?;
            pages += 1;
            if !r.status.is_success() {
                let head = status_block(&Method::GET, &r);
                return Err(format!(
                    "page {pages} answered {}; {} items from earlier pages are not shown\n{head}",
                    r.status,
                    items.len()
                ));
            }
            let doc: Value = serde_json::from_slice(&r.body)
                .map_err(|e| format!("page {pages} ({url}) is not JSON: {e}"))?;
            let page_items = select(&doc, &a.items_pointer)
                .map_err(|e| format!("page {pages}: {e}"))?
                .as_array()
                .ok_or_else(|| {
                    format!(
                        "page {pages}: the value at items_pointer {:?} is not an array",
                        a.items_pointer
                    )
                })?;
            let empty = page_items.is_empty();
            items.extend(page_items.iter().cloned());
            let next: Option<Url> = match &a.next_pointer {
                Some(pointer) => match doc.pointer(pointer).filter(|v| !v.is_null()) {
                    Some(Value::String(s)) if s.is_empty() => None,
                    Some(v) => Some(match &a.cursor_param {
                        Some(param) => {
                            let mut next = first.clone();
                            let kept: Vec<(String, String)> = next
                                .query_pairs()
                                .filter(|(k, _)| k != param)
                                .map(|(k, v)| (k.into_owned(), v.into_owned()))
                                .collect();
                            next.query_pairs_mut()
                                .clear()
                                .extend_pairs(kept)
                                .append_pair(param, &request::scalar(v));
                            next
                        }
                        None => url
                            .join(&request::scalar(v))
                            .map_err(|e| format!("page {pages}: the next URL is invalid: {e}"))?,
                    }),
                    None => None,
                },
                None => next_link(&r, &url),
            };
            let Some(next) = next else { break };
            if empty {
                stop = "an empty page".into();
                break;
            }
            if seen.contains(&next.to_string()) {
                stop = format!("the next page {next} was already fetched");
                break;
            }
            if pages >= max_pages {
                stop = format!("max_pages ({max_pages}) reached; more pages follow at {next}");
                break;
            }
            seen.push(next.to_string());
            url = next;
        }
        let mut out = format!(
            "GET {first}\nPages fetched: {pages} (stopped: {stop})\nItems: {}\n\n",
            items.len()
        );
        let pretty = serde_json::to_string_pretty(&Value::Array(items)).unwrap_or_default();
        out.push_str(&request::paged(&pretty, a.start_index, a.max_length));
        Ok(out)
    }

    async fn soap(&self, a: SoapArgs) -> Result<String, String> {
        let v12 = match a.version.as_deref() {
            None | Some("1.1") => false,
            Some("1.2") => true,
            Some(other) => return Err(format!("SOAP version {other} is not 1.1 or 1.2")),
        };
        let ns = if v12 {
            "http://www.w3.org/2003/05/soap-envelope"
        } else {
            "http://schemas.xmlsoap.org/soap/envelope/"
        };
        let envelope = match (a.envelope, a.body) {
            (Some(_), Some(_)) => return Err("give either envelope or body, not both".into()),
            (Some(e), None) => e,
            (None, Some(b)) => format!(
                "<?xml version=\"1.0\" encoding=\"utf-8\"?><soap:Envelope xmlns:soap=\"{ns}\"><soap:Body>{b}</soap:Body></soap:Envelope>"
            ),
            (None, None) => return Err("envelope or body is required".into()),
        };
        // Checked before sending, so a typo is caught here rather than as a server fault.
        roxmltree::Document::parse(&envelope)
            .map_err(|e| format!("the envelope is not well-formed XML: {e}"))?;
        let mut headers = a.headers;
        let action = a.soap_action.unwrap_or_default();
        let content_type = if v12 {
            if action.is_empty() {
                "application/soap+xml; charset=utf-8".to_owned()
            } else {
                format!("application/soap+xml; charset=utf-8; action=\"{action}\"")
            }
        } else {
            headers
                .entry("SOAPAction")
                .or_insert_with(|| Value::from(format!("\"{action}\"")));
            "text/xml; charset=utf-8".to_owned()
        };
        let r = self
            .send(Outgoing {
                method: Some("POST".into()),
                url: a.url,
                headers,
                body: Some((envelope.into_bytes(), content_type)),
                auth: a.auth,
            })
            .await?;
        let text = String::from_utf8_lossy(&r.body).into_owned();
        let mut out = status_block(&Method::POST, &r);
        if let Some(fault) = soap_fault(&text) {
            out.push_str(&format!("\nSOAP Fault: {fault}\n\n"));
            out.push_str(&request::paged(&text, a.start_index, a.max_length));
            return Err(out);
        }
        out.push('\n');
        out.push_str(&request::paged(&text, a.start_index, a.max_length));
        Ok(out)
    }
}

/// `faultcode: faultstring` (1.1) or `Code: Reason` (1.2) of a SOAP Fault, if the answer is one.
pub fn soap_fault(xml: &str) -> Option<String> {
    let doc = roxmltree::Document::parse(xml).ok()?;
    let fault = doc.descendants().find(|n| n.tag_name().name() == "Fault")?;
    let text_of = |names: &[&str]| {
        fault
            .descendants()
            .find(|n| names.contains(&n.tag_name().name()))
            .map(|n| {
                n.descendants()
                    .filter(|d| d.is_text())
                    .filter_map(|d| d.text())
                    .collect::<String>()
                    .split_whitespace()
                    .collect::<Vec<_>>()
                    .join(" ")
            })
            .unwrap_or_default()
    };
    let code = text_of(&["faultcode", "Code"]);
    let reason = text_of(&["faultstring", "Reason"]);
    Some(format!("{code}: {reason}"))
}

/// The `rel="next"` target of the response's `Link` headers, resolved against `base`.
pub fn next_link(r: &WebResponse, base: &Url) -> Option<Url> {
    r.headers
        .get_all(reqwest::header::LINK)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .find_map(|part| {
            let (target, params) = part.split_once(';')?;
            let target = target.trim().strip_prefix('<')?.strip_suffix('>')?;
            let is_next = params.split(';').any(|p| {
                let p = p.trim().to_ascii_lowercase();
                p.strip_prefix("rel=")
                    .map(|r| r.trim_matches('"').split_whitespace().any(|r| r == "next"))
                    .unwrap_or(false)
            });
            is_next.then(|| base.join(target).ok()).flatten()
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tools() -> ApiTools {
        match WebGuard::new(crate::GuardConfig::default()) {
            Ok(g) => ApiTools::new(Arc::new(g), "me"),
            Err(e) => panic!("{e}"),
        }
    }

    #[test]
    fn tools_are_listed_with_their_effects_and_honest_annotations() {
        let listed = tools().list();
        let names: Vec<&str> = listed.iter().map(|t| t.tool.name.as_ref()).collect();
        assert_eq!(names, API_TOOL_NAMES);
        for info in &listed {
            assert_eq!(info.category, "api");
            assert!(!info.agent_only);
            let expected = if info.tool.name == "api_jwt_decode" {
                Effect::Read
            } else {
                Effect::Network
            };
            assert_eq!(info.effect, expected, "{}", info.tool.name);
        }
        let hints = |name: &str| {
            let a = listed
                .iter()
                .find(|t| t.tool.name == name)
                .and_then(|t| t.tool.annotations.clone())
                .unwrap_or_default();
            (a.read_only_hint, a.destructive_hint)
        };
        for reads in [
            "api_get_json",
            "api_paginate",
            "graphql_schema",
            "api_health",
        ] {
            assert_eq!(hints(reads), (Some(true), Some(false)), "{reads}");
        }
        for changes in [
            "api_request",
            "graphql_query",
            "openapi_call",
            "api_json_rpc",
        ] {
            assert_eq!(hints(changes), (Some(false), Some(true)), "{changes}");
        }
        assert_eq!(hints("api_webhook"), (Some(false), Some(false)));
        assert!(tools().only_operations().list().is_empty());
    }

    #[test]
    fn link_headers_yield_the_next_page() {
        let mut headers = reqwest::header::HeaderMap::new();
        let link = "<https://api.test/items?page=2>; rel=\"next\", <https://api.test/items?page=9>; rel=\"last\"";
        if let Ok(v) = reqwest::header::HeaderValue::from_str(link) {
            headers.insert(reqwest::header::LINK, v);
        }
        let base = Url::parse("https://api.test/items").ok();
        let Some(base) = base else { return };
        let r = WebResponse {
            status: reqwest::StatusCode::OK,
            final_url: base.clone(),
            headers,
            body: Vec::new(),
            truncated: false,
            redirects: 0,
        };
        assert_eq!(
            next_link(&r, &base).map(|u| u.to_string()),
            Some("https://api.test/items?page=2".to_owned())
        );
    }

    #[test]
    fn soap_faults_are_found_in_both_versions() {
        let v11 = r#"<Envelope><Body><Fault><faultcode>Server</faultcode><faultstring>Boom</faultstring></Fault></Body></Envelope>"#;
        assert_eq!(soap_fault(v11).as_deref(), Some("Server: Boom"));
        let v12 = r#"<e:Envelope xmlns:e="http://www.w3.org/2003/05/soap-envelope"><e:Body><e:Fault><e:Code><e:Value>e:Sender</e:Value></e:Code><e:Reason><e:Text>Bad input</e:Text></e:Reason></e:Fault></e:Body></e:Envelope>"#;
        assert_eq!(soap_fault(v12).as_deref(), Some("e:Sender: Bad input"));
        assert_eq!(soap_fault("<Envelope><Body><Ok/></Body></Envelope>"), None);
    }

    #[test]
    fn mutations_are_recognised() {
        assert!(is_mutation("mutation { deleteUser(id: 1) }"));
        assert!(is_mutation("# comment\nmutation Del { x }"));
        assert!(!is_mutation("query { user { mutationCount } }"));
        assert!(!is_mutation("{ a } # mutation in a comment"));
    }
}
