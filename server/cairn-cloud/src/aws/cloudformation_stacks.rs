//! `cloudformation_stacks`: the CloudFormation stacks, or one stack's status, outputs and
//! parameters (a `NoEcho` parameter's value is never shown).

use std::collections::BTreeSet;

use cairn_toolkit::reply::{error, text};
use cairn_toolkit::table::{cut, escape};
use cairn_toolkit::{CallContext, Category, Effect, JsonSchema, Paths, Tool};
use rmcp::model::CallToolResult;
use serde::Deserialize;

use super::client::{
    CLOUDFORMATION, Params, account, find, items, next_page, said, show_timestamp, table, text_at,
};
use crate::account::Account;
use crate::cloud::Cloud;
use crate::error::CloudError;
use crate::request::xml;

/// The `cloudformation_stacks` tool.
pub struct CloudformationStacks;

/// Arguments of `cloudformation_stacks`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// The `[cloud.NAME]` account; needed only when several fit.
    account: Option<String>,
    /// A stack's name or id: describe it (status, outputs, parameters). Default: list the
    /// stacks.
    stack: Option<String>,
    /// With no `stack`: the `next_token` a previous call returned, for the next page.
    next_token: Option<String>,
}

impl Tool for CloudformationStacks {
    type Host = Cloud;
    type Args = Args;
    const NAME: &'static str = "cloudformation_stacks";
    const TITLE: &'static str = "CloudFormation stacks";
    const DESCRIPTION: &'static str = "List CloudFormation stacks with their status, or with `stack` describe one: status and reason, outputs and parameters (NoEcho values shown as ***). See a stack's events with `cloudformation_events`.";
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

/// A stack name or id as CloudFormation takes it, checked.
pub(super) fn check_stack(stack: &str) -> Result<&str, String> {
    let s = stack.trim();
    if s.is_empty() || s.len() > 2048 || s.chars().any(char::is_control) {
        return Err("`stack` must be a stack name or id (as `cloudformation_stacks` shows)".into());
    }
    Ok(s)
}

/// CloudFormation's "Stack with id X does not exist" (a 400 ValidationError) said plainly.
pub(super) fn stack_error(e: CloudError, stack: &str, account: &Account) -> String {
    let text = e.to_string();
    if text.contains("does not exist") {
        format!(
            "no stack {stack:?} in {} ({}): list them with `cloudformation_stacks`; a deleted \
             stack is found only by its id",
            account.name, account.region
        )
    } else {
        text
    }
}

async fn run(host: &Cloud, args: Args, cx: &CallContext) -> Result<CallToolResult, String> {
    let account = account(host, args.account.as_deref()).map_err(said)?;
    match args.stack.as_deref() {
        None => list(host, account, args.next_token.as_deref(), cx).await,
        Some(stack) => describe(host, account, check_stack(stack)?, cx).await,
    }
}

async fn list(
    host: &Cloud,
    account: &Account,
    token: Option<&str>,
    cx: &CallContext,
) -> Result<CallToolResult, String> {
    let mut params = Params::new();
    params.opt("NextToken", token);
    let answer = host
        .aws_query(
            cx,
            account,
            "cloudformation",
            CLOUDFORMATION,
            "DescribeStacks",
            &params.0,
        )
        .await
        .map_err(said)?;
    let doc = xml("cloudformation", &answer).map_err(said)?;
    let result =
        find(&doc, "DescribeStacksResult").ok_or("CloudFormation answered without a result")?;
    let rows = items(result, "Stacks", "member")
        .into_iter()
        .map(|s| {
            let updated = text_at(s, "LastUpdatedTime");
            vec![
                text_at(s, "StackName"),
                text_at(s, "StackStatus"),
                show_timestamp(&text_at(s, "CreationTime")),
                show_timestamp(&updated),
                text_at(s, "Description"),
            ]
        })
        .collect();
    let next = Some(text_at(result, "NextToken")).filter(|t| !t.is_empty());
    let hint = match &next {
        Some(t) => next_page("next_token", t),
        None => "describe one with `stack`".into(),
    };
    Ok(table(
        &format!(
            "CloudFormation stacks in {} ({})",
            account.name, account.region
        ),
        &[
            "stack",
            "status",
            "created (UTC)",
            "updated (UTC)",
            "description",
        ],
        rows,
        super::client::MAX_ROWS,
        next.is_some(),
        &hint,
    ))
}

/// The parameters the stack's template marks `NoEcho`, or `None` when that cannot be told.
async fn no_echo(
    host: &Cloud,
    account: &Account,
    stack: &str,
    cx: &CallContext,
) -> Option<BTreeSet<String>> {
    let mut params = Params::new();
    params.set("StackName", stack);
    let answer = host
        .aws_query(
            cx,
            account,
            "cloudformation",
            CLOUDFORMATION,
            "GetTemplateSummary",
            &params.0,
        )
        .await
        .ok()?;
    let doc = xml("cloudformation", &answer).ok()?;
    let result = find(&doc, "GetTemplateSummaryResult")?;
    Some(
        items(result, "Parameters", "member")
            .into_iter()
            .filter(|p| text_at(*p, "NoEcho") == "true")
            .map(|p| text_at(p, "ParameterKey"))
            .collect(),
    )
}

/// Characters of one output or parameter value shown.
const VALUE_CHARS: usize = 500;
/// Outputs or parameters shown (a template has at most 200 of each).
const MAX_ITEMS: usize = 200;

async fn describe(
    host: &Cloud,
    account: &Account,
    stack: &str,
    cx: &CallContext,
) -> Result<CallToolResult, String> {
    let mut params = Params::new();
    params.set("StackName", stack);
    let answer = host
        .aws_query(
            cx,
            account,
            "cloudformation",
            CLOUDFORMATION,
            "DescribeStacks",
            &params.0,
        )
        .await
        .map_err(|e| stack_error(e, stack, account))?;
    let doc = xml("cloudformation", &answer).map_err(said)?;
    let result =
        find(&doc, "DescribeStacksResult").ok_or("CloudFormation answered without a result")?;
    let Some(s) = items(result, "Stacks", "member").into_iter().next() else {
        return Err(format!("no stack {stack:?} in {}", account.name));
    };
    let hidden = no_echo(host, account, stack, cx).await;
    let mut out = format!(
        "stack {} in {} ({}): {}",
        text_at(s, "StackName"),
        account.name,
        account.region,
        text_at(s, "StackStatus")
    );
    let reason = text_at(s, "StackStatusReason");
    if !reason.is_empty() {
        out.push_str(&format!("\nreason: {}", cut(&reason, VALUE_CHARS)));
    }
    for (label, field) in [
        ("description", "Description"),
        ("id", "StackId"),
        ("created", "CreationTime"),
        ("updated", "LastUpdatedTime"),
    ] {
        let v = text_at(s, field);
        if !v.is_empty() {
            let v = if field.ends_with("Time") {
                format!("{} UTC", show_timestamp(&v))
            } else {
                v
            };
            out.push_str(&format!("\n{label}: {}", cut(&v, VALUE_CHARS)));
        }
    }
    let outputs = items(s, "Outputs", "member");
    out.push_str(&format!("\n\noutputs ({}):", outputs.len()));
    if outputs.is_empty() {
        out.push_str(" none");
    } else {
        out.push_str("\n| key | value | description | export |\n| --- | --- | --- | --- |");
        for o in outputs.iter().take(MAX_ITEMS) {
            out.push_str(&format!(
                "\n| {} | {} | {} | {} |",
                escape(&text_at(*o, "OutputKey")),
                escape(&cut(&text_at(*o, "OutputValue"), VALUE_CHARS)),
                escape(&cut(&text_at(*o, "Description"), VALUE_CHARS)),
                escape(
                    &Some(text_at(*o, "ExportName"))
                        .filter(|e| !e.is_empty())
                        .unwrap_or_else(|| "-".into())
                ),
            ));
        }
    }
    let parameters = items(s, "Parameters", "member");
    out.push_str(&format!("\n\nparameters ({}):", parameters.len()));
    if parameters.is_empty() {
        out.push_str(" none");
    } else {
        out.push_str("\n| key | value |\n| --- | --- |");
        for p in parameters.iter().take(MAX_ITEMS) {
            let key = text_at(*p, "ParameterKey");
            // A value the template marks NoEcho is never shown; when the template cannot be
            // read, no value is, since any might be one.
            let secret = hidden.as_ref().is_none_or(|h| h.contains(&key));
            let value = if secret {
                "***".to_owned()
            } else {
                let resolved = text_at(*p, "ResolvedValue");
                let v = text_at(*p, "ParameterValue");
                if resolved.is_empty() {
                    v
                } else {
                    format!("{v} (resolved: {resolved})")
                }
            };
            out.push_str(&format!(
                "\n| {} | {} |",
                escape(&key),
                escape(&cut(&value, VALUE_CHARS))
            ));
        }
        if hidden.is_none() {
            out.push_str(
                "\n(values hidden: the template's summary could not be read to tell which are NoEcho)",
            );
        }
    }
    Ok(text(out))
}
