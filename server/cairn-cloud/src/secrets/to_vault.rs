//! `cloud_secret_to_vault`: a Secrets Manager secret or an SSM parameter's value stored in the
//! vault, bound to the hosts the user names, after the strict question. The value goes from
//! the service's answer to the store and nowhere else: no result carries it in any form.

use base64::Engine;
use cairn_config::CloudKind;
use cairn_toolkit::reply::{approved_once, error, strict_question, text};
use cairn_toolkit::{CallContext, Category, Effect, JsonSchema, Paths, Tool};
use rmcp::model::CallToolResult;
use serde::Deserialize;
use serde_json::{Value, json};

use super::api::{secrets_manager, ssm};
use super::scrub::scrub;
use crate::account::Account;
use crate::cloud::Cloud;
use crate::error::CloudError;

/// Hosts one secret may be bound to at most.
const MAX_HOSTS: usize = 16;

/// Bytes of a secret the vault takes at most (Secrets Manager's own limit is 64 KB).
const MAX_SECRET_BYTES: usize = 64 * 1024;

/// Why storing needs the strict question.
const WHY: &str = "a secret from the cloud goes into your vault, usable on the hosts named: this needs your approval of this exact source, name and hosts, once";

/// The `cloud_secret_to_vault` tool.
pub struct CloudSecretToVault;

/// Where the secret is read (the variants carry no doc comments so the schema stays a plain
/// string enum; the field's description says what each means).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Source {
    Secretsmanager,
    Ssm,
}

/// Arguments of `cloud_secret_to_vault`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// The `[cloud.NAME]` account; needed only when several fit.
    #[serde(default)]
    account: Option<String>,
    /// `secretsmanager` (AWS Secrets Manager; `id` is the secret's name or ARN) or `ssm` (SSM
    /// Parameter Store; `id` is the parameter's name, typically a SecureString).
    source: Source,
    /// The secret's name or ARN (Secrets Manager), or the parameter's name (SSM).
    id: String,
    /// Secrets Manager: a JSON secret's key whose value to store (`password`), instead of the
    /// whole secret.
    #[serde(default)]
    json_key: Option<String>,
    /// The vault secret's name (1 to 64 of `A-Z a-z 0-9 _ . -`); an existing one is replaced.
    vault_name: String,
    /// The hosts the vault may send it to (`api.example.com`, `*.example.com`); required.
    hosts: Vec<String>,
}

impl Tool for CloudSecretToVault {
    type Host = Cloud;
    type Args = Args;
    const NAME: &'static str = "cloud_secret_to_vault";
    const TITLE: &'static str = "Store a cloud secret in the vault";
    const DESCRIPTION: &'static str = "Copy an AWS Secrets Manager secret (or one key of a JSON secret) or an SSM SecureString parameter into the user's vault under `vault_name`, bound to `hosts`, after the user approves that exact copy. The value is never shown to you; use the vault name where a config takes a secret.";
    const CATEGORY: Category = Category::Cloud;
    const EFFECT: Effect = Effect::Write;
    const AGENT_ONLY: bool = true;

    fn paths(_: &Args) -> Paths {
        Paths::none()
    }

    async fn call(host: &Cloud, args: Args, cx: CallContext) -> CallToolResult {
        run(host, &args, &cx)
            .await
            .unwrap_or_else(|e: CloudError| error(e.to_string()))
    }
}

/// The source in words, for the question and the result.
fn source_text(args: &Args, account: &Account) -> String {
    let what = match args.source {
        Source::Secretsmanager => "Secrets Manager secret",
        Source::Ssm => "SSM parameter",
    };
    let key = args
        .json_key
        .as_deref()
        .map(|k| format!(" (key `{k}`)"))
        .unwrap_or_default();
    format!("{what} `{}`{key} of account `{}`", args.id, account.name)
}

/// The name and hosts checked as the vault checks them.
fn check(args: &Args) -> Result<(), CloudError> {
    cairn_vault::validate_name(&args.vault_name).map_err(|e| CloudError::Invalid(e.to_string()))?;
    if args.hosts.is_empty() {
        return Err(CloudError::Invalid(
            "`hosts` is required: the hosts the secret may be sent to (`api.example.com`, `*.example.com`)".into(),
        ));
    }
    if args.hosts.len() > MAX_HOSTS {
        return Err(CloudError::Invalid(format!(
            "{} hosts: bind a secret to at most {MAX_HOSTS} (use a wildcard such as `*.example.com`)",
            args.hosts.len()
        )));
    }
    for h in &args.hosts {
        cairn_vault::validate_host(h).map_err(|e| CloudError::Invalid(e.to_string()))?;
    }
    if args.id.trim().is_empty() {
        return Err(CloudError::Invalid("`id` is empty".into()));
    }
    if args.json_key.is_some() && args.source == Source::Ssm {
        return Err(CloudError::Invalid(
            "`json_key` is for Secrets Manager secrets".into(),
        ));
    }
    Ok(())
}

/// What the service says the secret is, read without its value: its canonical name (ARN for
/// Secrets Manager), so the approval names exactly one.
async fn locate(
    host: &Cloud,
    cx: &CallContext,
    account: &Account,
    args: &Args,
) -> Result<String, CloudError> {
    let missing = |e: CloudError| {
        if e.is_not_found() {
            CloudError::Invalid(format!(
                "{} does not exist; nothing was stored",
                source_text(args, account)
            ))
        } else {
            e
        }
    };
    match args.source {
        Source::Secretsmanager => {
            let d = secrets_manager(
                host,
                cx,
                account,
                "DescribeSecret",
                &json!({ "SecretId": args.id }),
            )
            .await
            .map_err(missing)?;
            Ok(d["ARN"].as_str().unwrap_or(&args.id).to_owned())
        }
        Source::Ssm => {
            let d = ssm(
                host,
                cx,
                account,
                "DescribeParameters",
                &json!({ "ParameterFilters": [{ "Key": "Name", "Option": "Equals", "Values": [args.id] }] }),
            )
            .await
            .map_err(missing)?;
            let found = d["Parameters"].as_array().and_then(|p| p.first()).cloned();
            match found {
                Some(p) => Ok(format!(
                    "ssm:{}:{}",
                    p["Name"].as_str().unwrap_or(&args.id),
                    p["Type"].as_str().unwrap_or("?")
                )),
                None => Err(CloudError::Invalid(format!(
                    "{} does not exist; nothing was stored (`ssm_parameter` lists them)",
                    source_text(args, account)
                ))),
            }
        }
    }
}

/// The value, read after the approval. Errors never quote it.
async fn value(
    host: &Cloud,
    cx: &CallContext,
    account: &Account,
    args: &Args,
) -> Result<String, CloudError> {
    let raw = match args.source {
        Source::Secretsmanager => {
            let v = secrets_manager(
                host,
                cx,
                account,
                "GetSecretValue",
                &json!({ "SecretId": args.id }),
            )
            .await?;
            match (v["SecretString"].as_str(), v["SecretBinary"].as_str()) {
                (Some(s), _) => s.to_owned(),
                (None, Some(b)) => {
                    let bytes = base64::engine::general_purpose::STANDARD
                        .decode(b)
                        .map_err(|_| {
                            CloudError::Invalid("the secret's binary value is not base64".into())
                        })?;
                    String::from_utf8(bytes).map_err(|_| {
                        CloudError::Invalid(
                            "the secret is binary, not text; the vault stores text".into(),
                        )
                    })?
                }
                (None, None) => return Err(CloudError::Invalid("the secret has no value".into())),
            }
        }
        Source::Ssm => {
            let v = ssm(
                host,
                cx,
                account,
                "GetParameter",
                &json!({ "Name": args.id, "WithDecryption": true }),
            )
            .await?;
            v["Parameter"]["Value"]
                .as_str()
                .unwrap_or_default()
                .to_owned()
        }
    };
    let value = match &args.json_key {
        None => raw,
        Some(key) => {
            // Parsed to a Value only: serde's messages for it never quote the input.
            let parsed: Value = serde_json::from_str(&raw)
                .map_err(|_| CloudError::Invalid("the secret is not JSON, so it has no `json_key`; leave `json_key` out to store it whole".into()))?;
            match parsed.get(key) {
                Some(Value::String(s)) => s.clone(),
                Some(v @ (Value::Number(_) | Value::Bool(_))) => v.to_string(),
                Some(_) => {
                    return Err(CloudError::Invalid(format!(
                        "the secret's `{key}` is not a string or number"
                    )));
                }
                None => {
                    let keys = parsed
                        .as_object()
                        .map(|o| {
                            o.keys()
                                .map(|k| format!("`{k}`"))
                                .collect::<Vec<_>>()
                                .join(", ")
                        })
                        .unwrap_or_default();
                    return Err(CloudError::Invalid(format!(
                        "the secret has no key `{key}` (its keys: {keys})"
                    )));
                }
            }
        }
    };
    if value.is_empty() {
        return Err(CloudError::Invalid(
            "the secret's value is empty; nothing was stored".into(),
        ));
    }
    if value.len() > MAX_SECRET_BYTES {
        return Err(CloudError::Invalid(format!(
            "the secret is {} bytes; the vault takes at most {} KB",
            value.len(),
            MAX_SECRET_BYTES / 1024
        )));
    }
    Ok(value)
}

async fn run(host: &Cloud, args: &Args, cx: &CallContext) -> Result<CallToolResult, CloudError> {
    check(args)?;
    let Some(store) = host.secrets.clone() else {
        return Err(CloudError::Invalid(
            "no vault is open to store the secret in; set one up (`cairn vault`) and try again"
                .into(),
        ));
    };
    let account = host.account(args.account.as_deref(), &[CloudKind::Aws])?;
    let canonical = locate(host, cx, account, args).await?;
    let source = source_text(args, account);
    let hosts = args.hosts.join(", ");
    let shown = format!(
        "{source} → vault secret `{}`, usable only on {hosts}",
        args.vault_name
    );
    let key = format!(
        "cloud-secret:{}:{canonical}:{}:{}->{}@{}",
        account.name,
        args.json_key.as_deref().unwrap_or(""),
        args.id,
        args.vault_name,
        args.hosts.join(",")
    );
    if !approved_once(&host.approvals, &key) {
        return Ok(strict_question(
            format!(
                "refused for now: storing the {source} in the vault as `{}` (bound to {hosts}) needs the user's approval of exactly this, asked once",
                args.vault_name
            ),
            shown,
            key,
            WHY,
        ));
    }
    let secret = value(host, cx, account, args).await?;
    if let Err(e) = store.store(&args.vault_name, &args.hosts, &secret) {
        return Err(CloudError::Invalid(format!(
            "the vault refused to store it: {}",
            scrub(&e, &secret)
        )));
    }
    let out = format!(
        "stored the {source} in the vault as `{}`, usable only on {hosts}. Its value was not shown and is not in this conversation; name `{}` wherever a config takes a vault secret.",
        args.vault_name, args.vault_name
    );
    Ok(text(scrub(&out, &secret)))
}
