//! The API tools (category `api`): REST, JSON, pagination, GraphQL, OpenAPI, webhooks, forms,
//! JSON-RPC, SOAP, health checks, JWT decoding and curl commands, one type per tool in
//! [`tools`], listed in [`API_TOOLS`] and served in-process as [`ApiTools`] (`cairn-api`); and
//! the operations of the OpenAPI specs the user configured, served as [`ConfiguredOperations`]
//! (`cairn-openapi`).
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
pub mod services;
pub mod tools;

use std::future::Future;
use std::sync::Arc;

use cairn_agent::tools::{CallContext, Category, Effect, ToolHost, ToolInfo};
use cairn_toolkit::{Entry, JsonSchema, ToolSet, reply};
use cairn_workspace::Workspace;
use futures::future::BoxFuture;
use rmcp::model::{CallToolResult, Tool, ToolAnnotations};
use serde_json::{Map, Value};
use url::Url;

pub use curl::{CurlRequest, parse_curl, shell_words};
pub use graphql::{is_mutation, summarise_schema};
pub use jwt::{decode_report as jwt_report, utc};
pub use openapi::{Operation, Spec, build_call, parse_spec, sanitise};
pub use request::{ApiAuth, AuthScheme};

use cairn_web::{WebGuard, WebRequest, WebResponse};
use request::{Outgoing, body_of, report};

/// The fixed API tools, in the order listed.
pub const API_TOOLS: &[Entry<Api>] = &[
    Entry::of::<tools::ApiRequest>(),
    Entry::of::<tools::ApiGetJson>(),
    Entry::of::<tools::ApiPaginate>(),
    Entry::of::<tools::GraphqlQuery>(),
    Entry::of::<tools::GraphqlSchema>(),
    Entry::of::<tools::OpenapiOperations>(),
    Entry::of::<tools::OpenapiCall>(),
    Entry::of::<tools::ApiWebhook>(),
    Entry::of::<tools::ApiFormPost>(),
    Entry::of::<tools::ApiJsonRpc>(),
    Entry::of::<tools::ApiHealth>(),
    Entry::of::<tools::ApiOptions>(),
    Entry::of::<tools::ApiJwtDecode>(),
    Entry::of::<tools::ApiFromCurl>(),
    Entry::of::<tools::ApiSoap>(),
];

/// The fixed API tools ([`API_TOOLS`]) over one [`Api`].
pub type ApiTools = ToolSet<Api>;

/// The fixed API tools, sending through `api`.
pub fn api_tools(api: Api) -> ApiTools {
    ToolSet::new(api, API_TOOLS)
}

/// The most pages `api_paginate` follows.
pub const MAX_PAGES: usize = 10;
/// The longest tool name MCP allows.
const MAX_TOOL_NAME: usize = 64;

/// What the API tools share: the guard every request goes through, the user it is sent for,
/// and the workspace spec paths are read from (without one, specs come only from URLs).
#[derive(Clone)]
pub struct Api {
    guard: Arc<WebGuard>,
    user: String,
    workspace: Option<Arc<Workspace>>,
}

impl std::fmt::Debug for Api {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Api")
            .field("user", &self.user)
            .field("workspace", &self.workspace.is_some())
            .finish_non_exhaustive()
    }
}

impl Api {
    /// The first-class integrations over the same guard, user and workspace, for the services
    /// in `settings` (`[api.services]`).
    pub fn services(
        &self,
        settings: std::collections::BTreeMap<String, services::ServiceSettings>,
    ) -> services::Services {
        services::Services::new(self.guard.clone(), self.user.clone(), settings)
            .with_workspace(self.workspace.clone())
    }
}

impl cairn_toolkit::Host for Api {
    fn workspace(&self) -> Option<&Arc<Workspace>> {
        self.workspace.as_ref()
    }
}

impl Api {
    pub fn new(guard: Arc<WebGuard>, user: impl Into<String>) -> Api {
        Api {
            guard,
            user: user.into(),
            workspace: None,
        }
    }

    /// The same, reading spec paths inside `workspace` (never the file system directly).
    pub fn with_workspace(mut self, workspace: Arc<Workspace>) -> Api {
        self.workspace = Some(workspace);
        self
    }

    /// A spec from a URL (through the guard, with `auth` if given) or a workspace path.
    pub(crate) async fn load_spec(
        &self,
        spec: &str,
        auth: Option<&ApiAuth>,
    ) -> Result<Spec, String> {
        if spec_is_url(spec) {
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

    /// Sends `out` on behalf of the user.
    pub(crate) async fn send(&self, out: Outgoing) -> Result<WebResponse, String> {
        let request = out.build(&self.user)?;
        self.fetch(request).await
    }

    async fn fetch(&self, request: WebRequest) -> Result<WebResponse, String> {
        self.guard.fetch(request).await.map_err(|e| e.to_string())
    }

    /// Sends and reports (status block and paged body).
    pub(crate) async fn run(
        &self,
        out: Outgoing,
        start: usize,
        max: Option<usize>,
    ) -> Result<String, String> {
        let request = out.build(&self.user)?;
        let method = request.method.clone();
        let r = self.fetch(request).await?;
        Ok(report(&method, &r, start, max))
    }

    /// Sends a call built from a spec's operation, with `extra_headers` over its own.
    pub(crate) async fn run_built(
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

    /// POSTs a GraphQL request body to `endpoint`, asking for JSON.
    pub(crate) async fn graphql(
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
}

/// Whether a spec argument is a URL (fetched through the guard) rather than a workspace path.
pub(crate) fn spec_is_url(spec: &str) -> bool {
    spec.starts_with("http://") || spec.starts_with("https://")
}

/// The result of `work`, or `cancelled` as soon as the run is cancelled: a slow server never
/// holds up a cancelled run.
pub(crate) async fn answer(
    cx: &CallContext,
    work: impl Future<Output = Result<String, String>>,
) -> CallToolResult {
    tokio::select! {
        r = work => reply::from_text(r),
        () = cx.cancel.cancelled() => reply::error("cancelled"),
    }
}

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

/// The paging arguments every configured operation takes as well (under names its own
/// parameters do not use). Only its schema is used, derived like a kit tool's, so the
/// operations describe paging exactly as the fixed tools do.
#[derive(JsonSchema)]
#[expect(dead_code, reason = "only the derived schema is used")]
struct Paging {
    /// The character of the body to start from (default 0); use the value a truncated result names.
    #[serde(default)]
    start_index: usize,
    /// At most this many characters of body (default 20000).
    #[schemars(range(min = 1))]
    max_length: Option<usize>,
}

/// The operations of the OpenAPI specs the user configured (`[[api.openapi]]`), one tool each
/// (`<name>_<operationId>`).
///
/// These are not kit tools: their names, schemas and annotations are generated at run time
/// from the specs, so there is no type per tool to list. They are their own [`ToolHost`],
/// which the binary serves as a second server (`cairn-openapi`), added once the specs have
/// loaded, so a slow spec never delays the fixed tools.
#[derive(Clone)]
pub struct ConfiguredOperations {
    api: Api,
    operations: Arc<Vec<OperationTool>>,
    problems: Arc<Vec<String>>,
}

impl std::fmt::Debug for ConfiguredOperations {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ConfiguredOperations")
            .field("api", &self.api)
            .field("operations", &self.operations.len())
            .field("problems", &self.problems)
            .finish_non_exhaustive()
    }
}

impl ConfiguredOperations {
    /// Each operation of `sources` as a tool, sending through `api`. A spec that cannot be
    /// loaded or an operation whose name would clash is logged and listed in
    /// [`ConfiguredOperations::problems`]; the rest load.
    pub async fn load(api: Api, sources: &[OpenApiSource]) -> ConfiguredOperations {
        let mut tools: Vec<OperationTool> = Vec::new();
        let mut problems: Vec<String> = Vec::new();
        for source in sources {
            match load_source(&api, source, &mut tools).await {
                Ok(skipped) => problems.extend(skipped),
                Err(e) => problems.push(format!("api.openapi `{}`: {e}", source.name)),
            }
        }
        for p in &problems {
            tracing::warn!("{p}");
        }
        ConfiguredOperations {
            api,
            operations: Arc::new(tools),
            problems: Arc::new(problems),
        }
    }

    /// What went wrong loading the configured specs.
    pub fn problems(&self) -> &[String] {
        &self.problems
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
        self.api
            .run_built(built, Map::new(), op.auth.clone(), start, max)
            .await
    }
}

async fn load_source(
    api: &Api,
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
    let spec = api.load_spec(&source.spec, source.auth.as_ref()).await?;
    let base = spec.base(source.base_url.as_deref())?;
    let paging = cairn_toolkit::input_schema::<Paging>();
    let mut skipped = Vec::new();
    for op in &spec.operations {
        let mut name = format!("{prefix}_{}", sanitise(&op.id));
        if name.len() > MAX_TOOL_NAME {
            name.truncate(MAX_TOOL_NAME);
        }
        if API_TOOLS.iter().any(|e| e.name() == name) || tools.iter().any(|t| t.tool.name == name) {
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
            && let Some(Value::Object(extra)) = paging.get("properties")
        {
            for (key, value) in extra {
                properties
                    .entry(key.clone())
                    .or_insert_with(|| value.clone());
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

impl ToolHost for ConfiguredOperations {
    fn list(&self) -> Vec<ToolInfo> {
        self.operations
            .iter()
            .map(|o| ToolInfo {
                tool: o.tool.clone(),
                effect: Effect::Network,
                category: Category::Api.as_str().to_owned(),
                agent_only: false,
                origin: None,
            })
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
            match self.operations.iter().find(|o| o.tool.name == name) {
                Some(op) => answer(&ctx, self.call_operation(op, arguments)).await,
                None => reply::error(format!("no API tool is named {name}")),
            }
        })
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
        .get_all(cairn_web::header::LINK)
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

    fn api() -> Api {
        match WebGuard::new(cairn_web::GuardConfig::default()) {
            Ok(g) => Api::new(Arc::new(g), "me"),
            Err(e) => panic!("{e}"),
        }
    }

    #[test]
    fn tools_are_listed_with_their_effects_and_honest_annotations() {
        let listed = api_tools(api()).list();
        let names: Vec<&str> = listed.iter().map(|t| t.tool.name.as_ref()).collect();
        let set: Vec<&str> = API_TOOLS.iter().map(Entry::name).collect();
        assert_eq!(names, set);
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
        assert_eq!(hints("api_jwt_decode"), (Some(true), Some(false)));
    }

    #[tokio::test]
    async fn no_configured_specs_are_no_operations_and_none_of_the_fixed_tools() {
        let operations = ConfiguredOperations::load(api(), &[]).await;
        assert!(operations.list().is_empty());
        assert!(operations.problems().is_empty());
    }

    #[test]
    fn every_schema_is_closed_and_auth_is_the_vault_secret_object() {
        for info in api_tools(api()).list() {
            let schema = &info.tool.input_schema;
            let name = &info.tool.name;
            assert_eq!(
                schema.get("additionalProperties"),
                Some(&Value::Bool(false)),
                "{name}"
            );
            let Some(Value::Object(properties)) = schema.get("properties") else {
                panic!("{name} has no properties");
            };
            if let Some(auth) = properties.get("auth") {
                assert_eq!(auth["required"], serde_json::json!(["secret"]), "{name}");
                assert_eq!(auth["additionalProperties"], false, "{name}");
                assert!(
                    auth["description"]
                        .as_str()
                        .is_some_and(|d| d.starts_with("Authenticate with a secret")),
                    "{name}: {auth}"
                );
            }
        }
    }

    #[test]
    fn link_headers_yield_the_next_page() {
        let mut headers = cairn_web::header::HeaderMap::new();
        let link = "<https://api.test/items?page=2>; rel=\"next\", <https://api.test/items?page=9>; rel=\"last\"";
        if let Ok(v) = cairn_web::header::HeaderValue::from_str(link) {
            headers.insert(cairn_web::header::LINK, v);
        }
        let base = Url::parse("https://api.test/items").ok();
        let Some(base) = base else { return };
        let r = WebResponse {
            status: cairn_web::StatusCode::OK,
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
