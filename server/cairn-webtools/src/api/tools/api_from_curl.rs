//! `api_from_curl`: run a curl command line as an API request, showing the parsed request first.

use cairn_toolkit::{CallContext, Category, Effect, JsonSchema, Paths, Tool};
use rmcp::model::CallToolResult;
use serde::Deserialize;

use crate::api::request::{ApiAuth, Outgoing};
use crate::api::{Api, answer, parse_curl};

/// The `api_from_curl` tool.
pub struct ApiFromCurl;

/// Arguments of `api_from_curl`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// The curl command, e.g. curl -X POST https://api.example.com/x -H 'Accept: application/json' -d '{"a":1}'.
    command: String,
    auth: Option<ApiAuth>,
    /// Only show the parsed request (default false).
    #[serde(default)]
    dry_run: bool,
    /// The character of the body to start from (default 0); use the value a truncated result names.
    #[serde(default)]
    start_index: usize,
    /// At most this many characters of body (default 20000).
    #[schemars(range(min = 1))]
    max_length: Option<usize>,
}

impl Tool for ApiFromCurl {
    type Host = Api;
    type Args = Args;
    const NAME: &'static str = "api_from_curl";
    const TITLE: &'static str = "Run curl command";
    const DESCRIPTION: &'static str = "Run a curl command line as an API request (-X, -H, -d/--data/--data-raw/--data-urlencode/--json, -G, -I, -A, -b, the URL) and show the parsed request first. -u is refused: use auth with a vault secret instead.";
    const CATEGORY: Category = Category::Api;
    const EFFECT: Effect = Effect::Network;
    const AGENT_ONLY: bool = false;
    /// Any method: it may change or delete remote state.
    const DESTRUCTIVE: bool = true;

    fn paths(_: &Args) -> Paths {
        Paths::none()
    }

    async fn call(api: &Api, a: Args, cx: CallContext) -> CallToolResult {
        answer(&cx, async {
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
            match api.run(outgoing, a.start_index, a.max_length).await {
                Ok(answer) => {
                    out.push('\n');
                    out.push_str(&answer);
                    Ok(out)
                }
                Err(e) => Err(format!("{out}\n{e}")),
            }
        })
        .await
    }
}
