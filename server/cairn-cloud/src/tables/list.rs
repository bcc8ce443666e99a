//! `table_list`: the tables (DynamoDB, Azure) or collections (Firestore) of an account, or
//! one table's key schema and item count.

use cairn_toolkit::reply::{error, text};
use cairn_toolkit::table::{Cell, Limits, Table};
use cairn_toolkit::{CallContext, Category, Effect, JsonSchema, Paths, Tool};
use cairn_web::Method;
use rmcp::model::CallToolResult;
use serde::Deserialize;
use serde_json::{Value, json};

use super::service::{
    Store, azure, azure_table, dynamo, dynamo_keys, firestore, firestore_path, firestore_url,
    not_found, pick, token_of, token_state,
};
use crate::account::Account;
use crate::cloud::Cloud;
use crate::error::CloudError;
use crate::request::{CloudRequest, url_of};

/// The `table_list` tool.
pub struct TableList;

/// Arguments of `table_list`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// The `[cloud.NAME]` account; needed only when several fit.
    #[serde(default)]
    account: Option<String>,
    /// A table (Firestore: a collection path such as `users` or `users/ada/orders`): describe
    /// its key and item count instead of listing.
    #[serde(default)]
    table: Option<String>,
    /// Names per page (default 100, at most 1000).
    #[serde(default)]
    #[schemars(range(min = 1, max = 1000))]
    limit: Option<u32>,
    /// The token a previous page gave, for the next page.
    #[serde(default)]
    next: Option<String>,
}

impl Tool for TableList {
    type Host = Cloud;
    type Args = Args;
    const NAME: &'static str = "table_list";
    const TITLE: &'static str = "List tables";
    const DESCRIPTION: &'static str = "List the tables of a DynamoDB or Azure Table Storage account or the top-level Firestore collections, paged; with `table`, show that table's key (attributes and types) and item count where the service knows it. Use before `table_get`, `table_query` and `table_put`.";
    const CATEGORY: Category = Category::Cloud;
    const EFFECT: Effect = Effect::Network;
    const AGENT_ONLY: bool = false;
    const READ_ONLY: bool = true;

    fn paths(_: &Args) -> Paths {
        Paths::none()
    }

    async fn call(host: &Cloud, args: Args, cx: CallContext) -> CallToolResult {
        let run = async {
            let (account, store) = pick(host, args.account.as_deref())?;
            let limit = args.limit.unwrap_or(100).clamp(1, 1000);
            match (&args.table, store) {
                (Some(t), Store::Dynamo) => describe_dynamo(host, &cx, account, t).await,
                (Some(t), Store::Azure) => describe_azure(host, &cx, account, t).await,
                (Some(t), Store::Firestore) => describe_firestore(host, &cx, account, t).await,
                (None, _) => {
                    let after = match &args.next {
                        Some(t) => Some(token_state(t)?),
                        None => None,
                    };
                    let (names, next) = match store {
                        Store::Dynamo => list_dynamo(host, &cx, account, limit, after).await?,
                        Store::Azure => list_azure(host, &cx, account, limit, after).await?,
                        Store::Firestore => {
                            list_firestore(host, &cx, account, limit, after).await?
                        }
                    };
                    Ok(listing(account, store, names, next))
                }
            }
        };
        run.await
            .unwrap_or_else(|e: CloudError| error(e.to_string()))
    }
}

/// The names as a one-column table, with how to get the next page.
fn listing(
    account: &Account,
    store: Store,
    names: Vec<String>,
    next: Option<String>,
) -> CallToolResult {
    let (what, column) = match store {
        Store::Dynamo => ("DynamoDB tables", "table"),
        Store::Azure => ("Azure tables", "table"),
        Store::Firestore => ("Firestore collections", "collection"),
    };
    let heading = format!("{what} of account `{}`", account.name);
    if names.is_empty() && next.is_none() {
        return text(format!("{heading}: none"));
    }
    let table = Table {
        columns: vec![column.to_owned()],
        rows: names.into_iter().map(|n| vec![Cell::Text(n)]).collect(),
        more: next.is_some(),
    };
    let hint = match &next {
        Some(t) => format!("pass `next: \"{t}\"` for the next page"),
        None => "ask for fewer with `limit`".to_owned(),
    };
    let mut result = table.result_hinting(&heading, &Limits::default(), &hint);
    if let (Some(t), Some(s)) = (&next, result.structured_content.as_mut()) {
        s["next"] = Value::String(t.clone());
    }
    result
}

async fn list_dynamo(
    host: &Cloud,
    cx: &CallContext,
    account: &Account,
    limit: u32,
    after: Option<Value>,
) -> Result<(Vec<String>, Option<String>), CloudError> {
    // DynamoDB gives at most 100 names a call: follow its pages up to `limit`.
    let mut names = Vec::new();
    let mut start = after.and_then(|a| a["after"].as_str().map(str::to_owned));
    // Bounded even if the service kept answering short pages.
    for _ in 0..20 {
        let want = (limit as usize - names.len()).min(100);
        let mut body = json!({ "Limit": want });
        if let Some(s) = &start {
            body["ExclusiveStartTableName"] = json!(s);
        }
        let answer = dynamo(host, cx, account, "ListTables", &body).await?;
        names.extend(
            answer["TableNames"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
                .map(str::to_owned),
        );
        start = answer["LastEvaluatedTableName"].as_str().map(str::to_owned);
        if start.is_none() || names.len() >= limit as usize {
            break;
        }
    }
    Ok((names, start.map(|s| token_of(&json!({ "after": s })))))
}

async fn list_azure(
    host: &Cloud,
    cx: &CallContext,
    account: &Account,
    limit: u32,
    after: Option<Value>,
) -> Result<(Vec<String>, Option<String>), CloudError> {
    let top = limit.to_string();
    let mut query = vec![("$top", top.as_str())];
    let after = after.and_then(|a| a["after"].as_str().map(str::to_owned));
    if let Some(a) = &after {
        query.push(("NextTableName", a));
    }
    let url = url_of(&account.base_url("table")?, "Tables", &query)?;
    let response = azure(host, cx, account, CloudRequest::new(Method::GET, url)).await?;
    let answer = crate::request::json_of("table", &response)?;
    let names = answer["value"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|t| t["TableName"].as_str().map(str::to_owned))
        .collect();
    let next = response
        .headers
        .get("x-ms-continuation-nexttablename")
        .and_then(|v| v.to_str().ok())
        .map(|n| token_of(&json!({ "after": n })));
    Ok((names, next))
}

async fn list_firestore(
    host: &Cloud,
    cx: &CallContext,
    account: &Account,
    limit: u32,
    after: Option<Value>,
) -> Result<(Vec<String>, Option<String>), CloudError> {
    let mut body = json!({ "pageSize": limit });
    if let Some(t) = after.as_ref().and_then(|a| a["after"].as_str()) {
        body["pageToken"] = json!(t);
    }
    let url = firestore_url(account, &[], ":listCollectionIds", &[])?;
    let answer = firestore(host, cx, account, Method::POST, url, Some(&body)).await?;
    let names = answer["collectionIds"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .map(str::to_owned)
        .collect();
    let next = answer["nextPageToken"]
        .as_str()
        .filter(|t| !t.is_empty())
        .map(|t| token_of(&json!({ "after": t })));
    Ok((names, next))
}

async fn describe_dynamo(
    host: &Cloud,
    cx: &CallContext,
    account: &Account,
    table: &str,
) -> Result<CallToolResult, CloudError> {
    let (described, keys) = dynamo_keys(host, cx, account, table)
        .await
        .map_err(|e| not_found(e, &format!("DynamoDB table `{table}`")))?;
    let t = &described["Table"];
    let key = keys
        .iter()
        .enumerate()
        .map(|(i, (n, ty))| {
            format!(
                "{n} ({ty}, {})",
                if i == 0 { "partition key" } else { "sort key" }
            )
        })
        .collect::<Vec<_>>()
        .join(", ");
    let mut out = format!(
        "DynamoDB table `{table}` (account `{}`): {}\nkey: {key}\nitems: {} (DynamoDB updates this count about every six hours), {} bytes",
        account.name,
        t["TableStatus"].as_str().unwrap_or("status unknown"),
        t["ItemCount"],
        t["TableSizeBytes"],
    );
    for (kind, label) in [
        ("GlobalSecondaryIndexes", "global index"),
        ("LocalSecondaryIndexes", "local index"),
    ] {
        for index in t[kind].as_array().into_iter().flatten() {
            let keys = index["KeySchema"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|k| k["AttributeName"].as_str())
                .collect::<Vec<_>>()
                .join(", ");
            out.push_str(&format!(
                "\n{label} `{}` on {keys}",
                index["IndexName"].as_str().unwrap_or_default()
            ));
        }
    }
    Ok(text(out))
}

async fn describe_azure(
    host: &Cloud,
    cx: &CallContext,
    account: &Account,
    table: &str,
) -> Result<CallToolResult, CloudError> {
    let name = azure_table(table)?;
    let url = url_of(
        &account.base_url("table")?,
        &format!("Tables('{name}')"),
        &[],
    )?;
    azure(host, cx, account, CloudRequest::new(Method::GET, url))
        .await
        .map_err(|e| not_found(e, &format!("Azure table `{table}`")))?;
    Ok(text(format!(
        "Azure table `{table}` (account `{}`): entities are keyed by PartitionKey + RowKey (both strings); Azure tables have no schema beyond that, and the service keeps no item count (`table_query` pages through them)",
        account.name
    )))
}

async fn describe_firestore(
    host: &Cloud,
    cx: &CallContext,
    account: &Account,
    collection: &str,
) -> Result<CallToolResult, CloudError> {
    let segments = firestore_path(collection, "collection")?;
    let parent = &segments[..segments.len() - 1];
    let id = collection
        .trim_matches('/')
        .rsplit('/')
        .next()
        .unwrap_or_default();
    let body = json!({
        "structuredAggregationQuery": {
            "structuredQuery": { "from": [{ "collectionId": id }] },
            "aggregations": [{ "alias": "n", "count": {} }]
        }
    });
    let url = firestore_url(account, parent, ":runAggregationQuery", &[])?;
    let count = match firestore(host, cx, account, Method::POST, url, Some(&body)).await {
        Ok(answer) => answer
            .as_array()
            .and_then(|a| {
                a.iter()
                    .find_map(|r| r.pointer("/result/aggregateFields/n/integerValue"))
            })
            .and_then(Value::as_str)
            .map(|n| format!("{n} documents"))
            .unwrap_or_else(|| "document count not known".into()),
        Err(CloudError::Cancelled) => return Err(CloudError::Cancelled),
        Err(e) => format!("document count not known ({e})"),
    };
    Ok(text(format!(
        "Firestore collection `{}` (account `{}`): documents keyed by their id (shown as `_id`); fields are free-form; {count}",
        collection.trim_matches('/'),
        account.name
    )))
}
