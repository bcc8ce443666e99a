//! `table_query`: the items of a table that match, a page at a time: a DynamoDB key condition
//! (or a scan) with a filter, an Azure OData `$filter`, a Firestore query with field filters.

use cairn_toolkit::reply::{error, text};
use cairn_toolkit::{CallContext, Category, Effect, JsonSchema, Paths, Tool};
use cairn_web::Method;
use rmcp::model::CallToolResult;
use serde::Deserialize;
use serde_json::{Map, Value, json};

use super::service::{
    MAX_ITEMS, Store, azure, azure_table, dynamo, firestore, firestore_item, firestore_path,
    firestore_url, not_found, pick, token_of, token_state,
};
use super::typed;
use crate::account::Account;
use crate::cloud::Cloud;
use crate::error::CloudError;
use crate::request::{CloudRequest, json_of, url_of};

/// Field filters one Firestore query takes at most.
const MAX_WHERE: usize = 10;

/// The `table_query` tool.
pub struct TableQuery;

/// One Firestore field filter.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Condition {
    /// The field (a dotted path into maps: `address.city`).
    field: String,
    /// One of `==`, `!=`, `<`, `<=`, `>`, `>=`, `array-contains`, `array-contains-any`, `in`,
    /// `not-in`.
    op: String,
    /// The value compared with, as plain JSON (a list for `in`, `not-in`, `array-contains-any`).
    value: Value,
}

/// Arguments of `table_query`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// The `[cloud.NAME]` account; needed only when several fit.
    #[serde(default)]
    account: Option<String>,
    /// The table (Firestore: the collection path, such as `users` or `users/ada/orders`).
    table: String,
    /// DynamoDB: a key condition expression (`pk = :p AND begins_with(sk, :s)`); without one
    /// the table is scanned.
    #[serde(default)]
    key_condition: Option<String>,
    /// DynamoDB: a filter expression applied after the key condition or scan
    /// (`price > :min`). Azure: an OData `$filter` (`PartitionKey eq 'a' and Price gt 10`).
    #[serde(default)]
    filter: Option<String>,
    /// DynamoDB: the expression's values as plain JSON (`{":p": "a", ":min": 10}`).
    #[serde(default)]
    values: Option<Map<String, Value>>,
    /// DynamoDB: placeholders for attribute names that are reserved words (`{"#n": "name"}`).
    #[serde(default)]
    names: Option<Map<String, Value>>,
    /// DynamoDB: a secondary index to query or scan instead of the table.
    #[serde(default)]
    index: Option<String>,
    /// Firestore: field filters, all of which must hold.
    #[serde(default, rename = "where")]
    conditions: Vec<Condition>,
    /// Firestore: the field to order by.
    #[serde(default)]
    order_by: Option<String>,
    /// Firestore: order descending. DynamoDB query: the sort key descending.
    #[serde(default)]
    descending: bool,
    /// Items per page (default 50, at most 200).
    #[serde(default)]
    #[schemars(range(min = 1, max = 200))]
    limit: Option<u32>,
    /// The token a previous page gave, for the next page (with the same other arguments).
    #[serde(default)]
    next: Option<String>,
}

impl Tool for TableQuery {
    type Host = Cloud;
    type Args = Args;
    const NAME: &'static str = "table_query";
    const TITLE: &'static str = "Query a table";
    const DESCRIPTION: &'static str = "Find items in a table, a page at a time, shown as JSON lines: DynamoDB with a key condition (or a scan) and a filter expression, Azure Table Storage with an OData $filter, Firestore with field filters (`where`) and an order. At most 200 items a page; pass `next` back for more.";
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
            check_fits(store, &args)?;
            let limit = args.limit.unwrap_or(50).clamp(1, MAX_ITEMS as u32);
            let state = match &args.next {
                Some(t) => Some(token_state(t)?),
                None => None,
            };
            let page = match store {
                Store::Dynamo => query_dynamo(host, &cx, account, &args, limit, state).await?,
                Store::Azure => query_azure(host, &cx, account, &args, limit, state).await?,
                Store::Firestore => {
                    query_firestore(host, &cx, account, &args, limit, state).await?
                }
            };
            Ok(page.result(&args.table))
        };
        run.await
            .unwrap_or_else(|e: CloudError| error(e.to_string()))
    }
}

/// One page of items, and the token for the next.
struct Page {
    items: Vec<Value>,
    next: Option<String>,
    /// What the service said beyond the items (DynamoDB: how many it scanned).
    note: Option<String>,
}

impl Page {
    fn result(self, table: &str) -> CallToolResult {
        let mut out = format!("items of `{table}`:\n");
        if let Some(n) = &self.note {
            out.push_str(n);
            out.push('\n');
        }
        let (lines, shown) = super::service::item_lines(&self.items, self.next.as_deref());
        out.push_str(&lines);
        let mut result = text(out);
        // The same items as the text shows, no more.
        result.structured_content = Some(json!({
            "items": &self.items[..shown],
            "next": self.next,
            "truncated": shown < self.items.len(),
        }));
        result
    }
}

/// An argument meant for another service is an error, not silently ignored.
fn check_fits(store: Store, args: &Args) -> Result<(), CloudError> {
    let given = |present: bool, name: &str, only: &str| {
        if present {
            Err(CloudError::Invalid(format!(
                "`{name}` is for {only}; this account's tables are {}",
                match store {
                    Store::Dynamo =>
                        "DynamoDB (use `key_condition`, `filter`, `values`, `names`, `index`)",
                    Store::Azure =>
                        "Azure Table Storage (use `filter` with OData: `PartitionKey eq 'a'`)",
                    Store::Firestore => "Firestore (use `where` and `order_by`)",
                }
            )))
        } else {
            Ok(())
        }
    };
    let dynamo_only = [
        (args.key_condition.is_some(), "key_condition"),
        (args.values.is_some(), "values"),
        (args.names.is_some(), "names"),
        (args.index.is_some(), "index"),
    ];
    let firestore_only = [
        (!args.conditions.is_empty(), "where"),
        (args.order_by.is_some(), "order_by"),
    ];
    if store != Store::Dynamo {
        for (present, name) in dynamo_only {
            given(present, name, "DynamoDB")?;
        }
    }
    if store != Store::Firestore {
        for (present, name) in firestore_only {
            given(present, name, "Firestore")?;
        }
    }
    if store == Store::Firestore {
        given(args.filter.is_some(), "filter", "DynamoDB and Azure")?;
    }
    if store == Store::Azure {
        given(args.descending, "descending", "DynamoDB and Firestore")?;
    }
    Ok(())
}

async fn query_dynamo(
    host: &Cloud,
    cx: &CallContext,
    account: &Account,
    args: &Args,
    limit: u32,
    state: Option<Value>,
) -> Result<Page, CloudError> {
    let mut body = json!({ "TableName": args.table, "Limit": limit });
    if let Some(k) = &args.key_condition {
        body["KeyConditionExpression"] = json!(k);
        body["ScanIndexForward"] = json!(!args.descending);
    }
    if let Some(f) = &args.filter {
        body["FilterExpression"] = json!(f);
    }
    if let Some(i) = &args.index {
        body["IndexName"] = json!(i);
    }
    if let Some(values) = &args.values {
        body["ExpressionAttributeValues"] = typed::item_to_dynamo(values)
            .map_err(|e| CloudError::Invalid(format!("values: {e}")))?;
    }
    if let Some(names) = &args.names {
        body["ExpressionAttributeNames"] = Value::Object(names.clone());
    }
    if let Some(start) = state.as_ref().and_then(|s| s.get("start")) {
        body["ExclusiveStartKey"] = start.clone();
    }
    let action = if args.key_condition.is_some() {
        "Query"
    } else {
        "Scan"
    };
    let answer = dynamo(host, cx, account, action, &body)
        .await
        .map_err(|e| not_found(e, &format!("DynamoDB table `{}`", args.table)))?;
    let items: Vec<Value> = answer["Items"]
        .as_array()
        .into_iter()
        .flatten()
        .map(typed::item_from_dynamo)
        .collect();
    let next = answer
        .get("LastEvaluatedKey")
        .filter(|k| k.as_object().is_some_and(|o| !o.is_empty()))
        .map(|k| token_of(&json!({ "start": k })));
    let note = (args.filter.is_some() || args.key_condition.is_none()).then(|| {
        format!(
            "({} of {} items {} matched{})",
            items.len(),
            answer["ScannedCount"],
            if args.key_condition.is_some() {
                "read"
            } else {
                "scanned"
            },
            if next.is_some() {
                "; a page may hold fewer matches than `limit` while more follow"
            } else {
                ""
            }
        )
    });
    Ok(Page { items, next, note })
}

async fn query_azure(
    host: &Cloud,
    cx: &CallContext,
    account: &Account,
    args: &Args,
    limit: u32,
    state: Option<Value>,
) -> Result<Page, CloudError> {
    let table = azure_table(&args.table)?;
    let top = limit.to_string();
    let mut query: Vec<(&str, &str)> = vec![("$top", &top)];
    if let Some(f) = &args.filter {
        query.push(("$filter", f));
    }
    let (np, nr) = state
        .as_ref()
        .map(|s| {
            (
                s["partition"].as_str().map(str::to_owned),
                s["row"].as_str().map(str::to_owned),
            )
        })
        .unwrap_or_default();
    if let Some(p) = &np {
        query.push(("NextPartitionKey", p));
    }
    if let Some(r) = &nr {
        query.push(("NextRowKey", r));
    }
    let url = url_of(&account.base_url("table")?, &format!("{table}()"), &query)?;
    let response = azure(host, cx, account, CloudRequest::new(Method::GET, url))
        .await
        .map_err(|e| not_found(e, &format!("Azure table `{table}`")))?;
    let answer = json_of("table", &response)?;
    let items = answer["value"].as_array().cloned().unwrap_or_default();
    let header = |name: &str| {
        response
            .headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned)
    };
    let partition = header("x-ms-continuation-nextpartitionkey");
    let row = header("x-ms-continuation-nextrowkey");
    let next = partition
        .is_some()
        .then(|| token_of(&json!({ "partition": partition, "row": row })));
    Ok(Page {
        items,
        next,
        note: None,
    })
}

/// Firestore's name for `op`.
fn firestore_op(op: &str) -> Option<&'static str> {
    Some(match op.trim() {
        "==" | "=" => "EQUAL",
        "!=" => "NOT_EQUAL",
        "<" => "LESS_THAN",
        "<=" => "LESS_THAN_OR_EQUAL",
        ">" => "GREATER_THAN",
        ">=" => "GREATER_THAN_OR_EQUAL",
        "array-contains" => "ARRAY_CONTAINS",
        "array-contains-any" => "ARRAY_CONTAINS_ANY",
        "in" => "IN",
        "not-in" => "NOT_IN",
        _ => return None,
    })
}

/// One condition as a Firestore filter.
fn firestore_filter(c: &Condition) -> Result<Value, CloudError> {
    let field = json!({ "fieldPath": c.field });
    let op = firestore_op(&c.op).ok_or_else(|| {
        CloudError::Invalid(format!(
            "`{}` is not a Firestore operator: use ==, !=, <, <=, >, >=, array-contains, array-contains-any, in, not-in",
            c.op
        ))
    })?;
    // Firestore compares with null only through its unary filters.
    match (op, &c.value) {
        ("EQUAL", Value::Null) => {
            return Ok(json!({ "unaryFilter": { "op": "IS_NULL", "field": field } }));
        }
        ("NOT_EQUAL", Value::Null) => {
            return Ok(json!({ "unaryFilter": { "op": "IS_NOT_NULL", "field": field } }));
        }
        _ => {}
    }
    let value = typed::to_firestore(&c.value)
        .map_err(|e| CloudError::Invalid(format!("`{}`: {e}", c.field)))?;
    Ok(json!({ "fieldFilter": { "field": field, "op": op, "value": value } }))
}

async fn query_firestore(
    host: &Cloud,
    cx: &CallContext,
    account: &Account,
    args: &Args,
    limit: u32,
    state: Option<Value>,
) -> Result<Page, CloudError> {
    if args.conditions.len() > MAX_WHERE {
        return Err(CloudError::Invalid(format!(
            "{} conditions: a query takes at most {MAX_WHERE}",
            args.conditions.len()
        )));
    }
    let segments = firestore_path(&args.table, "collection")?;
    let parent = &segments[..segments.len() - 1];
    let id = args
        .table
        .trim_matches('/')
        .rsplit('/')
        .next()
        .unwrap_or_default();
    let offset = state
        .as_ref()
        .and_then(|s| s["offset"].as_u64())
        .unwrap_or(0);
    // One more than asked for, to know whether another page follows.
    let mut query = json!({ "from": [{ "collectionId": id }], "limit": limit + 1 });
    if offset > 0 {
        query["offset"] = json!(offset);
    }
    let filters = args
        .conditions
        .iter()
        .map(firestore_filter)
        .collect::<Result<Vec<_>, _>>()?;
    match filters.len() {
        0 => {}
        1 => query["where"] = filters[0].clone(),
        _ => query["where"] = json!({ "compositeFilter": { "op": "AND", "filters": filters } }),
    }
    if let Some(field) = &args.order_by {
        query["orderBy"] = json!([{
            "field": { "fieldPath": field },
            "direction": if args.descending { "DESCENDING" } else { "ASCENDING" }
        }]);
    }
    let url = firestore_url(account, parent, ":runQuery", &[])?;
    let answer = firestore(
        host,
        cx,
        account,
        Method::POST,
        url,
        Some(&json!({ "structuredQuery": query })),
    )
    .await?;
    let mut items: Vec<Value> = answer
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|r| r.get("document"))
        .map(firestore_item)
        .collect();
    let next = (items.len() > limit as usize).then(|| {
        items.truncate(limit as usize);
        token_of(&json!({ "offset": offset + u64::from(limit) }))
    });
    Ok(Page {
        items,
        next,
        note: None,
    })
}
