//! `iam_list`: IAM users, roles, or the policies of one user or role; read-only.

use cairn_toolkit::reply::error;
use cairn_toolkit::{CallContext, Category, Effect, JsonSchema, Paths, Tool};
use rmcp::model::CallToolResult;
use serde::Deserialize;

use super::client::{
    IAM, Params, account, find, items, next_page, rows_wanted, said, show_timestamp, table, text_at,
};
use crate::account::Account;
use crate::cloud::Cloud;
use crate::error::CloudError;
use crate::request::xml;

/// The `iam_list` tool.
pub struct IamList;

/// What to list.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum What {
    // No doc comments on the variants: the schema stays a plain string enum.
    Users,
    Roles,
    Policies,
}

/// Arguments of `iam_list`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// The `[cloud.NAME]` account; needed only when several fit.
    account: Option<String>,
    /// `users`, `roles`, or `policies`: the managed policies attached to, and the inline
    /// policies of, `user` or `role`.
    what: What,
    /// With `policies`: the user whose policies to list.
    user: Option<String>,
    /// With `policies`: the role whose policies to list.
    role: Option<String>,
    /// Only names under this IAM path prefix (`/service-role/`), for `users` and `roles`.
    path_prefix: Option<String>,
    /// Rows to show, 1 to 200. Default: 50.
    max: Option<u32>,
    /// The `marker` a previous call returned, for the next page.
    marker: Option<String>,
}

impl Tool for IamList {
    type Host = Cloud;
    type Args = Args;
    const NAME: &'static str = "iam_list";
    const TITLE: &'static str = "IAM users, roles and policies";
    const DESCRIPTION: &'static str = "List an AWS account's IAM users or roles, or the managed and inline policies of one user or role (`what: \"policies\"` with `user` or `role`). Read-only; paged with `marker`.";
    const CATEGORY: Category = Category::Cloud;
    const EFFECT: Effect = Effect::Network;
    const READ_ONLY: bool = true;
    const AGENT_ONLY: bool = false;

    fn paths(_: &Args) -> Paths {
        Paths::none()
    }

    async fn call(host: &Cloud, args: Args, cx: CallContext) -> CallToolResult {
        run(host, args, &cx).await.unwrap_or_else(error)
    }
}

/// One list call: the items under `{action}Result/{list}/member`, and the marker if truncated.
async fn list(
    host: &Cloud,
    cx: &CallContext,
    account: &Account,
    action: &str,
    params: &Params,
    list: &str,
    row: impl Fn(roxmltree::Node<'_, '_>) -> Vec<String>,
) -> Result<(Vec<Vec<String>>, Option<String>), CloudError> {
    let answer = host
        .aws_query(cx, account, "iam", IAM, action, &params.0)
        .await?;
    let doc = xml("iam", &answer)?;
    let result = find(&doc, &format!("{action}Result"))
        .ok_or_else(|| CloudError::Invalid(format!("iam answered {action} without a result")))?;
    let rows = items(result, list, "member").into_iter().map(row).collect();
    let marker = (text_at(result, "IsTruncated") == "true")
        .then(|| text_at(result, "Marker"))
        .filter(|m| !m.is_empty());
    Ok((rows, marker))
}

fn not_found(e: CloudError, kind: &str, name: &str) -> String {
    if e.is_not_found() {
        format!(
            "no IAM {kind} {name:?} in this account (list them with `iam_list` `what: \"{kind}s\"`): {e}"
        )
    } else {
        e.to_string()
    }
}

async fn run(host: &Cloud, args: Args, cx: &CallContext) -> Result<CallToolResult, String> {
    let account = account(host, args.account.as_deref()).map_err(said)?;
    let max = rows_wanted(args.max);
    let mut params = Params::new();
    params
        .set("MaxItems", max.to_string())
        .opt("Marker", args.marker.as_deref());
    let paged = |marker: &Option<String>| match marker {
        Some(m) => next_page("marker", m),
        None => "ask for fewer with `max`".into(),
    };
    match args.what {
        What::Users | What::Roles => {
            if args.user.is_some() || args.role.is_some() {
                return Err("`user` and `role` go with `what: \"policies\"`".into());
            }
            params.opt("PathPrefix", args.path_prefix.as_deref());
            let (action, list_name, kind) = if args.what == What::Users {
                ("ListUsers", "Users", "users")
            } else {
                ("ListRoles", "Roles", "roles")
            };
            let users = args.what == What::Users;
            let (rows, marker) = list(host, cx, account, action, &params, list_name, |m| {
                let name = if users { "UserName" } else { "RoleName" };
                let last = if users {
                    show_timestamp(&text_at(m, "PasswordLastUsed"))
                } else {
                    text_at(m, "Description")
                };
                vec![
                    text_at(m, name),
                    text_at(m, "Path"),
                    text_at(m, "Arn"),
                    show_timestamp(&text_at(m, "CreateDate")),
                    last,
                ]
            })
            .await
            .map_err(said)?;
            let last = if users {
                "password last used"
            } else {
                "description"
            };
            Ok(table(
                &format!("IAM {kind} of {}", account.name),
                &["name", "path", "arn", "created", last],
                rows,
                max,
                marker.is_some(),
                &paged(&marker),
            ))
        }
        What::Policies => {
            let (kind, name, attached, inline, key) = match (&args.user, &args.role) {
                (Some(u), None) => (
                    "user",
                    u,
                    "ListAttachedUserPolicies",
                    "ListUserPolicies",
                    "UserName",
                ),
                (None, Some(r)) => (
                    "role",
                    r,
                    "ListAttachedRolePolicies",
                    "ListRolePolicies",
                    "RoleName",
                ),
                _ => {
                    return Err("`what: \"policies\"` needs exactly one of `user` or `role`".into());
                }
            };
            params.set(key, name.as_str());
            let (mut rows, marker) = list(
                host,
                cx,
                account,
                attached,
                &params,
                "AttachedPolicies",
                |m| {
                    vec![
                        text_at(m, "PolicyName"),
                        "managed".into(),
                        text_at(m, "PolicyArn"),
                    ]
                },
            )
            .await
            .map_err(|e| not_found(e, kind, name))?;
            // Inline policies are few (IAM caps their total size); the first page is shown.
            let mut inline_params = Params::new();
            inline_params.set(key, name.as_str()).set("MaxItems", "100");
            let (inline_rows, inline_more) = list(
                host,
                cx,
                account,
                inline,
                &inline_params,
                "PolicyNames",
                |m| {
                    vec![
                        m.text().unwrap_or_default().trim().to_owned(),
                        "inline".into(),
                        String::new(),
                    ]
                },
            )
            .await
            .map_err(|e| not_found(e, kind, name))?;
            rows.extend(inline_rows);
            Ok(table(
                &format!("IAM policies of {kind} {name} in {}", account.name),
                &["policy", "kind", "arn"],
                rows,
                super::client::MAX_ROWS,
                marker.is_some() || inline_more.is_some(),
                &paged(&marker),
            ))
        }
    }
}
