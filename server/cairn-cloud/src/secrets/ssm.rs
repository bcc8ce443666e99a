//! `ssm_parameter`: an SSM parameter by name, or the parameters under a path. A
//! `SecureString`'s value is never shown, whatever the service returns: the tool says it is
//! secret and points to `cloud_secret_to_vault`.

use cairn_config::CloudKind;
use cairn_toolkit::reply::{error, text};
use cairn_toolkit::table::{Cell, Limits, Table, cut};
use cairn_toolkit::{CallContext, Category, Effect, JsonSchema, Paths, Tool};
use rmcp::model::CallToolResult;
use serde::Deserialize;
use serde_json::{Value, json};

use super::api::ssm;
use crate::cloud::Cloud;
use crate::error::CloudError;

/// Characters of one value shown in a listing (a single parameter is shown up to 4 KB, SSM's
/// standard limit).
const LIST_VALUE_CHARS: usize = 200;

/// What is shown instead of a SecureString's value.
const HIDDEN: &str = "(SecureString: secret, not shown)";

/// The `ssm_parameter` tool.
pub struct SsmParameter;

/// Arguments of `ssm_parameter`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// The `[cloud.NAME]` account; needed only when several fit.
    #[serde(default)]
    account: Option<String>,
    /// One parameter's name (`/app/db/host`).
    #[serde(default)]
    name: Option<String>,
    /// List the parameters under this path (`/app/`); the default when no `name` is given is `/`.
    #[serde(default)]
    path: Option<String>,
    /// With `path`: include deeper levels too (default true).
    #[serde(default)]
    recursive: Option<bool>,
    /// Parameters per page (default 50, at most 200).
    #[serde(default)]
    #[schemars(range(min = 1, max = 200))]
    limit: Option<u32>,
    /// The token a previous page gave, for the next page.
    #[serde(default)]
    next: Option<String>,
}

impl Tool for SsmParameter {
    type Host = Cloud;
    type Args = Args;
    const NAME: &'static str = "ssm_parameter";
    const TITLE: &'static str = "SSM parameters";
    const DESCRIPTION: &'static str = "Read an AWS SSM Parameter Store parameter by `name`, or list those under a `path`, with type, version and value. SecureString values are secret and never shown; `cloud_secret_to_vault` can store one in the vault instead.";
    const CATEGORY: Category = Category::Cloud;
    const EFFECT: Effect = Effect::Network;
    const AGENT_ONLY: bool = false;
    const READ_ONLY: bool = true;

    fn paths(_: &Args) -> Paths {
        Paths::none()
    }

    async fn call(host: &Cloud, args: Args, cx: CallContext) -> CallToolResult {
        let run = async {
            let account = host.account(args.account.as_deref(), &[CloudKind::Aws])?;
            match (&args.name, &args.path) {
                (Some(_), Some(_)) => Err(CloudError::Invalid(
                    "give `name` (one parameter) or `path` (a listing), not both".into(),
                )),
                (Some(name), None) => {
                    let answer = ssm(
                        host,
                        &cx,
                        account,
                        "GetParameter",
                        &json!({ "Name": name, "WithDecryption": false }),
                    )
                    .await
                    .map_err(|e| match e {
                        CloudError::Service { ref code, .. } if code == "ParameterNotFound" => {
                            CloudError::Invalid(format!(
                                "no parameter `{name}` in account `{}`; list them with `path`",
                                account.name
                            ))
                        }
                        e => e,
                    })?;
                    Ok(one(&answer["Parameter"]))
                }
                (None, path) => {
                    let path = path.as_deref().unwrap_or("/");
                    list(host, &cx, account, path, &args).await
                }
            }
        };
        run.await
            .unwrap_or_else(|e: CloudError| error(e.to_string()))
    }
}

/// Whether `p` holds a secret.
fn is_secret(p: &Value) -> bool {
    p["Type"] == "SecureString"
}

/// The value as shown: a SecureString's never.
fn shown_value(p: &Value, max: usize) -> String {
    if is_secret(p) {
        HIDDEN.to_owned()
    } else {
        cut(p["Value"].as_str().unwrap_or_default(), max)
    }
}

fn one(p: &Value) -> CallToolResult {
    let name = p["Name"].as_str().unwrap_or_default();
    let mut out = format!(
        "parameter `{name}`: {}, version {}\nvalue: {}",
        p["Type"].as_str().unwrap_or("?"),
        p["Version"],
        shown_value(p, 4096)
    );
    if is_secret(p) {
        out.push_str(&format!(
            "\nIts value is secret: it is not shown to you. To use it, store it in the vault with `cloud_secret_to_vault` (source `ssm`, id `{name}`) and bind it to the hosts that need it."
        ));
    }
    let mut result = text(out);
    result.structured_content = Some(json!({
        "name": name, "type": p["Type"], "version": p["Version"],
        "value": if is_secret(p) { Value::Null } else { p["Value"].clone() },
        "secret": is_secret(p),
    }));
    result
}

async fn list(
    host: &Cloud,
    cx: &CallContext,
    account: &crate::account::Account,
    path: &str,
    args: &Args,
) -> Result<CallToolResult, CloudError> {
    let limit = args.limit.unwrap_or(50).clamp(1, 200) as usize;
    let mut rows = Vec::new();
    let mut token = args.next.clone();
    let mut secrets = 0;
    // Bounded even if SSM kept answering empty pages with a token.
    for _ in 0..40 {
        // SSM gives at most 10 a call; asking for exactly what is left ends pages where the
        // token SSM gives resumes.
        let mut body = json!({
            "Path": path,
            "Recursive": args.recursive.unwrap_or(true),
            "WithDecryption": false,
            "MaxResults": (limit - rows.len()).min(10),
        });
        if let Some(t) = &token {
            body["NextToken"] = json!(t);
        }
        let answer = ssm(host, cx, account, "GetParametersByPath", &body).await?;
        for p in answer["Parameters"].as_array().into_iter().flatten() {
            secrets += usize::from(is_secret(p));
            rows.push(vec![
                Cell::Text(p["Name"].as_str().unwrap_or_default().to_owned()),
                Cell::Text(p["Type"].as_str().unwrap_or_default().to_owned()),
                Cell::Text(p["Version"].to_string()),
                Cell::Text(shown_value(p, LIST_VALUE_CHARS)),
            ]);
        }
        token = answer["NextToken"]
            .as_str()
            .filter(|t| !t.is_empty())
            .map(str::to_owned);
        if token.is_none() || rows.len() >= limit {
            break;
        }
    }
    let heading = format!("SSM parameters under `{path}` (account `{}`)", account.name);
    if rows.is_empty() && token.is_none() {
        // SSM may hand out a token whose page is empty: the listing ended there.
        let said = if args.next.is_some() {
            "no more"
        } else {
            "none"
        };
        let mut result = text(format!("{heading}: {said}"));
        result.structured_content = Some(json!({ "rows": [], "truncated": false }));
        return Ok(result);
    }
    let table = Table {
        columns: ["name", "type", "version", "value"]
            .map(str::to_owned)
            .to_vec(),
        rows,
        more: token.is_some(),
    };
    let hint = match &token {
        Some(t) => format!("pass `next: \"{t}\"` for the next page"),
        None => "ask for fewer with `limit` or a narrower `path`".to_owned(),
    };
    let mut result = table.result_hinting(&heading, &Limits::default(), &hint);
    if secrets > 0 {
        let note = format!(
            "\n{secrets} SecureString value(s) are secret and not shown; `cloud_secret_to_vault` stores one in the vault."
        );
        result.content.push(rmcp::model::ContentBlock::text(note));
    }
    if let (Some(t), Some(s)) = (&token, result.structured_content.as_mut()) {
        s["next"] = Value::String(t.clone());
    }
    Ok(result)
}
